"""Parquet files of a run (pyarrow, written atomically); columns in docs/results-schema.md.

    results.parquet     tidy: one row per (workload, round, metric, bucket) + environment
    placements.parquet  one row per pod: where it went, attempts, why not scheduled
    decisions.parquet   one row per evaluated (attempt, node, plugin, extension point),
                        only when decisions were recorded
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.output.dataitems import atomic_write_bytes
from workloads.result import ENGINE_CORE, STATUS_OK, Decision, WorkloadResult

__all__ = [
    "DECISIONS_SCHEMA",
    "PLACEMENTS_SCHEMA",
    "RESULTS_SCHEMA",
    "RESULTS_SCHEMA_VERSION",
    "decision_rows",
    "placement_rows",
    "result_rows",
    "write_decisions_parquet",
    "write_placements_parquet",
    "write_results_parquet",
]

RESULTS_SCHEMA_VERSION = 3

_ENV_FIELDS: list[tuple[str, pa.DataType]] = [
    ("cpu_model", pa.string()),
    ("cpu_count", pa.int64()),
    ("numpy_version", pa.string()),
    ("blas", pa.string()),
    ("omp_num_threads", pa.string()),
    ("openblas_num_threads", pa.string()),
    ("polars_max_threads", pa.string()),
    ("load_average_1m", pa.float64()),
    ("clock", pa.string()),
    ("seed", pa.int64()),
    ("scheduler_core_path", pa.string()),
    # schema_version 2
    ("scheduler_core_origin", pa.string()),
    ("scheduler_core_dirty", pa.bool_()),
    ("scheduler_core_warning", pa.string()),
]
# schema_version 3: which scheduler ran the workload (per workload run, not per run)
_ENGINE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("engine", pa.string()),
    ("engine_gomaxprocs", pa.int64()),
    ("kubernetes_version", pa.string()),
    ("reference_sha256", pa.string()),
]

RESULTS_SCHEMA = pa.schema([
    ("schema_version", pa.int32()),
    ("run_id", pa.string()),
    ("round", pa.int32()),
    ("timestamp", pa.timestamp("us", tz="UTC")),
    ("commit", pa.string()),
    ("branch", pa.string()),
    ("machine", pa.string()),
    ("python", pa.string()),
    ("test_case", pa.string()),
    ("workload", pa.string()),
    ("topic", pa.string()),
    ("params", pa.string()),
    ("labels", pa.string()),
    ("status", pa.string()),
    ("status_reason", pa.string()),
    ("metric", pa.string()),
    ("bucket", pa.string()),
    ("value", pa.float64()),
    ("unit", pa.string()),
    ("item_labels", pa.string()),
    *_ENV_FIELDS,
    *_ENGINE_FIELDS,
])

PLACEMENTS_SCHEMA = pa.schema([
    ("run_id", pa.string()),
    ("round", pa.int32()),
    ("test_case", pa.string()),
    ("workload", pa.string()),
    ("namespace", pa.string()),
    ("pod", pa.string()),
    ("node", pa.string()),
    ("attempts", pa.int64()),
    ("reason", pa.string()),
])

_DECISION_TYPES: dict[str, pa.DataType] = {
    "namespace": pa.string(), "pod": pa.string(), "attempt": pa.int64(), "node": pa.string(),
    "extension_point": pa.string(), "plugin": pa.string(), "code": pa.string(),
    "reason": pa.string(), "score": pa.int64(), "normalized_score": pa.int64(),
    "weighted_score": pa.int64(), "selected": pa.bool_(),
}
DECISIONS_SCHEMA = pa.schema([
    ("run_id", pa.string()),
    ("round", pa.int32()),
    ("test_case", pa.string()),
    ("workload", pa.string()),
    *[(f.name, _DECISION_TYPES[f.name]) for f in fields(Decision)],
])

# extra per-workload metrics: (metric, unit, value getter)
_EXTRA_METRICS: list[tuple[str, str, Any]] = [
    ("attempts_per_scheduled_pod", "attempts/pod",
     # the kube-scheduler engine does not count attempts: null
     lambda r: r.attempts / r.scheduled_pods
     if r.scheduled_pods and r.engine == ENGINE_CORE else None),
    ("cpu_seconds", "s", lambda r: r.cpu_seconds),
    ("peak_rss_bytes", "bytes", lambda r: r.peak_rss_bytes),
    ("wall_seconds", "s", lambda r: r.wall_seconds),
    ("harness_seconds", "s", lambda r: r.harness_seconds),
    ("unschedulable_pods", "pods", lambda r: r.unschedulable_pods),
    ("ignored_pods", "pods", lambda r: r.ignored_pods),
]
STATUS_METRIC = "workload_status"
# the HTTP extenders' counts and times (workloads.runner.extenders), one row each
EXTENDER_METRIC_PREFIX = "extender["

# A run is a sequence of (round, result) or plain results (round 1).
Results = Iterable[WorkloadResult | tuple[int, WorkloadResult]]


def _rounds(results: Results) -> list[tuple[int, WorkloadResult]]:
    return [r if isinstance(r, tuple) else (1, r) for r in results]


def _write_table(path: Path | str, rows: Sequence[Mapping[str, Any]],
                 schema: pa.Schema) -> Path:
    table = pa.Table.from_pylist(list(rows), schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return atomic_write_bytes(path, buf.getvalue())


def _engine_columns(r: WorkloadResult) -> dict[str, Any]:
    cols: dict[str, Any] = {"engine": r.engine, "engine_gomaxprocs": r.engine_gomaxprocs,
                            "kubernetes_version": r.kubernetes_version,
                            "reference_sha256": r.reference_sha256}
    if r.engine != ENGINE_CORE:
        cols["clock"] = r.clock  # the kube-scheduler engine runs on the wall clock
    return cols


def result_rows(results: Results, env: Mapping[str, Any], *, run_id: str,
                timestamp: datetime | None = None) -> list[dict[str, Any]]:
    """The tidy rows of ``results.parquet``: per workload and round, one row per DataItem
    bucket, one per extra metric (bucket ``Value``) and one ``workload_status`` row (bucket =
    the status, value 1.0 when ok else 0.0), each with the environment columns."""
    timestamp = timestamp or datetime.now(UTC)
    env_cols = {name: env.get(name) for name, _ in _ENV_FIELDS}
    rows: list[dict[str, Any]] = []
    for round_no, r in _rounds(results):
        base = {
            "schema_version": RESULTS_SCHEMA_VERSION, "run_id": run_id, "round": round_no,
            "timestamp": timestamp, "commit": env.get("commit"), "branch": env.get("branch"),
            "machine": env.get("machine"), "python": env.get("python"),
            "test_case": r.test_case, "workload": r.workload, "topic": r.topic,
            "params": json.dumps(r.params, sort_keys=True, default=str),
            "labels": ",".join(r.labels), "status": r.status, "status_reason": r.reason,
            **env_cols, **_engine_columns(r),
        }
        for item in r.data_items:
            labels = {k: v for k, v in item.labels.items() if k != "Metric"}
            item_labels = json.dumps(labels, sort_keys=True)
            for bucket, value in item.data.items():
                rows.append({**base, "metric": item.labels.get("Metric", ""), "bucket": bucket,
                             "value": float(value), "unit": item.unit,
                             "item_labels": item_labels})
        for metric, unit, get in _EXTRA_METRICS:
            value = get(r)
            rows.append({**base, "metric": metric, "bucket": "Value",
                         "value": None if value is None else float(value), "unit": unit,
                         "item_labels": None})
        for key, value in sorted(r.extra.items()):
            if key.startswith(EXTENDER_METRIC_PREFIX):  # per extender and verb
                unit = "s" if key.endswith("seconds") else "calls"
                rows.append({**base, "metric": key, "bucket": "Value", "value": float(value),
                             "unit": unit, "item_labels": None})
        rows.append({**base, "metric": STATUS_METRIC, "bucket": r.status,
                     "value": 1.0 if r.status == STATUS_OK else 0.0, "unit": "",
                     "item_labels": None})
    return rows


def write_results_parquet(path: Path | str, results: Results, env: Mapping[str, Any], *,
                          run_id: str, timestamp: datetime | None = None) -> Path:
    return _write_table(path, result_rows(results, env, run_id=run_id, timestamp=timestamp),
                        RESULTS_SCHEMA)


def placement_rows(results: Results, *, run_id: str = "") -> list[dict[str, Any]]:
    rows = []
    for round_no, r in _rounds(results):
        for p in r.placements:
            rows.append({"run_id": run_id, "round": round_no, "test_case": r.test_case,
                         "workload": r.workload, "namespace": p.namespace, "pod": p.pod,
                         "node": p.node, "attempts": p.attempts, "reason": p.reason})
    return rows


def write_placements_parquet(path: Path | str, results: Results, *, run_id: str = "") -> Path:
    return _write_table(path, placement_rows(results, run_id=run_id), PLACEMENTS_SCHEMA)


def decision_rows(results: Results, *, run_id: str = "") -> list[dict[str, Any]] | None:
    """Rows of ``decisions.parquet``; None when no result recorded decisions."""
    rows: list[dict[str, Any]] = []
    recorded = False
    names = [f.name for f in fields(Decision)]
    for round_no, r in _rounds(results):
        if r.decisions is None:
            continue
        recorded = True
        for d in r.decisions:
            row = {"run_id": run_id, "round": round_no, "test_case": r.test_case,
                   "workload": r.workload}
            row.update({n: getattr(d, n) for n in names})
            rows.append(row)
    return rows if recorded else None


def write_decisions_parquet(path: Path | str, results: Results, *,
                            run_id: str = "") -> Path | None:
    """Write ``decisions.parquet`` if any result recorded decisions; returns its path or None."""
    rows = decision_rows(results, run_id=run_id)
    if rows is None:
        return None
    return _write_table(path, rows, DECISIONS_SCHEMA)
