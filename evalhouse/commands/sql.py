"""``evalhouse sql "SELECT ..."``: read-only SQL on the warehouse."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from evalhouse import argtypes, home
from evalhouse.console import EXIT_OK, err, out

if TYPE_CHECKING:
    import polars as pl


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``sql`` subcommand and its flags."""
    p = sub.add_parser(
        "sql", parents=[home.home_options()], help="run read-only SQL on the warehouse"
    )
    p.add_argument("query")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument(
        "--max-rows", type=argtypes.count(1), default=10_000, help="row cap (at least 1)"
    )
    p.add_argument(
        "--time-limit",
        type=argtypes.seconds,
        default=60.0,
        help="seconds before the query is stopped",
    )
    p.set_defaults(func=run)


def render_table(frame: pl.DataFrame, truncated: bool) -> str:
    """The frame as a text table with every row and column, long texts cut."""
    import polars as pl

    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=200,
        fmt_str_lengths=80,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        text = str(frame)
    if truncated:
        text += f"\n(first {frame.height} rows; more were cut by the row cap)"
    return text


def run(args: argparse.Namespace) -> int:
    """Run the query read-only and print it as a table, CSV or JSON."""
    paths = home.paths(args)
    from warehouse.queries import Warehouse

    result = Warehouse(paths.warehouse, catalog=home.catalog()).analyst_sql(
        args.query, time_limit_s=args.time_limit, row_cap=args.max_rows
    )
    frame = result.frame
    if args.format == "csv":
        out(csv_ready(frame).write_csv())
    elif args.format == "json":
        out(json.dumps(frame.to_dicts(), default=str, indent=1) + "\n")
    else:
        out(render_table(frame, result.truncated) + "\n")
    if result.truncated and args.format != "table":
        err(f"output cut at {args.max_rows} rows (--max-rows)")
    return EXIT_OK


def csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every nested column (lists, structs) as JSON text: CSV has no nested
    values, and a spreadsheet or ``json.loads`` reads the cell back."""
    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.col(name).map_elements(
            lambda v: json.dumps(v.to_list() if isinstance(v, pl.Series) else v, default=str),
            return_dtype=pl.String,
        )
        for name in nested
    )
