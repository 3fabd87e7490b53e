"""Archived runs (run_labels) stay out of the default baseline and of the most-missed claims
(on both backends); every expectation below is counted by hand from the records."""

from __future__ import annotations

from datetime import datetime, timedelta

from engine.lake import write_part
from engine.models import ClaimRecord, RunLabelRecord
from tests.conftest import Store
from tests.factories import T0, result_record, run_record
from warehouse.queries import baseline_run, most_missed_claims

DAY = timedelta(days=1)


def _label(store: Store, run_id: str, n: int, archived: bool) -> None:
    record = RunLabelRecord(
        label_id=f"{run_id}-{n}",
        run_id=run_id,
        archived=archived,
        labelled_by="carol",
        labelled_at=T0 + timedelta(days=30, hours=n),
    )
    write_part(store.home.lake, "run_labels", run_id, 0, [record])


def test_default_baseline_skips_archived_runs(store: Store) -> None:
    home = store.home
    runs = [
        # (run id, name, test set, day)
        ("a1", "weekly", "a.jsonl", 0),
        ("a2", "weekly", "a.jsonl", 1),  # archived
        ("a3", "weekly", "a.jsonl", 2),
        ("b1", "other", "b.jsonl", 0),  # archived: the only earlier run of b.jsonl / "other"
        ("b2", "other", "b.jsonl", 3),
        ("c1", "cname", "x.jsonl", 0),
        ("c0", "cname", "c.jsonl", 1),  # archived
        ("c2", "cname", "c.jsonl", 2),
        ("d1", "dname", "d.jsonl", 0),  # archived, then restored
        ("d2", "dname", "d.jsonl", 1),
    ]
    for run_id, name, test_set, days in runs:
        record = run_record(run_id, T0 + days * DAY, name=name, test_set=test_set)
        write_part(home.lake, "runs", run_id, 0, [record])
        write_part(home.lake, "results", run_id, 1, [result_record(run_id, "s1")])
    for run_id in ("a2", "b1", "c0"):
        _label(store, run_id, 1, archived=True)
    _label(store, "d1", 1, archived=True)
    _label(store, "d1", 2, archived=False)
    store.ingest()
    wh = store.warehouse
    assert baseline_run(wh, "a3") == "a1"  # a2, the latest a.jsonl run before it, is archived
    assert baseline_run(wh, "a2") == "a1"  # an archived run itself still has its baseline
    assert baseline_run(wh, "b2") is None  # its only candidate is archived: no baseline
    assert baseline_run(wh, "c2") == "c1"  # same test set archived: the same name instead
    assert baseline_run(wh, "d2") == "d1"  # restored: a baseline again


def _claim(
    run_id: str, sample_id: str, text: str, found: bool, iteration: int = 1, status: str = ""
) -> ClaimRecord:
    return ClaimRecord(
        run_id=run_id,
        iteration=iteration,
        sample_id=sample_id,
        claim_id=text,
        claim_text=text,
        importance="required",
        found=found,
        similarity=0.9 if found else 0.1,
        status=status or ("found" if found else "missing"),
    )


def _run(
    store: Store,
    run_id: str,
    started: datetime,
    samples: dict[str, str],
    claims: list[ClaimRecord],
    iterations: int = 1,
) -> None:
    lake = store.home.lake
    write_part(lake, "runs", run_id, 0, [run_record(run_id, started, iterations=iterations)])
    for iteration in range(1, iterations + 1):
        own = [c for c in claims if c.iteration == iteration]
        write_part(lake, "claims", run_id, iteration, own)  # children first, as the runner
        results = [
            result_record(run_id, sample, domain=domain, iteration=iteration)
            for sample, domain in samples.items()
        ]
        write_part(lake, "results", run_id, iteration, results)


def test_most_missed_claims_leave_archived_runs_out(store: Store) -> None:
    both = {"s1": "acme.example", "s2": "beta.example"}
    _run(store, "r1", T0, {"s1": "acme.example"}, [_claim("r1", "s1", "A", False)])
    _run(
        store,
        "r2",
        T0 + DAY,
        both,
        [
            _claim("r2", "s1", "A", False),
            _claim("r2", "s1", "B", False),
            _claim("r2", "s2", "A", True),
        ],
    )
    _run(  # archived: only its misses of C, and it must not push r2 out of the latest two
        store,
        "r3",
        T0 + 2 * DAY,
        {"s1": "acme.example"},
        [
            _claim("r3", "s1", "A", False),
            _claim("r3", "s1", "B", False),
            _claim("r3", "s1", "C", False),
        ],
    )
    _run(
        store,
        "r4",
        T0 + 3 * DAY,
        {"s1": "acme.example"},
        [
            _claim("r4", "s1", "A", True),
            _claim("r4", "s1", "B", False),
            _claim("r4", "s1", "B", False, iteration=2, status="contradicted"),
        ],
        iterations=2,
    )
    _label(store, "r3", 1, archived=True)
    store.ingest()
    wh = store.warehouse

    def rows(**kwargs: object) -> list[tuple[object, ...]]:
        frame = most_missed_claims(wh, max_runs=2, **kwargs)  # type: ignore[arg-type]
        return [
            (
                r["domain"],
                r["claim_text"],
                r["missed"],
                r["contradicted"],
                r["checked"],
                r["missed_percent"],
                r["runs"],
                r["last_run_id"],
                r["last_sample_id"],
                r["last_iteration"],
            )
            for r in frame.iter_rows(named=True)
        ]

    # The latest two runs that are not archived: r4 and r2 (r3 is archived, r1 is older).
    # acme B: r2 missed 1 of 1, r4 missed iteration 1 and contradicted iteration 2 -> 2
    # missed and 1 contradicted of 3 (100% not found), last miss r4's iteration 2. acme A:
    # r2 missed, r4 found -> 1 of 2, last miss r2. beta A: found.
    assert rows() == [
        ("acme.example", "B", 2, 1, 3, 100.0, 2, "r4", "s1", 2),
        ("acme.example", "A", 1, 0, 2, 50.0, 2, "r2", "s1", 1),
    ]
    # Asked for (the sidebar shows archived runs): the latest two are r4 and r3.
    # acme B: r3 1 of 1, r4 2 of 2; acme C: r3 1 of 1; acme A: r3 missed, r4 found.
    assert rows(include_archived=True) == [
        ("acme.example", "B", 2, 1, 3, 100.0, 2, "r4", "s1", 2),
        ("acme.example", "C", 1, 0, 1, 100.0, 1, "r3", "s1", 1),
        ("acme.example", "A", 1, 0, 2, 50.0, 2, "r3", "s1", 1),
    ]
    assert rows(domain="beta.example") == []  # beta's only claim was found
