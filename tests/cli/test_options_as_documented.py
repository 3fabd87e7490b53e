"""Run options parse as the docs show them: a JSON template for a text option (the http
target's body) is its text, and tier bounds out of order are refused in one line."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.lake import read_table
from engine.models import RunConfig, TierThresholds, option_value
from engine.settings import Paths
from evalhouse.cli import main
from tests.engine.test_targets import Endpoint

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _test_set(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    case = {"id": "s0", "query": "How much is Pro?", "expected_answer": {"text": "Pro is $20."}}
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    return path


def _run(home: Paths, test_set: Path, *args: str) -> list[str]:
    return ["run", "--home", str(home.home), "--test-set", str(test_set), "--name", "opt",
            "--no-ingest", "--workers", "1", *args]  # fmt: skip


def _stored(home: Paths, out: str) -> RunConfig:
    run_id = out.strip().splitlines()[-1]
    row = read_table(home.lake, "runs", run_id, 0).to_pylist()[-1]
    return RunConfig.model_validate_json(row["config"])


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    server.default = lambda body: (
        200,
        {},
        json.dumps({"answer": "Pro is $20.", "sources": [{"text": "Pro costs $20."}]}).encode(),
    )
    yield server
    server.close()


def _documented_http_options() -> list[str]:
    """The ``--option`` examples of the http target, as docs/judges-and-verifiers.md
    writes them (inline code), split as a shell would."""
    text = (DOCS / "judges-and-verifiers.md").read_text(encoding="utf-8")
    section = text[text.index("`--target http:URL`") :].split("\n\n", 1)[0]
    examples = re.findall(r"`(--option [^`]+)`", section)
    assert len(examples) == 4, examples
    return [word for example in examples for word in shlex.split(example)]


def test_the_documented_http_target_options_reach_the_endpoint(
    home: Paths,
    tmp_path: Path,
    endpoint: Endpoint,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = _documented_http_options()
    assert 'http_body={"question": "{{query}}"}' in options  # the README's own example
    monkeypatch.setenv("MY_TOKEN", "tok-123")
    code = main(_run(home, _test_set(tmp_path), "--target", f"http:{endpoint.url}", *options))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert endpoint.bodies == [{"question": "How much is Pro?"}]
    assert endpoint.headers[0]["authorization"] == "Bearer tok-123"
    stored = _stored(home, out)
    assert json.loads(stored.http.body) == {"question": "{{query}}"}
    assert (stored.http.answer_path, stored.http.contexts_path) == ("$.answer", "$.sources[*].text")


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("http_body", '{"question": "{{query}}"}', '{"question": "{{query}}"}'),
        ("http.body", "[1, 2]", "[1, 2]"),
        ("series", "2024", "2024"),
        ("series", '"weekly"', "weekly"),
        ("http_answer_path", "null", None),
        ("http_answer_path", "$.answer", "$.answer"),
        ("judge_calls", "per_prompt", "per_prompt"),
        # fields that are not text keep JSON
        ("http_headers", '{"X": "1"}', {"X": "1"}),
        ("prices", '{"m": [1, 2]}', {"m": [1, 2]}),
        ("iterations", "3", 3),
        ("cascade", "true", True),
        ("retrieval_k", "[1, 3]", [1, 3]),
        ("analyzer.tiers.excellent", "90", 90),
    ],
)
def test_a_text_option_takes_json_as_its_text(key: str, raw: str, expected: Any) -> None:
    assert option_value(key, raw) == expected


def test_a_config_file_may_give_the_http_body_as_a_mapping(
    home: Paths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text('http:\n  body: {question: "{{query}}", k: 3}\n', encoding="utf-8")
    code = main(_run(home, _test_set(tmp_path), "--config", str(config), "--estimate"))
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "config", "expected"),
    [
        ([], "{excellent: 60, good: 70, fair: 50}", "run.yaml: key analyzer.tiers: tier bounds"),
        ([], "{good: 50}", "run.yaml: key analyzer.tiers: tier bounds must descend"),
        ([], "{excellent: 101}", "run.yaml: key analyzer.tiers.excellent 101: tier thresholds"),
        (["--option", "analyzer.tiers.excellent=60"], None, "--option analyzer.tiers.excellent:"),
        (["--option", 'analyzer.tiers={"fair": 80}'], None, "--option analyzer.tiers: tier"),
    ],
)
def test_tier_bounds_out_of_order_are_refused_in_one_line(
    home: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    config: str | None,
    expected: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # the config is named as typed: run.yaml
    if config is not None:
        Path("run.yaml").write_text(f"analyzer:\n  tiers: {config}\n", encoding="utf-8")
        args = [*args, "--config", "run.yaml"]
    code = main(_run(home, _test_set(tmp_path), *args))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {expected}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (home.lake / "runs").exists()


def test_tier_bounds_in_order_are_taken() -> None:
    tiers = TierThresholds(excellent=90, good=75, fair=50)
    assert [tiers.tier(s) for s in (95, 80, 60, 10)] == ["excellent", "good", "fair", "poor"]
    with pytest.raises(ValueError, match="descend"):
        TierThresholds(excellent=70, good=70, fair=50)  # an empty tier is a mistake too
