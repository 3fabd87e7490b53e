"""A reader process queries the warehouse in a loop while this process ingests a new run:
no error reaches the reader (it waits for the lock) and the new run shows up without a
restart."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from engine.lake import write_part
from engine.settings import resolve_paths
from ingest import ingest
from tests.dashboard.fixture_home import build_fixture_home
from tests.factories import T0, result_record, run_record

READER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from warehouse import queries as q

    wh = q.Warehouse(Path(sys.argv[1]))
    out = {"queries": 0, "errors": [], "versions": [], "saw_new_run": False}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            runs = list(q.runs(wh)["run_id"])
            version = wh.data_version()  # read after runs: a version at least as new
            q.domain_metrics(wh, runs[0], None, q.Filters())
            out["queries"] += 3
            if not out["versions"] or out["versions"][-1] != version:
                out["versions"].append(version)
            if out["queries"] == 3:  # the version before any ingest is recorded
                Path(sys.argv[3]).write_text("ready")
            if "r9" in runs:
                out["saw_new_run"] = True
                break
        except Exception as exc:  # every error counts as a failure of the test
            out["errors"].append(f"{type(exc).__name__}: {exc}")
    Path(sys.argv[2]).write_text(json.dumps(out))
    """
)


def test_reader_survives_ingest_and_sees_new_run(tmp_path: Path) -> None:
    paths = build_fixture_home(tmp_path / "home")
    result, ready = tmp_path / "reader.json", tmp_path / "ready"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(paths.warehouse), str(result), str(ready)],
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # let it run a few queries first
        lake = resolve_paths(paths.home).lake
        for i in range(3):  # several ingests, each taking the write lock
            run_id = "r9" if i == 2 else f"r{6 + i}"
            write_part(lake, "runs", run_id, 0, [run_record(run_id, T0.replace(day=20 + i))])
            rows = [result_record(run_id, f"s{n}", domain="new.example") for n in range(200)]
            write_part(lake, "results", run_id, 1, rows)
            report = ingest(paths, wait_s=30)
            assert report.files_loaded == 2
        assert reader.wait(timeout=60) == 0
    finally:
        if reader.poll() is None:
            reader.kill()
    out = json.loads(result.read_text())
    assert out["errors"] == []
    assert out["saw_new_run"] is True
    assert out["queries"] > 3
    assert len(out["versions"]) >= 2  # the data version moved: dashboard caches re-key
