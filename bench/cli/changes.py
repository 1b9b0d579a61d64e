"""``schedperf changes``: the commits where a workload's metric stepped, from the store.

For every workload (and machine) the per-commit means of the metric along the first-parent
line of its newest commit (``schedperf history``'s series in git order, oldest first; versions
of unknown order left out) go through E-divisive means change-point detection (reports.stats,
Apache Otava's method); each change point is the first commit of a new level.
"""

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
from reports.stats import change_points
from reports.stats.direction import metric_direction
from reports.store import (
    DEFAULT_METRIC,
    ORDER_UNKNOWN,
    CommitGraph,
    GitError,
    HistoryError,
    StoreError,
    load_graph,
    order_note,
)
from reports.store import history as store_history

__all__ = ["changes", "find_changes"]


def find_changes(store: Path, *, metric: str, bucket: str | None, workload: str | None,
                 since: str | None, min_size: int, p_value: float,
                 repo: Path | None = None, graph: CommitGraph | None = None,
                 orders: list[str] | None = None) -> list[dict[str, object]]:
    """One dict per change point: name, machine, commit, commit_date, first_seen, before,
    after, change, p_value, direction (regression/improvement when the metric's direction
    is known). The series are in git order (``repo``, else what ingest recorded);
    ``orders``, when given, receives the ``order`` of every version looked at."""
    if graph is None:
        graph = load_graph(store, repo)
    _, frame = store_history(store, metric=metric, bucket=bucket, workload=workload,
                             graph=graph, judge=False)
    if orders is not None:
        orders.extend(frame["order"].to_list())
    out: list[dict[str, object]] = []
    for (name, machine), series in frame.group_by(["name", "machine"], maintain_order=True):
        series = series.filter(pl.col("mean").is_not_null() & pl.col("mainline")
                               & (pl.col("order") != ORDER_UNKNOWN))
        values = series["mean"].to_list()
        if len(values) < 2 * min_size:
            continue
        commits = series["version"].to_list()
        seen = series["first_seen"].to_list()
        dates = series["commit_date"].to_list()
        unit = series["unit"].drop_nulls()
        try:
            higher = metric_direction(metric, unit[0] if len(unit) else "").higher_is_better
        except ValueError:
            higher = None
        for cp in change_points(values, min_size=min_size, p_value=p_value):
            if since is not None and not _after(since, cp.index, commits, dates, seen):
                continue
            direction = None
            if higher is not None and math.isfinite(cp.magnitude):
                worse = cp.magnitude < 0 if higher else cp.magnitude > 0
                direction = "regression" if worse else "improvement"
            out.append({"name": name, "machine": machine, "commit": commits[cp.index],
                        "commit_date": dates[cp.index], "first_seen": seen[cp.index],
                        "before": cp.before_mean, "after": cp.after_mean,
                        "change": cp.magnitude, "p_value": cp.p_value,
                        "direction": direction})
    return out


def _after(since: str, index: int, commits: list[str], dates: list[object],
           seen: list[object]) -> bool:
    """Whether a change at ``commits[index]`` is newer than ``since``: a commit prefix in the
    series (later in git order), or an ISO date (committed on or after it; measured, for runs
    without a commit)."""
    for i, c in enumerate(commits):
        if c and c.startswith(since):
            return index > i
    when = dates[index] if dates[index] is not None else seen[index]
    return str(when) >= since


@click.command()
@store_option
@click.option("--metric", default=DEFAULT_METRIC, show_default=True)
@click.option("--bucket", default=None, help="Bucket [default: Average, Value, ...].")
@click.option("--workload", default=None, metavar="REGEX",
              help="Only workloads whose <test case>/<workload> matches.")
@click.option("--since", default=None, metavar="REF",
              help="Only changes after this commit (prefix, as stored) or date (YYYY-MM-DD).")
@click.option("--min-size", default=5, show_default=True, type=click.IntRange(min=2),
              help="Fewest commits on each side of a change.")
@click.option("--p-value", default=0.01, show_default=True,
              type=click.FloatRange(min=0, max=1, min_open=True, max_open=True))
@repo_option("A git checkout of the project: versions in the order of its history [default: "
             "the parents and commit dates recorded at ingest].")
def changes(store: Path, metric: str, bucket: str | None, workload: str | None,
            since: str | None, min_size: int, p_value: float, repo: Path | None) -> None:
    """List the commits where a metric changed level (E-divisive means over the commits in
    git order, along the first-parent line of the newest one)."""
    require_results(store)
    warn_unreadable_parts(store)
    orders: list[str] = []
    try:
        graph = load_graph(store, repo)
        found = find_changes(store, metric=metric, bucket=bucket, workload=workload,
                             since=since, min_size=min_size, p_value=p_value, graph=graph,
                             orders=orders)
    except (HistoryError, GitError, StoreError) as exc:
        raise BadInput(str(exc)) from exc
    console = Console()
    note = order_note(orders, graph)
    if not found:
        console.print(f"no change points in {metric} (each series needs at least "
                      f"{2 * min_size} commits of known order)", highlight=False)
        if note:
            console.print(note, highlight=False)
        return
    table = Table(title=Text(f"change points of {metric}"),
                  caption=Text(note) if note else None, caption_justify="left")
    for col in ("workload", "machine", "commit", "committed", "first measured", "before",
                "after", "change", "p", "verdict"):
        table.add_column(col, overflow="fold")
    for c in found:
        table.add_row(Text(str(c["name"])), Text(str(c["machine"])), str(c["commit"])[:12],
                      str(c["commit_date"] or "-")[:19], str(c["first_seen"])[:19],
                      f"{c['before']:.4g}", f"{c['after']:.4g}",
                      f"{c['change']:+.1%}", f"{c['p_value']:.3f}", str(c["direction"] or ""))
    console.print(table)
