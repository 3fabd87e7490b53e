"""Compare's tables with added runs as columns (Braintrust's "add comparison"): per group,
each compared run's mean and change against the one baseline; per sample, each added run's
score and change beside the challenger's. Narrow numeric columns under short headers (the
run's full name in the tooltip), so that at 1024 px the numbers stay on screen; the
columns a PM rarely needs are hidden unless "All columns" is on."""

from __future__ import annotations

import polars as pl

from dashboard.components.html_table import Column, show_table

HEADER_CHARS = 10
"""A run's name in a column header is cut to this many characters (full name in the help)."""


def run_header(label: str) -> str:
    """A run's label (``name · when · id``) as a short header: its name, cut."""
    name = label.split(" · ", 1)[0] or label
    return name if len(name) <= HEADER_CHARS else name[: HEADER_CHARS - 1] + "…"


def _added_runs(runs: list[str], labels: dict[str, str]) -> list[tuple[str, str, str, bool]]:
    """Each run's ``score_<run>`` and ``delta_<run>`` column: name, header, tooltip, and
    whether it is a change (signed)."""
    out = []
    for run in runs:
        label = labels.get(run, run)
        out.append((f"score_{run}", run_header(label), f"{label}: score (0-100)", False))
        # "Δ" alone: the run's name heads the score column just before it
        out.append((f"delta_{run}", "Δ", f"{label}: change against the baseline", True))
    return out


def added_run_table_columns(runs: list[str], labels: dict[str, str]) -> dict[str, Column]:
    """Each run's ``score_<run>`` and ``delta_<run>`` as columns of an HTML table
    (``html_table``)."""
    return {
        name: Column(header, help=tip, number="+.1f" if signed else ".1f")
        for name, header, tip, signed in _added_runs(runs, labels)
    }


def per_run_columns(groups: pl.DataFrame, runs: list[str], key: str) -> pl.DataFrame:
    """``compare_groups`` rows pivoted to one row per ``key`` value: ``score_<run>`` and
    ``delta_<run>`` of every run in ``runs``, in that order (a run without a paired sample
    in a group gets nulls there)."""
    wide = groups.select(pl.col("group_value").alias(key)).unique(maintain_order=True)
    for run in runs:
        part = groups.filter(pl.col("run_id") == run).select(
            pl.col("group_value").alias(key),
            pl.col("mean").alias(f"score_{run}"),
            pl.col("mean_delta").alias(f"delta_{run}"),
        )
        wide = wide.join(part, on=key, how="left", nulls_equal=True)
    return wide


def group_table(groups: pl.DataFrame, runs: list[str]) -> pl.DataFrame:
    """The per-group table: group, paired samples and the baseline's mean (the
    challenger's pairing), every run's mean and change, the challenger's regressed and
    improved counts; a sample without a value is in the group ``(none)``."""
    challenger = groups.filter(pl.col("run_id") == runs[0]).select(
        "group_value", "samples", "baseline_mean", "regressed", "improved"
    )
    wide = per_run_columns(groups, runs, "group_value")
    out = challenger.join(wide, on="group_value", how="right", nulls_equal=True)
    return out.select(
        pl.col("group_value").fill_null("(none)"),
        "samples",
        "baseline_mean",
        *[c for r in runs for c in (f"score_{r}", f"delta_{r}")],
        "regressed",
        "improved",
    )


def show_group_table(
    frame: pl.DataFrame, runs: list[str], labels: dict[str, str], title: str, *, every: bool
) -> None:
    """Draw ``group_table``'s frame; without ``every``, the sample count is hidden."""
    show_table(
        frame,
        {
            "group_value": Column(title),
            "samples": Column("Samples"),
            "baseline_mean": Column(
                "Base", help="Baseline mean over the same samples (0-100)", number=".1f"
            ),
            "regressed": Column("Regr.", help="Challenger: samples regressed beyond the tolerance"),
            "improved": Column("Impr.", help="Challenger: samples improved beyond the tolerance"),
            **added_run_table_columns(runs, labels),
        },
        order=[c for c in frame.columns if every or c != "samples"],
        name="compare_groups",
    )


def sample_added_columns(samples: pl.DataFrame, added: list[str]) -> pl.DataFrame:
    """``compare_samples``' page with each added run's ``score_<run>`` and ``delta_<run>``
    taken out of its ``added`` list (a run that lacks the sample: nulls)."""
    if not added or samples.is_empty():
        return samples.with_columns(
            *[pl.lit(None, pl.Float64).alias(f"{k}_{r}") for r in added for k in ("score", "delta")]
        ).drop("added")
    cells = samples.select("sample_id", "added").explode("added").unnest("added")
    out = samples.drop("added")
    for run in added:
        part = cells.filter(pl.col("run_id") == run).select(
            "sample_id",
            pl.col("score").alias(f"score_{run}"),
            pl.col("delta").alias(f"delta_{run}"),
        )
        out = out.join(part, on="sample_id", how="left", maintain_order="left")
    return out
