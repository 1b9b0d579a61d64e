"""Compute one coverage map with several coverage processes at once: the selection is split
into shards (round robin, in selection order), each shard is mapped by its own
:func:`bench.coverage.collect.collect_map` child, and the shard maps are merged into the map
of the whole selection, as one child would have made it.

Every child imports every module of the mapped packages before its first workload, so the
import-time lines are the same in each shard (merged without duplicates); a workload's lines
and arcs come from the one child that ran it. The merged map lists its workloads in selection
order and records ``processes`` (how many children made it) in its meta.

A request for generated scenarios (``MapRequest.generated``) is mapped by one process.
Several processes help the wall time only where there are free cores: each child pays the
imports once more (a second or two) and competes for the same CPU.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from bench.coverage.collect import MapRequest, MapResult, collect_map
from bench.measure.children import ChildProcesses, map_stoppable
from bench.selection import load_test_cases, select_workloads
from reports.store.coverage import CoverageMap

__all__ = ["collect_sharded", "merge_maps", "shard_names"]


def shard_names(names: Sequence[str], shards: int) -> list[list[str]]:
    """``names`` dealt round robin into at most ``shards`` non-empty lists."""
    count = max(1, min(shards, len(names)))
    return [list(names[i::count]) for i in range(count)]


def _exactly(names: Sequence[str]) -> str:
    """A name regex (``re.search`` on ``<test case>/<workload>``) matching exactly ``names``."""
    return "^(?:" + "|".join(re.escape(n) for n in names) + ")$"


def merge_maps(parts: Sequence[CoverageMap], order: Sequence[str],
               meta: dict[str, Any] | None = None) -> CoverageMap:
    """One map of the shard maps ``parts`` (same commit, packages and files): their lines
    (import-time lines once), their workloads in ``order``, their statements once."""
    first = parts[0]
    for part in parts[1:]:
        if (part.commit, part.packages, part.include) != (first.commit, first.packages,
                                                           first.include):
            raise ValueError("the shard maps are of different commits, packages or files")
    rank = {name: i for i, name in enumerate(order)}
    workloads = (pl.concat([p.workloads for p in parts])
                 .with_columns(pl.col("workload").replace_strict(rank, default=len(rank),
                                                                 return_dtype=pl.Int64)
                               .alias("_rank"))
                 .sort("_rank", maintain_order=True).drop("_rank"))
    lines = pl.concat([p.lines for p in parts]).unique(maintain_order=True)
    statements = pl.concat([p.statements for p in parts]).unique(maintain_order=True)
    return CoverageMap(commit=first.commit, dirty=first.dirty, lines=lines, workloads=workloads,
                       statements=statements, packages=first.packages, include=first.include,
                       meta={**first.meta, **(meta or {})})


def collect_sharded(request: MapRequest, *, commit: str, dirty: bool,
                    core_root: Path | None = None, jobs: int = 1, progress: bool = False,
                    children: ChildProcesses | None = None,
                    collect: Callable[..., MapResult] = collect_map) -> MapResult:
    """:func:`collect_map` of ``request`` with up to ``jobs`` coverage processes at once (see
    the module docstring); one process when ``jobs`` is 1 or the selection has one workload.
    Interrupted or failing, every child's process group is killed before it returns."""
    started = time.perf_counter()
    names = [w.full_name for _, w in select_workloads(load_test_cases(request.configs),
                                                      request.label_filter,
                                                      request.name_regex)]
    children = children or ChildProcesses()
    # generated scenarios are prepared by one child for the whole map: not sharded
    shards = shard_names(names, 1 if request.generated else jobs)
    if len(shards) == 1:
        result = collect(request, commit=commit, dirty=dirty, core_root=core_root,
                         progress=progress, children=children)
        cmap = replace(result.cmap, meta={**result.cmap.meta, "processes": 1})
        return replace(result, cmap=cmap)

    def one(shard: list[str]) -> MapResult:
        part = replace(request, name_regex=_exactly(shard))
        return collect(part, commit=commit, dirty=dirty, core_root=core_root,
                       progress=progress, children=children)

    results = map_stoppable(one, shards, jobs=len(shards), children=children)
    cmap = merge_maps([r.cmap for r in results], names,
                      meta={"name_regex": request.name_regex, "processes": len(shards)})
    unparsed: dict[str, str] = {}
    import_errors: list[dict[str, str]] = []
    for r in results:
        unparsed.update(r.unparsed)
        import_errors += [e for e in r.import_errors if e not in import_errors]
    return MapResult(cmap, import_errors, unparsed, time.perf_counter() - started)
