"""A metric over commits, per workload, read lazily from the store.

``history(store, metric=..., bucket=..., workload=REGEX)`` -> one row per (workload, machine,
commit): rows of other metrics and buckets are never materialised (the filters are pushed
into the Parquet scan). Rows without a commit (DataItems files, runs outside a git checkout)
are grouped per run instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from reports.store.dataset import scan_store

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


def history(store: Path | str, *, metric: str = DEFAULT_METRIC, bucket: str | None = None,
            workload: str | None = None, last: int | None = None) -> tuple[str, pl.DataFrame]:
    """(bucket used, frame) with columns name, machine, version, commit, branch, run_id,
    first_seen, runs, n (non-null values), mean, min, max, unit, problems (the statuses other
    than ok, comma-joined; empty when none), change (mean vs the previous version of the same
    name and machine, as a fraction), ordered by name, machine, first_seen; ``last``
    keeps the newest versions per name and machine."""
    if workload is not None:
        try:
            re.compile(workload)
        except re.error as exc:
            raise HistoryError(f"--workload {workload!r} is not a valid regular expression: "
                               f"{exc}") from exc
    lf = scan_store(store)
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
    grouped = (
        rows.with_columns(version=pl.coalesce(pl.col("commit"),
                                              pl.lit("run ") + pl.col("run_id")))
        .group_by("name", "machine", "version")
        .agg(pl.col("commit").first(), pl.col("branch").drop_nulls().first(),
             pl.col("run_id").first(), pl.col("timestamp").min().alias("first_seen"),
             pl.col("run_id").n_unique().alias("runs"),
             pl.col("value").count().alias("n"), pl.col("value").mean().alias("mean"),
             pl.col("value").min().alias("min"), pl.col("value").max().alias("max"),
             pl.col("unit").drop_nulls().first(),
             pl.col("status").filter(pl.col("status") != "ok").unique().sort()
             .str.join(",").alias("problems"))
        .sort("name", "machine", "first_seen", nulls_last=True)
        .with_columns(change=(pl.col("mean") / pl.col("mean").shift(1) - 1)
                      .over("name", "machine"))
    )
    if last:
        grouped = grouped.group_by("name", "machine", maintain_order=True).tail(last)
    return bucket, _collect(grouped, store)


def _collect(lf: pl.LazyFrame, store: Path | str) -> pl.DataFrame:
    try:
        return lf.collect()
    except pl.exceptions.PolarsError as exc:  # a regex polars rejects, a foreign data file
        raise HistoryError(f"store {store}: {str(exc).splitlines()[0]}") from exc
