"""Upstream scheduler_perf DataItems JSON (``BenchmarkPerfScheduling_*.json``, perf-dash).

One row per item and bucket. The ``Name`` label ``[BenchmarkPerfScheduling/]<test case>/
<workload>/<namespace>`` gives test_case (first part) and workload (the middle parts:
workload names may contain ``/``); ``Metric`` gives metric; the other labels (``Name``
included) go to ``item_labels`` as in results.parquet. The file name gives topic and time
(``..._benchmark_<topic>_<YYYY-MM-DDTHH:MM:SSZ>[_n].json``; older files have no topic);
without a time in the name the file's modification time is used. Commit, machine and
workload status are not in the format: they stay null.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from reports.store.problems import Malformed, describe, field, number
from reports.store.schema import SOURCE_DATAITEMS, table_from_rows
from workloads.output.dataitems import FILE_PREFIX

__all__ = ["DATAITEMS_NAME", "parse_dataitems", "split_name"]

DATAITEMS_NAME = re.compile(
    rf"^{FILE_PREFIX}_benchmark_(?:(?P<topic>.+)_)?"
    r"(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)(?:_\d+)?\.json$")
_NAME_PREFIX = "BenchmarkPerfScheduling/"


def split_name(name: str) -> tuple[str, str | None]:
    """(test_case, workload) of a DataItem ``Name`` label."""
    parts = name.removeprefix(_NAME_PREFIX).split("/")
    if len(parts) == 1:
        return parts[0], None
    if len(parts) == 2:
        return parts[0], parts[1]
    return parts[0], "/".join(parts[1:-1])


def _when(path: Path) -> tuple[str | None, datetime]:
    m = DATAITEMS_NAME.match(path.name)
    if m:
        stamp = datetime.strptime(m["stamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        return m["topic"], stamp
    return None, datetime.fromtimestamp(path.stat().st_mtime, UTC)


def parse_dataitems(doc: Any, path: Path, sha256: str) -> pa.Table:
    """Store rows of a parsed DataItems document; raises :class:`Malformed`."""
    if not isinstance(doc, dict):
        raise Malformed(f"expected a JSON object with version and dataItems, got "
                        f"{describe(doc)}")
    version = field(doc, "version", "string")
    if version != "v1":
        raise Malformed(f"unsupported DataItems version {version!r} (expected 'v1')")
    items = field(doc, "dataItems", "list")
    topic, when = _when(path)
    run_id = f"dataitems-{when.strftime('%Y%m%dT%H%M%SZ')}-{sha256[:8]}"
    base = {"run_id": run_id, "round": 1, "timestamp": when, "topic": topic}
    rows: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where = f"dataItems[{i}]"
        if not isinstance(item, dict):
            raise Malformed(f"{where}: expected an object (data, unit, labels), got "
                            f"{describe(item)}")
        if "data" not in item:
            raise Malformed(f"missing key '{where}.data'")
        data = item["data"]
        if not isinstance(data, dict):
            raise Malformed(f"{where}.data: expected a mapping of bucket names to numbers "
                            f"(e.g. {{\"Average\": 12.5}}), got {describe(data)}")
        unit = field(item, "unit", "string", where)
        labels = item.get("labels") or {}  # omitempty upstream
        if not isinstance(labels, dict):
            raise Malformed(f"{where}.labels: expected an object of strings, got "
                            f"{describe(labels)}")
        for key, value in labels.items():
            if not isinstance(value, str):
                raise Malformed(f"{where}.labels.{key}: expected a string, got "
                                f"{describe(value)}")
        test_case, workload = split_name(labels.get("Name", ""))
        item_labels = json.dumps({k: v for k, v in labels.items() if k != "Metric"},
                                 sort_keys=True)
        for bucket, value in data.items():
            rows.append({**base, "test_case": test_case or None, "workload": workload,
                         "metric": labels.get("Metric", ""), "bucket": bucket,
                         "value": number(value, f"{where}.data.{bucket}"), "unit": unit,
                         "item_labels": item_labels})
    return table_from_rows(rows, source=SOURCE_DATAITEMS, sha256=sha256)
