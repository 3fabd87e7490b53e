"""promptfoo result files through ``evalhouse inspect`` and ``run`` into a real warehouse:
the recorded outputs are scored without a target, and what ``inspect`` promises per case
is what the run scores (one plan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalhouse.cli import main
from warehouse.queries import Warehouse

PEERS = Path(__file__).resolve().parents[1] / "data" / "testsets" / "peers"
RESULTS = PEERS / "promptfoo_results"


def _promised(text: str) -> dict[str, set[str]]:
    """Case id -> metrics ``inspect`` says it scores, read from its report."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("    ") and "): " in line:
            case_id = line.strip().split(" ", 1)[0]
            gets = line.rsplit("): ", 1)[1]
            out[case_id] = set() if gets == "nothing" else set(gets.split(", "))
    return out


@pytest.mark.parametrize(
    "name", ["eval_output.json", "eval_output.csv", "promptfoo_export.json", "../ragas02.json"]
)
def test_inspect_promises_what_the_run_scores(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    path = RESULTS / name
    assert main(["inspect", str(path), "--home", home]) == 0
    promised = _promised(capsys.readouterr().out)
    assert promised
    assert main(["run", "--test-set", str(path), "--name", "pf", "--home", home]) in (0, 1)
    run_id = capsys.readouterr().out.strip().splitlines()[-1]
    frame = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql(
            "SELECT sample_id, accuracy, completeness, attribution, response, ai_provider, "
            "error FROM results WHERE run_id = $run ORDER BY sample_id",
            {"run": run_id},
        )
        .frame
    )
    assert sorted(frame["sample_id"].to_list()) == sorted(promised)
    for row in frame.to_dicts():
        assert row["error"] is None and row["response"]  # the recorded output, scored
        for metric in ("accuracy", "completeness", "attribution"):
            assert (row[metric] is not None) == (metric in promised[row["sample_id"]]), (
                row["sample_id"],
                metric,
            )


def test_a_result_file_runs_with_its_providers_as_ai_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(tmp_path / "home")
    path = RESULTS / "eval_output.jsonl"
    assert main(["run", "--test-set", str(path), "--name", "pf-jsonl", "--home", home]) in (0, 1)
    captured = capsys.readouterr()
    run_id = captured.out.strip().splitlines()[-1]
    assert "promptfoo-results-jsonl" in captured.err
    frame = (
        Warehouse(tmp_path / "home" / "warehouse.duckdb")
        .sql(
            "SELECT sample_id, ai_provider, completeness FROM results WHERE run_id = $run "
            "ORDER BY sample_id",
            {"run": run_id},
        )
        .frame
    )
    assert frame["ai_provider"].to_list() == ["openai:gpt-4o-mini", "haiku", "openai:gpt-4o-mini"]
    assert frame["completeness"].null_count() == 0  # claims derived from the references


def test_inspect_names_each_missing_file_target_of_a_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pricing.md").write_text("Acme Pro is $49 per month.\n", "utf-8")
    (tmp_path / "prompt.txt").write_text("Context: {{context}}\nCustomer: {{body}}\n", "utf-8")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts:\n  - file://prompt.txt\n  - file://gone_prompt.txt\n"
        "tests:\n"
        "  - vars:\n      body: How much is Pro?\n      context: file://docs/pricing.md\n"
        "  - vars:\n      body: Is there a trial?\n      context: file://docs/trial.md\n"
        "  - vars:\n      body: Refunds?\n      context: file://docs/trial.md\n",
        encoding="utf-8",
    )
    assert main(["inspect", str(config), "--home", str(tmp_path / "home")]) == 0
    out = capsys.readouterr().out
    missing = [line for line in out.splitlines() if "does not exist" in line]
    assert len(missing) == 2  # one line per missing file, however many tests name it
    assert any(str(tmp_path / "docs" / "trial.md") in line and "2 test(s)" in line
               for line in missing)  # fmt: skip
    assert any(str(tmp_path / "gone_prompt.txt") in line for line in missing)
    assert "test-1 (promptfooconfig) [needs a target]: accuracy, faithfulness" in out


def test_inspect_refuses_a_bad_analyzer_section_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("analyzer:\n  completeness:\n    derive_claims: maybe\n", "utf-8")
    path = str(RESULTS / "eval_output.json")
    assert main(["inspect", path, "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "analyzer.completeness.derive_claims" in err and "Traceback" not in err
