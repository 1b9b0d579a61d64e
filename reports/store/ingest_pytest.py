"""pytest-benchmark JSON (``--benchmark-json`` output, or a saved ``.benchmarks/*/NNNN_*.json``).

Mapping (one row per benchmark and statistic):

    fullname ``tests/test_a.py::TestX::test_f[100]``  test_case ``tests/test_a.py::TestX``,
                                                     metric ``test_f``, workload ``100``
                                                     (the ``param`` id; empty if none)
    params                                           params JSON
    stats min, max, mean, stddev, median, iqr, q1,   buckets of the same names, unit ``s``
    q3, ld15iqr, hd15iqr, total                      (per iteration, as pytest-benchmark)
    stats ops                                        bucket ``ops``, unit ``ops/s``
    stats rounds, iterations, iqr_outliers,          counts
    stddev_outliers
    commit_info id/branch, datetime                  commit, branch, timestamp
    commit_info time                                 commit_date (the commit's date)
    machine_info node/python_version/cpu             machine, python, cpu_model, cpu_count

``item_labels`` holds ``{"fullname", "group", "extra_info", "dirty"}``. Benchmarks that raised
are left out of the file by pytest-benchmark, so every row has status ``ok``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from reports.store.problems import Malformed, field, number, optional_field
from reports.store.schema import SOURCE_PYTEST, table_from_rows

__all__ = ["STAT_UNITS", "parse_pytest_benchmark"]

STAT_UNITS = {
    "min": "s", "max": "s", "mean": "s", "stddev": "s", "median": "s", "iqr": "s",
    "q1": "s", "q3": "s", "ld15iqr": "s", "hd15iqr": "s", "total": "s", "ops": "ops/s",
    "rounds": "rounds", "iterations": "iterations", "iqr_outliers": "count",
    "stddev_outliers": "count",
}
_REQUIRED_STATS = ("min", "max", "mean", "median", "rounds")
_NO_COMMIT = {"unversioned", ""}
_NO_BRANCH = {"(unknown)", ""}


def _when(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise Malformed(f"datetime: {text!r} is not an ISO 8601 time") from exc
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _names(bench: dict[str, Any], where: str) -> tuple[str, str, str]:
    """(test_case, metric, workload) of one benchmark entry."""
    fullname = field(bench, "fullname", "string", where)
    name = field(bench, "name", "string", where)
    param = optional_field(bench, "param", "string", where)
    suffix = f"[{param}]" if param is not None else ""
    base = fullname.removesuffix(suffix) if suffix and fullname.endswith(suffix) else fullname
    test_case, sep, func = base.rpartition("::")
    if not sep:
        test_case, func = base, name.removesuffix(suffix)
    return test_case, func, param or ""


def parse_pytest_benchmark(doc: Any, sha256: str) -> pa.Table:
    """Store rows of a parsed pytest-benchmark document; raises :class:`Malformed`."""
    if not isinstance(doc, dict):
        raise Malformed("expected a JSON object (pytest-benchmark)")
    machine = field(doc, "machine_info", "object")
    commit = field(doc, "commit_info", "object")
    benchmarks = field(doc, "benchmarks", "list")
    when = _when(field(doc, "datetime", "string"))
    field(doc, "version", "string")
    cpu = optional_field(machine, "cpu", "object", "machine_info") or {}
    commit_id = optional_field(commit, "id", "string", "commit_info")
    branch = optional_field(commit, "branch", "string", "commit_info")
    cpu_count = cpu.get("count")
    committed = commit.get("time")
    try:
        commit_date = _when(committed) if isinstance(committed, str) else None
    except Malformed:
        commit_date = None  # not needed: git or --repo can still date the commit
    base = {
        "run_id": f"pytest-benchmark-{when.strftime('%Y%m%dT%H%M%SZ')}-{sha256[:8]}",
        "round": 1, "timestamp": when,
        "commit": None if commit_id in _NO_COMMIT else commit_id,
        "branch": None if branch in _NO_BRANCH else branch,
        "commit_date": None if commit_id in _NO_COMMIT else commit_date,
        "machine": optional_field(machine, "node", "string", "machine_info"),
        "python": optional_field(machine, "python_version", "string", "machine_info"),
        "cpu_model": cpu.get("brand_raw") if isinstance(cpu.get("brand_raw"), str) else None,
        "cpu_count": cpu_count if isinstance(cpu_count, int)
        and not isinstance(cpu_count, bool) else None,
        "status": "ok",
    }
    dirty = commit.get("dirty")
    rows: list[dict[str, Any]] = []
    for i, bench in enumerate(benchmarks):
        where = f"benchmarks[{i}]"
        if not isinstance(bench, dict):
            raise Malformed(f"{where}: expected an object, got {type(bench).__name__}")
        test_case, metric, workload = _names(bench, where)
        stats = field(bench, "stats", "object", where)
        for key in _REQUIRED_STATS:
            field(stats, key, "number", f"{where}.stats")
        params = optional_field(bench, "params", "object", where)
        labels = {"fullname": bench["fullname"], "group": bench.get("group"),
                  "extra_info": bench.get("extra_info") or {}, "dirty": dirty}
        row = {**base, "test_case": test_case, "workload": workload, "metric": metric,
               "params": None if params is None
               else json.dumps(params, sort_keys=True, default=str),
               "item_labels": json.dumps(labels, sort_keys=True, default=str)}
        for stat, unit in STAT_UNITS.items():
            if stat in stats:
                value = number(stats[stat], f"{where}.stats.{stat}", nullable=True)
                rows.append({**row, "bucket": stat, "value": value, "unit": unit})
    return table_from_rows(rows, source=SOURCE_PYTEST, sha256=sha256)
