"""One display format per kind of quantity, for every page, card, table and report.

A score is drawn with the decimals its scale needs (one on 0-100, two on 1-5 and 0-1), a
percent with one decimal and a ``%``, a cost in dollars (four decimals under a dollar,
cents above), a time to the minute, a duration in ms or s, and a null as ``n/a``.
"""

from __future__ import annotations

from datetime import date, datetime

NA = "n/a"
"""What every page shows for a null value: not applicable or not measured, never 0."""


def score_printf(low: float, high: float) -> str:
    """The printf format of a score on the ``low..high`` scale (for grid column configs):
    one decimal on 0-100, two on 1-5 and 0-1."""
    return "%.1f" if high - low > 10 else "%.2f"


def score(value: float | None, low: float = 0, high: float = 100) -> str:
    """A score on the ``low..high`` scale: ``82.5`` on 0-100, ``4.25`` on 1-5."""
    return NA if value is None else score_printf(low, high) % value


def percent(value: float | None) -> str:
    """A value already on 0-100 as a percent: ``82.5%``."""
    return NA if value is None else f"{value:.1f}%"


def text(value: object) -> str:
    """A table cell's text: a list's items joined (``NA`` for none), a date as
    ``timestamp``, anything else as ``str``."""
    if isinstance(value, list | tuple) or hasattr(value, "tolist"):
        items = value if isinstance(value, list | tuple) else value.tolist()
        return ", ".join(str(v) for v in items) if items else NA
    if isinstance(value, date):  # datetime included
        return timestamp(value)
    return str(value)


def plain_number(value: object) -> str:
    """A number of no known scale: up to four decimals, no trailing zeros (``1,234.5``)."""
    text = f"{float(value):,.4f}".rstrip("0")  # type: ignore[arg-type]
    return text.rstrip(".") if text.endswith(".") else text


def cost(usd: float | None) -> str:
    """Dollars short enough for a card or a cell: ``$0`` for nothing, four decimals under
    a dollar (trailing zeros dropped), cents above."""
    if usd is None:
        return NA
    if usd == 0:
        return "$0"
    if abs(usd) < 1:
        return "$" + f"{usd:.4f}".rstrip("0").rstrip(".")
    return f"${usd:,.2f}"


def milliseconds(value: float | None) -> str:
    """A latency: ``1,234 ms``."""
    return NA if value is None else f"{value:,.0f} ms"


def seconds(value: float | None) -> str:
    """A duration: ``42 s``, ``3 min 5 s``, ``2 h 4 min``."""
    if value is None:
        return NA
    whole = round(value)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def timestamp(value: datetime | date | None) -> str:
    """A time to the minute (``2026-11-26 09:41``), never with seconds or microseconds."""
    if value is None:
        return NA
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return value.isoformat()


TIMESTAMP_GRID = "YYYY-MM-DD HH:mm"
"""``timestamp``'s format for ``st.column_config.DatetimeColumn``."""

COST_PRINTF = "$%.4f"
"""A cost in a grid whose cells cannot take ``cost`` (analyst-sized tables)."""


def without_nulls(value: object) -> object:
    """A JSON value with every null member dropped, at any depth: a config's unset options
    are noise on a page (and ``st.json`` draws null as a red badge that reads as an error)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "ollama": "Ollama"}
"""How a judge spec's provider prefix reads on a page (``engine.judges.factory`` names the
providers; a prefix not listed here is shown as written)."""

LOCAL_JUDGE = "Local judge"
"""The local judge as a page names it."""


def _one_judge(spec: str) -> str:
    spec = spec.strip()
    if spec in ("", "local"):
        return LOCAL_JUDGE if spec else NA
    provider, sep, model = spec.partition(":")
    if not sep:
        return spec
    return f"{model} ({PROVIDER_NAMES.get(provider, provider)})"


def judge_name(judge: str | None) -> str:
    """A judge as a product page names it: ``Local judge``, ``gpt-4o-mini (OpenAI)``.

    Takes a run's judge (``local``, ``openai:gpt-4o-mini``, a jury's ``a,b``) or a drift
    query's ``judge@prompt version``; the version (``local-v2+rules-v4+…``) means nothing
    to a reader of the Overview and goes to a tooltip or an analyst's caption
    (``judge_version``)."""
    if judge is None:
        return NA
    spec = judge.partition("@")[0]
    return " + ".join(_one_judge(part) for part in spec.split(","))


def judge_version(judge: str | None) -> str:
    """The prompt (or local rules) version of a ``judge@prompt version`` label; empty
    when it has none."""
    version = (judge or "").partition("@")[2]
    return "" if version in ("", "-") else version


def judge_shift(old: str | None, new: str | None) -> str:
    """A judge change in a few words: ``Local judge → gpt-4o-mini (OpenAI)``, or, when only
    its prompts or rules changed, ``Local judge, new version``."""
    before, after = judge_name(old), judge_name(new)
    return f"{after}, new version" if before == after else f"{before} → {after}"
