"""promptfoo's own result files (``eval -o`` JSON/YAML/JSONL/CSV, ``promptfoo export``) as
test sets with recorded outputs; fixtures written from promptfoo's documented shapes
(see ``tests/data/testsets/peers/promptfoo_results/README.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.testsets import TestSetError, load_test_set
from engine.testsets.formats.promptfoo_results import is_result_table, table_results

RESULTS = Path(__file__).resolve().parents[1] / "data" / "testsets" / "peers" / "promptfoo_results"
SAME_EVAL = ["eval_output.json", "eval_output.yaml", "eval_output.jsonl", "eval_output.csv",
             "eval_output_legacy.csv"]  # fmt: skip


@pytest.mark.parametrize("name", SAME_EVAL)
def test_every_output_format_gives_one_case_per_test_and_provider_with_its_output(
    name: str,
) -> None:
    loaded = load_test_set(RESULTS / name)
    assert loaded.format == f"promptfoo-results-{name.rsplit('.', 1)[1]}"
    cases = {c.id: c for c in loaded.cases}
    assert sorted(cases) == ["test-1-p0", "test-1-p1", "test-2-p0"]
    first, other = cases["test-1-p0"], cases["test-1-p1"]
    assert first.query == other.query == "How much does Acme Pro cost?"
    assert first.response == "Acme Pro costs $49 per month, billed annually."
    assert other.response == "It is $49 a month on the annual plan."
    assert first.context == ("Acme Pro is $49 per month, billed annually.",)
    assert first.domain == "acme.com"
    assert first.ai_provider == "openai:gpt-4o-mini"
    assert other.ai_provider.startswith(("anthropic:", "haiku"))
    kept = cases["test-2-p0"].metadata["promptfoo"]
    assert kept["success"] is False and kept["score"] == 0.5
    assert "14-day" in kept["reason"]
    # The provider's error is one skipped row naming its line, not a case without answer.
    (problem,) = loaded.problems
    assert "529 Overloaded" in problem.reason and problem.line > 1


@pytest.mark.parametrize("name", ["eval_output.json", "eval_output.yaml", "eval_output.jsonl"])
def test_the_reference_is_the_tests_factuality_or_similar_assertion(name: str) -> None:
    cases = {c.id: c for c in load_test_set(RESULTS / name).cases}
    assert cases["test-1-p0"].expected_answer.text == (
        "Acme Pro costs $49 per month when billed annually."
    )
    assert cases["test-2-p0"].expected_answer.text == "Acme offers a 14-day free trial."
    assert cases["test-2-p0"].metadata["rubric"] == "Mentions the 14-day trial"


def test_json_lines_are_numbered_where_the_result_starts() -> None:
    loaded = load_test_set(RESULTS / "eval_output.json")
    lines = (RESULTS / "eval_output.json").read_text(encoding="utf-8").splitlines()
    (problem,) = loaded.problems
    assert lines[problem.line - 1].strip() == "{"
    assert "7a04" in lines[problem.line]


def test_an_export_without_a_question_var_takes_the_rendered_chat_prompt() -> None:
    loaded = load_test_set(RESULTS / "promptfoo_export.json")
    first, second = loaded.cases
    assert first.query == "Wie kann ich mein Abo kündigen?"  # last user message sent
    assert first.expected_answer.text.startswith("Sie können Ihr Abo unter Einstellungen")
    assert first.metadata["description"].endswith("keep the tone friendly")
    # An object output: the one text it holds.
    assert second.response == (
        "Yes. Add your VAT number in Settings > Billing; new invoices will show it."
    )


def test_a_plain_csv_with_brackets_in_no_header_is_not_a_result_table() -> None:
    assert not is_result_table(["question", "answer", "status"])
    assert is_result_table(["q", "[echo] p", "Status", "Score", "Named Scores",
                            "Grader Reason", "Comment"])  # fmt: skip


def test_the_oldest_csv_header_is_the_prompt_as_json() -> None:
    header = ["question", '{"raw":"Q: {{question}}","label":"p1","provider":"openai:gpt-4"}']
    (result,) = table_results(header, ["What is 2+2?", "[PASS] It is 4."])
    assert result["provider"]["id"] == "openai:gpt-4"
    assert result["response"] == {"output": "It is 4."}


def test_a_result_file_where_every_output_errored_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "out.jsonl"
    bad.write_text(
        '{"testIdx": 0, "promptIdx": 0, "testCase": {"vars": {"question": "Q?"}}, '
        '"response": {"error": "timeout"}, "error": "timeout", "success": false}\n',
        encoding="utf-8",
    )
    with pytest.raises(TestSetError) as info:
        load_test_set(bad)
    message = str(info.value)
    assert "\n" not in message and f"{bad}:1" in message and "timeout" in message
