"""A home where one test set was edited twice between runs: real ``evalhouse run``
processes (local judge) write the lake, ingest loads the warehouse.

Version 1: four demo cases. Version 2: case 2's question edited. Version 3: case 3's
expected answer edited, case 4 removed, a new case 5 added. A fourth run scores version 1
again with its rows in another order (same cases: still version 1)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from engine.demo import build_weekly_test_sets
from engine.settings import Paths, resolve_paths
from evalhouse.cli import main

NAME = "support"
"""The test set's name: its file is ``support.jsonl``."""


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _run(home: Paths, test_set: Path, name: str) -> str:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = main(["run", "--test-set", str(test_set), "--name", name, "--home", str(home.home)])
    assert code == 0
    return captured.getvalue().strip().splitlines()[-1]


def build_versioned_home(folder: Path) -> tuple[Paths, dict[str, str]]:
    """The home and its run ids by label: ``v1``, ``v2``, ``v3``, ``v1-again``."""
    home = resolve_paths(folder / "home")
    _name, weekly, _date = build_weekly_test_sets(folder / "sets", weeks=1)[0]
    rows = [json.loads(line) for line in weekly.read_text(encoding="utf-8").splitlines()[:5]]
    first, extra = rows[:4], rows[4]
    test_set = folder / f"{NAME}.jsonl"
    runs: dict[str, str] = {}

    _write(test_set, first)
    runs["v1"] = _run(home, test_set, "nightly v1")

    second = [dict(r) for r in first]
    second[1] = {**second[1], "query": second[1]["query"] + " Please answer briefly."}
    _write(test_set, second)
    runs["v2"] = _run(home, test_set, "nightly v2")

    third = [dict(r) for r in second[:3]]
    answer = dict(third[2]["expected_answer"])
    answer["text"] = "Updated: " + answer["text"]
    third[2] = {**third[2], "expected_answer": answer}
    third.append(extra)
    _write(test_set, third)
    runs["v3"] = _run(home, test_set, "nightly v3")

    _write(test_set, list(reversed(first)))
    runs["v1-again"] = _run(home, test_set, "nightly v1 again")
    return home, runs


def case_ids(folder: Path) -> list[str]:
    """Ids of the five demo cases the versions are made of, in file order."""
    _name, weekly, _date = build_weekly_test_sets(folder, weeks=1)[0]
    return [json.loads(line)["id"] for line in weekly.read_text().splitlines()[:5]]
