"""The Leaderboard page on the fixture warehouse: Elo (the ratings view) and Bradley–Terry
of r1, r2 and r3, and one comparison's win/tie/loss per domain with Wilson intervals (every
number by hand from fixture_home.PAIRWISE)."""

from __future__ import annotations

from engine.ratings import bradley_terry
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, table
from tests.dashboard.fixture_home import CMP1, CMP2


def test_leaderboard_ratings_by_hand(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "leaderboard")
    rows = table(at, "Elo")
    # Elo, K = 32, from 1000, games in order. CMP1 (r1 vs r2): r2 wins (E 0.5) -> 984 / 1016;
    # r1 wins (E_r1 0.45408) -> 1001.47 / 998.53; r2, r2, r2 win -> 985.33 / 1014.67,
    # 970.68 / 1029.32, 957.36 / 1042.64; a tie (E_r1 0.37967) -> 961.21 / 1038.79.
    # CMP2 (r2 vs r3): r3 wins (E_r2 0.55560) -> r2 1021.01, r3 1017.78; a tie
    # (E_r2 0.50465) -> r2 1020.86, r3 1017.93.
    assert [(r["Rank"], r["Player"], round(r["Elo"], 2)) for r in rows] == [
        (1, "week 2 · r2", 1020.86),
        (2, "week 3 · r3", 1017.93),
        (3, "week 1 · r1", 961.21),
    ]
    assert [(r["Games"], r["Wins"], r["Ties"], r["Losses"]) for r in rows] == [
        (8, 4, 2, 2),
        (2, 1, 1, 0),
        (6, 1, 1, 4),
    ]
    # Bradley–Terry of the same eight games, listed here from the fixture by hand: it does
    # not care that r3's win came late, and puts unbeaten r3 first.
    games = [("r1", "r2", s) for s in (0.0, 1.0, 0.0, 0.0, 0.0, 0.5)]
    games += [("r2", "r3", 0.0), ("r2", "r3", 0.5)]
    expected = bradley_terry(games)
    assert {r["Player"].split(" · ")[1]: r["Bradley–Terry"] for r in rows} == expected
    assert max(expected, key=lambda p: expected[p]) == "r3"
    assert len(at.get("vega_lite_chart")) == 2
    assert "3 players" in at.caption[0].value and "8 games" in at.caption[0].value


def test_leaderboard_win_tie_loss_per_domain(app: AppFactory, fixture_home: Paths) -> None:
    at = app(fixture_home, "leaderboard")
    box = at.selectbox(key="leaderboard_comparison")
    assert box.options[0].startswith("week 2 (r2) vs week 3 (r3) · gpt-4o-mini (OpenAI)")
    assert box.value == CMP2  # newest first
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"A wins": "0", "Ties": "1", "B wins": "1", "Inconsistent orders": "1"}
    box.set_value(CMP1).run()
    rows = {r["Domain"]: r for r in table(at, "A 95% interval")}
    assert list(rows) == ["acme.example", "beta.example", "gamma.example", "(all)"]
    assert [(r["A wins"], r["Ties"], r["B wins"]) for r in rows.values()] == [
        (1, 0, 1),
        (0, 0, 1),
        (0, 1, 2),
        (1, 1, 4),
    ]
    # Wilson 95%, z = 1.96. acme 1 of 2: 0.0945-0.9055 -> "9% – 91%".
    # beta 0 of 1: centre = half = 1.9208 / 4.8416 = 0.39673 -> 0-0.7935 -> "0% – 79%".
    # all 1 of 6: centre (1/6 + 0.32013) / 1.64027 = 0.29678, half 1.96 x
    #   sqrt(0.023148 + 0.026678) / 1.64027 = 0.26673 -> 0.0300-0.5635 -> "3% – 56%".
    assert rows["acme.example"]["A 95% interval"] == "9% – 91%"
    assert rows["beta.example"]["A 95% interval"] == "0% – 79%"
    assert rows["(all)"]["A 95% interval"] == "3% – 56%"
    assert round(rows["(all)"]["B win rate"], 4) == round(4 / 6, 4)


def test_leaderboard_without_comparisons(
    app: AppFactory, empty_home: Paths, missing_home: Paths
) -> None:
    at = app(empty_home, "leaderboard")
    assert "No head-to-head comparison yet" in at.info[0].value
    assert not at.dataframe
    at = app(missing_home, "leaderboard")
    assert "make demo" in at.info[0].value
