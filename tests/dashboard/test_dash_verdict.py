"""The Overview's first line: which domains moved beyond noise, worst first, computed by
hand from a small frame."""

from __future__ import annotations

import polars as pl

from dashboard.verdict import domain_verdict, verdict_rows

METRICS = {"accuracy": "Accuracy", "completeness": "Completeness"}


def _row(domain: str, **moves: tuple[float, float, float] | None) -> dict[str, object]:
    row: dict[str, object] = {"domain": domain}
    for metric in METRICS:
        move = moves.get(metric)
        delta, low, high = move if move else (0.5, -2.0, 3.0)
        row |= {
            f"{metric}_delta": delta,
            f"{metric}_low": low,
            f"{metric}_high": high,
            f"{metric}_beyond_noise": low > 0 or high < 0,
        }
    return row


def test_worse_domains_first_surest_first_and_a_fall_outweighs_a_rise() -> None:
    frame = pl.DataFrame(
        [
            _row("acme", accuracy=(-6.0, -9.0, -3.0)),  # worse, centre 2 half-widths out
            _row("beta", completeness=(-2.0, -2.5, -1.5)),  # worse, 4 half-widths: surer
            _row("gamma", accuracy=(4.0, 1.0, 7.0)),  # better
            _row("delta", accuracy=(5.0, 2.0, 8.0), completeness=(-3.0, -5.0, -1.0)),  # worse
            _row("omega"),  # within noise
        ]
    )
    verdict = domain_verdict(frame, METRICS, has_baseline=True)
    assert [c.domain for c in verdict.worse] == ["beta", "acme", "delta"]
    assert [c.domain for c in verdict.better] == ["gamma"]
    assert verdict.headline() == (
        "3 of 5 domains worse beyond noise (beta, acme, delta); 1 better (gamma)"
    )
    rows = verdict_rows(verdict).to_dicts()
    assert rows[0] == {
        "Domain": "beta",
        "Change": "worse",
        "Metric": "Completeness",
        "Δ": -2.0,
        "95% interval": "[-2.5, -1.5]",
        "Also moved": "",
    }


def test_nothing_beyond_noise_and_no_baseline_say_so() -> None:
    frame = pl.DataFrame([_row("acme"), _row("beta")])
    assert domain_verdict(frame, METRICS, True).headline() == (
        "No domain changed beyond noise (2 compared)."
    )
    assert "No baseline" in domain_verdict(frame, METRICS, False).headline()


def test_a_cancelled_run_is_labelled_and_never_the_default() -> None:
    from datetime import datetime

    from dashboard.components.pickers import default_run_index, run_label

    runs = pl.DataFrame(
        {
            "run_id": ["r3", "r2", "r1"],
            "name": ["week 3", "week 2", "week 1"],
            "started_at": [datetime(2026, 11, d) for d in (22, 15, 8)],
            "status": ["cancelled", "completed", "completed"],
        }
    )
    assert default_run_index(runs) == 1
    assert run_label(runs)["r3"] == "week 3 · 2026-11-22 00:00 · r3 · cancelled"
    assert run_label(runs)["r2"] == "week 2 · 2026-11-15 00:00 · r2"
    assert default_run_index(runs.filter(pl.col("status") == "cancelled")) == 0


def test_every_metric_behind_more_is_named_and_the_mover_keeps_its_metric_name() -> None:
    frame = pl.DataFrame(
        [_row("acme", accuracy=(-6.0, -9.0, -3.0), completeness=(-2.0, -2.5, -1.5))]
    )
    change = domain_verdict(frame, METRICS, True).changes[0]
    # completeness is the surer fall: it leads, accuracy is named behind it
    assert (change.key, change.metric, change.others) == ("completeness", "Completeness", 1)
    assert verdict_rows(domain_verdict(frame, METRICS, True)).to_dicts()[0]["Also moved"] == (
        "+1 more: Accuracy"
    )
