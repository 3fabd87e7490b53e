"""Peer formats as their docs describe them, every list encoding, --map, domain derivation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.models import AnalyzerConfig, CompletenessConfig
from engine.testsets import TestSetError, load_test_set
from engine.testsets.inspect import case_capabilities, render_inspection

PEERS = Path(__file__).resolve().parents[1] / "data" / "testsets" / "peers"
VALID = PEERS.parent


def test_ragas_01_pandas_csv_drops_the_index_column_and_reads_repr_lists() -> None:
    got = load_test_set(PEERS / "ragas01_pandas.csv")
    assert got.format == "ragas01-csv"
    first, second = got.cases
    assert first.query == "How much does Acme Pro cost?"
    assert first.response == "Acme Pro costs $49 per month, billed annually."
    assert first.expected_answer.text == "Acme Pro costs $49 per month when billed annually."
    assert second.context == (
        "Start a 14-day free trial, no credit card required.",
        "Trials convert to Acme Pro after 14 days.",
    )
    assert all("" not in c.metadata and "unnamed: 0" not in c.metadata for c in got.cases)
    # the domain: the host of a context URL, else the file's name
    assert (first.domain, second.domain) == ("acme.com", "ragas01_pandas")


def test_ragas_01_ground_truths_list_is_the_reference_and_ground_truth() -> None:
    got = load_test_set(PEERS / "ragas01_ground_truths.jsonl")
    assert got.format == "ragas01-jsonl"
    case = got.cases[0]
    assert case.expected_answer.text == "Ada Park founded Acme.\nAcme was founded in Lyon in 2009."
    assert [g.text for g in case.ground_truth] == [
        "Ada Park founded Acme.",
        "Acme was founded in Lyon in 2009.",
    ]
    assert got.cases[1].expected_answer.text == "Acme is based in Lyon."


def test_ragas_02_json_array() -> None:
    got = load_test_set(PEERS / "ragas02.json")
    assert got.format == "ragas-json"
    case = got.cases[0]
    assert case.context == ("Refunds are accepted within 30 days of purchase.",)
    assert [(g.chunk_id, g.text) for g in case.ground_truth] == [
        ("ref#0", "Acme accepts refunds within 30 days of purchase.")
    ]
    assert case.response == "You can get a refund within 30 days of purchase."


def test_deepeval_goldens_json_from_save_as() -> None:
    got = load_test_set(PEERS / "deepeval_goldens.json")
    assert got.format == "deepeval-json"
    first, second = got.cases
    assert first.response is None  # goldens have no actual_output yet
    assert first.expected_answer.text == "The Acme warranty lasts two years."
    # DeepEval's `context` is the ideal retrieval: ground truth, not retrieved context
    assert [g.text for g in second.ground_truth] == [
        "An extra year of warranty costs $29.",
        "Extensions must be bought within 30 days.",
    ]
    assert second.context is None
    assert first.metadata == {"source_file": "docs/warranty.md"}


def test_deepeval_csv_splits_context_on_the_save_as_delimiter() -> None:
    got = load_test_set(PEERS / "deepeval_test_cases.csv")
    assert got.format == "deepeval-csv"
    case = got.cases[1]
    assert case.response == "No extension is possible."
    assert [g.text for g in case.ground_truth] == [
        "An extra year of warranty costs $29.",
        "Extensions must be bought within 30 days.",
    ]


def test_promptfoo_config_inline_and_file_tests_with_default_vars() -> None:
    got = load_test_set(PEERS / "promptfoo" / "promptfooconfig.yaml")
    assert got.format == "promptfoo-yaml"
    assert [c.query for c in got.cases] == [
        "How much does Acme Pro cost?",
        "Does Acme offer a free trial?",
        "Where is Acme based?",
        "Who founded Acme?",
    ]
    pricing, trial, where, founder = got.cases
    assert {c.domain for c in got.cases} == {"acme.com"}  # from defaultTest.vars
    assert pricing.expected_answer.text == "Acme Pro costs $49 per month when billed annually."
    assert pricing.expected_answer.claims == ()
    assert pricing.metadata["contains"] == ["$49"]
    assert pricing.context == ("Acme Pro is $49 per month, billed annually.",)
    assert trial.expected_answer.text == "Acme offers a 14-day free trial."
    assert trial.metadata["rubric"] == "Mentions the 14-day trial"
    assert where.expected_answer.text == "Acme is based in Lyon."  # "factuality: ..."
    assert founder.expected_answer.text == "Ada Park"  # a bare __expected means equals
    assert all(c.response is None for c in got.cases)


def test_promptfoo_csv_alone(tmp_path: Path) -> None:
    got = load_test_set(PEERS / "promptfoo" / "tests.csv")
    assert got.format == "promptfoo-csv"
    assert got.cases[0].metadata == {"description": "location"}


def test_langfuse_items_skip_archived_and_read_object_inputs() -> None:
    got = load_test_set(PEERS / "langfuse_items.jsonl")
    assert got.format == "langfuse-jsonl"
    one, two = got.cases
    assert (one.id, one.query) == ("lf-item-1", "What is the Acme support phone number?")
    assert one.expected_answer.text == "Call Acme support at 555-0100."
    assert one.domain == "support.acme.com"  # from metadata.domain
    assert two.query == "What are Acme's support hours?"
    assert two.domain == "langfuse_items"
    assert [(p.line, p.reason) for p in got.problems] == [(3, "archived dataset item; row skipped")]


def test_phoenix_examples_read_query_keys_and_messages() -> None:
    got = load_test_set(PEERS / "phoenix_examples.jsonl")
    assert got.format == "phoenix-jsonl"
    one, two = got.cases
    assert one.query == "How do I reset my Acme password?"
    assert one.expected_answer.text == "Click 'Forgot password' on the Acme login page."
    assert one.domain == "help.acme.com"  # host of metadata.source_url
    assert two.query == "What is Acme's return policy?"  # the last user message


def test_answer_synthesis_context_is_its_ground_truth() -> None:
    got = load_test_set(VALID / "answer_synthesis.json")
    second = got.cases[1]
    assert [(g.chunk_id, g.text) for g in second.ground_truth] == [
        ("ctx#0", "STAT200: probability, estimation and hypothesis testing.")
    ]
    assert second.domain == "answer_synthesis"


# ------------------------------------------------------------------ list encodings

PASSAGES = ["Acme is in Lyon.", "It was founded in 2009, by Ada Park."]
ENCODINGS = {
    "json": json.dumps(PASSAGES),
    "python_repr": repr(PASSAGES),
    "double_encoded": json.dumps(json.dumps(PASSAGES)),
    "newline_joined": "\n".join(PASSAGES),
    "blank_line_joined": "\n\n".join(PASSAGES),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_every_list_encoding_in_csv(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "cases.csv"
    cell = ENCODINGS[encoding].replace('"', '""')
    path.write_text(
        f'user_input,response,retrieved_contexts,reference\n"Where?","Lyon.","{cell}","Lyon"\n',
        encoding="utf-8",
    )
    assert load_test_set(path).cases[0].context == tuple(PASSAGES)


@pytest.mark.parametrize("encoding", ["json", "python_repr", "double_encoded"])
def test_list_encodings_as_jsonl_strings(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "cases.jsonl"
    row = {"question": "Where?", "answer": "Lyon.", "contexts": ENCODINGS[encoding]}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert load_test_set(path).cases[0].context == tuple(PASSAGES)


def test_a_single_passage_with_brackets_inside_stays_one_passage(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text('user_input,retrieved_contexts\n"Q","Acme [the company] is in Lyon."\n')
    assert load_test_set(path).cases[0].context == ("Acme [the company] is in Lyon.",)


# ------------------------------------------------------------------ --map


def test_map_renames_columns_before_detection(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        "ticket,prompt_text,bot_reply,gold,site\n"
        'T-1,"What does Acme cost?","$49.","Acme costs $49.","https://acme.com/pricing"\n',
        encoding="utf-8",
    )
    mapping = {
        "ticket": "id",
        "prompt_text": "query",
        "bot_reply": "response",
        "gold": "reference",
        "site": "domain",
    }
    got = load_test_set(path, column_map=mapping)
    case = got.cases[0]
    assert got.format == "columns-csv"
    assert (case.id, case.query, case.response) == ("T-1", "What does Acme cost?", "$49.")
    assert case.expected_answer.text == "Acme costs $49."
    assert case.domain == "acme.com"  # a URL given as the domain keeps its host
    assert got.column_map == mapping


def test_map_of_an_absent_column_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text('prompt_text,bot_reply\n"Q","A"\n', encoding="utf-8")
    with pytest.raises(TestSetError) as info:
        load_test_set(path, column_map={"question_txt": "query"})
    message = str(info.value)
    assert "--map question_txt=query: column 'question_txt' is not in the file" in message
    assert "prompt_text" in message and "\n" not in message


def test_map_to_an_unknown_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text('prompt_text\n"Q"\n', encoding="utf-8")
    with pytest.raises(TestSetError, match="unknown field 'questionn'"):
        load_test_set(path, column_map={"prompt_text": "questionn"})


def test_columns_named_freely_are_read_by_meaning(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text('prompt_text,bot_reply\n"Q","A"\n', encoding="utf-8")
    loaded = load_test_set(path)
    assert loaded.cases[0].query == "Q" and loaded.cases[0].response == "A"
    assert "prompt_text -> query" in loaded.inferred and "bot_reply -> response" in loaded.inferred


def test_unknown_csv_without_a_question_column_suggests_map(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text('colour,weight\n"red","3"\n', encoding="utf-8")
    with pytest.raises(TestSetError, match=r"unknown CSV format.*--map COLUMN=query"):
        load_test_set(path)


# ------------------------------------------------------------------ bounded reading


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"id": "a", "query": "q"}) + "\n" * 5000, encoding="utf-8")
    with pytest.raises(TestSetError) as info:
        load_test_set(path, max_file_bytes=1000)
    assert "over the 1,000-byte limit of a test set" in str(info.value)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------ inspect


def test_capabilities_say_why_each_metric_is_null() -> None:
    native = load_test_set(VALID / "native.jsonl").cases
    cap = case_capabilities(native[0])
    assert cap.scored == ("accuracy", "completeness", "attribution", "faithfulness")
    goldens = load_test_set(PEERS / "deepeval_goldens.json").cases
    cap = case_capabilities(goldens[0])
    assert cap.needs_target
    # The run derives claims from the expected output; inspect says so instead of null.
    assert "completeness" in cap.scored
    assert any("derived from the expected answer" in note for note in cap.notes)
    off = AnalyzerConfig(completeness=CompletenessConfig(derive_claims=False))
    assert case_capabilities(goldens[0], off).null["completeness"] == (
        "no expected claims (derive_claims is off)"
    )
    assert "domain 'deepeval_goldens' is not a host name" in cap.null["attribution"]
    assert "accuracy" in cap.scored


def test_render_inspection_lists_format_counts_and_skipped_rows() -> None:
    text = render_inspection(load_test_set(PEERS / "langfuse_items.jsonl"))
    assert "format:    langfuse-jsonl" in text
    assert "cases:     2 (1 rows skipped)" in text
    assert "responses: 0 recorded, 2 need a target (--target)" in text
    assert f"{PEERS / 'langfuse_items.jsonl'}:3: archived dataset item; row skipped" in text


# ------------------------------------------------------------------ lists as peers write them


@pytest.mark.parametrize(
    ("cell", "items"),
    [
        ('["a", "b"]', ["a", "b"]),  # JSON
        ("['a', 'b']", ["a", "b"]),  # Python repr (pandas)
        ("['first passage' 'second one']", ["first passage", "second one"]),  # numpy repr
        ("['a b'\n 'c d']", ["a b", "c d"]),  # numpy wraps long arrays over lines
        ('"[\\"a\\", \\"b\\"]"', ["a", "b"]),  # double-encoded JSON
        ('[\'["a", "b"]\']', ["a", "b"]),  # a Python list holding JSON text (RAGAS)
        ('["[\\"a\\", \\"b\\"]"]', ["a", "b"]),  # a JSON list holding JSON text
        ("one\ntwo", ["one", "two"]),  # one item per line
        ("['only one']", ["only one"]),
    ],
)
def test_lists_are_decoded_to_the_bottom(cell: str, items: list[str]) -> None:
    from engine.testsets.values import list_value

    assert list_value(cell, "contexts") == items


def test_a_ragas_01_context_column_and_reference_contexts_are_read(tmp_path: Path) -> None:
    path = tmp_path / "ragas01.csv"
    path.write_text(
        "question,answer,context,ground_truth,reference_contexts\n"
        '"How long is the trial?","30 days","[\'The trial lasts 30 days.\' \'Plans renew '
        'monthly.\']","30 days","[\'Trials last 30 days.\']"\n',
        encoding="utf-8",
    )
    case = load_test_set(path).cases[0]
    assert case.context == ("The trial lasts 30 days.", "Plans renew monthly.")
    assert [c.text for c in case.ground_truth] == ["Trials last 30 days."]


def test_deepeval_jsonl_lists_joined_with_a_bar_are_split(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    path.write_text(
        '{"input": "q?", "actual_output": "a", "retrieval_context": "first|second", '
        '"expected_output": "a", "additional_metadata": null}\n',
        encoding="utf-8",
    )
    assert load_test_set(path).cases[0].context == ("first", "second")


def test_promptfoo_vars_without_a_question_var_use_the_most_question_like(
    tmp_path: Path,
) -> None:
    (tmp_path / "cases.csv").write_text(
        "context,customer_message,language\nOrders ship Monday.,Where is my order?,en\n",
        encoding="utf-8",
    )
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: [file://prompt.txt]\ntests: file://cases.csv\n", encoding="utf-8")
    assert load_test_set(config).cases[0].query == "Where is my order?"
