"""Head-to-head judging: the local rule, both orders with an LLM judge (position bias),
Wilson intervals, and ``evalhouse compare-runs`` through the lake into the ``pairwise_summary``
and ``ratings`` views, with hand-computed Elo."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from engine.judges.http.anthropic import AnthropicWire
from engine.judges.http.client import WireFormat
from engine.judges.http.openai_compat import OpenAIWire
from engine.lake import read_table, write_part
from engine.pairwise import (
    ComparisonError,
    Pair,
    combine,
    compare_pairs,
    local_judgment,
    pairs_from_lake,
    tally,
    wilson,
)
from engine.settings import Paths
from evalhouse.cli import main
from tests.engine.test_http_judges import make_judge
from tests.factories import T0, result_record, run_record
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm
from warehouse.db import read_connection

__all__ = ["loopback_llm"]


def pair(a: dict[str, Any], b: dict[str, Any], **kw: Any) -> Pair:
    fields: dict[str, Any] = {
        "iteration": 1,
        "sample_id": "q1",
        "candidate": "",
        "domain": "acme.com",
        "query": "What does Pro cost?",
        "answer_a": "Acme Pro costs $20 a month.",
        "answer_b": "It is cheap.",
        "values_a": a,
        "values_b": b,
    }
    fields.update(kw)
    return Pair(**fields)


# --------------------------------------------------------------------------- local rule


def test_local_rule_by_hand() -> None:
    a = {"accuracy": 80.0, "completeness": 60.0, "coverage_percent": 50.0}
    # (80 + 60 + 50) / 3 = 63.33 vs (70 + 60 + 40) / 3 = 56.67: A by 6.67 > 5
    winner, qa, qb, reason = local_judgment(
        pair(a, {"accuracy": 70.0, "completeness": 60.0, "coverage_percent": 40.0})
    )
    assert (winner, round(qa or 0, 2), round(qb or 0, 2)) == ("a", 63.33, 56.67)
    assert reason.endswith("quality 63.3 vs 56.7: A better by 6.7")
    # 63.33 vs 62.0: within 5 points
    close = {"accuracy": 78.0, "completeness": 60.0, "coverage_percent": 48.0}
    assert local_judgment(pair(a, close))[0] == "tie"
    assert local_judgment(pair(a, close), margin=1.0)[0] == "a"
    # only the fields both answers have: completeness 60 vs 90 -> B by 30
    only = local_judgment(pair(a, {"accuracy": None, "completeness": 90.0}))
    assert only[:3] == ("b", 60.0, 90.0)
    assert local_judgment(pair({}, {"accuracy": 1.0}))[0] == "tie"


def test_orders_combined() -> None:
    assert combine("first", "second") == ("a", True, "a", "a")
    assert combine("second", "first") == ("b", True, "b", "b")
    assert combine("tie", "tie") == ("tie", True, "tie", "tie")
    # the judge always prefers the answer shown first: position bias -> a tie
    assert combine("first", "first") == ("tie", False, "a", "b")
    assert combine("first", "tie") == ("tie", False, "a", "tie")


def test_wilson_by_hand() -> None:
    # p = 1/2, n = 2, z = 1.96: centre (0.5 + 0.9604) / 2.9208 = 0.5,
    # half 1.96 * sqrt(0.125 + 0.2401) / 2.9208 = 0.40547
    low, high = wilson(1, 2)
    assert (round(low, 4), round(high, 4)) == (0.0945, 0.9055)
    # 8 of 10: centre (0.8 + 0.19208) / 1.38416 = 0.71673, half 0.22768
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 0) == (0.0, 1.0)


# --------------------------------------------------------------------------- LLM judge


def run_llm(server: LoopbackLLM, wire: WireFormat, pairs: list[Pair]) -> Any:
    judge = make_judge(server, wire)
    return asyncio.run(
        compare_pairs(pairs, judge, run_a="A", run_b="B", comparison_id="cmp-1", now=T0)
    )


@pytest.mark.parametrize("wire", [OpenAIWire(), AnthropicWire()], ids=["openai", "anthropic"])
def test_position_swap_comes_out_a_tie(loopback_llm: LoopbackLLM, wire: WireFormat) -> None:
    # A judge that always picks the answer shown first.
    loopback_llm.responder = lambda provider, body: Reply.json({"reason": "first", "better": "1"})
    pairs = [pair({}, {}, sample_id=f"q{i}") for i in range(3)]
    records, usage = run_llm(loopback_llm, wire, pairs)
    assert [(r.winner, r.consistent, r.a_first, r.b_first) for r in records] == [
        ("tie", False, "a", "b")
    ] * 3
    assert records[0].reason.startswith("the two orders disagree (position bias): tie")
    assert usage.calls == 6 and loopback_llm.count == 6
    # each pair was shown once in each order
    shown = [
        r.prompt_text.split("ANSWER 1:\n<<<\n")[1].split("\n")[0] for r in loopback_llm.requests
    ]
    assert sorted(shown) == ["Acme Pro costs $20 a month."] * 3 + ["It is cheap."] * 3
    (all_domains,) = [t for t in tally(records) if t.domain == "(all)"]
    assert (all_domains.ties, all_domains.inconsistent) == (3, 3)


def test_consistent_judge_picks_a_winner(loopback_llm: LoopbackLLM) -> None:
    def by_content(provider: str, body: dict[str, Any]) -> Reply:
        text = json.dumps(body)
        first = text.split("ANSWER 1:")[1].split("ANSWER 2:")[0]
        a_first = "$20" in first
        # the two orders report different token counts, so both must be added up
        better, sent = ("1", 1000) if a_first else ("2", 600)
        return Reply.json(
            {"reason": "states the price", "better": better}, input_tokens=sent, output_tokens=20
        )

    loopback_llm.responder = by_content
    (record,), usage = run_llm(loopback_llm, OpenAIWire(), [pair({}, {})])
    assert (record.winner, record.consistent, record.judge) == ("a", True, "openai:gpt-4o-mini")
    # what the pair cost is kept with it: both orders' tokens, as the server reported them
    assert (record.input_tokens, record.output_tokens) == (1600, 40)
    # gpt-4o-mini: $0.15 / $0.60 per million tokens in / out
    assert record.cost_usd == pytest.approx((1600 * 0.15 + 40 * 0.60) / 1e6)
    assert record.cost_usd == pytest.approx(usage.cost_usd)


def test_a_failing_judge_is_an_error_row(loopback_llm: LoopbackLLM) -> None:
    loopback_llm.responder = lambda provider, body: Reply.json({"better": "maybe"})
    (record,), _ = run_llm(loopback_llm, OpenAIWire(), [pair({}, {})])
    assert record.winner is None and record.consistent is None
    assert record.error is not None and '"better": "1", "2" or "tie"' in record.error


def test_calls_in_flight_span_pairs_and_orders(loopback_llm: LoopbackLLM) -> None:
    # 3 pairs = 6 calls, 0.3 s each, 4 at once (the client would allow 16): 4 in flight means
    # the calls of different pairs overlapped (a pair has only 2), and never more than 4.
    loopback_llm.delay = 0.3
    loopback_llm.responder = lambda provider, body: Reply.json({"reason": "r", "better": "tie"})
    judge = make_judge(loopback_llm, concurrency=16)
    pairs = [pair({}, {}, sample_id=f"q{i}") for i in range(3)]
    started = time.perf_counter()
    records, usage = asyncio.run(
        compare_pairs(pairs, judge, run_a="A", run_b="B", comparison_id="c", now=T0, concurrency=4)
    )
    elapsed = time.perf_counter() - started
    assert loopback_llm.max_in_flight == 4 and usage.calls == 6
    assert [r.winner for r in records] == ["tie"] * 3
    assert elapsed >= 0.6  # at most 4 at once: two rounds of 0.3 s at least


def test_one_failed_order_is_an_error_row_with_the_other_call_counted(
    loopback_llm: LoopbackLLM,
) -> None:
    def by_order(provider: str, body: dict[str, Any]) -> Reply:
        first = json.dumps(body).split("ANSWER 1:")[1].split("ANSWER 2:")[0]
        return Reply.json({"better": "1"} if "$20" in first else {"better": "maybe"})

    loopback_llm.responder = by_order
    (record,), usage = run_llm(loopback_llm, OpenAIWire(), [pair({}, {})])
    assert record.winner is None and record.error is not None
    assert record.error.startswith("judge openai:gpt-4o-mini failed: ")
    # the order that answered is counted (the failed order's two calls, reply and repair, are
    # not: the client raises without usage)
    assert usage.calls == 1 and loopback_llm.count == 3


# --------------------------------------------------------------------------- end to end


def seed_run(home: Paths, run_id: str, scores: dict[str, float], at_minute: int) -> None:
    started = T0.replace(minute=at_minute)
    write_part(home.lake, "runs", run_id, 0, [run_record(run_id, started_at=started)])
    rows = [
        result_record(
            run_id, sid, accuracy=s, completeness=s, coverage_percent=s, response=f"{run_id} {sid}",
            domain="acme.com" if sid != "q3" else "beta.org",
        )
        for sid, s in scores.items()
    ]  # fmt: skip
    write_part(home.lake, "results", run_id, 1, rows)


def compare(home: Paths, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["compare-runs", "--home", str(home.home), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_runs_end_to_end_with_hand_computed_elo(
    home: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_run(home, "run-a", {"q1": 90.0, "q2": 70.0}, 0)
    seed_run(home, "run-b", {"q1": 70.0, "q2": 72.0, "q3": 50.0}, 1)
    seed_run(home, "run-c", {"q1": 95.0, "q3": 50.0}, 2)
    code, out, err = compare(home, capsys, "run-a", "run-b")
    assert code == 0, err
    first = out.strip().splitlines()[-1]
    assert first.startswith("cmp-")
    assert "acme.com: A wins 1, ties 1, B wins 0" in err
    assert "pairs judged: 2/2" in err
    code, out, err = compare(home, capsys, "run-b", "run-c")
    assert code == 0, err
    part = home.lake / "pairwise" / f"run_id={first}" / "iteration=0" / "part-000001.parquet"
    assert part.exists()
    rows = read_table(home.lake, "pairwise", first).to_pylist()
    assert {(r["sample_id"], r["winner"]) for r in rows} == {("q1", "a"), ("q2", "tie")}

    with read_connection(home.warehouse) as con:
        summary = con.execute(
            "SELECT domain, wins_a, ties, wins_b, judged, round(a_win_low, 4), "
            "round(a_win_high, 4) FROM pairwise_summary WHERE run_a = 'run-a' ORDER BY domain"
        ).fetchall()
        ratings = con.execute("SELECT rank, player, name, rating, games, wins, ties, losses "
                              "FROM ratings ORDER BY rank").fetchall()  # fmt: skip
    assert summary == [
        ("(all)", 1, 1, 0, 2, 0.0945, 0.9055),
        ("acme.com", 1, 1, 0, 2, 0.0945, 0.9055),
    ]
    # Elo, K = 32, start 1000. Game 1 run-a beats run-b: E = 0.5 -> a 1016, b 984.
    # Game 2 tie: E_a = 1 / (1 + 10^(-32/400)) = 0.54595 -> a 1014.53, b 985.47.
    # Game 3 (run-b vs run-c, q1) run-c wins: E_b = 1 / (1 + 10^(14.53/400)) = 0.47909
    #   -> b 985.47 - 15.33 = 970.14, c 1000 + 15.33 = 1015.33. (q3: 50 vs 50, a tie:)
    # Game 4 tie b 970.14 vs c 1015.33: E_b = 1 / (1 + 10^(45.19/400)) = 0.43531
    #   -> b 970.14 + 2.07 = 972.21, c 1015.33 - 2.07 = 1013.26.
    assert [(r[0], r[1], r[2]) for r in ratings] == [
        (1, "run-a", "run run-a"),
        (2, "run-c", "run run-c"),
        (3, "run-b", "run run-b"),
    ]
    assert [round(r[3], 2) for r in ratings] == [1014.53, 1013.26, 972.21]
    assert [r[4:] for r in ratings] == [(2, 1, 1, 0), (2, 1, 1, 0), (4, 0, 2, 2)]


def test_compare_runs_refuses_bad_input(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    seed_run(home, "run-a", {"q1": 90.0}, 0)
    code, out, err = compare(home, capsys, "run-a", "nope")
    assert code == 2 and out == ""
    assert err.strip() == f"error: run 'nope' has no results in the lake ({home.lake})"
    code, _, err = compare(home, capsys, "run-a", "run-a")
    assert code == 2 and "two different sides" in err
    code, _, err = compare(home, capsys, "run-a", "run-a", "--margin", "-1")
    assert code == 2 and err.strip() == "error: --margin -1: must be 0 or more"
    assert not (home.lake / "pairwise").exists()
    seed_run(home, "run-z", {"q9": 1.0}, 3)
    with pytest.raises(ComparisonError, match="no case both answered"):
        pairs_from_lake(home.lake, "run-a", "run-z")


def test_estimate_counts_both_orders(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    seed_run(home, "run-a", {"q1": 90.0, "q2": 70.0}, 0)
    seed_run(home, "run-b", {"q1": 70.0, "q2": 72.0}, 1)
    code, out, err = compare(home, capsys, "run-a", "run-b", "--judge", "openai:gpt-4o-mini",
                             "--estimate")  # fmt: skip
    assert code == 0, err
    # 2 pairs x 2 orders. Each pair: query "q" (1 char) and two answers like "run-a q1"
    # (8 chars each): 2 x 17 = 34 chars // 4 = 8 tokens; 2 orders x (2 x 300 + 8) = 1216 in
    # and 4 calls x 120 = 480 out
    assert "judge calls:   4 (both orders" in out
    assert "tokens:        1216 in, 480 out" in out
    # gpt-4o-mini $0.15 / $0.60 per million: 1216 x 0.15 + 480 x 0.60 = 470.4 / 1e6
    assert "cost:          $0.0005" in out
    # 4 calls x 1.5 s over 8 at once (the default concurrency) = 0.75 s, shown like `run`
    assert "time:          about 0m01s" in out
    assert "note: time assumed: 1.5 s per call, 8 calls at once" in out
    code, out, _ = compare(home, capsys, "run-a", "run-b", "--judge", "ollama:llama3.1",
                           "--estimate", "--concurrency", "2")  # fmt: skip
    assert "time:          about 0m03s" in out  # 4 x 1.5 / 2
    assert "note: no price known for ollama:llama3.1: judge cost counted as 0" in out
    assert not (home.lake / "pairwise").exists()
    code, out, _ = compare(home, capsys, "run-a", "run-b", "--estimate")
    assert "judge calls:   0" in out
    assert "note: local judge: the rule over stored scores, no judge API calls" in out


def test_two_candidates_of_one_run(home: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        result_record("run-p", sid, candidate=cand, accuracy=s, completeness=s,
                      coverage_percent=s, response=f"{cand} {sid}")
        for cand, scores in (("terse", (90.0, 40.0)), ("cite", (60.0, 80.0)))
        for sid, s in zip(("q1", "q2"), scores, strict=True)
    ]  # fmt: skip
    write_part(home.lake, "runs", "run-p", 0, [run_record("run-p")])
    write_part(home.lake, "results", "run-p", 1, rows)
    code, out, err = compare(home, capsys, "run-p:terse", "run-p:cite")
    assert code == 0, err
    cid = out.strip().splitlines()[-1]
    got = read_table(home.lake, "pairwise", cid).to_pylist()
    assert [(r["sample_id"], r["candidate"], r["candidate_b"], r["winner"]) for r in got] == [
        ("q1", "terse", "cite", "a"),
        ("q2", "terse", "cite", "b"),
    ]
    with read_connection(home.warehouse) as con:
        players = con.execute(
            "SELECT player, run_id, candidate, name, games FROM ratings ORDER BY player"
        ).fetchall()
        summary = con.execute(
            "SELECT candidate_a, candidate_b, wins_a, wins_b FROM pairwise_summary "
            "WHERE domain = '(all)'"
        ).fetchall()
    assert players == [
        ("run-p:cite", "run-p", "cite", "run run-p", 2),
        ("run-p:terse", "run-p", "terse", "run run-p", 2),
    ]
    assert summary == [("terse", "cite", 1, 1)]
    code, _, err = compare(home, capsys, "run-p:terse", "run-p:nope")
    assert code == 2
    assert err.strip() == "error: run 'run-p' has no candidate 'nope' (it has 'cite', 'terse')"
