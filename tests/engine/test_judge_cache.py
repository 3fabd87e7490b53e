"""The judge response cache: hits make no second call, errors are never stored, and the key
covers provider, model, prompt version, prompt and temperature."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.judges.base import JudgeResponseError
from engine.judges.http.cache import DB_NAME, JudgeCache, cache_key
from tests.engine.test_http_judges import RUBRIC, make_judge
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm

__all__ = ["loopback_llm"]


def stored(folder: Path) -> dict[str, dict[str, object]]:
    """Every entry on disk under ``folder``, read with sqlite directly."""
    if not (folder / DB_NAME).exists():
        return {}
    with sqlite3.connect(folder / DB_NAME) as db:
        rows = db.execute("SELECT key, value FROM judge_responses").fetchall()
    return {key: json.loads(value) for key, value in rows}


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
    assert stored(tmp_path) == {}
    asyncio.run(judge.score_rubric("q?", ["c"], "a"))
    assert loopback_llm.count == 3
    JudgeCache(tmp_path).flush()
    (entry,) = stored(tmp_path).values()
    assert json.loads(str(entry["content"])) == RUBRIC
    assert entry["prompt"] == "rubric.v1"


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
    assert stored(tmp_path) == {key: {"content": "{}"}}
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("UPDATE judge_responses SET value = '{broken'")
    assert cache.get(key) is None


def test_a_damaged_database_is_set_aside_and_a_new_one_used(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"not a database at all" * 100)
    cache = JudgeCache(tmp_path)
    key = cache_key("p", "m", "v", "damaged", 0.0)
    assert cache.get(key) is None
    cache.put(key, {"content": "fresh"})
    cache.flush()
    assert stored(tmp_path) == {key: {"content": "fresh"}}
    assert list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))


def test_an_entry_is_served_before_it_reaches_disk_and_written_by_flush(tmp_path: Path) -> None:
    key = cache_key("p", "m", "v", "y", 0.0)
    JudgeCache(tmp_path).put(key, {"content": "{}"})
    # another cache of the same folder (a second judge of the process) sees it at once
    assert JudgeCache(tmp_path).get(key) == {"content": "{}"}
    JudgeCache(tmp_path).flush()
    assert stored(tmp_path) == {key: {"content": "{}"}}


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
    assert stored(tmp_path / "cache")[keys[0]] == {"content": "again"}
    assert len(stored(tmp_path / "cache")) == 3


def test_an_entry_that_cannot_be_encoded_does_not_stop_the_writer(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    bad, good = cache_key("p", "m", "v", "bad", 0.0), cache_key("p", "m", "v", "good", 0.0)
    cache.put(bad, {"content": object()})
    cache.flush()
    cache.put(good, {"content": "fine"})
    cache.flush()
    assert stored(tmp_path) == {good: {"content": "fine"}}


def test_entries_of_the_one_file_per_entry_layout_are_moved_into_the_database(
    tmp_path: Path,
) -> None:
    # Earlier versions wrote KEY[:2]/KEY.json: a user's paid-for responses must survive.
    old, broken = cache_key("openai", "m", "v", "old", 0.0), cache_key("o", "m", "v", "b", 0.0)
    for key, text in ((old, json.dumps({"content": "kept"})), (broken, "{half")):
        (tmp_path / key[:2]).mkdir(exist_ok=True)
        (tmp_path / key[:2] / f"{key}.json").write_text(text)
    (tmp_path / old[:2] / ".tmp-999-7.json").write_text("left by a killed writer")
    (tmp_path / "embeddings.sqlite3").write_bytes(b"")  # other caches share the folder
    assert JudgeCache(tmp_path).get(old) == {"content": "kept"}
    assert JudgeCache(tmp_path).get(broken) is None
    assert stored(tmp_path) == {old: {"content": "kept"}}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [DB_NAME, f"{DB_NAME}-shm", f"{DB_NAME}-wal", "embeddings.sqlite3"]
    )


def test_entries_flushed_before_a_kill_9_are_kept(tmp_path: Path) -> None:
    child = f"""
import os, signal
from pathlib import Path
from engine.judges.http.cache import JudgeCache, cache_key
cache = JudgeCache(Path({str(tmp_path)!r}))
for i in range(50):
    cache.put(cache_key("p", "m", "v", str(i), 0.0), {{"content": str(i)}})
cache.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, check=False)
    assert done.returncode == -9, done.stderr
    entries = stored(tmp_path)
    assert len(entries) == 50
    key = cache_key("p", "m", "v", "7", 0.0)
    assert JudgeCache(tmp_path).get(key) == entries[key] == {"content": "7"}


def test_a_process_keeps_a_few_databases_open_and_reopens_a_closed_one(tmp_path: Path) -> None:
    import engine.judges.http.cache as module

    key = cache_key("p", "m", "v", "reopen", 0.0)
    caches = [JudgeCache(tmp_path / f"c{i}") for i in range(module._OPEN_DATABASES + 3)]
    for i, cache in enumerate(caches):
        cache.put(key, {"content": str(i)})
        cache.flush()
    open_now = [folder for folder in module._WRITER.databases if folder.parent == tmp_path]
    assert len(open_now) <= module._OPEN_DATABASES
    for i, cache in enumerate(caches):  # the first ones were closed, and open again
        assert cache.get(key) == {"content": str(i)}
