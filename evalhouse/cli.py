"""The ``evalhouse`` command: the composition root that wires engine, ingest and warehouse.

Errors a person can act on are printed as one line without a traceback; exit codes are
0 ok, 1 a run finished with too many failed samples (or a check failed), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.settings import Paths, resolve_paths
from evalhouse import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input: printed without a traceback, exit code 2."""


def _paths(args: argparse.Namespace) -> Paths:
    paths = resolve_paths(args.home)
    os.environ["EVALHOUSE_HOME"] = str(paths.home)  # children (dashboard, runs) see the same home
    return paths


# ----------------------------------------------------------------------------- ingest


def ingest_now(paths: Paths, *, rebuild: bool = False, quiet: bool = False) -> bool:
    """Ingest the lake; a busy warehouse is reported, not fatal (the lake keeps records)."""
    from ingest import ingest
    from warehouse.db import WarehouseBusy

    try:
        report = ingest(paths, rebuild=rebuild, on_message=None if quiet else _err)
    except WarehouseBusy as exc:
        _err(f"ingest postponed: {exc}")
        return False
    if not quiet or report.corrupt:
        _err(report.summary())
    return True


def cmd_ingest(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from ingest import ingest

    report = ingest(paths, rebuild=args.rebuild, wait_s=args.wait)
    print(report.summary())
    return EXIT_OK


# ----------------------------------------------------------------------------- sql


def _render_table(frame: Any, truncated: bool) -> str:
    import polars as pl

    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=200,
        fmt_str_lengths=80,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        text = str(frame)
    if truncated:
        text += f"\n(first {frame.height} rows; more were cut by the row cap)"
    return text


def cmd_sql(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from warehouse.queries import Warehouse

    result = Warehouse(paths.warehouse).sql(
        args.query, time_limit_s=args.time_limit, row_cap=args.max_rows
    )
    frame = result.frame
    if args.format == "csv":
        sys.stdout.write(frame.write_csv())
    elif args.format == "json":
        sys.stdout.write(json.dumps(frame.to_dicts(), default=str, indent=1) + "\n")
    else:
        print(_render_table(frame, result.truncated))
    if result.truncated and args.format != "table":
        _err(f"output cut at {args.max_rows} rows (--max-rows)")
    return EXIT_OK


# ----------------------------------------------------------------------------- dashboard


def dashboard_command(paths: Paths, port: int, address: str) -> list[str]:
    """The streamlit command line that serves the dashboard."""
    app = Path(__file__).resolve().parent.parent / "dashboard" / "streamlit_app.py"
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",
        "--",
        "--home",
        str(paths.home),
    ]


def cmd_dashboard(args: argparse.Namespace) -> int:
    paths = _paths(args)
    print(f"evalhouse dashboard on http://{args.address}:{args.port} (warehouse {paths.warehouse})")
    try:
        return subprocess.call(dashboard_command(paths, args.port, args.address))
    except KeyboardInterrupt:
        return EXIT_OK


# ----------------------------------------------------------------------------- run


def _option(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--option {text!r} is not KEY=VALUE (VALUE may be JSON)")
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


def _run_config(args: argparse.Namespace) -> Any:
    """RunConfig from an optional --config file (JSON or YAML), then ``--option``s, then
    the flags on top. Unknown option names are refused (exit 2) with the known ones."""
    from engine.models import RunConfig, nest_options

    base: dict[str, Any] = {}
    if args.config:
        import yaml

        try:
            loaded = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"{args.config}: cannot read the run config ({exc})") from exc
        if not isinstance(loaded, dict):
            raise UsageError(f"{args.config}: a run config is a mapping of RunConfig fields")
        base = loaded
    base = _with_column_map(base, args)
    flags = {
        "name": args.name,
        "test_set": str(args.test_set),
        "iterations": args.iterations,
        "judge": args.judge,
        "embedder": args.embedder,
        "target": args.target,
        "concurrency": args.concurrency,
        "retries": args.retries,
        "max_failed_fraction": args.max_failed,
    }
    legacy = base.pop("extra", None) or {}
    if not isinstance(legacy, dict):
        raise UsageError(f"{args.config}: 'extra' must be a mapping of option: value")
    merged = _deep_merge(base, nest_options(legacy))
    merged = _deep_merge(merged, nest_options(dict(_option(o) for o in args.option)))
    merged.update({k: v for k, v in flags.items() if v is not None})
    for key, value in (("candidates", args.candidates), ("graders", args.graders)):
        if value is not None:
            if not [i for i in value.split(",") if i.strip()]:
                raise UsageError(f"--{key} names no id (use --{key} a,b)")
            merged[key] = value
    if args.project is not None:
        merged["project"] = str(Path(args.project).resolve())
    return RunConfig.model_validate(merged)


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, merging nested sections key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def cmd_run(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from engine import runner
    from engine.progress import LineProgress, TerminalProgress
    from engine.run.plan import check_run_files
    from engine.testsets import load_test_set

    config = _run_config(args)
    test_set = load_test_set(Path(args.test_set), strict=args.strict, column_map=config.column_map)
    check_run_files(config)  # malformed files and unknown ids: exit 2 before anything runs
    _err(f"test set: {test_set.format}, {len(test_set.cases)} cases")
    for problem in test_set.problems:
        _err(f"skipped: {problem}")
    only = set(args.only.split(",")) if args.only else None
    if args.estimate:
        print(runner.estimate_run(config, test_set, only_sample_ids=only).render())
        return EXIT_OK
    progress = TerminalProgress() if sys.stderr.isatty() else LineProgress()
    after_flush = None if args.no_ingest else (lambda: ingest_now(paths, quiet=True) and None)
    outcome = runner.run_evaluation(
        config,
        paths,
        test_set=test_set,
        resume_run_id=args.resume,
        after_flush=after_flush,
        progress=progress,
        only_sample_ids=only,
        start_new_if_live=True,
    )
    _err(
        f"run {outcome.status}: {outcome.samples} samples, {outcome.errors} errors, "
        f"${outcome.cost_usd:.4f}"
    )
    print(outcome.run_id)
    return int(outcome.exit_code)


def _parse_map(items: Sequence[str], where: str = "--map") -> dict[str, str]:
    """``COLUMN=FIELD`` pairs (the last ``=`` splits: fields never contain one)."""
    out: dict[str, str] = {}
    for item in items:
        column, sep, field = str(item).rpartition("=")
        if not sep or not column.strip() or not field.strip():
            raise UsageError(f"{where} {item!r} is not COLUMN=FIELD (for example question=query)")
        out[column.strip()] = field.strip()
    return out


def _with_column_map(base: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The config with its ``map:`` section and the --map flags as ``column_map``."""
    base = dict(base)
    section = base.pop("map", None) or {}
    if isinstance(section, list):
        section = _parse_map(section, f"{args.config}: map:")
    if not isinstance(section, dict):
        raise UsageError(f"{args.config}: 'map:' must be a mapping of COLUMN: FIELD")
    merged = {**base.get("column_map", {}), **{str(k): str(v) for k, v in section.items()}}
    merged.update(_parse_map(getattr(args, "map", None) or []))
    if merged:
        base["column_map"] = merged
    return base


def cmd_inspect(args: argparse.Namespace) -> int:
    from engine.testsets import load_test_set
    from engine.testsets.inspect import render_inspection

    base: dict[str, Any] = {}
    if args.config:
        import yaml

        try:
            base = yaml.safe_load(Path(args.config).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"{args.config}: cannot read the run config ({exc})") from exc
        if not isinstance(base, dict):
            raise UsageError(f"{args.config}: a run config is a mapping of RunConfig fields")
    column_map = _with_column_map(base, args).get("column_map", {})
    test_set = load_test_set(Path(args.path), column_map=column_map)
    print(render_inspection(test_set, limit=args.limit))
    return EXIT_OK


def _export_items(export: Any, paths: Paths) -> list[tuple[Any, dict[str, Any]]]:
    """Cases of the run's own test set when it is still there unchanged (expected answers
    and contexts are not in the warehouse), else rebuilt from the warehouse rows."""
    from engine.models import ExpectedAnswer, ExpectedClaim, RunConfig, TestCase
    from engine.testsets import TestSetError, load_test_set

    cases: dict[str, Any] = {}
    source = Path(export.test_set)
    try:
        config = RunConfig.model_validate_json(export.config)
        loaded = load_test_set(source, column_map=config.column_map)
        if loaded.sha256 == export.test_set_hash:
            cases = {c.id: c for c in loaded.cases}
    except (TestSetError, ValueError):
        pass
    if not cases:
        _err(
            f"export: test set {source} is gone or changed; references and contexts "
            "are not in the warehouse and are left out"
        )
    items = []
    for row in export.samples:
        sid = str(row["sample_id"])
        claims = tuple(
            ExpectedClaim(id=c["claim_id"], text=c["claim_text"], importance=c["importance"])
            for c in export.claims.get(sid, ())
        )
        case = cases.get(sid) or TestCase(
            id=sid,
            domain=row["domain"] or "",
            query=row["query"] or sid,
            ai_provider=row["ai_provider"] or "",
            tags=tuple(row["tags"] or ()),
            expected_answer=ExpectedAnswer(claims=claims),
        )
        # an error row has no response: keep the case's own (None when it had none)
        response = row["response"] or case.response
        items.append((case.model_copy(update={"response": response}), row))
    return items


def cmd_export(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from engine.testsets.export import export_text
    from warehouse.export import RunNotFound, read_run_export

    try:
        export = read_run_export(paths.warehouse, args.run_id, args.candidate)
    except RunNotFound as exc:
        raise UsageError(str(exc)) from exc
    items = _export_items(export, paths)
    csv_output = args.output is not None and args.output.suffix.lower() == ".csv"
    text = export_text(items, args.format, csv_output=csv_output)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    partial = args.output.with_name(args.output.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(args.output)  # nothing half-written under the final name
    _err(f"exported {len(items)} samples of {args.run_id} as {args.format} to {args.output}")
    return EXIT_OK


# ----------------------------------------------------------------------------- compare-runs


def cmd_compare_runs(args: argparse.Namespace) -> int:
    paths = _paths(args)
    import asyncio

    from engine import pairwise

    if args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be at least 1")
    if args.margin < 0:
        raise UsageError(f"--margin {args.margin:g}: must be 0 or more")
    side_a, side_b = pairwise.Side.parse(args.run_a), pairwise.Side.parse(args.run_b)
    pairs = pairwise.pairs_from_lake(paths.lake, side_a, side_b)
    if args.estimate:
        print(pairwise.estimate_pairs(pairs, args.judge).render())
        return EXIT_OK
    judge = None
    if args.judge.strip() != "local":
        from engine.judges.base import JudgeError
        from engine.judges.factory import build_llm_judge

        try:
            judge = build_llm_judge(args.judge, cache_dir=paths.cache, concurrency=args.concurrency)
        except JudgeError as exc:
            raise UsageError(f"--judge {args.judge}: {exc}") from exc
    now = pairwise.utc_now()
    cid = pairwise.new_comparison_id(now)
    _err(f"comparing {len(pairs)} pairs of {args.run_a} and {args.run_b} with {args.judge}")

    async def judged() -> tuple[Any, Any]:
        try:
            return await pairwise.compare_pairs(
                pairs, judge, run_a=side_a.run_id, run_b=side_b.run_id, comparison_id=cid,
                now=now, margin=args.margin,
            )  # fmt: skip
        finally:
            if judge is not None:
                await judge.aclose()

    records, usage = asyncio.run(judged())
    pairwise.write_comparison(paths.lake, records)
    for t in pairwise.tally(records):
        low, high = t.a_interval
        _err(
            f"{t.domain}: A wins {t.wins_a}, ties {t.ties}, B wins {t.wins_b}"
            f" (A win rate 95% CI {low:.2f}-{high:.2f}; {t.inconsistent} inconsistent orders,"
            f" {t.errors} errors)"
        )
    if usage.calls:
        _err(f"judge calls: {usage.calls}, ${usage.cost_usd:.4f}")
    if not args.no_ingest:
        ingest_now(paths, quiet=True)
    print(cid)
    return EXIT_OK


# ----------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from engine.gate import evaluate_gate, junit_xml, parse_threshold, render_table
    from warehouse.queries import Warehouse

    thresholds = [parse_threshold(t, "min") for t in args.min] + [
        parse_threshold(t, "max") for t in args.max
    ]
    if args.max_regressions is not None and not args.baseline:
        raise UsageError("--max-regressions needs --baseline RUN_ID")
    warehouse = Warehouse(paths.warehouse)
    for run_id in filter(None, [args.run_id, args.baseline]):
        if not warehouse.run_exists(run_id):
            raise UsageError(f"run {run_id!r} is not in the warehouse (did ingest run?)")
    metrics = warehouse.check_metrics(args.run_id, args.candidate)
    regressions = None
    if args.baseline:
        regressed = warehouse.check_regressions(
            args.run_id, args.baseline, args.tolerance, args.candidate
        )
        regressions = regressed.height
    checks = evaluate_gate(
        metrics, thresholds, regressions=regressions, max_regressions=args.max_regressions
    )
    print(render_table(checks))
    if args.format == "junit":
        target = args.output or Path(f"evalhouse-check-{args.run_id}.xml")
        target.write_text(junit_xml(checks, suite=f"check {args.run_id}"), encoding="utf-8")
        _err(f"JUnit report written to {target}")
    return EXIT_OK if all(c.passed for c in checks) else EXIT_FAILED


# ----------------------------------------------------------------------------- demo


def cmd_demo(args: argparse.Namespace) -> int:
    paths = _paths(args)
    from engine.demo_run import build_demo

    if not paths.warehouse.exists() or args.rebuild:
        build_demo(paths, log=_err)
        ingest_now(paths, rebuild=args.rebuild)
    else:
        _err(f"demo warehouse already present at {paths.warehouse} (use --rebuild to start over)")
        ingest_now(paths)
    if args.no_dashboard:
        return EXIT_OK
    return cmd_dashboard(args)


# ----------------------------------------------------------------------------- main


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="evalhouse", description="Evaluate AI answers against ground truth."
    )
    parser.add_argument("--version", action="version", version=f"evalhouse {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", help="data folder (default $EVALHOUSE_HOME or ./evalhouse-data)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", parents=[common], help="build demo data, ingest, open the dashboard")
    p.add_argument("--no-dashboard", action="store_true", help="build and ingest only")
    p.add_argument("--rebuild", action="store_true", help="throw away existing data first")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="127.0.0.1")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("run", parents=[common], help="evaluate a test set")
    p.add_argument("--test-set", required=True, type=Path)
    p.add_argument("--name", required=True)
    p.add_argument("--iterations", type=int, help="default 1")
    p.add_argument(
        "--judge", help="local (default) | openai:MODEL | anthropic:MODEL | ollama:MODEL"
    )
    p.add_argument("--embedder", help="local (default) | openai:MODEL")
    p.add_argument("--target", help="recorded (default) | openai:MODEL | http:URL")
    p.add_argument("--concurrency", type=int, help="samples at once (default 5)")
    p.add_argument("--retries", type=int, help="retries of a failing sample (default 2)")
    p.add_argument(
        "--max-failed", type=float, help="failed fraction allowed (default 0; exit 1 above)"
    )
    p.add_argument("--config", type=Path, help="YAML/JSON file of RunConfig fields")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help='extra option, e.g. http_answer_path=$.answer or http_headers=\'{"X": "1"}\'',
    )
    p.add_argument("--resume", metavar="RUN_ID")
    p.add_argument(
        "--estimate", action="store_true", help="print calls, tokens, cost, time; run nothing"
    )
    p.add_argument("--no-ingest", action="store_true")
    p.add_argument("--strict", action="store_true", help="refuse a test set with any bad row")
    p.add_argument("--only", help="comma-separated sample ids to evaluate")
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="COLUMN=FIELD",
        help="read test-set column COLUMN as native field FIELD (query, response, reference, "
        "context, ground_truth, domain, id, ...); repeatable",
    )
    p.add_argument(
        "--candidates",
        metavar="ID,ID",
        help="candidate ids (files candidates/<family>/<name>.md of --project) to evaluate",
    )
    p.add_argument(
        "--graders",
        metavar="ID,ID",
        help="grader ids (files graders/*.yaml of --project, or built-ins such as accuracy)",
    )
    p.add_argument(
        "--project",
        type=Path,
        help="folder holding candidates/ and graders/ (default: the current directory)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("inspect", help="show a test set's format, cases and scorable metrics")
    p.add_argument("path", type=Path)
    p.add_argument("--map", action="append", default=[], metavar="COLUMN=FIELD")
    p.add_argument("--config", type=Path, help="run config whose map: section applies")
    p.add_argument("--limit", type=int, default=20, help="cases and skipped rows listed")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("export", parents=[common], help="write a run in a peer tool's format")
    p.add_argument("run_id")
    p.add_argument(
        "--format", required=True, choices=["ragas", "deepeval", "promptfoo", "jsonl", "csv"]
    )
    p.add_argument("--output", type=Path, help="file to write (default: standard output)")
    p.add_argument(
        "--candidate", default="", help="candidate lane to export (default: recorded/target)"
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("ingest", parents=[common], help="load new lake files into the warehouse")
    p.add_argument("--rebuild", action="store_true", help="recreate the warehouse from the lake")
    p.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the lock")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("sql", parents=[common], help="run read-only SQL on the warehouse")
    p.add_argument("query")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--max-rows", type=int, default=10_000)
    p.add_argument("--time-limit", type=float, default=60.0)
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("check", parents=[common], help="CI gate: exit 1 when a threshold fails")
    p.add_argument("run_id")
    p.add_argument("--baseline", metavar="RUN_ID", help="compare per sample with this run")
    p.add_argument(
        "--min", action="append", default=[], metavar="METRIC=VALUE", help="metric mean floor"
    )
    p.add_argument(
        "--max", action="append", default=[], metavar="METRIC=VALUE", help="metric mean ceiling"
    )
    p.add_argument("--max-regressions", type=int, help="samples allowed to regress")
    p.add_argument("--tolerance", type=float, default=5.0, help="points a sample may drop")
    p.add_argument("--candidate", help="check one candidate of a multi-candidate run")
    p.add_argument("--format", choices=["table", "junit"], default="table")
    p.add_argument("--output", type=Path, help="JUnit file (default evalhouse-check-RUN.xml)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "compare-runs", parents=[common], help="judge which of two runs answered each case better"
    )
    p.add_argument("run_a", help="RUN_ID, or RUN_ID:CANDIDATE for one candidate of a run")
    p.add_argument("run_b", help="RUN_ID, or RUN_ID:CANDIDATE")
    p.add_argument(
        "--judge",
        default="local",
        help="local (rule over stored scores) | openai:MODEL | anthropic:MODEL | ollama:MODEL",
    )
    p.add_argument(
        "--margin", type=float, default=5.0, help="local rule: quality points that are a tie"
    )
    p.add_argument("--concurrency", type=int, default=8, help="judge calls in flight")
    p.add_argument("--no-ingest", action="store_true", help="write the lake only")
    p.add_argument("--estimate", action="store_true", help="print calls and cost, judge nothing")
    p.set_defaults(func=cmd_compare_runs)

    p = sub.add_parser("dashboard", parents=[common], help="serve the dashboard")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="127.0.0.1", help="bind address (default loopback only)")
    p.set_defaults(func=cmd_dashboard)
    return parser


_FLAGS = {
    "name": "--name",
    "test_set": "--test-set",
    "iterations": "--iterations",
    "judge": "--judge",
    "embedder": "--embedder",
    "target": "--target",
    "concurrency": "--concurrency",
    "retries": "--retries",
    "max_failed_fraction": "--max-failed",
    "candidates": "--candidates",
    "graders": "--graders",
    "project": "--project",
}


def _validation_line(exc: Any) -> str:
    """One line for a refused setting: the flag (or ``--option``/config key) that set it,
    the value and what it may be; never a multi-line model dump."""
    from engine.models import LEGACY_OPTION_PATHS

    options = {path: key for key, path in LEGACY_OPTION_PATHS.items()}
    problems = exc.errors()
    first = problems[0]
    path = tuple(str(p) for p in first["loc"] if not isinstance(p, int))
    where = _FLAGS.get(path[0]) if len(path) == 1 else None
    if not path:
        where = "the run config"
    elif where is None:
        where = f"--option {options[path]}" if path in options else f"config key {'.'.join(path)}"
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" {given!r}"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}{shown}: {first['msg']}{more}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalhouse`` console script."""
    from pydantic import ValidationError

    from engine.errors import InputError
    from warehouse.db import WarehouseError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except WarehouseError as exc:
        _err(f"{exc.title}: {exc}")
        return EXIT_USAGE
    except UsageError as exc:
        _err(f"error: {exc}")
        return EXIT_USAGE
    except ValidationError as exc:
        _err(f"error: {_validation_line(exc)}")
        return EXIT_USAGE
    except InputError as exc:
        _err(f"error: {exc}")
        return EXIT_USAGE
    except FileNotFoundError as exc:
        _err(f"error: {exc.filename or exc}: no such file")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
