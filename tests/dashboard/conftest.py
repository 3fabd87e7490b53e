"""Fixture homes for the dashboard tests (built once per session) and an AppTest factory."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components import cards, html_table
from dashboard.components.launch_form import LAUNCH_OPEN, RERUN_OPEN
from dashboard.formats import NA
from engine.settings import Paths, resolve_paths
from tests.dashboard.fixture_home import build_empty_home, build_fixture_home

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "streamlit_app.py")


@pytest.fixture(scope="session")
def fixture_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """The hand-chosen warehouse of ``fixture_home.py``."""
    return build_fixture_home(tmp_path_factory.mktemp("dash") / "home")


@pytest.fixture(scope="session")
def empty_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """A warehouse with the schema and no runs."""
    return build_empty_home(tmp_path_factory.mktemp("dash-empty") / "home")


@pytest.fixture
def missing_home(tmp_path: Path) -> Paths:
    """A home without a warehouse file."""
    return resolve_paths(tmp_path / "nothing-here")


AppFactory = Callable[..., AppTest]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> AppFactory:
    """``app(home, page=None, **query)``: an AppTest of the dashboard on ``home``, already run."""

    def make(home: Paths, page: str | None = None, **query: str) -> AppTest:
        monkeypatch.setenv("EVALHOUSE_HOME", str(home.home))
        at = AppTest.from_file(APP, default_timeout=30)
        for key, value in query.items():
            at.query_params[key] = value
        if page is not None:
            at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


def table(at: AppTest, column: str, nth: int = 0) -> list[dict[str, object]]:
    """The rows of the ``nth`` table on the page that has ``column``: a data grid's values,
    or an HTML table's cells as drawn (numbers read back as numbers, a link cell as its
    address, ``formats.NA`` as None). Grids first, then HTML tables, each in page order."""
    found = [f.value.to_dict("records") for f in at.dataframe if column in f.value.columns]
    found += [rows for _, header, rows in html_tables(at) if column in header]
    if len(found) <= nth:
        have = [list(f.value.columns) for f in at.dataframe]
        have += [header for _, header, _ in html_tables(at)]
        raise AssertionError(f"no table with column {column!r}; have {have}")
    return found[nth]  # type: ignore[no-any-return]


def open_expanders(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders of ``keys`` (expanders whose content is built only while open), as
    a click on each would, and run the page again."""
    for key in keys:
        at.session_state[key] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_sidebar_forms(at: AppTest) -> AppTest:
    """Open the sidebar's "Launch run" and "Re-run samples" expanders."""
    return open_expanders(at, LAUNCH_OPEN, RERUN_OPEN)


def all_columns(at: AppTest) -> list[dict[str, object]]:
    """The Overview's scores per domain with "All columns" on (tier, counts, abstention)."""
    at.toggle(key="overview_all_columns").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    return table(at, "Noise")


def _number(text: str) -> object:
    """A cell's text as the value a grid would hold: an int, a float, None for n/a."""
    if text == NA:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class _TableParser(HTMLParser):
    """The header (by frame column name) and rows of each ``html_table`` in a Markdown
    body."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "div" and html_table.TABLE_CLASS in (found.get("class") or "").split():
            self.tables.append((found.get("data-table") or "", [], []))
        elif tag == "style":
            self._in_style = True
        elif tag == "tr" and self.tables:
            self.tables[-1][2].append([])
        elif tag in ("td", "th"):
            # a header's frame column name, where its label is shorter
            self._cell = [found["data-column"] or "", "\0"] if "data-column" in found else []
        elif tag == "a" and self._cell is not None:
            self._cell.append(found.get("href") or "")
            self._cell.append("\0")  # the link's text is not the cell's value

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        elif tag in ("td", "th") and self._cell is not None and self.tables:
            text = "".join(self._cell).split("\0")[0]
            _, header, rows = self.tables[-1]
            (header if tag == "th" else rows[-1]).append(text)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._in_style:
            self._cell.append(data)


def html_tables(
    at: AppTest, *, as_drawn: bool = False
) -> list[tuple[str, list[str], list[dict[str, object]]]]:
    """Every HTML table on the page (``html_table``), in order: its name, its header, and
    its rows keyed by the header (numbers read back as numbers, unless ``as_drawn``)."""
    out = []
    for markdown in at.markdown:
        if html_table.TABLE_CLASS not in markdown.value:
            continue
        parser = _TableParser()
        parser.feed(markdown.value)
        for name, header, rows in parser.tables:
            body = [r for r in rows if r]
            out.append(
                (
                    name,
                    header,
                    [
                        dict(zip(header, r if as_drawn else map(_number, r), strict=True))
                        for r in body
                    ],
                )
            )
    return out


class _CardParser(HTMLParser):
    """The run cards (``cards.cards_html``): each part of each card by its class."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict[str, str]] = []
        self._part: str | None = None
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        part = found.get("class") or ""
        if tag == "style":
            self._in_style = True
        elif tag == "div" and "title" in found:
            self.cards.append({"help": found["title"] or ""})
        elif tag == "div" and part in ("label", "value", "delta", "verdict") and self.cards:
            self._part = part
            self.cards[-1][part] = ""
            if part == "delta":
                self.cards[-1]["delta_style"] = found.get("style") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        elif tag == "div":
            self._part = None

    def handle_data(self, data: str) -> None:
        if self._part is not None and not self._in_style:
            self.cards[-1][self._part] += data


def shown_cards(at: AppTest) -> dict[str, dict[str, str]]:
    """The cards on the page by label (the Overview's run cards, Compare's counts): value,
    delta (absent when no change is shown, its arrow in front), delta_style, verdict and
    help."""
    parser = _CardParser()
    for markdown in at.markdown:
        if cards.CARDS_CLASS in markdown.value:
            parser.feed(markdown.value)
    return {card["label"]: card for card in parser.cards}
