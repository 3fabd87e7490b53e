"""Run header cards: hand-computed noise verdicts, and the cards on the Overview page."""

from __future__ import annotations

from typing import Any

from dashboard.components.cards import run_cards
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "samples": 100,
        "errors": 0,
        "error_rate": 0.0,
        "pass_rate": 0.5,
        "pass_n": 100,
        "overall": 4.0,
        "overall_sd": 0.5,
        "overall_n": 100,
        "cost_usd": 1.0,
        "latency_p50": 800.0,
        "latency_p95": 2000.0,
        "latency_mean": 900.0,
        "latency_sd": 300.0,
        "latency_n": 100,
    }
    row.update(over)
    return row


def _by_label(run: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
    return {c.label: c for c in run_cards(run, base)}


def test_overall_beyond_noise_only_with_enough_samples() -> None:
    # delta 0.2; half-width 1.96 * sqrt(0.25/100 + 0.25/100) = 0.139 -> beyond noise
    cards = _by_label(_row(), _row(overall=3.8))
    assert (cards["Overall (1-5)"].value, cards["Overall (1-5)"].delta) == ("4.00", "+0.20")
    assert cards["Overall (1-5)"].verdict() == "beyond noise"
    # 25 samples each: 1.96 * sqrt(0.25/25 * 2) = 0.277 > 0.2 -> within noise
    small = {"overall_n": 25}
    cards = _by_label(_row(**small), _row(overall=3.8, **small))
    assert cards["Overall (1-5)"].verdict() == "within noise"


def test_rates_latency_and_cost() -> None:
    # pass rate 0.5 -> 0.7 over 100 each: 1.96 * sqrt(0.25/100 + 0.21/100) = 0.133 < 0.2
    run = _row(pass_rate=0.7, errors=3, error_rate=0.03, latency_mean=1000.0, cost_usd=1.5)
    cards = _by_label(run, _row())
    assert cards["Pass rate"].value == "70.0%"
    assert cards["Pass rate"].delta == "+20.0 pts"
    assert cards["Pass rate"].verdict() == "beyond noise"
    # errors 0 -> 3%: 1.96 * sqrt(0.0291/100) = 0.033 > 0.03 -> within noise
    # the share, not "3 (3.0%)", which was cut at 1024 px
    assert cards["Error rate"].value == "3.0%"
    assert cards["Error rate"].verdict() == "within noise"
    # mean latency +100 ms: 1.96 * sqrt(900 + 900) = 83 -> beyond noise; lower is better
    latency = cards["Latency p50"]
    assert latency.value == "800 ms" and latency.verdict() == "beyond noise (on the mean)"
    assert latency.lower_is_better
    assert cards["Latency p95"].value == "2,000 ms"
    assert cards["Latency p95"].verdict() == "no noise check"
    assert cards["Cost"].value == "$1.50" and cards["Cost"].delta == "+0.5000"
    assert cards["Cost"].verdict() == "no noise check"


def test_no_change_has_no_arrow_and_costs_are_short() -> None:
    from dashboard.components.cards import changed
    from dashboard.formats import cost as cost_text

    cards = _by_label(_row(), _row())
    assert not changed(cards["Samples"].delta) and not changed(cards["Cost"].delta)
    assert changed("-0.01") and not changed("+0.0 pts")
    assert [cost_text(v) for v in (0.0, 0.0123, 0.5, 12.345, None)] == [
        "$0", "$0.0123", "$0.5", "$12.35", "n/a",
    ]  # fmt: skip


def test_without_baseline_and_missing_values() -> None:
    cards = _by_label(_row(), None)
    assert all(c.delta is None and c.verdict() == "no baseline" for c in cards.values())
    cards = _by_label(_row(), _row(pass_rate=None, pass_n=0))
    assert cards["Pass rate"].verdict() == "not measured in both runs"


def test_overview_cards_week2_against_week1(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home)
    at.selectbox(key="overview_run").set_value("r2").run()
    metrics = {m.label: m for m in at.metric}
    # r2: 10 result rows (acme 2, beta 2, gamma 6), one error; r1: 9 rows, none
    assert metrics["Samples"].value == "10"
    assert metrics["Error rate"].value == "10.0%"
    # r2's only verdict failed; r1 has none: no change to show
    assert metrics["Pass rate"].value == "0.0%"
    assert metrics["Overall (1-5)"].value == "3.50"
    captions = [c.value for c in at.caption]
    # 0 -> 10% over 10 and 9 rows: 1.96 * sqrt(0.09/10) = 0.186 > 0.1 -> within noise
    assert "within noise" in captions
    assert "not measured in both runs" in captions


def test_one_format_per_quantity() -> None:
    from datetime import datetime

    from dashboard import formats

    assert [formats.score(v) for v in (82.456, 0.0, None)] == ["82.5", "0.0", "n/a"]
    assert formats.score(4.0, 1, 5) == "4.00" and formats.score(0.5, 0, 1) == "0.50"
    assert formats.percent(12.34) == "12.3%"
    assert [formats.seconds(v) for v in (4.4, 185, 7440)] == ["4 s", "3 min 5 s", "2 h 4 min"]
    assert formats.timestamp(datetime(2026, 11, 26, 9, 41, 7, 123456)) == "2026-11-26 09:41"
    assert formats.milliseconds(1234.4) == "1,234 ms"
    assert formats.without_nulls({"a": None, "b": {"c": None, "d": [1, {"e": None}]}}) == {
        "b": {"d": [1, {}]}
    }
