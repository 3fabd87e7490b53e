"""The judge response cache: hits make no second call, errors are never stored, and the key
covers provider, model, prompt version, prompt and temperature."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.judges.base import JudgeResponseError
from engine.judges.cache import JudgeCache, cache_key
from tests.engine.test_http_judges import RUBRIC, make_judge
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]


def test_cache_hit_makes_no_second_call(loopback_llm: LoopbackLLM, tmp_path: Path) -> None:
    loopback_llm.script(Reply.json(RUBRIC, input_tokens=100, output_tokens=10), Reply.json(RUBRIC))
    judge = make_judge(loopback_llm, cache=tmp_path)
    first = asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    again = make_judge(loopback_llm, cache=tmp_path)  # a new process would see the same files
    second = asyncio.run(again.score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 1
    assert first.faithfulness == second.faithfulness
    assert first.usage.calls == 1 and second.usage.calls == 0
    assert second.usage.cost_usd == 0.0
    asyncio.run(judge.score_rubric("another question?", ["c"], "a"))
    assert loopback_llm.count == 2


def test_errors_are_never_cached(loopback_llm: LoopbackLLM, tmp_path: Path) -> None:
    loopback_llm.script(Reply.text("prose"), Reply.text("more prose"), Reply.json(RUBRIC))
    judge = make_judge(loopback_llm, cache=tmp_path)
    with pytest.raises(JudgeResponseError):
        asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    JudgeCache(tmp_path).flush()  # entries are written by a background thread
    assert not [p for p in tmp_path.rglob("*.json")]
    asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 3
    JudgeCache(tmp_path).flush()
    (entry,) = list(tmp_path.rglob("*.json"))
    stored = json.loads(entry.read_text())
    assert json.loads(stored["content"]) == RUBRIC
    assert stored["prompt"] == "rubric.v1"


def test_repaired_reply_is_cached_under_the_original_prompt(
    loopback_llm: LoopbackLLM, tmp_path: Path
) -> None:
    loopback_llm.script(Reply.text("prose"), Reply.json(RUBRIC))
    asyncio.run(make_judge(loopback_llm, cache=tmp_path).score_rubric("q?", ["c"], "a"))
    asyncio.run(make_judge(loopback_llm, cache=tmp_path).score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 2


def test_key_covers_every_part() -> None:
    base = cache_key("openai", "gpt-4o-mini", "rubric.v1", "prompt", 0.0)
    assert base == cache_key("openai", "gpt-4o-mini", "rubric.v1", "prompt", 0.0)
    others = {
        cache_key("anthropic", "gpt-4o-mini", "rubric.v1", "prompt", 0.0),
        cache_key("openai", "gpt-4o", "rubric.v1", "prompt", 0.0),
        cache_key("openai", "gpt-4o-mini", "rubric.v2", "prompt", 0.0),
        cache_key("openai", "gpt-4o-mini", "rubric.v1", "prompt!", 0.0),
        cache_key("openai", "gpt-4o-mini", "rubric.v1", "prompt", 0.7),
    }
    assert base not in others and len(others) == 5


def test_temperature_changes_the_key_end_to_end(loopback_llm: LoopbackLLM, tmp_path: Path) -> None:
    loopback_llm.responder = lambda provider, body: json.dumps(RUBRIC)
    asyncio.run(make_judge(loopback_llm, cache=tmp_path).score_rubric("q?", ["c"], "a"))
    asyncio.run(
        make_judge(loopback_llm, cache=tmp_path, temperature=0.5).score_rubric("q?", ["c"], "a")
    )
    assert loopback_llm.count == 2


def test_unreadable_entries_are_misses(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    key = cache_key("p", "m", "v", "x", 0.0)
    assert cache.get(key) is None
    cache.put(key, {"content": "{}"})
    assert cache.get(key) == {"content": "{}"}
    cache.flush()  # entries are written by a background thread
    (path,) = list(tmp_path.rglob("*.json"))
    path.write_text("{broken")
    assert cache.get(key) is None
    assert not list(tmp_path.rglob(".tmp-*"))


def test_an_entry_is_served_before_it_reaches_disk_and_written_by_flush(tmp_path: Path) -> None:
    key = cache_key("p", "m", "v", "y", 0.0)
    JudgeCache(tmp_path).put(key, {"content": "{}"})
    # another cache of the same folder (a second judge of the process) sees it at once
    assert JudgeCache(tmp_path).get(key) == {"content": "{}"}
    JudgeCache(tmp_path).flush()
    (path,) = list(tmp_path.rglob("*.json"))
    assert json.loads(path.read_text()) == {"content": "{}"}


def test_the_same_entry_put_many_times_at_once_is_written_and_flush_returns(
    tmp_path: Path,
) -> None:
    # Identical prompts judged concurrently put the same key several times before the
    # writer's first turn; its second turn on that key once killed the writer thread, and
    # every flush after it (each run's end) waited forever.
    import threading

    cache = JudgeCache(tmp_path / "cache")
    keys = [cache_key("openai", "m", "rubric.v1", f"prompt {i % 3}", 0.0) for i in range(60)]
    threads = [
        threading.Thread(target=lambda k=k, i=i: cache.put(k, {"content": f"{i}"}))
        for i, k in enumerate(keys)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = threading.Thread(target=cache.flush, daemon=True)
    done.start()
    done.join(timeout=10)
    assert not done.is_alive(), "flush never returned: the writer thread died"
    for key in set(keys):
        assert cache.get(key) is not None
    cache.put(keys[0], {"content": "again"})  # the writer still takes new entries
    cache.flush()
    assert json.loads(next((tmp_path / "cache").rglob(f"{keys[0]}.json")).read_text()) == {
        "content": "again"
    }


def test_a_temporary_file_left_by_a_killed_process_does_not_block_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process killed between create and rename leaves its temporary file; a later
    # process given the same pid must still write its entries (not lose them all).
    import itertools
    import os

    import engine.judges.cache as module

    monkeypatch.setattr(module, "_names", itertools.count(7))
    cache = JudgeCache(tmp_path / "cache")
    key = cache_key("openai", "m", "rubric.v1", "left over", 0.0)
    folder = tmp_path / "cache" / key[:2]
    folder.mkdir(parents=True)
    (folder / f".tmp-{os.getpid()}-7.json").write_text("half an entry")
    cache.put(key, {"content": "whole"})
    cache.flush()
    assert json.loads((folder / f"{key}.json").read_text()) == {"content": "whole"}
    assert [p.name for p in folder.iterdir()] == [f"{key}.json"]
