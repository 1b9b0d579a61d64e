"""``schedperf history``: a metric over commits in git order, per workload, from the results
store: n and spread of every commit, and each step judged by the project's statistics."""

from __future__ import annotations

import math
from pathlib import Path

import click
import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bench.cli.ingest import repo_option, require_results, store_option
from bench.cli.output import warn_unreadable_parts
from bench.selection import BadInput
from reports.store import (
    DEFAULT_BUCKETS,
    DEFAULT_METRIC,
    ONE_VALUE,
    ORDER_GIT,
    ORDER_PARENTS,
    GitError,
    HistoryError,
    StoreError,
    load_graph,
    order_note,
)
from reports.store import history as store_history
from reports.store.steps import NOT_JUDGED

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


def _when(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "-"  # type: ignore[attr-defined]


def _verdict(r: dict[str, object]) -> Text:
    """The step's verdict: regression/improvement highlighted (significant by the project's
    statistics), the others plain or dim with why they were not judged."""
    verdict = r.get("verdict")
    if verdict is None:
        return Text("")
    if verdict == "regression":
        return Text("regression", style="bold red")
    if verdict == "improvement":
        return Text("improvement", style="bold green")
    if verdict == NOT_JUDGED:
        return Text(str(r.get("note") or NOT_JUDGED), style="dim")
    return Text(str(verdict), style="dim")


def history_table(frame: pl.DataFrame, title: str, caption: str = "") -> Table:
    """The rich table of a :func:`reports.store.history` frame."""
    machines = frame["machine"].n_unique() > 1
    units = frame["unit"].n_unique() > 1
    problems = bool(frame["problems"].fill_null("").str.len_chars().sum())
    orders = set(frame["order"].drop_nulls().to_list()) if "order" in frame.columns else set()
    show_order = bool(orders - {ORDER_GIT, ORDER_PARENTS})
    judged = "verdict" in frame.columns and frame["verdict"].is_not_null().any()
    table = Table(title=Text(title), caption=Text(caption) if caption else None,
                  caption_justify="left")  # Text: names like "test[500]" are not markup
    table.add_column("workload", overflow="fold")
    if machines:
        table.add_column("machine")
    table.add_column("commit", no_wrap=True)
    table.add_column("branch")
    table.add_column("committed", no_wrap=True)
    table.add_column("measured", no_wrap=True)
    if show_order:
        table.add_column("order")
    table.add_column("runs", justify="right")
    table.add_column("n", justify="right")
    table.add_column("mean", justify="right")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    if units:
        table.add_column("unit")
    table.add_column("vs", no_wrap=True)
    table.add_column("change", justify="right")
    if judged:
        table.add_column("verdict", overflow="fold")
    if problems:
        table.add_column("problems")
    rows = frame.to_dicts()
    for i, r in enumerate(rows):
        commit = r["commit"][:10] if r["commit"] else f"run {r['run_id']}"
        previous = r.get("previous")
        vs = (previous[:10] if previous and not previous.startswith("run ")
              else previous or "")
        cells: list[Text | str] = [r["name"]] + ([r["machine"] or "-"] if machines else [])
        cells += [commit, r["branch"] or "-", _when(r.get("commit_date")),
                  _when(r["first_seen"])]
        cells += [r.get("order") or ""] if show_order else []
        cells += [str(r["runs"]), str(r["n"]), _number(r["mean"]), _number(r["min"]),
                  _number(r["max"])]
        cells += [r["unit"] or ""] if units else []
        cells += [vs, _change(r["change"])]
        if judged:
            cells.append(_verdict(r))
        cells += [r["problems"] or ""] if problems else []
        last_of_name = i + 1 == len(rows) or rows[i + 1]["name"] != r["name"]
        table.add_row(*(c if isinstance(c, Text) else Text(c) for c in cells),
                      end_section=last_of_name)
    return table


def _single_value_series(frame: pl.DataFrame) -> list[str]:
    """Names of the series whose every version has at most one value."""
    per = frame.group_by("name", maintain_order=True).agg(pl.col("n").max())
    return per.filter(pl.col("n") <= 1)["name"].to_list()


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
@repo_option("A git checkout of the project: versions in the order of its history [default: "
             "the parents and commit dates recorded at ingest].")
def history(store: Path, workload_regex: str | None, metric: str,
            bucket: str | None, last: int, repo: Path | None) -> None:
    """Print a metric over commits in git order, per workload: n and spread (min, max) of
    every commit's values, and the change against the previous measured commit on its
    first-parent line, judged by the project's statistics (Mann-Whitney U, 3 % minimum
    effect, Benjamini-Hochberg per commit pair); a commit with one value is not judged.

    Exit status: 0 ok, 2 bad input (empty store, nothing matches, bad regex, bad --repo).
    """
    require_results(store)
    warn_unreadable_parts(store)
    try:
        graph = load_graph(store, repo)
        bucket, frame = store_history(store, metric=metric, bucket=bucket,
                                      workload=workload_regex, last=last or None, graph=graph)
    except (HistoryError, GitError, StoreError) as exc:
        raise BadInput(str(exc)) from exc
    if frame.is_empty():
        where = f" for --workload {workload_regex!r}" if workload_regex else ""
        raise BadInput(f"no {metric} {bucket} values{where} in store {store}")
    units = frame["unit"].drop_nulls().unique().to_list()
    title = f"{metric} {bucket}" + (f" [{units[0]}]" if len(units) == 1 else "")
    notes = [order_note(frame["order"].to_list(), graph)]
    single = _single_value_series(frame)
    if single:
        notes.append(f"{ONE_VALUE}: {len(single)} workload{'s' * (len(single) != 1)} with a "
                     "single value per commit")
    notes.append("vs: the previous measured commit on the first-parent line; verdict: "
                 "Mann-Whitney U + 3 % minimum effect, BH per commit pair (regression and "
                 "improvement are significant)")
    console = Console()
    if not console.is_terminal:  # piped or captured: do not squeeze into 80 columns
        console = Console(width=max(console.width, _PIPE_WIDTH))
    console.print(history_table(frame, title, "\n".join(n for n in notes if n)))
