"""Test-set loaders: one valid file per format, and every malformed file's message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.testsets import MAX_ROW_BYTES, LoadedTestSet, TestSetError, case_hash, load_test_set

DATA = Path(__file__).resolve().parents[1] / "data"
VALID = DATA / "testsets"
BAD = DATA / "malformed"


# ------------------------------------------------------------------------------ valid


def test_native_jsonl() -> None:
    got = load_test_set(VALID / "native.jsonl")
    assert got.format == "native-jsonl"
    assert [c.id for c in got.cases] == ["acme-q01", "acme-q02", "acme-q03"]
    assert got.problems == ()
    first = got.cases[0]
    assert first.expected_answer.claims[1].importance == "expected"
    assert first.ground_truth[0].page_url == "https://acme.com/pricing"
    assert got.cases[2].response is None
    assert len(got.sha256) == 64
    assert got.name == "native"


def test_utf8_bom_is_accepted_and_hash_is_of_the_raw_bytes() -> None:
    got = load_test_set(VALID / "native_bom.jsonl")
    assert [c.id for c in got.cases] == ["acme-q01", "acme-q02"]
    plain = load_test_set(VALID / "native.jsonl")
    assert got.cases == plain.cases[:2]
    assert got.sha256 != plain.sha256


def test_answer_synthesis_array_maps_fields_and_object_contexts() -> None:
    got = load_test_set(VALID / "answer_synthesis.json")
    assert got.format == "answer-synthesis-json"
    first, second, third = got.cases
    assert (first.id, first.query) == ("ql-1", "What courses teach Python?")
    assert first.response is not None and first.response.startswith("CS101 teaches Python")
    assert first.metadata == {"language": "en"}
    assert first.context is not None
    assert first.context[0].splitlines() == [
        "courseCode: CS101",
        "courseName: Intro to Programming",
        "matchedLearningOutcomes: Write Python programs; Use lists and dicts",
    ]
    assert second.context == ("STAT200: probability, estimation and hypothesis testing.",)
    assert third.context == ("DB300 covers SQL and relational design.",)


def test_answer_synthesis_object_form() -> None:
    got = load_test_set(VALID / "answer_synthesis_object.json")
    assert [c.id for c in got.cases] == ["ql-1", "ql-2"]


def test_harness_csv() -> None:
    got = load_test_set(VALID / "harness.csv")
    assert got.format == "harness-csv"
    a, b, c = got.cases
    assert [x.id for x in got.cases] == ["row-1", "row-2", "row-3"]
    assert a.query == "What is the EU AI Act?"
    assert a.expected_answer.text.startswith("The EU AI Act is the world's first")
    assert a.context == (
        "The EU AI Act was proposed in April 2021, and it classifies AI systems into risk tiers.",
    )
    assert a.metadata == {"category": "regulation", "difficulty": "easy"}
    assert "\npropagating errors" in b.expected_answer.text  # newline inside quotes kept
    assert b.context is None and b.metadata == {"difficulty": "hard"}
    assert c.context == ("Tier 1: unacceptable", "Tier 2: high")
    assert a.response is None


def test_ragas_jsonl_and_csv_agree() -> None:
    jl = load_test_set(VALID / "ragas.jsonl")
    cs = load_test_set(VALID / "ragas.csv")
    assert (jl.format, cs.format) == ("ragas-jsonl", "ragas-csv")
    assert jl.cases[0].query == cs.cases[0].query == "When was the first super bowl?"
    assert jl.cases[0].context == cs.cases[0].context
    assert jl.cases[0].expected_answer.text == "The first superbowl was held on January 15, 1967"
    assert jl.cases[1].ground_truth[0].chunk_id == "ref#0"
    assert cs.cases[1].context == ("The Steelers and Patriots have each won six.",)


def test_case_hash_changes_with_content() -> None:
    cases = load_test_set(VALID / "native.jsonl").cases
    assert case_hash(cases[0]) == case_hash(cases[0].model_copy())
    assert case_hash(cases[0]) != case_hash(cases[0].model_copy(update={"query": "other"}))


def test_loaded_test_set_is_frozen() -> None:
    got = load_test_set(VALID / "native.jsonl")
    assert isinstance(got, LoadedTestSet)
    with pytest.raises(AttributeError):
        got.cases = ()  # type: ignore[misc]


# ------------------------------------------------------------------------------ malformed
# file -> (line of the problem, 0 for file-level errors, and a piece of the message)

FATAL = {
    "empty.jsonl": "empty file",
    "whitespace_only.jsonl": "empty file",
    "latin1.jsonl": "not UTF-8: invalid byte 0xe9 at byte offset 98 (line 2)",
    "utf16.jsonl": "UTF-16",
    "all_bad.jsonl": "no valid test case: 3 problem(s)",
    "unknown_format.txt": "unknown test-set format (extension '.txt'",
    "bad_json_doc.json": "invalid JSON at line 3",
    "json_scalar.json": "expected a JSON array or an object with 'testCases', got str",
    "json_object_no_testcases.json": "needs a 'testCases' array (found keys: cases)",
    "json_empty_array.json": "empty test set",
    "csv_missing_column.csv": "missing column(s) expected_output",
    "csv_unknown_header.csv": "unknown CSV format",
    "csv_header_only.csv": "no data rows after the header",
    "csv_duplicate_column.csv": "duplicate column(s) input",
}

ROWS = {
    "bad_json_line.jsonl": (2, "invalid JSON"),
    "not_object_line.jsonl": (2, "expected a JSON object, got list"),
    "missing_query.jsonl": (2, "query: Field required"),
    "duplicate_ids.jsonl": (3, "duplicate id 'a' (first on line 1)"),
    "bad_importance.jsonl": (2, "expected_answer.claims.0.importance"),
    "empty_query.jsonl": (2, "query: String should have at least 1 character"),
    "unknown_field.jsonl": (2, "answer: Extra inputs are not permitted"),
    "as_missing_question.json": (7, "missing 'question'"),
    "as_bad_context.json": (9, "'context' must be a list of strings or objects, got int"),
    "as_duplicate_query_log_id.json": (7, "duplicate id 'q1' (first on line 2)"),
    "csv_field_count.csv": (3, "row has 3 fields, header has 2"),
    "csv_unterminated_quote.csv": (3, "unreadable CSV row"),
    "csv_empty_input.csv": (3, "'input' is empty"),
    "ragas_bad_contexts.csv": (3, "'retrieved_contexts' is not a JSON or Python list"),
    "ragas_missing_user_input.jsonl": (2, "missing 'user_input'"),
}


def test_there_are_at_least_twenty_malformed_files_and_all_are_covered() -> None:
    files = {p.name for p in BAD.iterdir()}
    assert len(files) >= 20
    assert files == set(FATAL) | set(ROWS) | {"huge_row.jsonl"}


@pytest.mark.parametrize("name", sorted(FATAL))
def test_file_level_problems_raise_naming_the_file(name: str) -> None:
    with pytest.raises(TestSetError) as info:
        load_test_set(BAD / name)
    message = str(info.value)
    assert str(BAD / name) in message
    assert FATAL[name] in message


@pytest.mark.parametrize("name", sorted(ROWS))
def test_bad_rows_are_skipped_and_reported(name: str) -> None:
    line, reason = ROWS[name]
    got = load_test_set(BAD / name)
    assert len(got.cases) >= 1
    assert len(got.problems) == 1, got.problems
    problem = got.problems[0]
    assert problem.file == str(BAD / name)
    assert problem.line == line
    assert reason in problem.reason
    assert str(problem).startswith(f"{BAD / name}:{line}: ")


@pytest.mark.parametrize("name", sorted(ROWS))
def test_strict_refuses_files_with_bad_rows(name: str) -> None:
    line, reason = ROWS[name]
    with pytest.raises(TestSetError) as info:
        load_test_set(BAD / name, strict=True)
    assert reason in str(info.value)
    assert "refused (strict)" in str(info.value)
    assert f"{BAD / name}:{line}: " in str(info.value)
    assert info.value.problems[0].line == line


def test_huge_row_against_a_small_limit() -> None:
    got = load_test_set(BAD / "huge_row.jsonl", max_row_bytes=1000)
    assert [c.id for c in got.cases] == ["a"]
    assert got.problems[0].line == 2
    assert "over the 1,000-byte limit per row" in got.problems[0].reason


def test_huge_row_at_the_default_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big = {"id": "big", "query": "q", "response": "x" * (MAX_ROW_BYTES + 10)}
    path.write_text(
        json.dumps({"id": "a", "query": "q"}) + "\n" + json.dumps(big) + "\n", encoding="utf-8"
    )
    got = load_test_set(path)
    assert [c.id for c in got.cases] == ["a"]
    assert "over the 1,000,000-byte limit per row" in got.problems[0].reason


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TestSetError, match="cannot read test set"):
        load_test_set(tmp_path / "nope.jsonl")


def test_content_sniffing_for_unknown_extensions(tmp_path: Path) -> None:
    path = tmp_path / "cases.data"
    path.write_text((VALID / "native.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    assert load_test_set(path).format == "native-jsonl"
    array = tmp_path / "cases.txt"
    array.write_text((VALID / "answer_synthesis.json").read_text(encoding="utf-8"))
    assert load_test_set(array).format == "answer-synthesis-json"


ODD = Path(__file__).resolve().parents[1] / "data" / "odd_shapes"


def test_files_of_odd_shapes_load_without_losing_a_value() -> None:
    # A column of another shape is kept, never a reason to refuse a row or the file.
    listed = load_test_set(ODD / "metadata_list.csv").cases
    assert [c.metadata for c in listed] == [{"items": [1, 2]}, {}]
    text = load_test_set(ODD / "metadata_not_json.csv").cases
    assert [c.metadata for c in text] == [{"level": "easy"}, {"value": "{not json}"}]
    # "question" is the most common name of a query, "answer" of a response.
    plain = load_test_set(ODD / "question_answer.csv")
    assert [(c.query, c.response) for c in plain.cases] == [("What is X?", "X is Y")]
