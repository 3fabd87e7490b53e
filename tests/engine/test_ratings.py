"""Bradley–Terry ratings (engine/ratings.py) on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from engine.ratings import bradley_terry


def test_two_players_three_to_one() -> None:
    # Plain estimate: p_A / (p_A + p_B) = 3/4, so p_A / p_B = 3; on the Elo scale the two
    # sit 400 log10(3) = 190.85 apart around 1000: 1095.42 and 904.58.
    games = [("A", "B", 1.0)] * 3 + [("A", "B", 0.0)]
    got = bradley_terry(games, prior=0)
    assert {k: round(v, 2) for k, v in got.items()} == {"A": 1095.42, "B": 904.58}
    # two wins and two ties are three wins of four as well (a tie is half a win each)
    tied = [("A", "B", 1.0)] * 2 + [("B", "A", 0.5)] * 2
    assert {k: round(v, 2) for k, v in bradley_terry(tied, prior=0).items()} == {
        "A": 1095.42,
        "B": 904.58,
    }


def test_three_players_whose_record_fits_strengths_4_2_1() -> None:
    # A-B 2:1, B-C 2:1, A-C 4:1 is exactly what strengths 4, 2, 1 predict (4/6 of 3,
    # 2/3 of 3, 4/5 of 5), so the estimate is 4 : 2 : 1. Geometric mean 2: A = 1000 +
    # 400 log10(2) = 1120.41, B = 1000, C = 1000 - 120.41 = 879.59.
    games = (
        [("A", "B", 1.0)] * 2 + [("A", "B", 0.0)]
        + [("B", "C", 1.0)] * 2 + [("C", "B", 1.0)]
        + [("A", "C", 1.0)] * 4 + [("A", "C", 0.0)]
    )  # fmt: skip
    got = bradley_terry(games, prior=0)
    assert {k: round(v, 2) for k, v in got.items()} == {"A": 1120.41, "B": 1000.0, "C": 879.59}


def test_an_unbeaten_player_stays_finite_with_the_prior() -> None:
    # A beat B once. Plain, A's strength would grow without end. With one virtual tie each
    # against a reference of strength 1, symmetry gives p_A = x, p_B = 1/x, and B's
    # equation 0.5 = p_B / (p_A + p_B) + p_B / (p_B + 1) becomes
    # 1 / (x^2 + 1) + 1 / (x + 1) = 1/2: x = 2.1304 (x = 2.13: 0.18061 + 0.31949 = 0.5001;
    # x = 2.131: 0.18047 + 0.31939 = 0.49986).
    got = bradley_terry([("A", "B", 1.0)])
    x = 10 ** ((got["A"] - 1000) / 400)
    assert math.isclose(x, 2.1304, abs_tol=1e-4)
    assert math.isclose(got["A"] + got["B"], 2000.0)
    assert math.isclose(1 / (x * x + 1) + 1 / (x + 1), 0.5, abs_tol=1e-9)


def test_order_of_games_does_not_matter_and_nothing_in_is_nothing_out() -> None:
    games = [("A", "B", 1.0), ("B", "C", 0.5), ("C", "A", 0.0), ("A", "B", 0.0)]
    assert bradley_terry(games) == pytest.approx(bradley_terry(list(reversed(games))))
    assert bradley_terry([]) == {}
    with pytest.raises(ValueError, match="prior -1: must be 0 or more"):
        bradley_terry(games, prior=-1)
