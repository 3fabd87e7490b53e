"""Every export format, read back by evalhouse, gives the same cases (query, reference,
contexts, ground truth), and the files are what the peer's own loader expects: promptfoo's
``context`` is one string (a YAML list would run each case once per passage), descriptions
are whole, and an extension that does not match the format is refused, never silently
written in another format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engine.testsets import load_test_set
from evalhouse.cli import main

LONG_QUERY = (
    "Which Acme plan should a team of twelve people pick if they need single sign-on, "
    "audit logs and a yearly invoice?"
)
CASES = [
    {
        "id": "q1", "domain": "acme.com", "query": LONG_QUERY,
        "response": "Acme Business: it has SSO, audit logs and yearly invoices.",
        "expected_answer": {"text": "The Business plan covers SSO, audit logs and invoices."},
        "context": ["Acme Business includes SSO and audit logs.",
                    "Business plans are invoiced yearly, from 10 seats."],
        "ground_truth": [{"chunk_id": "p1#0", "page_url": "https://acme.com/plans",
                          "text": "Acme Business includes SSO and audit logs."}],
    },
    {
        "id": "q2", "domain": "acme.com", "query": "Does Acme offer a free trial?",
        "response": "Yes, 14 days.",
        "expected_answer": {"text": "Acme offers a 14-day free trial."},
        # A passage with a blank line and one with "|": each stays one passage.
        "context": ["Every plan starts with a 14-day free trial.\n\nNo card is needed.",
                    "Plans: Pro | Business"],
    },
]  # fmt: skip
OUTPUTS = [
    ("jsonl", "out.jsonl"),
    ("csv", "out.csv"),
    ("ragas", "out.jsonl"),
    ("ragas", "out.csv"),
    ("deepeval", "out.json"),
    ("deepeval", "out.csv"),
    ("promptfoo", "out.yaml"),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One run of the cases in a real warehouse; its home and run id."""
    root = tmp_path_factory.mktemp("roundtrip")
    source = root / "cases.jsonl"
    source.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    home = root / "home"
    assert main(["run", "--test-set", str(source), "--name", "rt", "--home", str(home)]) in (0, 1)
    import warehouse.queries as queries

    run_id = str(
        queries.Warehouse(home / "warehouse.duckdb").sql("SELECT run_id FROM runs").frame[0, 0]
    )
    return home, run_id


@pytest.mark.parametrize(("fmt", "name"), OUTPUTS)
def test_an_export_reads_back_as_the_same_cases(
    fmt: str, name: str, exported: tuple[Path, str], tmp_path: Path
) -> None:
    home, run_id = exported
    target = tmp_path / name
    args = ["export", run_id, "--format", fmt, "--output", str(target), "--home", str(home)]
    assert main(args) == 0
    back = {c.id: c for c in load_test_set(target).cases}
    assert sorted(back) == ["q1", "q2"]
    for original in CASES:
        case = back[str(original["id"])]
        assert case.query == original["query"], fmt
        assert case.expected_answer.text == original["expected_answer"]["text"], fmt  # type: ignore[index]
        assert case.context == tuple(original["context"]), fmt  # type: ignore[arg-type]
        assert case.response == original["response"], fmt
    truth = [c.text for c in back["q1"].ground_truth]
    assert truth == ["Acme Business includes SSO and audit logs."], fmt


def test_promptfoo_gets_one_context_string_and_whole_descriptions(
    exported: tuple[Path, str], tmp_path: Path
) -> None:
    home, run_id = exported
    target = tmp_path / "tests.yaml"
    args = ["export", run_id, "--format", "promptfoo", "--output", str(target)]
    assert main([*args, "--home", str(home)]) == 0
    tests = yaml.safe_load(target.read_text(encoding="utf-8"))
    first = next(t for t in tests if t["metadata"]["id"] == "q1")
    assert isinstance(first["vars"]["context"], str)  # a list var runs once per element
    assert "SSO and audit logs." in first["vars"]["context"]
    assert "invoiced yearly" in first["vars"]["context"]
    assert first["description"] == LONG_QUERY  # not cut at 80 characters


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("deepeval", "x.jsonl"), ("ragas", "x.json"), ("jsonl", "x.csv"), ("promptfoo", "x.json")],
)
def test_an_output_extension_the_format_cannot_be_is_refused(
    fmt: str, name: str, exported: tuple[Path, str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    home, run_id = exported
    target = tmp_path / name
    args = ["export", run_id, "--format", fmt, "--output", str(target), "--home", str(home)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err
    assert not target.exists()
