"""Upstream-style histogram summaries from raw durations.

kube-scheduler exports Prometheus histograms; scheduler_perf reports Perc50/90/95/99 by
Prometheus bucket interpolation (``histogram_quantile``) and Average = sum / count, in ms.
schedperf keeps every raw duration, so it can report both: the upstream-comparable
bucket-interpolated quantiles (default) and exact ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["BUCKETS", "exponential_buckets", "histogram_summary"]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


# bucket upper bounds of kube-scheduler's metrics (pkg/scheduler/metrics/metrics.go)
BUCKETS: dict[str, tuple[float, ...]] = {
    "scheduler_framework_extension_point_duration_seconds": exponential_buckets(0.0001, 2, 12),
    "scheduler_scheduling_attempt_duration_seconds": exponential_buckets(0.001, 2, 15),
    "scheduler_plugin_execution_duration_seconds": exponential_buckets(0.00001, 1.5, 20),
    "scheduler_pod_scheduling_duration_seconds": exponential_buckets(0.01, 2, 20),
}


def _bucket_quantile(q: float, bounds: Sequence[float], counts: np.ndarray) -> float:
    """Prometheus ``histogram_quantile`` over cumulative bucket counts (+Inf last)."""
    total = counts[-1]
    if total == 0:
        return math.nan
    rank = q * total
    i = int(np.searchsorted(counts, rank, side="left"))
    if i >= len(bounds):  # falls in the +Inf bucket: return the highest finite bound
        return bounds[-1]
    lower = 0.0 if i == 0 else bounds[i - 1]
    below = 0.0 if i == 0 else counts[i - 1]
    in_bucket = counts[i] - below
    if in_bucket == 0:
        return bounds[i]
    return lower + (bounds[i] - lower) * (rank - below) / in_bucket


def histogram_summary(metric: str, seconds: Sequence[float], *, exact: bool = False
                      ) -> dict[str, float]:
    """Perc50/90/95/99 and Average in milliseconds; empty when there are no samples."""
    values = np.asarray(seconds, dtype=np.float64)
    if values.size == 0:
        return {}
    out: dict[str, float] = {}
    bounds = BUCKETS.get(metric)
    if exact or bounds is None:
        for p in (50, 90, 95, 99):
            out[f"Perc{p}"] = float(np.quantile(values, p / 100)) * 1000
    else:
        edges = np.asarray(bounds)
        cumulative = np.array([np.count_nonzero(values <= b) for b in edges] + [values.size],
                              dtype=np.float64)
        for p in (50, 90, 95, 99):
            out[f"Perc{p}"] = _bucket_quantile(p / 100, bounds, cumulative) * 1000
    out["Average"] = float(values.mean()) * 1000
    return out
