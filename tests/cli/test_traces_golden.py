"""``traces import`` output pinned byte for byte: the files in ``tests/data/traces/golden``
were written by the importer before it was made faster, so a change in speed cannot change
a case (nor the imported and skipped lines) unnoticed. Regenerate only for a deliberate
change of the output, and review the diff."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from evalhouse.cli import main
from tests.bench.traces import write_export

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
GOLDEN = DATA / "golden"
FIXTURES = sorted(
    p.name
    for p in DATA.iterdir()
    if p.suffix in (".json", ".jsonl") and p.name != "agent_expected.jsonl"
)


def _imported(source: Path, output: Path) -> tuple[bytes, str]:
    told = io.StringIO()
    with contextlib.redirect_stderr(told):
        code = main(["traces", "import", str(source), "--output", str(output),
                     "--series", "golden"])  # fmt: skip
    assert code == 0
    lines = [
        line.replace(str(source), source.name)
        for line in told.getvalue().splitlines()
        if line.startswith(("imported", "skipped"))
    ]
    return output.read_bytes(), "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_imports_to_the_pinned_bytes(name: str, tmp_path: Path) -> None:
    written, told = _imported(DATA / name, tmp_path / "out.jsonl")
    stem = Path(name).stem
    assert written == (GOLDEN / f"{stem}.jsonl").read_bytes()
    assert told == (GOLDEN / f"{stem}.log").read_text(encoding="utf-8")


def test_bench_export_imports_to_the_pinned_bytes(tmp_path: Path) -> None:
    source = tmp_path / "bench_export.json"
    write_export(source, 200)
    written, told = _imported(source, tmp_path / "out.jsonl")
    assert written == (GOLDEN / "bench_export.jsonl").read_bytes()
    assert told == (GOLDEN / "bench_export.log").read_text(encoding="utf-8")


def test_every_fixture_is_pinned() -> None:
    pinned = {p.stem for p in GOLDEN.glob("*.jsonl")}
    assert pinned == {Path(n).stem for n in FIXTURES} | {"bench_export"}
