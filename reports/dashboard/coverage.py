"""Coverage as a figure of the harness: per commit with a coverage map in the store
(``schedperf coverage``, docs/coverage.md), the share of ``scheduler_core``'s statements
outside error-raising branches that the catalog's workloads execute, and that the
``compare`` subset executes; for the newest commit, the modules that lag.

* the map of a commit is its full, clean map (``read_map``: scope ``all``, not made from a
  dirty working tree); a commit with only a dirty or a restricted (``--file``) map is
  listed apart with the reason, as is a map that cannot be read;
* the catalog is the map's workloads that ran, without its generated scenarios (the map's
  own selection: ``--label`` when it was made, shown per commit); the compare set those of
  them labelled ``compare``; import-time lines count as covered (coverage_figures);
* only files under ``scheduler_core/`` count (a map may also hold out-of-tree plugin
  packages);
* commits are in the dashboard's git order (:mod:`reports.store.order`: ``--repo``'s
  history, else the date and parents recorded at ingest or in the map; maps of unknown
  order last, never "newest"); the newest is the last commit of known order.

Lagging modules of the newest commit: the lowest compare-set coverage (modules with at least
:data:`MIN_STATEMENTS` statements outside error branches, lowest share first, then most
statements uncovered), and the biggest gap between the catalog and the compare set (most
statements the catalog executes and compare does not, then the gap in points).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from reports.store.coverage import (
    CoverageMap,
    coverage_figures,
    list_maps,
    read_map,
)
from reports.store.order import ORDER_UNKNOWN, CommitGraph, load_graph, order_series
from reports.store.problems import StoreError
from reports.store.schema import CommitInfo

__all__ = ["COMPARE_LABEL", "CORE_PREFIX", "LAGGING", "MIN_STATEMENTS", "CoverageHistory",
           "CoveragePoint", "ModuleLag", "load_coverage", "map_commit_info"]

COMPARE_LABEL = "compare"  # the label of the workloads `schedperf compare` measures
CORE_PREFIX = "scheduler_core/"
MIN_STATEMENTS = 10  # a module needs this many statements outside error branches to lag
LAGGING = 10  # modules listed per table


@dataclass(frozen=True)
class CoveragePoint:
    """One commit's figures (percent of scheduler_core's statements outside error-raising
    branches; ``*_all``: of all its statements)."""

    commit: str
    created: str  # when the map was made (ISO, UTC)
    order: str  # how its place in git order was decided (reports.store.order)
    commit_date: datetime | None
    label_filter: str | None  # the map's selection (--label)
    outside_statements: int
    catalog: float | None
    compare: float | None
    catalog_all: float | None
    compare_all: float | None
    catalog_workloads: int  # catalog workloads that ran
    compare_workloads: int
    not_run: int  # catalog workloads that did not run to their end (their lines do not count)
    generated: int  # generated scenarios in the map (never counted here)

    @property
    def gap(self) -> float | None:
        if self.catalog is None or self.compare is None:
            return None
        return self.catalog - self.compare


@dataclass(frozen=True)
class ModuleLag:
    """A scheduler_core module of the newest commit: statements outside error branches and
    how many of them the catalog and the compare set execute."""

    module: str
    file: str
    statements: int
    catalog_covered: int
    compare_covered: int

    @property
    def catalog(self) -> float:
        return 100.0 * self.catalog_covered / self.statements

    @property
    def compare(self) -> float:
        return 100.0 * self.compare_covered / self.statements

    @property
    def gap_statements(self) -> int:
        return self.catalog_covered - self.compare_covered


@dataclass(frozen=True)
class CoverageHistory:
    """Every shown commit in git order (oldest first, unknown order last), the maps not
    shown (commit, why), and the newest commit's lagging modules."""

    points: tuple[CoveragePoint, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    lowest: tuple[ModuleLag, ...] = ()
    gaps: tuple[ModuleLag, ...] = ()
    error: str | None = None  # the maps could not be listed at all
    modules: tuple[ModuleLag, ...] = field(default=(), repr=False)  # newest, every module

    @property
    def newest(self) -> CoveragePoint | None:
        known = [p for p in self.points if p.order != ORDER_UNKNOWN]
        return known[-1] if known else None


def _parse_time(text: Any) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def map_commit_info(cmap: CoverageMap) -> CommitInfo:
    """(committer date, parents) the map recorded of its commit (None where it did not)."""
    when = _parse_time(cmap.meta["commit_date"]) if "commit_date" in cmap.meta else None
    parents = cmap.meta.get("commit_parents")
    return when, tuple(str(p) for p in parents) if isinstance(parents, list) else None


def _core(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("file").str.starts_with(CORE_PREFIX))


def _percent(part: int, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


def _modules(cmap: CoverageMap) -> tuple[list[ModuleLag], dict[str, Any]]:
    """Per scheduler_core module the catalog's and compare's figures; and the totals."""
    catalog = coverage_figures(cmap)
    compare = coverage_figures(cmap, label_filter=COMPARE_LABEL)
    a, b = _core(catalog.per_module), _core(compare.per_module)
    joined = a.join(b.select("file", pl.col("covered").alias("c_covered"),
                             pl.col("outside_covered").alias("c_outside")), on="file")
    lags = [ModuleLag(r["module"], r["file"], r["outside_statements"], r["outside_covered"],
                      r["c_outside"]) for r in joined.sort("file").iter_rows(named=True)]
    sums = {c: int(joined[c].sum()) for c in ("statements", "covered", "outside_statements",
                                              "outside_covered", "c_covered", "c_outside")}
    totals = {"outside_statements": sums["outside_statements"],
              "catalog": _percent(sums["outside_covered"], sums["outside_statements"]),
              "compare": _percent(sums["c_outside"], sums["outside_statements"]),
              "catalog_all": _percent(sums["covered"], sums["statements"]),
              "compare_all": _percent(sums["c_covered"], sums["statements"]),
              "catalog_workloads": len(catalog.workloads),
              "compare_workloads": len(compare.workloads)}
    return lags, totals


def _point(cmap: CoverageMap, totals: Mapping[str, Any], order: str,
           date: datetime | None) -> CoveragePoint:
    return CoveragePoint(
        commit=cmap.commit, created=cmap.created, order=order, commit_date=date,
        label_filter=cmap.meta.get("label_filter"), **totals,
        not_run=len([n for n in cmap.failures() if n not in cmap.origins()]),
        generated=len(cmap.generated))


def _why_not(infos: Sequence[Any]) -> str:
    dirty = [m for m in infos if m.dirty and m.include is None]
    restricted = [m for m in infos if m.include is not None]
    parts = []
    if dirty:
        parts.append("only a map of a dirty working tree (not the commit's code exactly)")
    if restricted:
        files = max(len(m.include) for m in restricted)
        parts.append(f"only a map restricted to {files} file{'s' * (files != 1)} (--file)")
    return "; ".join(parts) or "no full map"


def _read(store: Path, commits: Sequence[str], by_commit: Mapping[str, list[Any]],
          ) -> tuple[dict[str, CoverageMap], list[tuple[str, str]]]:
    maps: dict[str, CoverageMap] = {}
    skipped: list[tuple[str, str]] = []
    for commit in commits:
        try:
            cmap = read_map(store, commit)
        except StoreError as exc:
            skipped.append((commit, f"cannot be read: {exc}"))
            continue
        if cmap is None:
            skipped.append((commit, _why_not(by_commit[commit])))
        else:
            maps[commit] = cmap
    return maps, skipped


def load_coverage(store: Path | str, *, repo: Path | str | None = None,
                  graph: CommitGraph | None = None) -> CoverageHistory:
    """The coverage figures of every commit with a full, clean map in ``store``, in git
    order (``repo``'s history when given; ``graph``: for tests, the commit graph to use as
    it is). Raises :class:`reports.store.gitinfo.GitError` when ``repo`` cannot be read."""
    store = Path(store)
    try:
        infos = list_maps(store)
    except StoreError as exc:
        return CoverageHistory(error=str(exc))
    by_commit: dict[str, list[Any]] = {}
    for info in infos:
        by_commit.setdefault(info.commit, []).append(info)
    maps, skipped = _read(store, sorted(by_commit), by_commit)
    if not maps:
        return CoverageHistory(skipped=tuple(skipped))
    commits = sorted(maps)
    if graph is None:
        graph = load_graph(store, repo, extra={c: map_commit_info(maps[c]) for c in commits})
    placed = order_series([(c, _parse_time(maps[c].created)) for c in commits], graph)
    ranked = sorted(range(len(commits)), key=lambda i: placed[i].rank)
    points, modules = [], {}
    for i in ranked:
        lags, totals = _modules(maps[commits[i]])
        points.append(_point(maps[commits[i]], totals, placed[i].order,
                             graph.date(commits[i])))
        modules[commits[i]] = lags
    history = CoverageHistory(points=tuple(points), skipped=tuple(skipped))
    newest = history.newest
    if newest is None:
        return history
    every = modules[newest.commit]
    eligible = [m for m in every if m.statements >= MIN_STATEMENTS]
    lowest = sorted(eligible, key=lambda m: (m.compare, -(m.statements - m.compare_covered),
                                             m.module))
    gaps = sorted((m for m in eligible if m.gap_statements > 0),
                  key=lambda m: (-m.gap_statements, -(m.catalog - m.compare), m.module))
    return CoverageHistory(points=tuple(points), skipped=tuple(skipped),
                           lowest=tuple(lowest[:LAGGING]), gaps=tuple(gaps[:LAGGING]),
                           modules=tuple(every))
