"""warehouse/README.md documents every table and column, generated from the models."""

from __future__ import annotations

import re

from engine.models.metrics import METRICS, PREFIX_SCALES
from warehouse.docs import README, render


def test_readme_table_reference_is_current() -> None:
    current = README.read_text(encoding="utf-8")
    assert current == render(current), "run: python -m warehouse.docs"


def test_readme_documents_every_contract_view() -> None:
    text = README.read_text(encoding="utf-8")
    for view in ("domain_scores", "domain_trends", "run_summary"):
        assert f"### `{view}`" in text


def test_readme_scale_table_agrees_with_the_metric_catalogue() -> None:
    """The analysts' scale table and ``engine.models.metrics`` name the same scale for every
    metric (the catalogue is the one home; the table is what people read)."""
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- scales:begin")[1].split("<!-- scales:end")[0]
    documented: dict[str, str] = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            names, shown = (c.strip() for c in line.strip("|").split("|")[:2])
            for name in re.findall(r"`([^`]+)`", names):
                documented[name] = shown.replace("–", "-")
    for name, metric in METRICS.items():
        assert documented.get(name) == metric.scale.name, name
    for prefix, scale in PREFIX_SCALES.items():
        (form,) = [n for n in documented if n.startswith(prefix)]
        assert documented[form] == scale.name, form
