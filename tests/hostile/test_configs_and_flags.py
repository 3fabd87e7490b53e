"""Hostile run configs and flags: one line naming the flag or file:key, exit 2, nothing
written. Flags are checked by argparse or the model; both speak one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.settings import Paths
from tests.hostile.conftest import GOOD_CASE, assert_refused, cli, fingerprint, lake_parts

CONFIGS: dict[str, tuple[bytes, str]] = {
    # id: (config file content, piece of the one-line message)
    "unknown-key": (b"bogus: 1\n", "key bogus: unknown setting"),
    "unknown-nested-key": (b"analyzer:\n  bogus: 1\n", "key analyzer.bogus: unknown setting"),
    "unknown-deep-key": (
        b"analyzer:\n  tiers:\n    superb: 99\n",
        "key analyzer.tiers.superb: unknown setting",
    ),
    "section-not-mapping": (b"analyzer: 5\n", "key analyzer"),
    "negative-rag-weight": (b"rag_weights:\n  correctness: -1\n", "rag_weights.correctness"),
    "nan-rag-weight": (b"rag_weights:\n  recall: .nan\n", "rag_weights.recall"),
    "inf-rag-weight": (b"rag_weights:\n  recall: .inf\n", "rag_weights.recall"),
    "tier-out-of-range": (b"analyzer:\n  tiers:\n    fair: 200\n", "analyzer.tiers.fair"),
    "iterations-zero": (b"iterations: 0\n", "key iterations"),
    "concurrency-huge": (b"concurrency: 1000000\n", "key concurrency"),
    "retries-text": (b"retries: many\n", "key retries"),
    "max-failed-nan": (b"max_failed_fraction: .nan\n", "key max_failed_fraction"),
    "timeout-negative": (b"target_options:\n  timeout_s: -1\n", "target_options.timeout_s"),
    "headers-not-mapping": (b"http:\n  headers: [a]\n", "http.headers"),
    "top-level-list": (b"- a\n- b\n", "mapping of RunConfig fields"),
    "top-level-scalar": (b"hello\n", "mapping of RunConfig fields"),
    "non-text-key": (b"1: x\n", "every key"),
    "invalid-yaml": (b"a: [1, 2\n", "invalid YAML"),
    "deep-yaml": (("x: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "nested too deeply"),
    "alias-bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + b"".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n".encode()
            for i in range(8)
        ),
        "expands to over",
    ),
    "not-utf8": (b"name: caf\xe9\n", "not UTF-8"),
    "extra-not-mapping": (b"extra: 5\n", "'extra' must be a mapping"),
    "map-not-mapping": (b"map: 5\n", "'map:' must be a mapping"),
    "map-bad-item": (b"map: [question]\n", "is not COLUMN=FIELD"),
}


@pytest.fixture
def good_set(tmp_path: Path) -> Path:
    """A valid one-case test set."""
    path = tmp_path / "cases.jsonl"
    path.write_text(GOOD_CASE + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", sorted(CONFIGS), ids=str)
def test_bad_config_file_is_refused_in_one_line(
    case: str, home: Paths, good_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, mentions = CONFIGS[case]
    config = tmp_path / "run.yaml"
    config.write_bytes(content)
    outcome = cli(
        capsys,
        "run",
        "--test-set",
        str(good_set),
        "--name",
        "h",
        "--config",
        str(config),
        "--home",
        str(home.home),
    )
    line = assert_refused(outcome, mentions=mentions)
    assert str(config) in line
    assert lake_parts(home) == [] and not home.home.exists()


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "folder", "missing", "sparse-huge"])
def test_config_that_is_no_regular_small_file_is_refused(
    kind: str, home: Paths, good_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    if kind == "dev-zero":
        config = Path("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(config)
    elif kind == "folder":
        config.mkdir()
    elif kind == "sparse-huge":
        with config.open("wb") as handle:
            handle.truncate(50 * 1024 * 1024)
    outcome = cli(
        capsys,
        "run",
        "--test-set",
        str(good_set),
        "--name",
        "h",
        "--config",
        str(config),
        "--home",
        str(home.home),
    )
    assert_refused(outcome, mentions=str(config))


RUN_FLAGS: dict[str, tuple[list[str], str]] = {
    "iterations-zero": (["--iterations", "0"], "--iterations"),
    "iterations-negative": (["--iterations", "-1"], "--iterations"),
    "iterations-text": (["--iterations", "x"], "--iterations"),
    "iterations-huge": (["--iterations", "1001"], "--iterations"),
    "concurrency-zero": (["--concurrency", "0"], "--concurrency"),
    "concurrency-huge": (["--concurrency", "1000000"], "--concurrency"),
    "retries-negative": (["--retries", "-1"], "--retries"),
    "retries-huge": (["--retries", "11"], "--retries"),
    "max-failed-nan": (["--max-failed", "nan"], "--max-failed"),
    "max-failed-inf": (["--max-failed", "inf"], "--max-failed"),
    "max-failed-negative": (["--max-failed", "-0.1"], "--max-failed"),
    "max-failed-over-one": (["--max-failed", "2"], "--max-failed"),
    "option-unknown": (["--option", "bogus=1"], "--option bogus"),
    "option-no-equals": (["--option", "target_timeout_s"], "KEY=VALUE"),
    "option-empty-key": (["--option", "=1"], "KEY=VALUE"),
    "option-bad-value": (["--option", "target_timeout_s=-1"], "--option target_timeout_s"),
    "option-nan-temperature": (["--option", "target_temperature=nan"], "target_temperature"),
    "option-nested-unknown": (["--option", "analyzer.bogus=1"], "--option analyzer.bogus"),
    "candidates-no-id": (["--candidates", ","], "--candidates"),
    "graders-no-id": (["--graders", " , "], "--graders"),
    "map-no-equals": (["--map", "question"], "COLUMN=FIELD"),
    "map-unknown-field": (["--map", "query=nonsense"], "unknown field"),
    "map-absent-column": (["--map", "question=query"], "is not in the file"),
    "unknown-flag": (["--frobnicate"], "unrecognized arguments"),
}


@pytest.mark.parametrize("case", sorted(RUN_FLAGS), ids=str)
def test_bad_run_flag_is_refused_naming_the_flag(
    case: str, home: Paths, good_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra, mentions = RUN_FLAGS[case]
    outcome = cli(
        capsys, "run", "--test-set", str(good_set), "--name", "h", *extra, "--home", str(home.home)
    )
    assert_refused(outcome, mentions=mentions)
    assert lake_parts(home) == [] and not home.home.exists()


@pytest.mark.parametrize("name", ["", "a\nb", "\x1b[31mred", "tab\there"])
def test_bad_run_name_is_refused(
    name: str, home: Paths, good_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = cli(
        capsys, "run", "--test-set", str(good_set), "--name", name, "--home", str(home.home)
    )
    assert_refused(outcome, mentions="--name")
    assert not home.home.exists()


OTHER_FLAGS: dict[str, tuple[list[str], str]] = {
    "sql-max-rows-negative": (["sql", "SELECT 1", "--max-rows", "-5"], "--max-rows"),
    "sql-max-rows-zero": (["sql", "SELECT 1", "--max-rows", "0"], "--max-rows"),
    "sql-max-rows-text": (["sql", "SELECT 1", "--max-rows", "many"], "--max-rows"),
    "sql-time-limit-zero": (["sql", "SELECT 1", "--time-limit", "0"], "--time-limit"),
    "sql-time-limit-negative": (["sql", "SELECT 1", "--time-limit", "-1"], "--time-limit"),
    "sql-time-limit-nan": (["sql", "SELECT 1", "--time-limit", "nan"], "--time-limit"),
    "sql-time-limit-inf": (["sql", "SELECT 1", "--time-limit", "inf"], "--time-limit"),
    "sql-format": (["sql", "SELECT 1", "--format", "xml"], "--format"),
    "check-empty-run": (["check", "", "--min", "accuracy=1", "--format", "junit"], "RUN_ID"),
    "check-blank-run": (["check", "  ", "--min", "accuracy=1"], "RUN_ID"),
    "check-nothing": (["check", "R"], "nothing to check"),
    "check-unknown-run": (["check", "NOPE", "--min", "accuracy=70"], "'NOPE' is not in"),
    "check-unknown-candidate": (
        ["check", "R", "--candidate", "NOPE", "--min", "accuracy=70"],
        "--candidate 'NOPE'",
    ),
    "check-off-scale": (["check", "R", "--min", "pass_rate=90"], "the 0-1 scale"),
    "check-unknown-metric": (["check", "R", "--min", "bogus=1"], "unknown metric 'bogus'"),
    "check-empty-baseline": (["check", "R", "--baseline", ""], "--baseline"),
    "check-unknown-baseline": (["check", "R", "--baseline", "NOPE"], "'NOPE'"),
    "check-bad-threshold": (["check", "R", "--min", "accuracy"], "METRIC=NUMBER"),
    "check-nan-threshold": (["check", "R", "--min", "accuracy=nan"], "METRIC=NUMBER"),
    "check-regressions-no-baseline": (["check", "R", "--max-regressions", "1"], "--baseline"),
    "check-regressions-negative": (
        ["check", "R", "--baseline", "R", "--max-regressions", "-1"],
        "--max-regressions",
    ),
    "check-tolerance-nan": (["check", "R", "--tolerance", "nan"], "--tolerance"),
    "check-tolerance-negative": (["check", "R", "--tolerance", "-5"], "--tolerance"),
    "check-format": (["check", "R", "--format", "html"], "--format"),
    "ingest-wait-zero": (["ingest", "--wait", "0"], "--wait"),
    "ingest-wait-nan": (["ingest", "--wait", "nan"], "--wait"),
    "dashboard-port-zero": (["dashboard", "--port", "0"], "--port"),
    "dashboard-port-huge": (["dashboard", "--port", "70000"], "--port"),
    "dashboard-port-text": (["dashboard", "--port", "http"], "--port"),
    "demo-port-negative": (["demo", "--port", "-1"], "--port"),
    "export-unknown-run": (["export", "NOPE", "--format", "jsonl"], "'NOPE'"),
    "export-bad-format": (["export", "R", "--format", "pdf"], "--format"),
    "export-unknown-candidate": (["export", "R", "--format", "jsonl", "--candidate", "X"], "X"),
    "inspect-limit-negative": (["inspect", "x.jsonl", "--limit", "-1"], "--limit"),
    "unknown-command": (["frobnicate"], "invalid choice"),
    "no-command": ([], "required"),
}


@pytest.mark.parametrize("case", sorted(OTHER_FLAGS), ids=str)
def test_bad_flag_of_other_commands_is_refused(
    case: str,
    seeded: Paths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv, mentions = OTHER_FLAGS[case]
    before = fingerprint(seeded)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # a junit report would land here
    home = ["--home", str(seeded.home)] if argv else []
    outcome = cli(capsys, *argv, *home)
    assert_refused(outcome, mentions=mentions)
    assert fingerprint(seeded) == before
    assert list(cwd.iterdir()) == []  # no evalhouse-check-.xml


@pytest.mark.parametrize("where", ["before", "after"])
def test_home_is_accepted_before_or_after_the_subcommand(
    where: str, seeded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    home = ["--home", str(seeded.home)]
    argv = [*home, "sql", "SELECT count(*) AS n FROM results", "--format", "csv"]
    if where == "after":
        argv = [*argv[2:], *home]
    outcome = cli(capsys, *argv)
    assert outcome.code == 0 and outcome.out.splitlines() == ["n", "2"]
