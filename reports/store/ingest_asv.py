"""asv results: ``results/<machine>/<commit[:8]>-<env>.json`` as asv 0.6 writes them (version 2,
``result_columns`` layout), with ``results/benchmarks.json`` for parameter names and units.

Mapping (one row per benchmark, parameter combination and bucket):

    benchmark ``pkg.mod.Class.time_x``  test_case ``pkg.mod.Class``, metric ``time_x``
    parameter combination              workload ``nodes=100,plugin=fit`` (empty when not
                                       parameterised), params JSON ``{"nodes": 100, ...}``
    result (asv's reported value)      bucket ``Value``; null when the benchmark failed
                                       (status ``failed``) or was skipped (NaN, status
                                       ``unsupported``)
    stats_ci_99_a/_b, stats_q_25/_75   buckets ``ci_99_a``, ``ci_99_b``, ``q_25``, ``q_75``
    stats_number, stats_repeat         buckets ``number`` (iterations/sample), ``repeat``
                                       (samples)
    commit_hash, machine, python, cpu  commit, machine, python, cpu_model, cpu_count
    started_at (per benchmark)         timestamp (else the commit ``date``)
    date                               commit_date (git's date replaces it at ingest
                                       when a repository has the commit)

``item_labels`` holds ``{"benchmark", "type", "version", "env_name"}``. Without a
benchmarks.json (or when it no longer matches the result) parameters are named
``param1``, ``param2``, ... as asv does, and the unit follows the name prefix.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from reports.store.problems import Malformed, field, number, optional_field
from reports.store.schema import SOURCE_ASV, table_from_rows
from scheduler_core.inputfile import InputFileError, read_text

__all__ = ["ASV_RESULTS_VERSION", "find_benchmarks_json", "load_benchmarks", "parse_asv"]

ASV_RESULTS_VERSION = 2
ASV_BENCHMARKS_VERSION = 2
_STATS = {  # result column -> (bucket, unit or None for the benchmark's unit)
    "stats_ci_99_a": ("ci_99_a", None),
    "stats_ci_99_b": ("ci_99_b", None),
    "stats_q_25": ("q_25", None),
    "stats_q_75": ("q_75", None),
    "stats_number": ("number", "iterations"),
    "stats_repeat": ("repeat", "samples"),
}
_UNITS = {"seconds": "s"}
_PREFIX_UNITS = (("time", "s"), ("timeraw", "s"), ("peakmem", "bytes"), ("mem", "bytes"),
                 ("track", "unit"))


def find_benchmarks_json(path: Path) -> Path | None:
    """``results/benchmarks.json`` for ``results/<machine>/<file>.json``."""
    for folder in (path.parent.parent, path.parent):
        candidate = folder / "benchmarks.json"
        if candidate.is_file():
            return candidate
    return None


def load_benchmarks(path: Path | None) -> tuple[dict[str, Any], str | None]:
    """(benchmarks.json as a dict, a note when it is missing or unusable)."""
    if path is None:
        return {}, "no benchmarks.json next to it: parameter names and units guessed"
    try:
        doc = json.loads(read_text(path, what="an asv benchmarks.json"))
    except (InputFileError, ValueError, RecursionError) as exc:
        return {}, f"{path} unreadable ({exc}): parameter names and units guessed"
    if not isinstance(doc, dict) or doc.get("version") != ASV_BENCHMARKS_VERSION:
        return {}, f"{path} is not an asv benchmarks.json version 2: names and units guessed"
    return doc, None


def _literal(text: str) -> Any:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return text


def _split(name: str) -> tuple[str, str]:
    test_case, dot, metric = name.rpartition(".")
    return (test_case, metric) if dot else (name, name)


def _unit(name: str, meta: dict[str, Any]) -> str:
    unit = meta.get("unit")
    if isinstance(unit, str) and unit:
        return _UNITS.get(unit, unit)
    short = name.rpartition(".")[2].lower()
    for prefix, guess in _PREFIX_UNITS:
        if short.startswith(prefix + "_"):
            return guess
    return "unit"


def _timestamp(ms: Any, where: str) -> datetime | None:
    if ms is None:
        return None
    value = number(ms, where)
    if not math.isfinite(value):
        raise Malformed(f"{where}: not a finite time")
    try:
        return datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise Malformed(f"{where}: {value} is not a time in ms") from exc


def _params(value: Any, where: str) -> list[list[str]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
            isinstance(p, list) and all(isinstance(v, str) for v in p) for p in value):
        raise Malformed(f"{where}: expected a list of lists of strings")
    return value


def _header(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise Malformed("expected a JSON object (asv results)")
    if "version" not in doc:
        raise Malformed("missing key 'version' (asv results)")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise Malformed(f"version: expected an integer, got {version!r}")
    if version < ASV_RESULTS_VERSION:
        raise Malformed(f"asv results format version {version} is older than "
                        f"{ASV_RESULTS_VERSION}: run `asv update` first")
    if version > ASV_RESULTS_VERSION:
        raise Malformed(f"asv results format version {version} is newer than "
                        f"{ASV_RESULTS_VERSION}, the one understood here")
    params = field(doc, "params", "object")
    columns = field(doc, "result_columns", "list")
    if not all(isinstance(c, str) for c in columns) or "result" not in columns:
        raise Malformed("result_columns: expected a list of names including 'result'")
    return {"commit": field(doc, "commit_hash", "string"),
            "env_name": field(doc, "env_name", "string"),
            "date": _timestamp(doc.get("date"), "date"),
            "python": optional_field(doc, "python", "string"),
            "machine": field(params, "machine", "string", "params"),
            "params": params, "columns": columns,
            "results": field(doc, "results", "object")}


def _machine_columns(params: dict[str, Any]) -> dict[str, Any]:
    cpu_count = params.get("num_cpu")
    try:
        cpu_count = int(cpu_count) if cpu_count not in (None, "") else None
    except (TypeError, ValueError):
        cpu_count = None
    numpy_version = params.get("numpy")
    return {"cpu_model": params.get("cpu") or None, "cpu_count": cpu_count,
            "numpy_version": numpy_version if isinstance(numpy_version, str)
            and numpy_version else None}


def parse_asv(doc: Any, sha256: str, benchmarks: dict[str, Any]) -> pa.Table:
    """Store rows of a parsed asv results document; raises :class:`Malformed`."""
    head = _header(doc)
    run_id = f"asv-{head['machine']}-{head['commit'][:8]}-{head['env_name']}"
    base = {"run_id": run_id, "round": 1, "commit": head["commit"],
            "commit_date": head["date"],  # asv's date of the commit (git may replace it)
            "machine": head["machine"], "python": head["python"],
            **_machine_columns(head["params"])}
    rows: list[dict[str, Any]] = []
    for name, values in head["results"].items():
        where = f"results.{name}"
        if not isinstance(values, list):
            raise Malformed(f"{where}: expected a list (one entry per result_columns)")
        if len(values) > len(head["columns"]):
            raise Malformed(f"{where}: {len(values)} entries for "
                            f"{len(head['columns'])} result_columns")
        entry = dict(zip(head["columns"], values, strict=False))
        params = _params(entry.get("params"), f"{where}.params")
        combos = list(itertools.product(*params))
        result = entry.get("result")
        if result is not None and not isinstance(result, list):
            raise Malformed(f"{where}.result: expected a list, got {type(result).__name__}")
        if result is not None and len(result) != len(combos):
            raise Malformed(f"{where}.result: {len(result)} values for {len(combos)} "
                            "parameter combinations")
        meta = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
        names = meta.get("param_names")
        if not (isinstance(names, list) and len(names) == len(params)):
            names = [f"param{i + 1}" for i in range(len(params))]
        unit = _unit(name, meta)
        test_case, metric = _split(name)
        version = entry.get("version")
        started = _timestamp(entry.get("started_at"), f"{where}.started_at") or head["date"]
        item_labels = json.dumps({"benchmark": name, "env_name": head["env_name"],
                                  "type": meta.get("type"), "version": version},
                                 sort_keys=True)
        stats = {col: entry.get(col) for col in _STATS if entry.get(col) is not None}
        for col, stat in stats.items():
            if not isinstance(stat, list) or len(stat) != len(combos):
                raise Malformed(f"{where}.{col}: expected a list of {len(combos)} values")
        for i, combo in enumerate(combos):
            value = None if result is None else number(result[i], f"{where}.result[{i}]",
                                                       nullable=True)
            if value is None:
                status, reason = "failed", "asv: benchmark failed (null result)"
            elif math.isnan(value):
                value, status, reason = None, "unsupported", "asv: skipped (NaN result)"
            else:
                status, reason = "ok", None
            literal = {n: _literal(v) for n, v in zip(names, combo, strict=True)}
            row = {**base, "timestamp": started, "test_case": test_case, "metric": metric,
                   "workload": ",".join(f"{n}={v}" for n, v in literal.items()),
                   "params": json.dumps(literal, sort_keys=True, default=str),
                   "status": status, "status_reason": reason, "item_labels": item_labels}
            rows.append({**row, "bucket": "Value", "value": value, "unit": unit})
            for col, stat in stats.items():
                bucket, stat_unit = _STATS[col]
                v = number(stat[i], f"{where}.{col}[{i}]", nullable=True)
                if v is not None:
                    rows.append({**row, "bucket": bucket, "value": v,
                                 "unit": stat_unit or unit})
    return table_from_rows(rows, source=SOURCE_ASV, sha256=sha256)
