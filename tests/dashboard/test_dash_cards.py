"""Run header cards: hand-computed noise verdicts, and the cards on the Overview page."""

from __future__ import annotations

from typing import Any

import numpy as np

from dashboard.components.badges import DELTA_GREY
from dashboard.components.cards import run_cards
from engine.noise import NoiseCheck, bootstrap_check
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, shown_cards


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "samples": 100,
        "errors": 0,
        "error_rate": 0.0,
        "pass_rate": 0.5,
        "pass_n": 100,
        "abstention_rate": 0.25,
        "overall": 4.0,
        "cost_usd": 1.0,
        "latency_p50": 800.0,
        "latency_p95": 2000.0,
        "latency_mean": 900.0,
    }
    row.update(over)
    return row


def _by_label(
    run: dict[str, Any], base: dict[str, Any] | None, noise: dict[str, NoiseCheck] | None = None
) -> dict[str, Any]:
    return {c.label: c for c in run_cards(run, base, noise)}


def test_cards_read_the_paired_bootstrap() -> None:
    # Per-sample changes of 100 paired samples: overall up 0.2 on every one -> [0.2, 0.2];
    # pass rate: 20 samples flip to pass, the rest stay -> interval above zero; error rate:
    # 3 samples fail -> the interval reaches zero.
    overall = bootstrap_check(np.full(100, 0.2))
    passes = bootstrap_check(np.r_[np.ones(20), np.zeros(80)])
    errors = bootstrap_check(np.r_[np.ones(3), np.zeros(97)])
    latency = bootstrap_check(np.full(100, 100.0) + np.linspace(-50, 50, 100))
    noise = {"overall": overall, "pass_rate": passes, "error_rate": errors,
             "latency_mean": latency}  # fmt: skip
    assert (overall.low, overall.high) == (0.2, 0.2)
    assert passes.low is not None and passes.low > 0
    assert errors.low == 0.0
    run = _row(pass_rate=0.7, overall=4.2, errors=3, error_rate=0.03, latency_mean=1000.0,
               cost_usd=1.5)  # fmt: skip
    cards = _by_label(run, _row(), noise)
    assert (cards["Overall (1-5)"].value, cards["Overall (1-5)"].delta) == ("4.20", "+0.20")
    assert cards["Overall (1-5)"].verdict() == "beyond noise"
    assert cards["Pass rate"].value == "70.0%"
    assert cards["Pass rate"].delta == "+20.0 pts"
    assert cards["Pass rate"].verdict() == "beyond noise"
    # the share, not "3 (3.0%)", which was cut at 1024 px
    assert cards["Error rate"].value == "3.0%"
    assert cards["Error rate"].verdict() == "within noise"
    latency = cards["Latency p50"]
    assert latency.value == "800 ms" and latency.verdict() == "beyond noise (on the mean)"
    assert latency.lower_is_better
    assert cards["Latency p95"].value == "2,000 ms"
    assert cards["Latency p95"].verdict() == "no noise check"
    assert cards["Cost"].value == "$1.50" and cards["Cost"].delta == "+0.5000"
    assert cards["Cost"].verdict() == "no noise check"
    # abstention sits beside the pass rate; no check given -> no verdict
    assert cards["Abstained"].value == "25.0%" and cards["Abstained"].lower_is_better
    assert cards["Abstained"].verdict() == "no noise check"


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
    cards = shown_cards(at)
    # r2: 10 result rows (acme 2, beta 2, gamma 6), one error; r1: 9 rows, none
    assert cards["Samples"]["value"] == "10"
    assert cards["Error rate"]["value"] == "10.0%"
    # r2's only verdict failed; r1 has none: no change to show
    assert cards["Pass rate"]["value"] == "0.0%"
    assert cards["Pass rate"]["verdict"] == "not measured in both runs"
    assert "delta" not in cards["Pass rate"]
    assert cards["Overall (1-5)"]["value"] == "3.50"
    # gamma-q1 abstained, gamma-q2 answered nothing: 2 of the 9 rows that are not errors
    assert cards["Abstained"]["value"] == "22.2%"
    # errors 0 -> 1 on one of 9 paired samples: the bootstrap interval reaches 0, so the
    # rise is drawn grey, with its verdict under the number and in the tooltip
    errors = cards["Error rate"]
    assert errors["delta"] == "▲ +10.0 pts"
    assert errors["verdict"] == "within noise"
    assert errors["help"] == "Change against the baseline: within noise."
    assert DELTA_GREY in errors["delta_style"]


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
