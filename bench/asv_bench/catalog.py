"""Which catalog workloads the asv suite runs, and running them (shared by ``scheduling``).

Discovery runs at import (asv needs the parameter list then), so it only parses the YAML
(``workloads.config``); the runner is imported by :func:`run_selected`. Discovery never fails:
a missing catalog, or a config file that does not load (the catalog being edited), leaves a
placeholder parameter (:data:`PLACEHOLDER`) or drops that file with a warning on stderr.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import workloads
from workloads.catalog.selection import matches
from workloads.config import TestCase, Workload, config_files, load_configs

__all__ = [
    "CATALOG_ENV",
    "DEFAULT_LABEL_FILTER",
    "FULL_ENV",
    "FULL_LABEL_FILTER",
    "PLACEHOLDER",
    "WORKLOAD_TIMEOUT",
    "catalog_dir",
    "discover",
    "full_mode",
    "label_filter",
    "param_names",
    "run_selected",
    "summarize",
]

FULL_ENV = "SCHEDPERF_ASV_FULL"  # "1": performance-labelled workloads, 15000-node params
CATALOG_ENV = "SCHEDPERF_ASV_CATALOG"  # another catalog folder or config file
DEFAULT_LABEL_FILTER = "short"
FULL_LABEL_FILTER = "performance"
PLACEHOLDER = "(no catalog workloads)"
THROUGHPUT_METRIC = "SchedulingThroughput"
# per workload wall-clock limit inside setup_cache (run_workload's own timeout)
WORKLOAD_TIMEOUT = {False: 300.0, True: 1800.0}


def full_mode() -> bool:
    return os.environ.get(FULL_ENV, "") == "1"


def label_filter() -> str:
    return FULL_LABEL_FILTER if full_mode() else DEFAULT_LABEL_FILTER


def catalog_dir() -> Path:
    """The built-in catalog (``bench.selection.CATALOG_DIR``), or ``$SCHEDPERF_ASV_CATALOG``."""
    override = os.environ.get(CATALOG_ENV)
    if override:
        return Path(override).resolve()
    return Path(workloads.__file__).resolve().parent / "configs"


def _warn(message: str) -> None:
    print(f"schedperf asv: {message}", file=sys.stderr)


def discover(path: Path | None = None, labels: str | None = None
             ) -> dict[str, tuple[TestCase, Workload]]:
    """Parameter name -> (test case, workload) for the workloads whose labels pass the filter,
    in catalog order. The name is the workload's full name; a full name found in two topics
    gets `` [topic]`` appended (for every copy) so that parameter values stay unique."""
    path = catalog_dir() if path is None else path
    labels = label_filter() if labels is None else labels
    if not path.exists():
        return {}
    picked: list[tuple[TestCase, Workload]] = []
    for file in config_files(path):
        try:
            test_cases = load_configs(file)
        except Exception as exc:  # discovery must not fail: asv would lose the whole suite
            _warn(f"skipping {file}: {exc}")
            continue
        picked.extend((tc, w) for tc in test_cases for w in tc.workloads
                      if matches(labels, w.labels))
    counts: dict[str, int] = {}
    for _, w in picked:
        counts[w.full_name] = counts.get(w.full_name, 0) + 1
    out: dict[str, tuple[TestCase, Workload]] = {}
    for tc, w in picked:
        name = w.full_name if counts[w.full_name] == 1 else f"{w.full_name} [{tc.topic}]"
        if name in out:  # the same workload twice in one topic: keep the first
            _warn(f"duplicate workload {name!r} ignored")
            continue
        out[name] = (tc, w)
    return out


def param_names(selection: dict[str, Any]) -> list[str]:
    """asv parameter values: never empty (asv needs at least one)."""
    return list(selection) or [PLACEHOLDER]


def summarize(result: Any) -> dict[str, Any]:
    """What the track_ benchmarks report for one WorkloadResult (picklable, small)."""
    values = [d.data["Average"] for d in result.data_items
              if d.labels.get("Metric") == THROUGHPUT_METRIC
              and isinstance(d.data.get("Average"), (int, float))
              and math.isfinite(d.data["Average"])]
    scheduled = result.scheduled_pods
    return {
        "status": result.status,
        "reason": result.reason,
        "throughput": statistics.fmean(values) if values else None,
        "attempts_per_pod": result.attempts / scheduled if scheduled else None,
        "scheduled_pods": scheduled,
        "attempts": result.attempts,
        "wall_seconds": result.wall_seconds,
    }


def run_selected(selection: dict[str, tuple[TestCase, Workload]], *, seed: int = 0,
                 timeout: float | None = None) -> dict[str, dict[str, Any]]:
    """Run every selected workload once (virtual clock, fixed seed); name -> summary."""
    from workloads.runner import run_workload

    limit = WORKLOAD_TIMEOUT[full_mode()] if timeout is None else timeout
    out: dict[str, dict[str, Any]] = {}
    for name, (tc, w) in selection.items():
        gc.collect()  # start each workload from a collected heap
        out[name] = summarize(run_workload(tc, w, seed=seed, timeout=limit))
    return out
