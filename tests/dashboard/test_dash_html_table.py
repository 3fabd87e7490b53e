"""The HTML tables and run cards the Overview draws instead of data grids and metrics: what
they show, that data cannot break out of them, and that the Overview's first visit loads
neither the grid's code nor the metric's."""

from __future__ import annotations

from html.parser import HTMLParser

import polars as pl

from dashboard.components.badges import DELTA_BAD, DELTA_GOOD, DELTA_GREY
from dashboard.components.cards import Card, cards_html
from dashboard.components.html_table import Column, table_html
from engine.settings import Paths
from tests.dashboard.conftest import AppFactory, html_tables, table


class _Tags(HTMLParser):
    """Every tag and attribute, and every text node outside ``<style>``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if not self._style:
            self.text.append(data)


def _parse(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    return parser


HOSTILE = "<img src=x onerror=alert(1)>\"'&$x$ :material/bolt:"


def test_cells_from_data_are_text_and_the_table_is_one_line() -> None:
    frame = pl.DataFrame(
        {
            "Domain": [HOSTILE, "two\n\nparagraphs"],
            "Score": [81.25, None],
            "Samples": [8, 12],
            "Link": ["javascript:alert(1)", "http://127.0.0.1:8501/compare?run=a&b=c"],
            "Other": ["//198.51.100.7/x", "/compare"],
            "Ratio": [0.3333333, 1234.5],
        }
    )
    markup = table_html(
        frame,
        {
            "Score": Column(number=".1f"),
            "Link": Column(link="Open ↗", help='say "why"'),
            "Other": Column(link="Go"),
        },
        name="t",
    )
    # a blank line would end Markdown's HTML block and draw the rest as Markdown
    assert "\n" not in markup
    parsed = _parse(markup)
    assert [t for t, _ in parsed.tags if t not in {"div", "style", "table", "thead", "tbody",
                                                    "tr", "th", "td", "a"}] == []  # fmt: skip
    assert HOSTILE in parsed.text  # shown as text, not as an image
    assert "$" not in markup  # never a formula: escaped as an entity
    assert "two paragraphs" in parsed.text
    # Ratio, a number of no known scale: four decimals at most, no trailing zeros
    numbers = [t for t in parsed.text if t[0].isdigit() or t == "n/a"]
    assert numbers == ["81.2", "8", "0.3333", "n/a", "12", "1,234.5"]
    links = [a for t, a in parsed.tags if t == "a"]
    # only http(s) and same-site addresses become links; a script or another site's
    # protocol-relative address is drawn as text
    assert [a["href"] for a in links] == ["http://127.0.0.1:8501/compare?run=a&b=c", "/compare"]
    assert "javascript:alert(1)" in parsed.text and "//198.51.100.7/x" in parsed.text
    headers = [a for t, a in parsed.tags if t == "th"]
    assert headers[3]["title"] == 'say "why"'
    cells = [a for t, a in parsed.tags if t == "td"]
    assert [c.get("class") for c in cells[:4]] == [None, "n", "n", None]  # numbers right


def test_columns_order_labels_and_cell_colours() -> None:
    frame = pl.DataFrame({"a": ["x", "y"], "b": [1, 2], "c": ["up", "down"]})
    markup = table_html(
        frame,
        {"b": Column("Short", help="The long name"), "c": Column(css=lambda v, row: f"k:{row}")},
        order=["c", "b", "missing"],
        name="t",
    )
    parsed = _parse(markup)
    headers = [(a.get("data-column"), a.get("title")) for t, a in parsed.tags if t == "th"]
    assert headers == [(None, None), ("b", "The long name")]
    assert [a.get("style") for t, a in parsed.tags if t == "td"] == ["k:0", None, "k:1", None]
    assert "Short" in parsed.text and "a" not in parsed.text


def test_cards_colour_a_change_only_beyond_noise_and_the_good_way() -> None:
    cards = [
        Card("Pass rate", "80.0%", "+5.0 pts", True),
        Card("Error rate", "2.0%", "+1.0 pts", True, lower_is_better=True),
        Card("Latency p50", "900 ms", "-40 ms", False, lower_is_better=True),
        Card("Samples", "10", "+0", None),
        Card("Cost", "$0", None, None, has_baseline=False),
        Card(HOSTILE, HOSTILE, None, None),
    ]
    parsed = _parse(cards_html(cards))
    deltas = [a["style"] or "" for t, a in parsed.tags if t == "div" and a.get("class") == "delta"]
    assert len(deltas) == 3  # "+0" is no change: no arrow, no delta
    assert DELTA_GOOD in deltas[0] and DELTA_BAD in deltas[1] and DELTA_GREY in deltas[2]
    assert "▲ +5.0 pts" in parsed.text and "▼ -40 ms" in parsed.text
    assert "no baseline" in parsed.text
    assert parsed.text.count(HOSTILE) == 2
    assert not [t for t, _ in parsed.tags if t == "img"]


def test_overview_draws_no_grid_metric_nor_sanitised_html(
    app: AppFactory, fixture_home: Paths
) -> None:
    # Each kind of element costs a first visit its code: the grid alone is 34 files, 1.7 MB
    # (tests.bench.first_visit). The Overview's tables and cards are Markdown.
    at = app(fixture_home)
    assert not at.dataframe and not at.metric and not at.get("html")
    assert [name for name, _, _ in html_tables(at)] == ["overview_table"]
    at.selectbox(key="overview_run").set_value("r2").run()
    assert not at.dataframe and not at.metric and not at.get("html")


def test_printf_numbers_dates_identifiers_and_long_text() -> None:
    from datetime import datetime

    from dashboard.components import tables

    frame = pl.DataFrame(
        {
            "sample_id": ["acme-q1"],
            "claim_text": ["Support is closed on Sundays."],
            "found_percent": [33.333],
            "cost_usd": [0.00125],
            "scored_at": [datetime(2026, 11, 29, 9, 41, 7)],
        }
    )
    columns = {
        name: Column(
            tables.human_label(name),
            number=fmt,
            wide=name == "claim_text",
            whole=name.endswith("_id"),
        )
        for name, fmt in [
            ("sample_id", ""),
            ("claim_text", ""),
            ("found_percent", ".1f"),
            ("cost_usd", "$%.4f"),
            ("scored_at", ""),
        ]
    }
    parsed = _parse(table_html(frame, columns, name="t"))
    cells = [a.get("class") for t, a in parsed.tags if t == "td"]
    assert cells == ["k", "w", "n", "n", None]  # the id whole, the claim wide, numbers right
    assert parsed.text[-5:] == [
        "acme-q1",
        "Support is closed on Sundays.",
        "33.3",
        "$0.0013",  # the grid's printf format, as the cost columns have it
        "2026-11-29 09:41",  # formats.timestamp
    ]


def test_compare_draws_its_samples_as_html_not_a_grid(app: AppFactory, fixture_home: Paths) -> None:
    # The per-sample grid was a fifth of Compare's time on every visit: one page of 50
    # samples, already in the order that matters, is an HTML table.
    at = app(fixture_home, "compare", run="r2")
    assert not at.dataframe
    names = [name for name, _, _ in html_tables(at)]
    assert names == ["compare_domains", "compare_samples"]
    rows = table(at, "challenger_score")
    deltas = [r["delta"] for r in rows]
    assert deltas == sorted(deltas)  # the largest regression first
    header = next(h for name, h, _ in html_tables(at) if name == "compare_samples")
    assert header[:5] == ["sample_id", "delta", "status", "baseline_score", "challenger_score"]
