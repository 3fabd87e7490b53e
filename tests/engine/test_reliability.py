"""Krippendorff's alpha against the textbook example and a case computed by hand; a
panel's asks combined by mean and majority; the ask index in the judge cache key."""

from __future__ import annotations

import pytest

from engine.judges.asks import asking, current_ask, first_ask
from engine.judges.http.cache import cache_key
from engine.models import SampleKey
from engine.reliability import krippendorff_alpha
from engine.scoring.panel import Ask, ask_records, combine, majority

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with
# missing values: 4 observers, 12 units. Published: nominal 0.743, ordinal 0.815,
# interval 0.849.
_ = None
OBSERVERS = (
    (1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _),
    (1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3),
    (_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _),
    (1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _),
)
UNITS = list(zip(*OBSERVERS, strict=True))


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_the_textbook_example(level: str, published: float) -> None:
    alpha = krippendorff_alpha(UNITS, level)  # type: ignore[arg-type]
    assert alpha is not None and round(alpha, 3) == published


def test_alpha_by_hand() -> None:
    # Units (1, 1) and (2, 3): pairable values 1, 1, 2, 3 (n = 4). Coincidences: o(1,1) = 2,
    # o(2,3) = o(3,2) = 1. Interval: observed sum o*d2 = 1 + 1 = 2; expected sum
    # n_c*n_k*d2 = 2*(2*1*1) + 2*(2*1*4) + 2*(1*1*1) = 22. alpha = 1 - (n-1)*2/22 = 16/22.
    assert krippendorff_alpha([(1, 1), (2, 3)]) == pytest.approx(16 / 22)
    # Nominal: observed 2; expected sum over unequal pairs of n_c*n_k = 2*(2+2+1) = 10;
    # alpha = 1 - 3*2/10 = 0.4.
    assert krippendorff_alpha([(1, 1), (2, 3)], "nominal") == pytest.approx(0.4)


def test_alpha_perfect_undefined_and_disagreeing() -> None:
    assert krippendorff_alpha([(1, 1), (3, 3), (5, 5)]) == pytest.approx(1.0)
    assert krippendorff_alpha([(2, 2), (2, 2)]) is None  # nothing varies
    assert krippendorff_alpha([(1,), (3,)]) is None  # no unit with a pair
    assert krippendorff_alpha([(1, float("nan"), 1), (3, None, 3)]) == pytest.approx(1.0)
    flipped = krippendorff_alpha([(1, 5), (5, 1), (1, 5)])
    assert flipped is not None and flipped < 0


def _ask(judge: str, i: int, faith: float | None, passed: bool | None) -> Ask:
    return Ask(judge, i, {"judge_faithfulness": faith, "passed": passed, "judge_reasoning": "r"})


def test_a_panel_is_the_mean_of_judges_and_the_majority_of_votes() -> None:
    # judge a asked 3 times (mean 4, votes 2 of 3 pass), judge b once (2, fail)
    asks = [
        _ask("a", 0, 5.0, True),
        _ask("a", 1, 4.0, True),
        _ask("a", 2, 3.0, False),
        _ask("b", 0, 2.0, False),
    ]
    fields, flags = combine(asks)
    assert fields["judge_faithfulness"] == pytest.approx((4.0 + 2.0) / 2)  # judges weigh alike
    assert fields["passed"] is False  # a passes, b fails: a tie is not a pass
    assert fields["judge_reasoning"] == "r"
    assert set(flags) == {"judge_flaky", "jury_split"}
    steady, none = combine([_ask("a", 0, 5.0, True), _ask("a", 1, 4.0, True)])
    assert steady["passed"] is True and none == ()
    assert majority([None, None]) is None and majority([True, None, False, True]) is True


def test_ask_records_are_on_0_100_with_the_rubric_pass() -> None:
    key = SampleKey(run_id="r", iteration=2, sample_id="s")
    rows = ask_records(key, [_ask("a", 1, 4.0, False), _ask("a", 2, 3.75, None)])
    faith = [(r.ask, r.score_100, r.passed) for r in rows if r.metric == "judge_faithfulness"]
    assert faith == [(1, 75.0, True), (2, 68.75, False)]
    passed = [(r.score_100, r.passed) for r in rows if r.metric == "passed"]
    assert passed == [(0.0, False), (None, None)]
    assert {r.iteration for r in rows} == {2}


def test_the_ask_index_makes_a_new_cache_key_but_the_first_keeps_the_old_one() -> None:
    old = cache_key("openai", "m", "rubric.v1", "prompt", 0.0)
    assert cache_key("openai", "m", "rubric.v1", "prompt", 0.0, 0) == old
    keys = {cache_key("openai", "m", "rubric.v1", "prompt", 0.0, i) for i in range(4)}
    assert len(keys) == 4
    assert [first_ask(i, 3) for i in (1, 2, 3)] == [0, 3, 6]
    assert current_ask() == 0
    with asking(5):
        assert current_ask() == 5
    assert current_ask() == 0
