"""Test sets written by the peers' own code, read back passage for passage.

The files under ``tests/data/testsets/peers/written/`` were written by RAGAS 0.1.22 and
0.4.3, DeepEval 4.3.1 and promptfoo 0.121.20 themselves (``generate.py`` there says how);
the expected values below are what the generator gave each writer, typed out here rather
than read from the files. A passage must come back whole: not glued to its neighbour, not
split at its comma, ``|`` or newline, without a ``["`` left on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from engine.testsets import load_test_set
from engine.testsets.base import RowError
from engine.testsets.inspect import render_inspection
from engine.testsets.values import joined_items, list_value

WRITTEN = Path(__file__).resolve().parents[1] / "data" / "testsets" / "peers" / "written"

QUERIES = (
    "How much does Acme Pro cost, and is VAT included?",
    'What does the manual say about the "Reset" button?',
    "Quels plans sont proposés à Zürich ?",
    "Where is the config file?",
)
RESPONSES = (
    "Acme Pro costs $49 a month, billed annually; VAT is extra.",
    "Hold 'Reset' for 5 seconds.",
    "Basic, Pro et Enterprise.",
    "In C:\\Acme\\config.ini.",
)
REFERENCES = (
    "Acme Pro costs $49 per month, billed annually, excluding VAT.",
    'Press and hold "Reset" for 5 seconds,\nthen wait for the light.',
    "Zürich propose Basic, Pro et Enterprise.",
    "The config file is C:\\Acme\\config.ini (see [1]).",
)
RETRIEVED = (
    (
        "Acme Pro costs $49 per month, billed annually.",
        "Prices exclude VAT, which varies by country.",
    ),
    (
        "The manual says: \"press 'Reset' for 5 seconds\".",
        "Step 1: unplug the router.\nStep 2: wait 30 seconds.\nStep 3: plug it back in.",
    ),
    (
        "Plans: Basic | Pro | Enterprise",
        "Le café coûte 3 € à Zürich — naïve façade.",
        "東京の営業時間は9時から18時です。",
    ),
    ("[1] See the FAQ, section 2: the config lives in C:\\Acme\\config.ini.",),
)
REFERENCE_CONTEXTS = (
    ("Acme Pro: $49/month, billed annually, VAT excluded.",),
    ('Hold "Reset" for 5 seconds.', "It's safe: settings aren't lost."),
    ("Plans: Basic | Pro | Enterprise", "Zürich: alle Pläne verfügbar."),
    ("[1] See the FAQ, section 2: the config lives in C:\\Acme\\config.ini.",),
)
ECHOED = tuple(
    "Answer from the context.\nContext: " + "\n\n".join(passages) + "\nQuestion: " + query
    for query, passages in zip(QUERIES, RETRIEVED, strict=True)
)
"""What promptfoo's echo provider answered: the prompt as sent."""

NONE4: tuple[None, ...] = (None,) * 4
EMPTY4: tuple[tuple[str, ...], ...] = ((),) * 4


@dataclass(frozen=True)
class Expected:
    """One file: its detected format and, per case, what evalhouse must read."""

    format: str
    responses: tuple[str | None, ...]
    references: tuple[str, ...]
    contexts: tuple[tuple[str, ...] | None, ...]
    truths: tuple[tuple[str, ...], ...]
    queries: tuple[str, ...] = QUERIES


# RAGAS 0.1's deprecated ground_truths list: joined as the reference; ground-truth
# passages when there are several.
_JOINED = tuple("\n".join(refs) for refs in REFERENCE_CONTEXTS)
_SEVERAL = tuple(refs if len(refs) > 1 else () for refs in REFERENCE_CONTEXTS)

RAGAS01_EVAL = Expected("ragas01-csv", RESPONSES, REFERENCES, RETRIEVED, EMPTY4)
RAGAS01_TESTSET = Expected("ragas01-csv", NONE4, REFERENCES, REFERENCE_CONTEXTS, EMPTY4)
RAGAS04_EVAL = Expected("ragas-csv", RESPONSES, REFERENCES, RETRIEVED, REFERENCE_CONTEXTS)
RAGAS04_TESTSET = Expected("ragas-csv", NONE4, REFERENCES, NONE4, REFERENCE_CONTEXTS)
GOLDENS = Expected("deepeval-csv", NONE4, REFERENCES, NONE4, REFERENCE_CONTEXTS)

# The fifth DeepEval test case: a retriever's passages with their sources.
SHIPPED = (("Acme ships to Europe, and North America.", "Returns take 14 days."),)
TEST_CASES = Expected(
    "deepeval-csv",
    (*RESPONSES, "Europe and North America."),
    (*REFERENCES, "Acme ships to Europe and North America."),
    RETRIEVED + SHIPPED,
    (*REFERENCE_CONTEXTS, ()),
    (*QUERIES, "Which regions does Acme ship to?"),
)

PROMPTFOO_RESULTS = Expected("promptfoo-results-json", ECHOED, REFERENCES, RETRIEVED, EMPTY4)


def _as(expected: Expected, fmt: str) -> Expected:
    return Expected(
        fmt,
        expected.responses,
        expected.references,
        expected.contexts,
        expected.truths,
        expected.queries,
    )


FILES: dict[str, Expected] = {
    # RAGAS 0.1.22: a HF Dataset through datasets (numpy repr lists) and pandas.
    "ragas-0.1.22/dataset.csv": RAGAS01_EVAL,
    "ragas-0.1.22/dataset.jsonl": _as(RAGAS01_EVAL, "ragas01-jsonl"),
    "ragas-0.1.22/dataset_pandas.csv": RAGAS01_EVAL,
    "ragas-0.1.22/result_pandas.csv": RAGAS01_EVAL,
    "ragas-0.1.22/ground_truths.csv": Expected(
        "ragas01-csv", RESPONSES, _JOINED, RETRIEVED, _SEVERAL
    ),
    "ragas-0.1.22/ground_truths.jsonl": Expected(
        "ragas01-jsonl", RESPONSES, _JOINED, RETRIEVED, _SEVERAL
    ),
    # The 0.1 generator's `contexts` are the passages each question was written from.
    "ragas-0.1.22/testset_pandas.csv": RAGAS01_TESTSET,
    "ragas-0.1.22/testset_dataset.csv": RAGAS01_TESTSET,
    # RAGAS 0.4.3: EvaluationDataset and the generator's Testset, through their own writers.
    "ragas-0.4.3/evaluation_dataset.csv": RAGAS04_EVAL,
    "ragas-0.4.3/evaluation_dataset.jsonl": _as(RAGAS04_EVAL, "ragas-jsonl"),
    "ragas-0.4.3/evaluation_dataset_pandas.csv": RAGAS04_EVAL,
    "ragas-0.4.3/evaluation_dataset_hf.csv": RAGAS04_EVAL,
    "ragas-0.4.3/testset.csv": RAGAS04_TESTSET,
    "ragas-0.4.3/testset.jsonl": _as(RAGAS04_TESTSET, "ragas-jsonl"),
    "ragas-0.4.3/testset_pandas.csv": RAGAS04_TESTSET,
    # DeepEval 4.3.1: save_as joins lists with "|" in CSV and JSONL, keeps them in JSON.
    "deepeval-4.3.1/goldens.json": _as(GOLDENS, "deepeval-json"),
    "deepeval-4.3.1/goldens.csv": GOLDENS,
    "deepeval-4.3.1/goldens.jsonl": _as(GOLDENS, "deepeval-jsonl"),
    "deepeval-4.3.1/test_cases.json": _as(TEST_CASES, "deepeval-json"),
    "deepeval-4.3.1/test_cases.csv": TEST_CASES,
    "deepeval-4.3.1/test_cases.jsonl": _as(TEST_CASES, "deepeval-jsonl"),
    "deepeval-4.3.1/synthesizer.json": _as(GOLDENS, "deepeval-json"),
    "deepeval-4.3.1/synthesizer.csv": GOLDENS,
    "deepeval-4.3.1/synthesizer.jsonl": _as(GOLDENS, "deepeval-jsonl"),
    "deepeval-4.3.1/synthesizer_pandas.csv": GOLDENS,
    # promptfoo 0.121.20: the passages are one context var, a blank line between them.
    "promptfoo-0.121.20/promptfooconfig.yaml": Expected(
        "promptfoo-yaml", NONE4, REFERENCES, RETRIEVED, EMPTY4
    ),
    "promptfoo-0.121.20/results.json": PROMPTFOO_RESULTS,
    "promptfoo-0.121.20/results.jsonl": _as(PROMPTFOO_RESULTS, "promptfoo-results-jsonl"),
    "promptfoo-0.121.20/results.yaml": _as(PROMPTFOO_RESULTS, "promptfoo-results-yaml"),
    # promptfoo's CSV output has no assertions, so no reference: the context stands in.
    "promptfoo-0.121.20/results.csv": Expected(
        "promptfoo-results-csv", ECHOED, ("",) * 4, RETRIEVED, RETRIEVED
    ),
}


def test_every_written_file_has_its_expectations() -> None:
    written = {
        str(p.relative_to(WRITTEN))
        for p in WRITTEN.rglob("*")
        if p.is_file() and p.parent != WRITTEN
    }
    assert written == set(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_file_written_by_a_peer_reads_back_as_written(name: str) -> None:
    expected = FILES[name]
    got = load_test_set(WRITTEN / name, strict=True)
    assert got.format == expected.format
    assert len(got.cases) == len(expected.queries)
    assert tuple(c.query for c in got.cases) == expected.queries
    assert tuple(c.response for c in got.cases) == expected.responses
    assert tuple(c.expected_answer.text for c in got.cases) == expected.references
    assert tuple(c.context for c in got.cases) == expected.contexts
    truths = tuple(
        tuple(g.text for g in c.ground_truth if not g.chunk_id.startswith("ctx#"))
        for c in got.cases
    )
    standing_in = tuple(
        tuple(g.text for g in c.ground_truth if g.chunk_id.startswith("ctx#")) for c in got.cases
    )
    if name.endswith("results.csv"):
        assert standing_in == expected.truths  # a case without a reference: its context
    else:
        assert truths == expected.truths


def test_deepeval_retrieved_context_data_keeps_its_source_as_the_passage_id() -> None:
    for suffix in ("json", "csv", "jsonl"):
        case = load_test_set(WRITTEN / f"deepeval-4.3.1/test_cases.{suffix}").cases[-1]
        assert case.retrieved_context_ids == ("kb/shipping.md", "kb/returns.md")
        first = load_test_set(WRITTEN / f"deepeval-4.3.1/test_cases.{suffix}").cases[0]
        assert first.retrieved_context_ids is None


@pytest.mark.parametrize("name", sorted(FILES))
def test_inspect_reads_every_written_file_without_a_problem(name: str) -> None:
    text = render_inspection(load_test_set(WRITTEN / name))
    assert f"format:    {FILES[name].format}" in text
    assert "(0 rows skipped)" in text


# ------------------------------------------------------------------ every nesting, decoded

PASSAGES = [
    "Acme Pro costs $49 per month, billed annually.",
    'He said "it\'s fine", then left.',
    "Plans: Basic | Pro | Enterprise",
    "line one\nline two",
    "[1] See the FAQ, section 2.",
    "Zürich — café 3 €, 東京",
    "C:\\Acme\\config.ini",
]


def _numpy_repr(items: list[str]) -> str:
    """What pandas writes for an array cell, as HF ``datasets`` hands it a list column."""
    return str(np.array(items, dtype=object))


ENCODINGS = {
    "json": json.dumps,
    "json-ascii": lambda items: json.dumps(items, ensure_ascii=True),
    "python-repr": repr,
    "numpy-repr": _numpy_repr,
    "numpy-repr-str-dtype": lambda items: str(np.array(items)),
    "double-json": lambda items: json.dumps(json.dumps(items)),
    "triple-json": lambda items: json.dumps(json.dumps(json.dumps(items))),
    "json-of-python-repr": lambda items: json.dumps(repr(items)),
    "json-of-numpy-repr": lambda items: json.dumps(_numpy_repr(items)),
    "python-list-of-json": lambda items: repr([json.dumps(items)]),
    "json-list-of-json": lambda items: json.dumps([json.dumps(items)]),
    "json-list-of-python-repr": lambda items: json.dumps([repr(items)]),
    "python-list-of-numpy-repr": lambda items: repr([_numpy_repr(items)]),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("count", [1, 2, len(PASSAGES)])
def test_lists_are_decoded_to_the_bottom_whatever_the_nesting(encoding: str, count: int) -> None:
    items = PASSAGES[:count]
    cell = ENCODINGS[encoding](items)
    assert list_value(cell, "contexts") == items
    # A joining writer's cell that holds an encoded list is that list too.
    assert list_value(cell, "context", delimiter="|") == items


def test_a_list_already_decoded_by_the_container_is_kept() -> None:
    assert list_value(PASSAGES, "contexts") == PASSAGES


def test_newline_joined_text_is_one_item_per_line_or_per_paragraph() -> None:
    assert list_value("first\nsecond", "contexts") == ["first", "second"]
    assert list_value("a\nb\n\nc", "contexts") == ["a\nb", "c"]


def test_a_bar_never_splits_text_unless_the_writer_joins_with_it() -> None:
    assert list_value("Plans: Basic|Pro", "contexts") == ["Plans: Basic|Pro"]
    assert list_value("Plans: Basic|Pro", "context", delimiter="|") == ["Plans: Basic", "Pro"]


@pytest.mark.parametrize(
    ("cell", "items"),
    [
        ("a|b", ["a", "b"]),
        ("Plans: Basic | Pro | Enterprise|Zürich", ["Plans: Basic | Pro | Enterprise", "Zürich"]),
        ("step 1\nstep 2|other", ["step 1\nstep 2", "other"]),  # a newline is the passage's
        ("[1] See the FAQ.|[2] See the manual.", ["[1] See the FAQ.", "[2] See the manual."]),
        ('"quoted"|42', ['"quoted"', "42"]),
        ('"quoted whole"', ['"quoted whole"']),  # not JSON-decoded into another text
        ("42", ["42"]),
        ("|a||b|", ["a", "b"]),
        ("a |b| c", ["a", "b", "c"]),  # one side spaced: still DeepEval's join
    ],
)
def test_joined_cells_split_only_at_the_writers_joins(cell: str, items: list[str]) -> None:
    assert list_value(cell, "context", delimiter="|") == items


def test_joined_items_keeps_a_spaced_delimiter_inside_a_passage() -> None:
    assert joined_items("| a | b |", "|") == ["a | b"]


@pytest.mark.parametrize("cell", ["['unclosed", '["a", "b"', "[unclosed", "['a' 'b' oops]"])
def test_a_broken_list_is_refused_rather_than_taken_as_one_passage(cell: str) -> None:
    with pytest.raises(RowError, match="not a JSON or Python list"):
        list_value(cell, "contexts")


def test_a_passage_opening_with_a_closed_bracket_is_text() -> None:
    assert list_value("[1] See the FAQ, section 2.", "contexts") == ["[1] See the FAQ, section 2."]
