"""Read the results store into dashboard workloads (:class:`~reports.dashboard.model.Workload`).

One query over the store: per (source, workload name, machine, metric, version) the values
of the metric's bucket (the first of ``DEFAULT_BUCKETS`` it has, or its only bucket, as
``schedperf history`` picks it). Only those rows are read (the filter is pushed into the
Parquet scan). Then per workload:

* the *headline* metric: ``SchedulingThroughput`` when there is one, else a rate (asv
  ``track_throughput``, pods/s), else ``cpu_seconds``/``wall_seconds``, else a time, else
  the first other metric; metrics with values come before metrics without;
* values of rows whose status is ``ok`` or ``threshold-missed`` (or none, DataItems); the
  other statuses (failed, timeout, unsupported) show as problems of their version;
* the other metrics, except those with several items per round (per plugin or extension
  point DataItems: their values are not one series);
* the versions of every metric in git order (:mod:`reports.store.order`: ``--repo``'s
  history, else the parents and commit dates recorded at ingest; unknown order last), each
  with the version it is compared with (the previous measured commit with a value on its
  first-parent line);
* the step from that version judged by the project's statistics
  (:func:`reports.store.judge_steps`: Mann-Whitney U, 3 % minimum effect, Benjamini-Hochberg
  per commit pair): every step of the headline metric, the latest step of the others;
* change points of the headline metric (:func:`reports.stats.change_points` over the means
  per version along the mainline, oldest first). Not of the other metrics: at ~0.02 s per
  200-version series, 20 metrics of 50 workloads would cost half a minute; their panels mark
  the headline's change points instead.

Names are ``<test case>/<workload>`` as in ``schedperf history``, except: pytest-benchmark
results are named by the test's full name (``file::Class::test[param]``, each test is a
benchmark of its own); asv results of the catalog benchmarks (``WorkloadThroughput``,
``WorkloadAttempts``: one parameter ``workload``) by that parameter, so one asv workload
carries both metrics and is matched with the ``schedperf run`` workload of the same name,
whose topic and ``uncommon`` flag it borrows.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import polars as pl

from reports.dashboard.model import MetricHistory, Point, Workload
from reports.stats import change_points, metric_direction
from reports.store import (
    DEFAULT_BUCKETS,
    ORDER_UNKNOWN,
    SOURCE_ASV,
    SOURCE_PYTEST,
    CommitGraph,
    Placed,
    Step,
    judge_steps,
    load_graph,
    order_series,
    scan_store,
)
from reports.store.history import workload_names
from reports.store.schema import core_engine
from workloads.output.parquet import STATUS_METRIC
from workloads.result import STATUS_OK, STATUS_THRESHOLD_MISSED

__all__ = ["HEADLINE_METRIC", "MIN_SIZE", "UNCOMMON_LABEL", "choose_buckets",
           "load_workloads", "page_name", "version_ranks"]

HEADLINE_METRIC = "SchedulingThroughput"
UNCOMMON_LABEL = "uncommon"
MIN_SIZE = 5  # change_points' min_size: a change needs this many versions on each side
_COST_FALLBACKS = ("cpu_seconds", "wall_seconds")
_TIME_UNITS = frozenset({"s", "ms", "us", "µs", "ns"})
# statuses whose values are measurements (a failed, timed-out or unsupported workload's
# extra metrics are zeros or partial): the others only show as problems
_MEASURED = (STATUS_OK, STATUS_THRESHOLD_MISSED)
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def page_name(source: str, name: str, machine: str) -> str:
    """``<readable slug>-<8 hex>.html``: safe in a URL and on every file system, unique
    per (source, name, machine) even where the slugs (or their case) collide."""
    slug = _SLUG.sub("-", name).strip("-.")[:60].strip("-.") or "workload"
    digest = hashlib.sha256("\0".join((source, name, machine)).encode()).hexdigest()[:8]
    return f"{slug}-{digest}.html"


def choose_buckets(lf: pl.LazyFrame) -> dict[str, str]:
    """Per metric the bucket shown: the first of ``DEFAULT_BUCKETS`` it has, else its only
    bucket; metrics with several other buckets (and the status rows) are left out."""
    pairs = lf.select("metric", "bucket").unique().collect()
    buckets: dict[str, set[str]] = defaultdict(set)
    for metric, bucket in pairs.iter_rows():
        if metric is not None and bucket is not None and metric != STATUS_METRIC:
            buckets[metric].add(bucket)
    chosen = {}
    for metric, have in buckets.items():
        pick = next((b for b in DEFAULT_BUCKETS if b in have), None)
        if pick is None and len(have) == 1:
            pick = next(iter(have))
        if pick is not None:
            chosen[metric] = pick
    return chosen


def _entity_name() -> pl.Expr:
    param = pl.col("params").str.json_path_match("$.workload")
    single = ((pl.col("source") == SOURCE_ASV) & param.is_not_null()
              & (pl.col("workload") == pl.lit("workload=") + param))
    workload = pl.col("workload").fill_null("")
    pytest_name = pl.concat_str(
        [pl.col("test_case").fill_null(""), pl.lit("::"), pl.col("metric"),
         pl.when(workload == "").then(pl.lit("")).otherwise(pl.lit("[") + workload + "]")])
    return (pl.when(single).then(param)
            .when(pl.col("source") == SOURCE_PYTEST).then(pytest_name)
            .otherwise(workload_names()))


def _versions(lf: pl.LazyFrame, buckets: dict[str, str]) -> pl.DataFrame:
    wanted = pl.lit(False)
    for metric, bucket in buckets.items():
        wanted = wanted | ((pl.col("metric") == metric) & (pl.col("bucket") == bucket))
    rows = (lf.filter(wanted)
            .select("source", "test_case", "workload", "params", "topic", "labels", "machine",
                    "commit", "commit_date", "branch", "run_id", "round", "timestamp",
                    "metric", "bucket", "value", "unit", "status", "item_labels")
            .with_columns(name=_entity_name(), machine=pl.col("machine").fill_null(""),
                          version=pl.coalesce(pl.col("commit"),
                                              pl.lit("run ") + pl.col("run_id"))))
    keys = ["source", "name", "machine", "metric"]
    per_round = (rows.group_by(*keys, "run_id", "round")
                 .agg(pl.col("item_labels").n_unique().alias("items"))
                 .group_by(*keys).agg(pl.col("items").max()))
    value = pl.col("value")
    measured = pl.col("status").is_null() | pl.col("status").is_in(_MEASURED)
    finite = value.filter(value.is_not_null() & value.is_finite() & measured)
    versions = (rows.sort("timestamp", nulls_last=False)
                .group_by(*keys, "version")
                .agg(pl.col("bucket").first(), pl.col("commit").first(),
                     pl.col("branch").drop_nulls().first(),
                     pl.col("commit_date").drop_nulls().first(),
                     pl.col("timestamp").min(), pl.col("run_id").n_unique().alias("runs"),
                     finite.len().alias("n"), finite.mean().alias("mean"),
                     finite.min().alias("min"), finite.max().alias("max"),
                     finite.alias("values"), pl.col("unit").drop_nulls().last(),
                     pl.col("topic").drop_nulls().last(), pl.col("labels").drop_nulls().last(),
                     pl.col("status").filter(pl.col("status") != "ok").unique().sort()
                     .str.join(",").alias("problems"))
                .join(per_round, on=keys, how="left", nulls_equal=True)
                .sort(*keys, "version", nulls_last=False))
    return versions.collect()


def _with_change_points(history: MetricHistory, seed: int) -> MetricHistory:
    line = history.mainline_points
    if len(line) < 2 * MIN_SIZE:
        return history
    means = [p.mean for _, p in line]
    found = change_points(means, min_size=MIN_SIZE, seed=seed)
    return replace(history, change_points=tuple(replace(cp, index=line[cp.index][0])
                                                for cp in found))


def _rank(h: MetricHistory) -> tuple[bool, int, bool, str]:
    """Sort key: the headline metric of a workload is the smallest."""
    try:
        rate = metric_direction(h.metric, h.unit).higher_is_better
    except ValueError:
        rate = False
    if h.metric == HEADLINE_METRIC:
        kind = 0
    elif rate:
        kind = 1
    elif h.metric in _COST_FALLBACKS:
        kind = 2 + _COST_FALLBACKS.index(h.metric)
    elif h.unit in _TIME_UNITS:
        kind = 4
    else:
        kind = 5
    valued = any(p.n and p.mean is not None for p in h.points)
    return (not valued, kind, h.items_per_round > 1, h.metric)


def _labels(text: str | None) -> tuple[str, ...]:
    return tuple(s.strip() for s in (text or "").split(",") if s.strip())


_SCALARS = ("source", "name", "machine", "metric", "version", "bucket", "commit", "branch",
            "commit_date", "timestamp", "runs", "n", "mean", "min", "max", "unit", "problems",
            "items")
SeriesKey = tuple[str, str, str]


_Items = tuple[tuple[str | None, object], ...]


def _placed_points(c: dict[str, list], idx: list[int],  # type: ignore[type-arg]
                   graph: CommitGraph, cache: dict[_Items, list[Placed]]) -> tuple[Point, ...]:
    """The points of rows ``idx`` of one metric of one series, in git order; each point's
    ``previous`` is the nearest version with a value on its line. ``cache``: placements by
    versions (the metrics of a series, and most series, share theirs)."""
    items: _Items = tuple((c["commit"][i], c["timestamp"][i]) for i in idx)
    placed = cache.get(items)
    if placed is None:
        placed = cache[items] = order_series(items, graph)  # type: ignore[arg-type]
    order = sorted(range(len(idx)), key=lambda k: placed[k].rank)
    at = {k: pos for pos, k in enumerate(order)}
    points = []
    for k in order:
        i, p = idx[k], placed[k]
        before = p.previous
        while before is not None and c["mean"][idx[before]] is None:
            before = placed[before].previous
        points.append(Point(
            version=c["version"][i], commit=c["commit"][i], branch=c["branch"][i],
            timestamp=c["timestamp"][i], runs=int(c["runs"][i]), n=int(c["n"][i]),
            mean=c["mean"][i], min=c["min"][i], max=c["max"][i],
            problems=c["problems"][i] or "",
            commit_date=c["commit_date"][i] or graph.date(c["commit"][i]), order=p.order,
            previous=at[before] if before is not None else None, mainline=p.mainline))
    return tuple(points)


def _histories(frame: pl.DataFrame, graph: CommitGraph) -> dict[SeriesKey, list[MetricHistory]]:
    """Per series its metrics' histories (points without their values), headline first."""
    c = {name: frame[name].to_list() for name in _SCALARS}
    rows: dict[SeriesKey, dict[str, list[int]]] = {}
    for i, key in enumerate(zip(c["source"], c["name"], c["machine"], c["metric"],
                                strict=True)):
        rows.setdefault(key[:3], {}).setdefault(key[3], []).append(i)
    out: dict[SeriesKey, list[MetricHistory]] = {}
    cache: dict[_Items, list[Placed]] = {}
    for key, metrics in rows.items():
        histories = []
        for metric, idx in metrics.items():
            points = _placed_points(c, idx, graph, cache)
            unit = next((c["unit"][i] for i in reversed(idx) if c["unit"][i]), "")
            histories.append(MetricHistory(metric=metric, bucket=c["bucket"][idx[0]],
                                           unit=unit, points=points,
                                           items_per_round=int(c["items"][idx[0]] or 1)))
        out[key] = sorted(histories, key=_rank)
    return out


def _values(frame: pl.DataFrame, wanted: set[tuple[SeriesKey, str, str]]
            ) -> dict[tuple[SeriesKey, str, str], tuple[float, ...]]:
    """The values of the (series, metric, version) in ``wanted`` (read for those only)."""
    keys = pl.DataFrame([(*k, metric, version) for k, metric, version in wanted],
                        orient="row", schema=["source", "name", "machine", "metric", "version"])
    rows = frame.join(keys, on=list(keys.columns), nulls_equal=True)
    out = {}
    for source, name, machine, metric, version, vals in zip(
            *(rows[col].to_list() for col in ("source", "name", "machine", "metric",
                                              "version", "values")), strict=True):
        out[((source, name, machine), metric, version)] = tuple(vals)
    return out


def _judged(frame: pl.DataFrame, series: dict[SeriesKey, list[MetricHistory]]
            ) -> dict[SeriesKey, list[MetricHistory]]:
    """The histories with values on the headline's points and every headline step judged,
    and the latest step of each other metric (families: headline steps, and each other
    metric's steps, per pair of versions)."""
    wanted: set[tuple[SeriesKey, str, str]] = set()
    for key, histories in series.items():
        for n, h in enumerate(histories):
            points = h.points if n == 0 else _latest_pair(h)
            wanted |= {(key, h.metric, p.version) for p in points}
    values = _values(frame, wanted) if wanted else {}
    steps: list[Step] = []
    where: list[tuple[SeriesKey, int, int]] = []
    for key, histories in series.items():
        for n, h in enumerate(histories):
            finite = h.finite_points
            candidates = (range(len(h.points)) if n == 0 else
                          [finite[-1][0]] if finite else [])
            for i in candidates:
                p = h.points[i]
                before = h.previous_of(p)
                if before is None or not p.ordered:
                    continue
                steps.append(Step(before.version, p.version,
                                  values.get((key, h.metric, before.version), ()),
                                  values.get((key, h.metric, p.version), ()), h.metric, h.unit,
                                  name=f"{key[1]} {h.metric}",
                                  family="headline" if n == 0 else h.metric))
                where.append((key, n, i))
    verdicts = judge_steps(steps)
    judged: dict[tuple[SeriesKey, int], dict[int, object]] = {}
    for (key, n, i), v in zip(where, verdicts, strict=True):
        judged.setdefault((key, n), {})[i] = v
    out: dict[SeriesKey, list[MetricHistory]] = {}
    for key, histories in series.items():
        new = []
        for n, h in enumerate(histories):
            mine = judged.get((key, n), {})
            if n == 0:
                points = tuple(replace(p, step=mine.get(i),  # type: ignore[arg-type]
                                       values=values.get((key, h.metric, p.version), ()))
                               for i, p in enumerate(h.points))
            else:  # only the latest step of another metric is judged
                listed = list(h.points)
                for i, v in mine.items():
                    listed[i] = replace(listed[i], step=v)  # type: ignore[arg-type]
                points = tuple(listed)
            new.append(replace(h, points=points))
        out[key] = new
    return out


def _latest_pair(h: MetricHistory) -> list[Point]:
    last = h.latest
    before = h.previous_of(last) if last is not None else None
    return [p for p in (before, last) if p is not None]


def version_ranks(workloads: list[Workload], graph: CommitGraph) -> dict[str, int]:
    """Every headline version of known order -> its place among all of them in git order
    (0 the oldest): what "newest" and "recent" mean across workloads."""
    first: dict[str, tuple[str | None, object]] = {}
    for w in workloads:
        for _, p in w.headline.finite_points:
            if p.version not in first:
                first[p.version] = (p.commit, p.timestamp)
            elif p.timestamp is not None:
                old = first[p.version][1]
                if old is None or p.timestamp < old:  # type: ignore[operator]
                    first[p.version] = (p.commit, p.timestamp)
    versions = list(first)
    placed = order_series([first[v] for v in versions], graph)  # type: ignore[misc]
    return {v: p.rank for v, p in zip(versions, placed, strict=True)
            if p.order != ORDER_UNKNOWN}


def load_workloads(store: Path | str, *, seed: int = 0, repo: Path | str | None = None,
                   graph: CommitGraph | None = None) -> list[Workload]:
    """Every workload in the store with its metrics' histories in git order (``repo``'s
    history, else what ingest recorded; ``graph`` when already loaded), sorted by topic
    (None last), name, source and machine. Empty when the store has no data. Raises
    :class:`reports.store.GitError` when ``repo`` cannot be read."""
    lf = scan_store(store).filter(core_engine())
    buckets = choose_buckets(lf)
    if not buckets:
        return []
    frame = _versions(lf, buckets)
    if frame.is_empty():
        return []
    if graph is None:
        graph = load_graph(store, repo)
    series = _judged(frame, _histories(frame, graph))
    headlines = {k: hs[0] for k, hs in series.items()}
    uncommon_names = {name for name, labels in
                      frame.select("name", "labels").unique().iter_rows()
                      if UNCOMMON_LABEL in _labels(labels)}
    topic_of = dict(frame.filter(pl.col("topic").is_not_null()).sort("timestamp")
                    .group_by("name").agg(pl.col("topic").last()).iter_rows())
    meta = {(s, n, m): (labels, topic) for s, n, m, labels, topic in
            frame.sort("timestamp", nulls_last=False)
            .group_by("source", "name", "machine")
            .agg(pl.col("labels").drop_nulls().last(), pl.col("topic").drop_nulls().last())
            .iter_rows()}
    workloads = []
    for key, histories in series.items():
        source, name, machine = key
        labels_text, topic = meta[key]
        labels = _labels(labels_text)
        rest = histories[1:]
        workloads.append(Workload(
            source=source, name=name, machine=machine, topic=topic or topic_of.get(name),
            labels=labels, uncommon=UNCOMMON_LABEL in labels or name in uncommon_names,
            page=page_name(source, name, machine),
            headline=_with_change_points(headlines[key], seed),
            others=tuple(h for h in rest if h.items_per_round <= 1),
            not_shown=tuple(h.metric for h in rest if h.items_per_round > 1)))
    workloads.sort(key=lambda w: (w.topic is None, w.topic or "", w.name, w.source, w.machine))
    return workloads
