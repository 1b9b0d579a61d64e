"""Per-workload scheduling metrics from the built-in catalog, and peak memory of a large workload.

``track_throughput`` (pods/s: the SchedulingThroughput Average of ``run_workload``) and
``track_attempts_per_pod`` (scheduling attempts / scheduled pods) are parameterised by the
workload's full name: the catalog workloads labelled ``short``, or ``performance`` with
``SCHEDPERF_ASV_FULL=1``. Both read one shared ``setup_cache`` (asv runs it once, in its own
process, and hands the pickled result to every benchmark using it), so each workload runs once
per commit however many metrics are tracked.

A workload that reports no throughput (no collection window) or is unsupported is skipped
(``NotImplementedError`` in setup: "n/a" in asv); one that failed or timed out fails its
benchmarks with the runner's reason.
"""

from __future__ import annotations

from typing import Any

from bench.asv_bench import catalog as _catalog

_SELECTION = _catalog.discover()
_PARAMS = _catalog.param_names(_SELECTION)
_FAILING = ("failed", "timeout")

# the representative large workload for peak memory (SchedulingBasic: 5000 nodes, 1000 init
# pods, 10000 measured pods)
PEAKMEM_WORKLOAD = "SchedulingBasic/5000Nodes_10000Pods"


def _run_catalog() -> dict[str, dict[str, Any]]:
    return _catalog.run_selected(_SELECTION)


# The whole selection runs inside this one call: its timeout covers all of it
# (run_workload stops a single workload after catalog.WORKLOAD_TIMEOUT).
_run_catalog.timeout = 7200.0 if _catalog.full_mode() else 1800.0  # type: ignore[attr-defined]


def _summary(cache: dict[str, dict[str, Any]], name: str, metric: str) -> float:
    if name == _catalog.PLACEHOLDER:
        raise NotImplementedError(f"no catalog workload matches {_catalog.label_filter()!r} "
                                  f"in {_catalog.catalog_dir()}")
    summary = cache.get(name)
    if summary is None:  # discovered on another commit whose catalog has this workload
        raise NotImplementedError(f"{name} is not in this commit's catalog")
    if summary["status"] in _FAILING:
        raise RuntimeError(f"{name}: {summary['status']}: {summary['reason']}")
    value = summary[metric]
    if value is None:
        why = summary["reason"] or (
            "no measured pod was scheduled" if metric == "throughput" else "no pod scheduled")
        raise NotImplementedError(f"{name}: no {metric} ({summary['status']}: {why})")
    return float(value)


class WorkloadThroughput:
    """SchedulingThroughput Average (pods/s) per catalog workload."""

    params = _PARAMS
    param_names = ["workload"]
    setup_cache = staticmethod(_run_catalog)
    timeout = 60.0  # reading the cache only; the workloads run in setup_cache

    def setup(self, cache: dict[str, dict[str, Any]], name: str) -> None:
        self.value = _summary(cache, name, "throughput")

    def track_throughput(self, cache: dict[str, dict[str, Any]], name: str) -> float:
        return self.value

    track_throughput.unit = "pods/s"  # type: ignore[attr-defined]


class WorkloadAttempts:
    """Scheduling attempts per scheduled pod (1.0 = every pod placed at its first attempt)."""

    params = _PARAMS
    param_names = ["workload"]
    setup_cache = staticmethod(_run_catalog)
    timeout = 60.0

    def setup(self, cache: dict[str, dict[str, Any]], name: str) -> None:
        self.value = _summary(cache, name, "attempts_per_pod")

    def track_attempts_per_pod(self, cache: dict[str, dict[str, Any]], name: str) -> float:
        return self.value

    track_attempts_per_pod.unit = "attempts/pod"  # type: ignore[attr-defined]


class LargeWorkloadMemory:
    """Peak RSS of the process running :data:`PEAKMEM_WORKLOAD` (imports and YAML included,
    as asv's peakmem counts the whole process; the workload dominates)."""

    timeout = 600.0

    def setup(self) -> None:
        found = [(tc, w) for tc, w in _catalog.discover(labels="").values()
                 if w.full_name == PEAKMEM_WORKLOAD]
        if not found:
            raise NotImplementedError(f"{PEAKMEM_WORKLOAD} is not in {_catalog.catalog_dir()}")
        self.test_case, self.workload = found[0]

    def peakmem_scheduling_basic(self) -> None:
        from workloads.runner import run_workload

        result = run_workload(self.test_case, self.workload, seed=0)
        if result.status in _FAILING:
            raise RuntimeError(f"{PEAKMEM_WORKLOAD}: {result.status}: {result.reason}")
