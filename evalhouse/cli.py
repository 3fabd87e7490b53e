"""The ``evalhouse`` command: the composition root that wires engine, ingest and warehouse.

Errors a person can act on are printed as one line without a traceback; exit codes are
0 ok, 1 a run finished with too many failed samples (or a check failed), 2 bad input.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from engine.settings import Paths, resolve_paths
from evalhouse import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input: printed without a traceback, exit code 2."""


def _paths(args: argparse.Namespace, *, writes: bool = False) -> Paths:
    """The home of ``--home`` (or ``$EVALHOUSE_HOME``); refused in one line when it is not
    a folder, or, for a command that ``writes``, when its folders cannot be written."""
    given = "--home" if getattr(args, "home", None) is not None else "EVALHOUSE_HOME"
    paths = resolve_paths(getattr(args, "home", None))
    home = paths.home
    if home.exists() and not home.is_dir():
        raise UsageError(f"{given} {home}: not a folder")
    if writes:
        try:
            for folder in (paths.lake, paths.progress, paths.cache):
                folder.mkdir(parents=True, exist_ok=True)
            # A read-only file system keeps existing folders: only a write tells.
            fd, probe = tempfile.mkstemp(dir=home, prefix=".write-check-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise UsageError(f"{given} {home}: cannot write there ({_reason(exc)})") from exc
    os.environ["EVALHOUSE_HOME"] = str(home)  # children (dashboard, runs) see the same home
    _export_catalog(args)
    return paths


def _export_catalog(args: argparse.Namespace) -> None:
    """Check ``--catalog`` / ``--catalog-data`` (else the environment's) and put them in the
    environment, where ingest, the dashboard and the runs it launches find them."""
    from warehouse import ENV_CATALOG, ENV_CATALOG_DATA

    given, data = getattr(args, "catalog", None), getattr(args, "catalog_data", None)
    if given is None and data is None and not os.environ.get(ENV_CATALOG, "").strip():
        return  # the file warehouse: no need to load DuckDB (0.4 s) to say so
    from warehouse.catalog import catalog_from_env, parse_catalog

    if given is not None:
        if data is None:
            data = os.environ.get(ENV_CATALOG_DATA)
        parse_catalog(given, data, where="--catalog")
        os.environ[ENV_CATALOG] = given
        os.environ[ENV_CATALOG_DATA] = str(data)
    elif data is not None:
        if not os.environ.get(ENV_CATALOG, "").strip():
            raise UsageError("--catalog-data needs --catalog postgres:... (or EVALHOUSE_CATALOG)")
        os.environ[ENV_CATALOG_DATA] = str(data)
    catalog_from_env()  # a bad EVALHOUSE_CATALOG is refused here, in one line


def _catalog() -> Any:
    """The DuckLake catalog the command works on (``Catalog``), or None for the file."""
    from warehouse.catalog import catalog_from_env

    return catalog_from_env()


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# ----------------------------------------------------------------------------- ingest


def ingest_now(paths: Paths, *, rebuild: bool = False, quiet: bool = False) -> bool:
    """Ingest the lake; a busy warehouse is reported, not fatal (the lake keeps records)."""
    from ingest import ingest
    from warehouse.errors import WarehouseBusy

    try:
        report = ingest(
            paths, rebuild=rebuild, on_message=None if quiet else _err, catalog=_catalog()
        )
    except WarehouseBusy as exc:
        _err(f"ingest postponed: {exc}")
        return False
    if not quiet:
        _err(report.headline())
    _report_corrupt(report)
    return True


def _report_corrupt(report: Any) -> None:
    """The parts this ingest skipped as corrupt, on standard error, with their count."""
    if report.corrupt:
        _err(f"warning: skipped {len(report.corrupt)} corrupt lake part(s); they stay unloaded")
        for line in report.corrupt_lines():
            _err(line)


def cmd_ingest(args: argparse.Namespace) -> int:
    paths = _paths(args, writes=True)
    from ingest import ingest

    report = ingest(paths, rebuild=args.rebuild, wait_s=args.wait, catalog=_catalog())
    print(report.headline())
    _report_corrupt(report)
    return EXIT_OK


# ----------------------------------------------------------------------------- migrate


def cmd_migrate(args: argparse.Namespace) -> int:
    """Copy ``warehouse.duckdb`` into the (empty) DuckLake catalog of ``--to``."""
    from warehouse.catalog import ENV_CATALOG_DATA, parse_catalog
    from warehouse.migrate import migrate

    # The source is the file; --to (with --catalog-data) names the target.
    data = getattr(args, "catalog_data", None) or os.environ.get(ENV_CATALOG_DATA)
    args.catalog = args.catalog_data = None
    paths = _paths(args)
    target = parse_catalog(args.to, data, where="--to")
    counts = migrate(paths.warehouse, target)
    rows = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()) if n)
    print(f"copied {paths.warehouse} into {target.label}: {rows or 'no rows'}")
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

    result = Warehouse(paths.warehouse, catalog=_catalog()).sql(
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


_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when this process dies, so
    even a SIGKILL of ``evalhouse dashboard`` (no handler runs) leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def cmd_dashboard(args: argparse.Namespace) -> int:
    paths = _paths(args)
    catalog = _catalog()
    where = catalog.label if catalog is not None else paths.warehouse
    print(
        f"evalhouse dashboard on http://{args.address}:{args.port} (warehouse {where})", flush=True
    )
    return serve_child(dashboard_command(paths, args.port, args.address))


def serve_child(
    command: list[str], grace_s: float = 10.0, while_serving: Callable[[], None] | None = None
) -> int:
    """Run ``command`` in the foreground and never leave it behind: SIGTERM, SIGINT and
    SIGHUP sent to this process are passed on to the child, and whatever way this process
    leaves (signal, exception), the child is stopped, then killed after ``grace_s``.
    ``while_serving`` runs here once the child has started (a signal stops it too)."""
    child = subprocess.Popen(command, preexec_fn=_die_with_parent)
    received: list[int] = []
    busy: list[bool] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        if child.poll() is None:
            child.send_signal(signum)
        if busy:
            raise KeyboardInterrupt  # stop the work in hand; the child is stopped below

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    try:
        if while_serving is not None:
            busy.append(True)
            try:
                while_serving()
            except KeyboardInterrupt:
                received.append(int(signal.SIGINT))  # stopped on purpose: stop the child too
            finally:
                busy.clear()
        code = EXIT_OK if received else child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    # Stopped on purpose (Ctrl-C, a service manager's SIGTERM) is a normal end.
    return EXIT_OK if received else code


# ----------------------------------------------------------------------------- run


def _option(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--option {text!r} is not KEY=VALUE (VALUE may be JSON)")
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


MAX_CONFIG_BYTES = 1_000_000
"""Largest run config read (real ones are a few hundred bytes)."""


def _config_file(args: argparse.Namespace) -> dict[str, Any]:
    """The mapping of ``--config`` (JSON or YAML; empty without one), read bounded."""
    if not args.config:
        return {}
    from engine.files import load_yaml, read_user_bytes

    raw = read_user_bytes(Path(args.config), "run config", MAX_CONFIG_BYTES, str(args.config))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.config}: not UTF-8 (byte offset {exc.start})") from exc
    loaded = load_yaml(text, str(args.config)) or {}
    if not isinstance(loaded, dict):
        raise UsageError(f"{args.config}: a run config is a mapping of RunConfig fields")
    if not all(isinstance(key, str) for key in loaded):
        raise UsageError(f"{args.config}: every key of a run config is a name (text)")
    return loaded


def _run_config(args: argparse.Namespace) -> Any:
    """RunConfig from an optional --config file (JSON or YAML), then ``--option``s, then
    the flags on top. Unknown option names are refused (exit 2) with the known ones."""
    from pydantic import ValidationError

    from engine.models import RunConfig, nest_options

    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in args.name):
        raise UsageError(f"--name {_short(repr(args.name))}: control characters are not allowed")
    base = _with_column_map(_config_file(args), args)
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
        "until_ci": args.until_ci,
        "cascade": args.cascade or None,
        "executor": "ray" if args.ray is not None else None,
        "ray_address": args.ray or None,
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
    try:
        return RunConfig.model_validate(merged)
    except ValidationError as exc:
        given = {k for k, v in flags.items() if v is not None}
        given |= {k for k in ("candidates", "graders", "project") if getattr(args, k) is not None}
        options = frozenset(_option(o)[0] for o in args.option)
        config = str(args.config) if args.config else None
        line = _validation_line(exc, config=config, flags=frozenset(given), options=options)
        raise UsageError(line) from exc


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
    from engine.lake import skip_pandas_probe
    from engine.progress import LineProgress, TerminalProgress
    from engine.run.plan import check_run_files
    from engine.testsets import load_test_set

    config = _run_config(args)
    if config.executor == "ray" and not args.estimate:
        from engine.run.distributed import INSTALL_HINT, ray_available

        if not ray_available():
            raise UsageError(f"--ray: {INSTALL_HINT}")
    test_set = load_test_set(Path(args.test_set), strict=args.strict, column_map=config.column_map)
    check_run_files(config)  # malformed files and unknown ids: exit 2 before anything runs
    if not args.estimate:
        # Only now, with every input accepted: a refused run leaves no folder behind.
        paths = _paths(args, writes=True)
    _err(f"test set: {test_set.format}, {len(test_set.cases)} cases")
    for problem in test_set.problems:
        _err(f"skipped: {problem}")
    only = set(args.only.split(",")) if args.only else None
    if args.estimate:
        print(runner.estimate_run(config, test_set, only_sample_ids=only, lake=paths.lake).render())
        return EXIT_OK
    progress = TerminalProgress() if sys.stderr.isatty() else LineProgress()
    skip_pandas_probe()
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

    column_map = _with_column_map(_config_file(args), args).get("column_map", {})
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
        export = read_run_export(paths.warehouse, args.run_id, args.candidate, catalog=_catalog())
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
    import time

    from engine import pairwise

    if args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be at least 1")
    if args.margin < 0:
        raise UsageError(f"--margin {args.margin:g}: must be 0 or more")
    side_a, side_b = pairwise.Side.parse(args.run_a), pairwise.Side.parse(args.run_b)
    pairs = pairwise.pairs_from_lake(paths.lake, side_a, side_b)
    estimate = pairwise.estimate_pairs(pairs, args.judge, args.concurrency)
    if args.estimate:
        print(estimate.render())
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
    if judge is not None:
        _err(estimate.line())
    shown = [0.0]

    def progress(done: int, total: int) -> None:
        # A line a second at most (the dashboard reads the last "done/total" of the log).
        if done == total or time.monotonic() - shown[0] >= 1.0:
            shown[0] = time.monotonic()
            _err(f"pairs judged: {done}/{total}")

    async def judged() -> tuple[Any, Any]:
        try:
            return await pairwise.compare_pairs(
                pairs, judge, run_a=side_a.run_id, run_b=side_b.run_id, comparison_id=cid,
                now=now, margin=args.margin, concurrency=args.concurrency, progress=progress,
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
    from warehouse import queries

    thresholds = [parse_threshold(t, "min") for t in args.min] + [
        parse_threshold(t, "max") for t in args.max
    ]
    if args.max_regressions is not None and not args.baseline:
        raise UsageError("--max-regressions needs --baseline RUN_ID")
    if not args.run_id.strip():
        raise UsageError("RUN_ID is empty (evalhouse sql 'SELECT run_id FROM runs' lists them)")
    if args.baseline is not None and not args.baseline.strip():
        raise UsageError("--baseline is empty: give a run id")
    warehouse = queries.Warehouse(paths.warehouse, catalog=_catalog())
    for run_id in filter(None, [args.run_id, args.baseline]):
        if not queries.run_exists(warehouse, run_id):
            raise UsageError(f"run {run_id!r} is not in the warehouse (did ingest run?)")
    if args.candidate is not None:
        known = queries.run_candidates(warehouse, args.run_id)
        if args.candidate not in known:
            shown = ", ".join(repr(c) for c in known if c) or "none (a single-lane run)"
            raise UsageError(
                f"--candidate {args.candidate!r}: run {args.run_id!r} has no such candidate "
                f"(its candidates: {shown})"
            )
    metrics = queries.check_metrics(warehouse, args.run_id, args.candidate)
    regressions = None
    if args.baseline:
        regressed = queries.check_regressions(
            warehouse, args.run_id, args.baseline, args.tolerance, args.candidate
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
    paths = _paths(args, writes=True)
    from engine.demo_run import build_demo

    if paths.warehouse.exists() and not args.rebuild:
        _err(f"demo warehouse already present at {paths.warehouse} (use --rebuild to start over)")
        ingest_now(paths)
        return EXIT_OK if args.no_dashboard else cmd_dashboard(args)
    ingest_now(paths, rebuild=args.rebuild, quiet=True)  # the empty warehouse, at once

    def build() -> None:
        build_demo(paths, log=_err, after_run=lambda: ingest_now(paths))

    if args.no_dashboard:
        try:
            build()
        except KeyboardInterrupt:
            return 130  # cancelled, as `evalhouse run` says it
        return EXIT_OK
    # Serve first, score after: the dashboard answers within seconds and each demo run
    # shows up there as soon as it is scored and ingested.
    _err(
        f"demo: the dashboard is starting on http://{args.address}:{args.port}; the demo runs "
        "land there one by one as they are scored (a few minutes in all)"
    )
    return serve_child(dashboard_command(paths, args.port, args.address), while_serving=build)


# ----------------------------------------------------------------------------- main


def cmd_testset(args: argparse.Namespace) -> int:
    from engine.testsets.build import commands

    if args.action == "accept":
        lines = commands.accept(args.review_file, args.output)
    else:
        dest = commands.destination(args.output, args.review)
        if args.action == "from-pages":
            lines = commands.from_pages(
                _paths(args), args.paths, dest, count=args.count, styles=args.styles,
                seed=args.seed, judge=args.judge, embedder=args.embedder, urls=args.urls,
                base_url=args.base_url, domain=args.domain or "",
                dedupe_threshold=args.dedupe_threshold, estimate=args.estimate,
            )  # fmt: skip
        else:
            lines = commands.from_logs(
                _paths(args), args.log, dest, pages=args.pages or (), per_group=args.per_group,
                seed=args.seed, embedder=args.embedder, threshold=args.cluster_threshold,
            )  # fmt: skip
    for line in lines:
        _err(line)
    return EXIT_OK


def _testset_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    t = sub.add_parser("testset", help="build a test set from pages or query logs")
    actions = t.add_subparsers(dest="action", required=True)
    p = actions.add_parser("from-pages", parents=[common], help="cases from ground-truth pages")
    p.add_argument("paths", nargs="+", type=Path, help="folders or files (.md .html .txt)")
    p.add_argument("--urls", type=Path, help="'URL PATH' per line: saved pages and their URLs")
    p.add_argument("--base-url", help="page URL = BASE_URL/relative path (when a page has none)")
    p.add_argument("--domain", help="domain of cases whose page URL has no host")
    p.add_argument("--count", type=int, default=30, help="cases to generate (default 30)")
    p.add_argument("--styles", help="simple,reasoning,multi-context,adversarial,out-of-scope")
    p.add_argument("--judge", default="local", help="local (offline) | openai:MODEL | ...")
    p.add_argument("--estimate", action="store_true", help="LLM calls and cost, then stop")
    p.add_argument("--dedupe-threshold", type=float, default=0.92, help="cosine (default 0.92)")
    p = actions.add_parser("from-logs", parents=[common], help="cases from a query log")
    p.add_argument("log", type=Path, help="CSV or JSONL of queries (timestamps, sources, ...)")
    p.add_argument("--pages", nargs="+", type=Path, help="ground-truth pages to attach")
    p.add_argument("--per-group", type=int, default=5, help="clusters per domain and intent")
    p.add_argument("--cluster-threshold", type=float, default=0.9, help="cosine (default 0.9)")
    for p in actions.choices.values():
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--embedder", default="local", help="local (default) | openai:MODEL")
        p.add_argument("--output", type=Path, help="test set to write (native JSONL)")
        p.add_argument("--review", type=Path, help="CSV to edit first, then `testset accept`")
        p.set_defaults(func=cmd_testset)
    p = actions.add_parser("accept", help="turn an edited review CSV into a test set")
    p.add_argument("review_file", type=Path, metavar="REVIEW.csv")
    p.add_argument("--output", type=Path, required=True, help="test set to write")
    p.set_defaults(func=cmd_testset)


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line refusals: ``evalhouse run: error: ...`` and the hint, instead
    of the usage block (a script's log keeps one line per refusal)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _count(minimum: int) -> Any:
    """An argparse type: an integer of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {minimum}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds (0, negative or nan would
    switch a time limit off)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def _points(text: str) -> float:
    """An argparse type: a tolerance in score points, 0..100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 100.0:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text!r} must lie in 0..100")
    return value


def _port(text: str) -> int:
    """An argparse type: a TCP port, 1..65535."""
    value = _count(1)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1..65535)")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="evalhouse", description="Evaluate AI answers against ground truth.")
    parser.add_argument("--version", action="version", version=f"evalhouse {__version__}")
    home_help = "data folder (default $EVALHOUSE_HOME or ./evalhouse-data)"
    # Accepted before or after the subcommand; SUPPRESS keeps a subcommand that was not
    # given --home from resetting the value given before it.
    parser.add_argument("--home", default=None, help=home_help)
    catalog_help = "DuckLake catalog postgres:<libpq conninfo> instead of warehouse.duckdb"
    data_help = "shared folder of the catalog's Parquet files (or $EVALHOUSE_CATALOG_DATA)"
    parser.add_argument("--catalog", default=None, help=catalog_help)
    parser.add_argument("--catalog-data", default=None, metavar="DIR", help=data_help)
    common = _Parser(add_help=False)
    common.add_argument("--home", default=argparse.SUPPRESS, help=home_help)
    common.add_argument("--catalog", default=argparse.SUPPRESS, help=catalog_help)
    common.add_argument("--catalog-data", default=argparse.SUPPRESS, metavar="DIR", help=data_help)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", parents=[common], help="build demo data, ingest, open the dashboard")
    p.add_argument("--no-dashboard", action="store_true", help="build and ingest only")
    p.add_argument("--rebuild", action="store_true", help="throw away existing data first")
    p.add_argument("--port", type=_port, default=8501)
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
    p.add_argument(
        "--until-ci",
        metavar="METRIC=WIDTH",
        help="stop iterating once the metric's 95%% interval is this narrow (accuracy=2.0)",
    )
    p.add_argument(
        "--cascade", action="store_true", help="local judge first; the LLM judge only if unclear"
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="score shards of samples as Ray tasks: on the cluster at ADDRESS, or on a local "
        "Ray started for the run (pip install 'evalhouse[scale]')",
    )
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
    p.add_argument("--limit", type=_count(0), default=20, help="cases and skipped rows listed")
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
    p.add_argument("--wait", type=_seconds, default=30.0, help="seconds to wait for the lock")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "migrate", parents=[common], help="copy the warehouse file into a DuckLake catalog"
    )
    p.add_argument("--to", required=True, metavar="CATALOG", help="postgres:<libpq conninfo>")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("sql", parents=[common], help="run read-only SQL on the warehouse")
    p.add_argument("query")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--max-rows", type=_count(1), default=10_000, help="row cap (at least 1)")
    p.add_argument(
        "--time-limit", type=_seconds, default=60.0, help="seconds before the query is stopped"
    )
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
    p.add_argument("--max-regressions", type=_count(0), help="samples allowed to regress")
    p.add_argument(
        "--tolerance", type=_points, default=5.0, help="points a sample may drop (0..100)"
    )
    p.add_argument("--candidate", help="check one candidate of a multi-candidate run")
    p.add_argument("--format", choices=["table", "junit"], default="table")
    p.add_argument("--output", type=Path, help="JUnit file (default evalhouse-check-RUN.xml)")
    p.set_defaults(func=cmd_check)

    _testset_parser(sub, common)

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
    p.add_argument("--port", type=_port, default=8501)
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
    "until_ci": "--until-ci",
    "cascade": "--cascade",
    "executor": "--ray",
    "ray_address": "--ray",
    "candidates": "--candidates",
    "graders": "--graders",
    "project": "--project",
}


def _validation_line(
    exc: Any,
    *,
    config: str | None = None,
    flags: frozenset[str] = frozenset(_FLAGS),
    options: frozenset[str] = frozenset(),
) -> str:
    """One line for a refused setting: the flag, ``--option`` or config-file key that set
    it, the value and what it may be; never a multi-line model dump. ``flags`` are the
    fields set by a flag, ``options`` the ``--option`` names given, ``config`` the file."""
    from engine.models import LEGACY_OPTION_PATHS

    legacy = {path: key for key, path in LEGACY_OPTION_PATHS.items()}
    problems = exc.errors()
    first = problems[0]
    path = tuple(str(p) for p in first["loc"] if not isinstance(p, int))
    dotted = ".".join(path)
    if not path:
        where = config or "the run config"
    elif path[0] in _FLAGS and path[0] in flags and (len(path) == 1 or path[0] == "until_ci"):
        where = _FLAGS[path[0]]
    elif legacy.get(path) in options or dotted in options or not config:
        where = f"--option {legacy.get(path) if legacy.get(path) in options else dotted}"
    else:
        where = f"{config}: key {dotted}"
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" {_short(repr(given))}"
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        shown, message = "", f"unknown setting; known here: {_known_fields(path[:-1])}"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}{shown}: {message}{more}"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _known_fields(section: tuple[str, ...]) -> str:
    """The field names of the ``RunConfig`` section at ``section`` (the top for ``()``)."""
    from pydantic import BaseModel

    from engine.models import RunConfig

    model: Any = RunConfig
    for part in section:
        field = model.model_fields.get(part) if isinstance(model, type) else None
        model = field.annotation if field is not None else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return "see the README"
    return ", ".join(sorted(model.model_fields))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalhouse`` console script."""
    from pydantic import ValidationError

    from engine.errors import InputError
    from warehouse.errors import WarehouseError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage refusal
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
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
    except OSError as exc:
        # The file system refused (disk full, read-only, permissions): the user can fix it.
        where = f"{exc.filename}: " if exc.filename else ""
        _err(f"error: {where}{_reason(exc)}")
        return EXIT_USAGE


def console_main() -> NoReturn:
    """The ``evalhouse`` command (and ``python -m evalhouse.cli``): ``main`` and exit.

    Every object still alive is moved out of the garbage collector's reach first: at exit the
    interpreter otherwise walks them all once more (0.3 s after a 500-sample run) only to
    find what it frees anyway. ``atexit`` handlers and thread shutdown still run, and every
    file a command writes is closed by then. Not in ``main``, which tests call in-process.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console_main()
