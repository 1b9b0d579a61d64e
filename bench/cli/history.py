"""``schedperf history``: a metric over commits, per workload, from the results store."""

from __future__ import annotations

import math
from pathlib import Path

import click
import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bench.cli.ingest import store_option
from bench.cli.run import BadInput
from reports.store import DEFAULT_BUCKETS, DEFAULT_METRIC, HistoryError, store_files
from reports.store import history as store_history

__all__ = ["history", "history_table"]


_PIPE_WIDTH = 200


def _number(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4g}"


def _change(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:+.1%}"


def history_table(frame: pl.DataFrame, title: str) -> Table:
    """The rich table of a :func:`reports.store.history` frame."""
    machines = frame["machine"].n_unique() > 1
    units = frame["unit"].n_unique() > 1
    problems = bool(frame["problems"].fill_null("").str.len_chars().sum())
    table = Table(title=Text(title))  # Text: names like "test[500]" are not markup
    table.add_column("workload", overflow="fold")
    if machines:
        table.add_column("machine")
    table.add_column("commit", no_wrap=True)
    table.add_column("branch")
    table.add_column("date", no_wrap=True)
    table.add_column("runs", justify="right")
    table.add_column("n", justify="right")
    table.add_column("mean", justify="right")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    if units:
        table.add_column("unit")
    table.add_column("change", justify="right")
    if problems:
        table.add_column("problems")
    rows = frame.to_dicts()
    for i, r in enumerate(rows):
        commit = r["commit"][:10] if r["commit"] else f"run {r['run_id']}"
        when = r["first_seen"].strftime("%Y-%m-%d %H:%M") if r["first_seen"] else "-"
        cells = [r["name"]] + ([r["machine"] or "-"] if machines else [])
        cells += [commit, r["branch"] or "-", when, str(r["runs"]), str(r["n"]),
                  _number(r["mean"]), _number(r["min"]), _number(r["max"])]
        cells += [r["unit"] or ""] if units else []
        cells.append(_change(r["change"]))
        cells += [r["problems"] or ""] if problems else []
        last_of_name = i + 1 == len(rows) or rows[i + 1]["name"] != r["name"]
        table.add_row(*(Text(c) for c in cells), end_section=last_of_name)
    return table


@click.command()
@store_option
@click.option("--workload", "workload_regex", default=None, metavar="REGEX",
              help="Only workloads whose '<test case>/<workload>' name matches REGEX.")
@click.option("--metric", default=DEFAULT_METRIC, show_default=True,
              help="Metric name (results 'metric' column).")
@click.option("--bucket", default=None,
              help="Bucket [default: the first of " + ", ".join(DEFAULT_BUCKETS)
                   + " the metric has].")
@click.option("--last", default=20, show_default=True, type=click.IntRange(min=0),
              help="Show the newest N commits per workload (0: all).")
def history(store: Path, workload_regex: str | None, metric: str,
                    bucket: str | None, last: int) -> None:
    """Print a metric over commits, per workload (mean of all values of a commit; change is
    against the previous commit shown).

    Exit status: 0 ok, 2 bad input (empty store, nothing matches, bad regex).
    """
    if not store_files(store):
        raise BadInput(f"store {store} holds no results yet: add some with "
                       "`schedperf ingest PATH`")
    try:
        bucket, frame = store_history(store, metric=metric, bucket=bucket,
                                workload=workload_regex, last=last or None)
    except HistoryError as exc:
        raise BadInput(str(exc)) from exc
    if frame.is_empty():
        where = f" for --workload {workload_regex!r}" if workload_regex else ""
        raise BadInput(f"no {metric} {bucket} values{where} in store {store}")
    units = frame["unit"].drop_nulls().unique().to_list()
    title = f"{metric} {bucket}" + (f" [{units[0]}]" if len(units) == 1 else "")
    console = Console()
    if not console.is_terminal:  # piped or captured: do not squeeze into 80 columns
        console = Console(width=max(console.width, _PIPE_WIDTH))
    console.print(history_table(frame, title))
