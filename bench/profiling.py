"""``schedperf run --profile DIR``: where the time of each workload goes, one flag away.

Every workload runs under cProfile and its statistics land in ``DIR/<stem>.pstats``
(``python -m pstats``, snakeviz, ``gprof2dot -f pstats``). When pyinstrument is installed the
workload runs a second time, with the same seed, under pyinstrument's sampling profiler, written
as ``DIR/<stem>.speedscope.json`` (open it at speedscope.app or with ``speedscope``). The two
profilers cannot share a run (both install the interpreter's profile hook), and with the virtual
clock the second run does the same work as the first. The results reported are the cProfile
run's; profiling slows scheduling down, so throughput from a profiled run is not comparable to
an unprofiled one.
"""

from __future__ import annotations

import cProfile
import hashlib
import importlib.util
import marshal
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from workloads.output.dataitems import atomic_write_bytes

__all__ = ["have_pyinstrument", "profile_file_stem", "profile_workload"]

T = TypeVar("T")


def have_pyinstrument() -> bool:
    return importlib.util.find_spec("pyinstrument") is not None


def profile_file_stem(full_name: str, round_no: int = 1) -> str:
    """A file-system-safe stem for ``<test case>/<workload>`` (and the round after the first)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", full_name).strip("_")
    if len(stem) > 120:  # file names stay under 255 bytes: cut, and a hash keeps them unique
        stem = f"{stem[:111]}-{hashlib.sha256(full_name.encode()).hexdigest()[:8]}"
    return stem if round_no == 1 else f"{stem}_round{round_no}"


def profile_workload(fn: Callable[[], T], out_dir: Path, stem: str,
                     speedscope: bool | None = None) -> tuple[T, list[Path]]:
    """Run ``fn`` under cProfile (and, when ``speedscope`` — by default: when pyinstrument is
    installed — once more under pyinstrument); returns the first run's value and the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        value = fn()
    finally:
        profiler.disable()
    pstats_path = out_dir / f"{stem}.pstats"
    profiler.create_stats()  # what Profile.dump_stats writes, but atomically
    atomic_write_bytes(pstats_path, marshal.dumps(profiler.stats))  # type: ignore[attr-defined]
    written = [pstats_path]
    if speedscope is None:
        speedscope = have_pyinstrument()
    if speedscope:
        from pyinstrument import Profiler
        from pyinstrument.renderers import SpeedscopeRenderer

        sampler = Profiler(interval=0.001)
        sampler.start()
        try:
            fn()
        finally:
            sampler.stop()
        path = out_dir / f"{stem}.speedscope.json"
        atomic_write_bytes(path, sampler.output(renderer=SpeedscopeRenderer()).encode())
        written.append(path)
    return value, written
