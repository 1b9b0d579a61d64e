"""A metric over commits, per workload, read lazily from the store.

``history(store, metric=..., bucket=..., workload=REGEX, repo=...)`` -> one row per
(workload, machine, commit): rows of other metrics and buckets are never materialised (the
filters are pushed into the Parquet scan). Rows without a commit (DataItems files, runs
outside a git checkout) are grouped per run instead. Versions are in git order
(:mod:`reports.store.order`), each step from the previous version judged by the project's
statistics (:mod:`reports.store.steps`).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from reports.store.dataset import scan_store
from reports.store.order import ORDER_UNKNOWN, CommitGraph, load_graph, order_series
from reports.store.schema import core_engine
from reports.store.steps import Step, judge_steps

__all__ = ["DEFAULT_BUCKETS", "DEFAULT_METRIC", "HistoryError", "buckets_of", "history",
           "workload_names"]

DEFAULT_METRIC = "SchedulingThroughput"
# the bucket shown when none is asked for: the first of these the metric has
DEFAULT_BUCKETS = ("Average", "Value", "median", "mean", "Perc50")


class HistoryError(Exception):
    """The query cannot be answered (bad regex, unknown metric or bucket)."""


def workload_names() -> pl.Expr:
    """``<test case>/<workload>`` (just the test case when the workload is empty)."""
    tc = pl.col("test_case").fill_null("")
    w = pl.col("workload").fill_null("")
    return pl.when(w == "").then(tc).otherwise(pl.concat_str([tc, pl.lit("/"), w]))


def _known_metrics(lf: pl.LazyFrame, store: Path | str, shown: int = 12) -> str:
    metrics = sorted(_collect(lf.select(pl.col("metric").unique()), store)["metric"]
                     .drop_nulls().to_list())
    if not metrics:
        return ""
    more = f", ... ({len(metrics)} in all)" if len(metrics) > shown else ""
    return " (metrics: " + ", ".join(metrics[:shown]) + more + ")"


def buckets_of(lf: pl.LazyFrame, metric: str, store: Path | str = "") -> list[str]:
    """The buckets of ``metric`` in ``lf`` (a store scan), sorted."""
    query = lf.filter(pl.col("metric") == metric).select(pl.col("bucket").unique())
    return sorted(_collect(query, store)["bucket"].drop_nulls().to_list())


_HISTORY_SCHEMA = {"order": pl.String, "previous": pl.String, "change": pl.Float64,
                   "verdict": pl.String, "note": pl.String, "p_value": pl.Float64,
                   "mainline": pl.Boolean, "rank": pl.Int64}


def history(store: Path | str, *, metric: str = DEFAULT_METRIC, bucket: str | None = None,
            workload: str | None = None, last: int | None = None,
            repo: Path | str | None = None, judge: bool = True,
            graph: CommitGraph | None = None) -> tuple[str, pl.DataFrame]:
    """(bucket used, frame) with one row per (workload, machine, version), columns name,
    machine, version, commit, branch, run_id, commit_date, first_seen (earliest measurement),
    runs, n (non-null values), mean, min, max, unit, problems (the statuses other than ok,
    comma-joined; empty when none), order (how the version was placed:
    :mod:`reports.store.order`), previous (the version it is compared with: the nearest
    earlier one on its first-parent line with a value), change (mean vs
    that version's, as a fraction), verdict and note (the step judged by
    :mod:`reports.store.steps`; null when ``judge`` is False or there is no previous),
    p_value (BH-adjusted), mainline (on the first-parent line of the newest version: change
    points are looked for there).

    Rows are ordered by name, machine and git order, oldest first (``repo``: that
    repository's history; else the parents and dates recorded at ingest; versions of
    unknown order last). ``last`` keeps the newest ``last`` ordered versions (and at most
    ``last`` of unknown order) per name and machine. Raises :class:`HistoryError` for a bad
    query, :class:`reports.store.gitinfo.GitError` for a ``repo`` git cannot read."""
    if workload is not None:
        try:
            re.compile(workload)
        except re.error as exc:
            raise HistoryError(f"--workload {workload!r} is not a valid regular expression: "
                               f"{exc}") from exc
    lf = scan_store(store).filter(core_engine())
    if bucket is None:
        have = buckets_of(lf, metric, store)
        if not have:
            raise HistoryError(f"no rows of metric {metric!r} in the store"
                               + _known_metrics(lf, store))
        bucket = next((b for b in DEFAULT_BUCKETS if b in have), have[0] if len(have) == 1
                      else None)
        if bucket is None:
            raise HistoryError(f"metric {metric!r} has buckets {', '.join(have)}: "
                               "choose one with --bucket")
    rows = (lf.filter((pl.col("metric") == metric) & (pl.col("bucket") == bucket))
            .with_columns(name=workload_names()))
    if workload is not None:
        rows = rows.filter(pl.col("name").str.contains(workload))
    value = pl.col("value")
    grouped = (
        rows.with_columns(version=pl.coalesce(pl.col("commit"),
                                              pl.lit("run ") + pl.col("run_id")))
        .group_by("name", "machine", "version")
        .agg(pl.col("commit").first(), pl.col("branch").drop_nulls().first(),
             pl.col("run_id").first(), pl.col("commit_date").drop_nulls().first(),
             pl.col("timestamp").min().alias("first_seen"),
             pl.col("run_id").n_unique().alias("runs"),
             value.count().alias("n"), value.mean().alias("mean"),
             value.min().alias("min"), value.max().alias("max"),
             value.filter(value.is_not_null() & value.is_finite()).alias("values"),
             pl.col("unit").drop_nulls().first(),
             pl.col("status").filter(pl.col("status") != "ok").unique().sort()
             .str.join(",").alias("problems"))
        .sort("name", "machine", "version", nulls_last=True)
    )
    frame = _collect(grouped, store)
    if graph is None:
        graph = load_graph(store, repo)
    frame = _place(frame, graph)
    if last:
        frame = pl.concat([
            frame.filter(pl.col("order") != ORDER_UNKNOWN)
            .group_by("name", "machine", maintain_order=True).tail(last),
            frame.filter(pl.col("order") == ORDER_UNKNOWN)
            .group_by("name", "machine", maintain_order=True).tail(last),
        ]).sort("name", "machine", "rank", nulls_last=True)
    if judge:
        frame = _judge(frame, metric)
    return bucket, frame.drop("values")


def _place(frame: pl.DataFrame, graph: CommitGraph) -> pl.DataFrame:
    """Order every series (name, machine) by git; add order, previous, change, mainline."""
    extra: dict[str, list[object]] = {k: [None] * frame.height for k in _HISTORY_SCHEMA}
    versions, commits = frame["version"].to_list(), frame["commit"].to_list()
    seen, means = frame["first_seen"].to_list(), frame["mean"].to_list()
    dates = frame["commit_date"].to_list()
    keys = list(zip(frame["name"].to_list(), frame["machine"].to_list(), strict=True))
    series: dict[tuple[str, str | None], list[int]] = {}
    for i, k in enumerate(keys):
        series.setdefault(k, []).append(i)
    for rows in series.values():
        placed = order_series([(commits[i], seen[i]) for i in rows], graph)
        for i, p in zip(rows, placed, strict=True):
            k = p.previous  # the nearest earlier version on the line that has a value
            while k is not None and means[rows[k]] is None:
                k = placed[k].previous
            before = rows[k] if k is not None else None
            extra["order"][i] = p.order
            extra["rank"][i] = p.rank
            extra["mainline"][i] = p.mainline
            if before is not None:
                extra["previous"][i] = versions[before]
                if means[i] is not None and means[before]:
                    extra["change"][i] = means[i] / means[before] - 1
            if dates[i] is None:
                dates[i] = graph.date(commits[i])
    out = frame.with_columns(pl.Series("commit_date", dates,
                                       dtype=frame.schema["commit_date"]),
                             *(pl.Series(k, v, dtype=_HISTORY_SCHEMA[k])
                               for k, v in extra.items()))
    return out.sort("name", "machine", "rank", nulls_last=True)


def _judge(frame: pl.DataFrame, metric: str) -> pl.DataFrame:
    """verdict, note and p_value of every row's step from its previous version."""
    index = {(n, m, v): i for i, (n, m, v) in enumerate(
        zip(frame["name"], frame["machine"], frame["version"], strict=True))}
    values, units = frame["values"].to_list(), frame["unit"].to_list()
    steps, rows = [], []
    for i, (n, m, v, prev) in enumerate(zip(frame["name"], frame["machine"], frame["version"],
                                            frame["previous"], strict=True)):
        j = index.get((n, m, prev)) if prev is not None else None
        if j is None:
            continue
        steps.append(Step(prev, v, values[j] or [], values[i] or [], metric,
                          units[i] or units[j] or "", name=str(n)))
        rows.append(i)
    verdict: list[str | None] = [None] * frame.height
    note: list[str | None] = [None] * frame.height
    p_value: list[float | None] = [None] * frame.height
    for i, s in zip(rows, judge_steps(steps), strict=True):
        verdict[i], note[i], p_value[i] = s.verdict, s.note, s.p
    return frame.with_columns(pl.Series("verdict", verdict, dtype=pl.String),
                              pl.Series("note", note, dtype=pl.String),
                              pl.Series("p_value", p_value, dtype=pl.Float64))


def _collect(lf: pl.LazyFrame, store: Path | str) -> pl.DataFrame:
    try:
        return lf.collect()
    except pl.exceptions.PolarsError as exc:  # a regex polars rejects, a foreign data file
        raise HistoryError(f"store {store}: {str(exc).splitlines()[0]}") from exc
