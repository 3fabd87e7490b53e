"""One home per constant: the price table, "now in naive UTC", the 95% quantiles and the
analyzer metrics are defined once; the SQL files that spell a list out agree with it."""

from __future__ import annotations

import re
from pathlib import Path

from engine.models import ANALYZER_METRICS
from engine.stats import Z95
from warehouse.queries import ALL_METRICS

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "ingest", "warehouse", "dashboard", "evalhouse")
SQL = sorted((ROOT / "warehouse" / "sql").rglob("*.sql"))
ANALYZER_SUFFIXES = (
    "_mean", "_median", "_min", "_max", "_tier", "_delta",
    "_excellent", "_good", "_fair", "_poor",
)  # fmt: skip


def _sources() -> list[tuple[Path, str]]:
    return [
        (path, path.read_text(encoding="utf-8"))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


def _homes(pattern: str) -> list[str]:
    return [str(p.relative_to(ROOT)) for p, text in _sources() if re.search(pattern, text)]


def test_now_in_naive_utc_has_one_home() -> None:
    assert _homes(r"replace\(tzinfo=None\)") == ["engine/clock.py"]


def test_the_price_table_has_one_home() -> None:
    assert _homes(r"\"gpt-4o-mini\":\s*\(") == ["engine/pricing.py"]


def test_the_95_percent_quantiles_have_one_home() -> None:
    assert _homes(r"\b12\.706\b") == ["engine/stats.py"]
    assert _homes(r"(?<![\w.])1\.96(?![\d])") == ["engine/stats.py"]


def test_sql_spells_the_normal_quantile_as_engine_does() -> None:
    found = {
        str(p.relative_to(ROOT)): float(m)
        for p in SQL
        for m in re.findall(r"([\d.]+)\s+AS\s+z\b", p.read_text(encoding="utf-8"))
    }
    assert found and set(found.values()) == {Z95}


def _named(text: str, metrics: tuple[str, ...], suffix: str) -> set[str]:
    return {m for m in metrics if re.search(rf"(?<![\w]){m}{suffix}\b", text)}


def test_sql_that_names_an_analyzer_metric_names_all_of_them() -> None:
    partial = []
    for path in SQL:
        text = path.read_text(encoding="utf-8")
        for suffix in ANALYZER_SUFFIXES:
            named = _named(text, ANALYZER_METRICS, suffix)
            if named and named != set(ANALYZER_METRICS):
                missing = sorted(set(ANALYZER_METRICS) - named)
                partial.append(f"{path.name}: {suffix} lacks {missing}")
    assert partial == []


def test_sql_deltas_of_every_metric_agree_with_the_metric_list() -> None:
    """A query that offers the deltas of the metrics beyond the analyzer's offers every
    metric Trends and Compare know (``ALL_METRICS``)."""
    beyond = tuple(m for m in ALL_METRICS if m not in ANALYZER_METRICS)
    partial = []
    for path in SQL:
        text = path.read_text(encoding="utf-8")
        named = _named(text, ALL_METRICS, "_delta")
        if named & set(beyond) and named != set(ALL_METRICS):
            partial.append(f"{path.name}: lacks {sorted(set(ALL_METRICS) - named)}")
    assert partial == []


def test_pages_pick_a_run_with_the_one_component() -> None:
    pages = sorted((ROOT / "dashboard" / "app_pages").glob("*.py"))
    own = [
        p.name for p in pages if re.search(r"selectbox\(\s*\"Run\"", p.read_text(encoding="utf-8"))
    ]
    assert own == []


def test_pages_compute_no_ratings_themselves() -> None:
    """Bradley–Terry is a registered cached computation of ``dashboard.data``."""
    pages = sorted((ROOT / "dashboard" / "app_pages").glob("*.py"))
    assert [p.name for p in pages if "bradley_terry" in p.read_text(encoding="utf-8")] == []
