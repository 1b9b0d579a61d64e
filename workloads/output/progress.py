"""Upstream-style ``.dat`` progress files, one per workload that collected metrics, for
plotting a run's progress with gnuplot.

File name ``<test case>_<workload>_<topic>_<UTC YYYY-MM-DDTHH:MM:SSZ>.dat`` with every ``/``
replaced by ``_`` (a counter is appended when the name exists, as for DataItems files; a very
long test case and workload name is cut and given a hash, :func:`progress_file_stem`). One
line per throughput sample, in upstream's ``"%.1fs %d %d %d %f"`` layout:

    <seconds since the window opened>s <completed> <attempts> <observedTotal> <observedRate>

Upstream reads ``completed`` and ``attempts`` from process-wide scheduler counters (so they
include the init pods) and ``observedTotal`` from the pods of the measured namespace. schedperf
counts everything per collection window: ``completed`` and ``observedTotal`` are the pods bound
in scope since the window opened, ``attempts`` the scheduling attempts since then, and
``observedRate`` = observedTotal / seconds. A workload with several collection windows gets
their samples one after the other, each restarting at its own 0 s.

See docs/results-schema.md, ".dat progress files".
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from workloads.output.dataitems import _atomic_write_new
from workloads.result import WorkloadResult

__all__ = ["MAX_NAME_BYTES", "progress_file_stem", "progress_lines", "write_progress_files"]


MAX_NAME_BYTES = 120  # of the "<test case>_<workload>" part; file names stay under 255


def progress_file_stem(result: WorkloadResult, when: datetime) -> str:
    """The file name without ``.dat``; a test case and workload name longer than
    :data:`MAX_NAME_BYTES` is cut and followed by 8 hex of its SHA-256 (unique, and within
    every file system's name limit)."""
    stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    name = f"{result.test_case}_{result.workload}"
    raw = name.encode()
    if len(raw) > MAX_NAME_BYTES:
        digest = hashlib.sha256(raw).hexdigest()[:8]
        name = raw[:MAX_NAME_BYTES - 9].decode("utf-8", "ignore") + "-" + digest
    return f"{name}_{result.topic}_{stamp}".replace("/", "_")


def progress_lines(result: WorkloadResult) -> list[str]:
    lines = []
    for samples in result.progress_samples.values():
        for secs, bound, attempts in samples:
            rate = bound / secs if secs > 0 else 0.0
            lines.append(f"{secs:.1f}s {bound} {attempts} {bound} {rate:f}")
    return lines


def write_progress_files(results: list[WorkloadResult], out_dir: Path | str,
                         when: datetime | None = None) -> list[Path]:
    """Write one ``.dat`` file per result that has progress samples; returns the paths."""
    when = when or datetime.now(UTC)
    written = []
    for result in results:
        lines = progress_lines(result)
        if not lines:
            continue
        data = ("\n".join(lines) + "\n").encode()
        written.append(_atomic_write_new(Path(out_dir), progress_file_stem(result, when),
                                         ".dat", data))
    return written
