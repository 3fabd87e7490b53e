"""Markup planted in data shows literally: one safe-text helper in front of
every Markdown-rendering element, used on every page."""

from __future__ import annotations

import html
import re
import string
from pathlib import Path

import pytest

from dashboard.components.safe import WORD_JOINER, safe_markup, safe_text
from engine.lake import write_part
from engine.models import ClaimRecord
from engine.settings import Paths, resolve_paths
from ingest import ingest
from tests.dashboard.conftest import AppFactory
from tests.factories import result_record, run_record

SAMPLE_ID = "![x](http://198.51.100.7/img.png)"
DOMAIN = "**bold** <img src=https://198.51.100.7/d.png> $x^2$ &amp;"
PROVIDER = ":red[alert] :smile: :material/home: [link](https://evil.example)"
CLAIM = "# Heading ~~gone~~ `code` www.evil.example a@b.co _em_"
RUN_NAME = "![r](https://198.51.100.7/run.png) **run** :red[x]"


def _unescape(source: str) -> str:
    """What CommonMark shows for ``source``: a backslash before ASCII punctuation vanishes
    (and the invisible word joiner that keeps autolinks out shows as nothing)."""
    shown = re.sub(r"\\([" + re.escape(string.punctuation) + "])", r"\1", source)
    return shown.replace(WORD_JOINER, "")


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # hand-written: every construct defused, ordinary ids untouched
        ("beta-q2 domain_scores acme.com (r2)", "beta-q2 domain_scores acme.com (r2)"),
        ("![x](http://h/i.png)", "!\\[x\\](http\\:\u2060//h/i.png)"),
        ("$x^2$ <b>&amp;", "\\$x^2\\$ \\<b\\>\\&amp;"),
        (":red[a] :smile: :material/home:", "\\:red\\[a\\] \\:smile\\: \\:material\\/home\\:"),
        ("# h", "\\# h"),
        ("- item", "\\- item"),
        ("12. item", "12\\. item"),
        ("_em_ *em* ~~s~~ `c`", "\\_em\\_ \\*em\\* \\~\\~s\\~\\~ \\`c\\`"),
        ("www.evil.example a@b.co", "www\u2060.evil.example a\u2060\\@b.co"),
        ("two\nlines\r\n# not a heading", "two lines  # not a heading"),
        ("back\\slash", "back\\\\slash"),
        (None, ""),
    ],
)
def test_safe_text_escapes(text: str | None, source: str) -> None:
    assert safe_text(text) == source
    if text is not None:
        assert _unescape(source) == re.sub(r"[\r\n]", " ", text)


def _streamlit_would_render_extras(source: str) -> bool:
    """The frontend's own tests (StreamlitMarkdown): an emoji shortcode, inline KaTeX, or a
    material icon name in the source switch on their renderers."""
    emoji = re.search(r":(?!material/|streamlit:)[\w+-][\w_+-]*:", source)
    math = re.search(r"(?<![\\$])\$(?![\s$])[^$\n]*?[^\s$\\]\$(?!\d)", source)
    return bool(emoji or math or ":material/" in source)


@pytest.mark.parametrize("text", [DOMAIN, PROVIDER])
def test_no_streamlit_extension_fires(text: str) -> None:
    assert _streamlit_would_render_extras(text)  # the planted text would render...
    assert not _streamlit_would_render_extras(safe_text(text))  # ...its safe form does not


def build_hostile_home(root: Path) -> Paths:
    """A warehouse whose one result carries markup in its id, domain, provider, flags and
    claim text."""
    home = resolve_paths(root)
    write_part(home.lake, "runs", "H", 0, [run_record("H", name=RUN_NAME)])
    claim = ClaimRecord(
        run_id="H",
        iteration=1,
        sample_id=SAMPLE_ID,
        claim_id="c1",
        claim_text=CLAIM,
        importance="required",
        found=False,
        similarity=0.2,
    )
    write_part(home.lake, "claims", "H", 1, [claim])
    row = result_record("H", SAMPLE_ID, domain=DOMAIN, ai_provider=PROVIDER, flags=[CLAIM])
    write_part(home.lake, "results", "H", 1, [row])
    ingest(home)
    return home


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    return build_hostile_home(tmp_path_factory.mktemp("hostile") / "home")


def test_safe_markup_leaves_no_tag_formula_nor_icon_code() -> None:
    text = '<b>x</b> "a" & $1$ :material/bolt: :smile:'
    out = safe_markup(text)
    assert not re.search(r"[<>\"$:]", out)  # no tag, attribute end, formula, icon code
    assert html.unescape(out) == text  # the browser shows it as typed
    assert safe_markup(None) == ""


def test_sample_page_shows_planted_markup_literally(app: AppFactory, hostile_home: Paths) -> None:
    at = app(hostile_home, "sample", run="H", sample=SAMPLE_ID, iteration="1")
    (heading,) = at.subheader.values[:1]
    assert heading == " · ".join(safe_text(v) for v in (SAMPLE_ID, DOMAIN, PROVIDER))
    assert _unescape(heading) == f"{SAMPLE_ID} · {DOMAIN} · {PROVIDER}"
    assert "!\\[x\\](http\\:\u2060//198.51.100.7/img.png)" in heading  # written out by hand
    flags = [c.value for c in at.caption if c.value.startswith("Flags: ")]
    assert flags == ["Flags: " + safe_text(CLAIM)] and _unescape(flags[0]) == f"Flags: {CLAIM}"
    every = [e.value for e in (*at.markdown, *at.caption, *at.subheader, *at.warning)]
    assert not any(_streamlit_would_render_extras(v) for v in every)


def test_missing_sample_warning_and_claims_link_are_literal(
    app: AppFactory, hostile_home: Paths
) -> None:
    at = app(hostile_home, "sample", run="H", sample="[x](http://e):red[y]", iteration="1")
    assert [w.value for w in at.warning] == [
        "Sample '\\[x\\](http\\:\u2060//e)\\:red\\[y\\]' has no results in run H."
    ]
    at = app(hostile_home, "claims")
    labels = [p.proto.label for p in at.get("page_link")]
    assert labels and all(safe_text(SAMPLE_ID) in label for label in labels)
    assert all(_unescape(label).startswith(f"Open sample {SAMPLE_ID} (") for label in labels)
