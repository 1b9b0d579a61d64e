"""perf-dash DataItems JSON, as upstream scheduler_perf writes it.

File name ``BenchmarkPerfScheduling_benchmark_<topic>_<UTC YYYY-MM-DDTHH:MM:SSZ>.json``; when a
file of that name already exists (several runs or rounds finishing in the same second) a counter
is appended before ``.json``: ``..._2025-01-02T03:04:05Z_1.json``. Content
``{"version": "v1", "dataItems": [...]}`` with 2-space indentation; every item carries every
label key used by any item of the file, ``"not applicable"`` when it has none.

See docs/results-schema.md, "DataItems JSON".
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workloads.result import DataItem, WorkloadResult

__all__ = [
    "FILE_PREFIX",
    "NOT_APPLICABLE",
    "atomic_write_bytes",
    "dataitems_file_name",
    "dataitems_payload",
    "write_dataitems",
]

FILE_PREFIX = "BenchmarkPerfScheduling"
NOT_APPLICABLE = "not applicable"


def _temp_file(directory: Path, name: str, data: bytes) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), 0o644)  # mkstemp makes 0600; results are for sharing
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder + ``os.replace``:
    readers see the old file or the whole new one, and a crash leaves no partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_file(path.parent, path.name, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _atomic_write_new(directory: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Atomically create ``<stem><suffix>`` in ``directory``, or ``<stem>_<n><suffix>`` with the
    smallest n >= 1 not taken. ``os.link`` makes taking a name atomic (it fails if the name
    exists); file systems without hard links fall back to check-then-replace."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = _temp_file(directory, stem + suffix, data)
    try:
        n = 0
        while True:
            target = directory / (f"{stem}{suffix}" if n == 0 else f"{stem}_{n}{suffix}")
            try:
                os.link(tmp, target)
            except FileExistsError:
                n += 1
                continue
            except OSError:  # no hard links here
                if target.exists():
                    n += 1
                    continue
                os.replace(tmp, target)
                return target
            return target
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def dataitems_file_name(topic: str, when: datetime) -> str:
    """``BenchmarkPerfScheduling_benchmark_<topic>_<YYYY-MM-DDTHH:MM:SSZ>.json`` (UTC)."""
    stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{FILE_PREFIX}_benchmark_{topic}_{stamp}.json"


def _items(source: Iterable[WorkloadResult | DataItem]) -> list[DataItem]:
    items: list[DataItem] = []
    for entry in source:
        if isinstance(entry, WorkloadResult):
            items.extend(entry.data_items)
        else:
            items.append(entry)
    return items


def dataitems_payload(source: Iterable[WorkloadResult | DataItem]) -> dict[str, Any]:
    """``{"version": "v1", "dataItems": [...]}`` for the items of ``source`` (results or
    items), every label key on every item. The DataItems themselves are not modified."""
    items = _items(source)
    keys: dict[str, None] = {}
    for item in items:
        keys.update(dict.fromkeys(item.labels))
    out = []
    for item in items:
        labels = {k: item.labels.get(k, NOT_APPLICABLE) for k in keys}
        entry: dict[str, Any] = {"data": dict(item.data), "unit": item.unit}
        if labels:
            entry["labels"] = labels
        out.append(entry)
    return {"version": "v1", "dataItems": out}


def write_dataitems(source: Iterable[WorkloadResult | DataItem], out_dir: Path | str,
                    topic: str, when: datetime | None = None) -> Path:
    """Write the DataItems file of one topic into ``out_dir``; returns its path (never
    overwrites an existing file: see the module docstring for the counter suffix)."""
    when = when or datetime.now(UTC)
    data = json.dumps(dataitems_payload(source), indent=2).encode() + b"\n"
    name = dataitems_file_name(topic, when)
    return _atomic_write_new(Path(out_dir), name.removesuffix(".json"), ".json", data)
