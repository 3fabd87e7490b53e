"""What a command loads before it works, and how it ends (process start and exit
were most of the time evalhouse spent beyond the ideal in the promptfoo bench)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "tests" / "data" / "testsets" / "native.jsonl"


def _python(code: str, tmp_path: Path) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter (the test process has loaded everything already)
    and return the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_command_that_needs_no_warehouse_loads_no_duckdb_polars_or_pyarrow(
    tmp_path: Path,
) -> None:
    got = _python(
        "import json, sys\n"
        "from evalhouse.cli import main\n"
        "code = main(['--version'])\n"
        "print(json.dumps({'code': code, 'loaded': sorted(m for m in "
        "('duckdb', 'polars', 'pyarrow', 'pandas') if m in sys.modules)}))\n",
        tmp_path,
    )
    assert got == {"code": 0, "loaded": []}


def test_a_local_run_loads_no_pandas_nor_http_client_and_pandas_still_works_after_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    got = _python(
        "import json, sys\n"
        "from evalhouse.cli import main\n"
        f"code = main(['run', '--test-set', {str(NATIVE)!r}, '--name', 'startup',\n"
        f"             '--home', {str(home)!r}, '--max-failed', '1'])\n"
        "loaded = 'pandas' in sys.modules\n"
        "http_client = 'aiohttp' in sys.modules\n"
        "import pandas as pd\n"
        "import pyarrow as pa\n"
        "from engine.lake import read_table\n"
        "from pathlib import Path\n"
        f"run_id = next(Path({str(home)!r}, 'lake', 'results').iterdir()).name.split('=')[1]\n"
        f"rows = read_table(Path({str(home)!r}, 'lake'), 'results', run_id).to_pandas()\n"
        "kinds = pa.array(pd.Categorical(['a', 'b'])).type\n"
        "print(json.dumps({'code': code, 'pandas_during_run': loaded, 'rows': len(rows),\n"
        "                  'http_client': http_client, 'categorical': str(kinds)}))\n",
        tmp_path,
    )
    # The type pyarrow gives a categorical in a process that never skipped its probe.
    plain = _python(
        "import json\nimport pandas as pd\nimport pyarrow as pa\n"
        "print(json.dumps({'categorical': str(pa.array(pd.Categorical(['a', 'b'])).type)}))\n",
        tmp_path,
    )
    cases = len(NATIVE.read_text(encoding="utf-8").splitlines())
    assert got == {
        "code": 0,  # acme-q03 has no response: an error row, allowed by --max-failed
        "pandas_during_run": False,
        "rows": cases,
        "http_client": False,  # local judge and embedder: aiohttp waits for a first request
        # pyarrow's pandas support is whole again once pandas is used explicitly
        "categorical": plain["categorical"],
    }


def test_the_console_command_exits_with_the_commands_code(tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "evalhouse.cli", "--version"], capture_output=True, text=True
    )
    assert (ok.returncode, ok.stdout.split()[0]) == (0, "evalhouse")
    refused = subprocess.run(
        [sys.executable, "-m", "evalhouse.cli", "run", "--test-set", str(tmp_path / "none.jsonl"),
         "--name", "x", "--home", str(tmp_path / "home")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.strip().count("\n") == 0 and "none.jsonl" in refused.stderr
