"""warehouse/README.md documents every table and column, generated from the models."""

from __future__ import annotations

from warehouse.docs import README, render


def test_readme_table_reference_is_current() -> None:
    current = README.read_text(encoding="utf-8")
    assert current == render(current), "run: python -m warehouse.docs"


def test_readme_documents_every_contract_view() -> None:
    text = README.read_text(encoding="utf-8")
    for view in ("domain_scores", "domain_trends", "run_summary"):
        assert f"### `{view}`" in text
