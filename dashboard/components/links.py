"""Links into the Sample page (``?run=...&sample=...&iteration=...``)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboard.components.safe import safe_text

SAMPLE_PAGE = "app_pages/sample.py"
"""The Sample page as registered with ``st.navigation``."""


def sample_params(
    run_id: str, sample_id: str, iteration: int = 1, candidate: str = ""
) -> dict[str, str]:
    """Query parameters that open one sample on the Sample page."""
    params = {"run": run_id, "sample": sample_id, "iteration": str(iteration)}
    if candidate:
        params["candidate"] = candidate
    return params


def sample_link(run_id: str, sample_id: str, iteration: int = 1, candidate: str = "") -> None:
    """A page link to one sample."""
    st.page_link(
        SAMPLE_PAGE,
        label=f"Open sample {safe_text(sample_id)} ({safe_text(run_id)}, iteration {iteration})",
        icon=":material/open_in_new:",
        query_params=sample_params(run_id, sample_id, iteration, candidate),
    )


def page_url(here: str, path: str, params: dict[str, str]) -> str:
    """The full address of the page at ``path`` with ``params``, from the address of the
    page the viewer is on (``st.context.url``: the server as the viewer reached it, proxy
    included)."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(here or "http://127.0.0.1:8501/")
    base = parts.path.rsplit("/", 1)[0]  # the app's root, under a proxy's path prefix too
    return urlunsplit((parts.scheme, parts.netloc, f"{base}/{path}", urlencode(params), ""))


def sample_url(here: str, run_id: str, sample_id: str, iteration: int, candidate: str) -> str:
    """The full address of one sample on the Sample page (``page_url``)."""
    return page_url(here, "sample", sample_params(run_id, sample_id, iteration, candidate))


def with_sample_urls(frame: pl.DataFrame, here: str, column: str = "open") -> pl.DataFrame:
    """``frame`` (keys ``run_id``, ``sample_id``, ``iteration``, ``candidate``) with the
    address of each row's sample in ``column``, first (for a ``LinkColumn``)."""
    keys = ("run_id", "sample_id", "iteration", "candidate")
    urls = [
        sample_url(here, str(run), str(sample), int(it), str(cand or ""))
        for run, sample, it, cand in frame.select(keys).iter_rows()
    ]
    return frame.select(pl.Series(column, urls, dtype=pl.String), pl.all())


def compare_params(run_id: str, baseline: str, metric: str, domain: str = "") -> dict[str, str]:
    """Query parameters that open Compare on one run against ``baseline``, one metric and
    (optionally) one domain: its per-sample table lists the largest drop first."""
    params = {"run": run_id, "baseline": baseline, "metric": metric}
    if domain:
        params["domain"] = domain
    return params


def sample_picker(
    frame: pl.DataFrame,
    *,
    key: str,
    run_col: str = "run_id",
    sample_col: str = "sample_id",
    iteration_col: str = "iteration",
    run_id: str | None = None,
) -> None:
    """A select box over the rows shown and a link to the chosen sample."""
    if frame.is_empty():
        return
    rows = frame.select(
        (pl.lit(run_id) if run_id is not None else pl.col(run_col)).alias("run"),
        pl.col(sample_col).alias("sample"),
        (pl.col(iteration_col) if iteration_col in frame.columns else pl.lit(1)).alias("it"),
    ).unique(maintain_order=True)
    options = list(range(rows.height))
    choice = st.selectbox(
        "Open a sample",
        options,
        format_func=lambda i: f"{rows['sample'][i]} · {rows['run'][i]}",
        key=key,
    )
    if choice is not None:
        sample_link(str(rows["run"][choice]), str(rows["sample"][choice]), int(rows["it"][choice]))
