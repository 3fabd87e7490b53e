"""The Overview of a run against its baseline as one self-contained HTML file.

What a product manager attaches to an email or a slide deck: the verdict sentence, the
domains that moved beyond noise, a chart of each headline metric per domain (run against
baseline, as inline SVG), and the whole domain x metric table. No script, no stylesheet
or font from elsewhere: the file opens offline and requests nothing. Every string from the
data is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import PurePath
from typing import Any

import polars as pl

from dashboard import formats
from dashboard.components.html_table import table_html
from dashboard.components.tables import VERDICT_COLUMNS, overview_columns
from dashboard.verdict import Verdict, verdict_rows

CHART_METRICS = ("accuracy", "completeness", "attribution")
"""The metrics charted per domain (all 0-100, higher is better)."""
_BAR_WIDTH = 360
_ROW_HEIGHT = 22
_LABEL_WIDTH = 190
_RUN_COLOUR = "#1f6feb"
_BASE_COLOUR = "#b6bcc5"

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#1f2328;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#57606a;font-size:.9rem}
.verdict{padding:.8rem 1rem;border-radius:6px;font-weight:600;margin:1rem 0}
.worse{background:#fee4e2;color:#7a271a}.better{background:#dcfae6;color:#054f31}
.same{background:#eff4ff;color:#1d2939}.judge{background:#fef0c7;color:#7a2e0e}
table{border-collapse:collapse;width:100%;font-size:.85rem}
th,td{border-bottom:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}
.legend{font-size:.8rem;color:#57606a}
svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:12px}
"""


def _file_name(path: object) -> str | None:
    """A file's name without its folders: a report never shows where files live on the
    server."""
    return None if path is None else PurePath(str(path)).name


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _bars(frame: pl.DataFrame, metric: str) -> str:
    """An SVG of each domain's mean of ``metric``: the run's bar over the baseline's."""
    rows = [
        (r["domain"], r.get(f"{metric}_mean"), r.get(f"baseline_{metric}_mean"))
        for r in frame.iter_rows(named=True)
    ]
    rows = [r for r in rows if r[1] is not None or r[2] is not None]
    if not rows:
        return ""
    height = len(rows) * _ROW_HEIGHT + 10
    width = _LABEL_WIDTH + _BAR_WIDTH + 70
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{_e(metric)} per domain">'
    ]
    for i, (domain, now, before) in enumerate(rows):
        y = 5 + i * _ROW_HEIGHT
        label = str(domain) if len(str(domain)) <= 28 else str(domain)[:27] + "…"
        parts.append(f'<text x="0" y="{y + 14}"><title>{_e(domain)}</title>{_e(label)}</text>')
        if before is not None:
            w = max(0.0, min(100.0, float(before))) / 100 * _BAR_WIDTH
            parts.append(
                f'<rect x="{_LABEL_WIDTH}" y="{y + 2}" width="{w:.1f}" height="16" '
                f'fill="{_BASE_COLOUR}"/>'
            )
        if now is not None:
            w = max(0.0, min(100.0, float(now))) / 100 * _BAR_WIDTH
            parts.append(
                f'<rect x="{_LABEL_WIDTH}" y="{y + 6}" width="{w:.1f}" height="8" '
                f'fill="{_RUN_COLOUR}"/>'
            )
            parts.append(
                f'<text x="{_LABEL_WIDTH + _BAR_WIDTH + 6}" y="{y + 14}">{float(now):.1f}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def render_report(
    run: Mapping[str, Any],
    baseline: Mapping[str, Any] | None,
    frame: pl.DataFrame,
    verdict: Verdict,
    table: tuple[pl.DataFrame, Sequence[bool | None]],
    *,
    now: datetime,
    judge_note: str = "",
) -> str:
    """The report as HTML: ``run`` and ``baseline`` are ``run_info`` rows, ``frame`` the
    Overview frame, ``table`` the Overview table as shown with its beyond-noise marks;
    ``judge_note`` says the judge changed (``JudgeChange.note``), first."""
    css = "worse" if verdict.worse else "better" if verdict.changes else "same"
    against = (
        f"against baseline <b>{_e(baseline['name'])}</b> ({_e(baseline['run_id'])})"
        if baseline is not None
        else "without a baseline"
    )
    charts = "".join(
        f"<h3>{_e(metric.capitalize())}</h3>{svg}"
        for metric in CHART_METRICS
        if (svg := _bars(frame, metric))
    )
    changes = (
        table_html(verdict_rows(verdict), VERDICT_COLUMNS, name="movers", max_height_px=None)
        if verdict.changes
        else ""
    )
    shown, beyond = table
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>evalhouse report: {_e(run['name'])}</title>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>{_e(run['name'])}</h1>"
        f'<p class="meta">Run {_e(run["run_id"])}, {against}. '
        f"Judge {_e(formats.judge_name(run.get('judge')))}, "
        f"embedder {_e(run.get('embedder'))}, test set {_e(_file_name(run.get('test_set')))}. "
        f"Report made {now:%Y-%m-%d %H:%M} UTC by evalhouse.</p>"
        + (f'<div class="verdict judge">{_e(judge_note)}</div>' if judge_note else "")
        + f'<div class="verdict {css}">{_e(verdict.headline())}</div>'
        f"{changes}"
        "<h2>Headline metrics per domain</h2>"
        f'<p class="legend"><span style="color:{_RUN_COLOUR}">■</span> this run &nbsp; '
        f'<span style="color:{_BASE_COLOUR}">■</span> baseline (0-100)</p>'
        f"{charts}"
        "<h2>Scores per domain</h2>"
        '<p class="legend">Δ is the change against the baseline; coloured only when it is '
        "beyond noise (the 95% interval of the change excludes zero).</p>"
        + table_html(shown, overview_columns(beyond), name="scores", max_height_px=None)
        + "</body></html>"
    )


def overview_metric_names(frame: pl.DataFrame) -> dict[str, str]:
    """Label of every metric of an Overview frame: the built-ins, then its graders' and
    retrieval metrics'."""
    from warehouse import queries as q

    return {
        **q.METRIC_LABELS,
        **{
            c.removesuffix("_mean"): q.metric_label(c.removesuffix("_mean"))
            for c in frame.columns
            if c.startswith(q.EXTRA_PREFIXES) and c.endswith("_mean")
        },
    }


def build_report(wh: Any, run_id: str, baseline_id: str | None, *, now: datetime) -> str:
    """The report of ``run_id`` against ``baseline_id`` read from the warehouse ``wh`` (a
    ``warehouse.queries.Warehouse``); ``ValueError`` for a run it does not hold."""
    from dashboard import data
    from dashboard.components import tables
    from dashboard.verdict import domain_verdict
    from warehouse import queries as q

    run = q.run_info(wh, run_id)
    if run is None:
        raise ValueError(f"no run {run_id!r} in the warehouse")
    baseline = q.run_info(wh, baseline_id) if baseline_id else None
    if baseline_id and baseline is None:
        raise ValueError(f"no baseline run {baseline_id!r} in the warehouse")
    frame = data.system_overview(wh, run_id, baseline_id, q.Filters())
    judge = data.judge_change(wh, run_id, baseline_id)
    verdict = domain_verdict(
        frame,
        overview_metric_names(frame),
        baseline is not None,
        "" if judge is None else judge.scope(),
    )
    tiers = q.run_tiers(wh, run_id)
    shown = tables.overview_display(frame, tiers)
    base = dict(baseline) if baseline else None
    note = "" if judge is None else judge.note()
    return render_report(dict(run), base, frame, verdict, shown, now=now, judge_note=note)
