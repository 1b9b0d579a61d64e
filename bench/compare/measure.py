"""Running both sides of a comparison: fresh worker processes, never mixing code.

Time mode runs ``repeat`` rounds; the order of the two sides alternates (A B, B A, A B, ...)
so drifts of the shared machine hit both alike, and rounds pair up for the statistics. Each
run is one fresh ``python -P -m bench.measure.worker`` process running every selected workload.

Instructions mode counts each workload once per side under cachegrind (bench.measure.
instructions: the measured section only, deterministic to the instruction), both cores busy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.compare.samples import instruction_rows, time_rows
from bench.measure.instructions import measure_instructions, run_worker
from bench.measure.spec import WorkerResult, WorkerSpec

__all__ = ["SideRun", "interleaved_order", "run_instructions", "run_time"]


@dataclass
class SideRun:
    """How to run one side: its name (base/head), label, environment (PYTHONPATH selects its
    scheduler_core) and scheduler-config override; what it recorded."""

    side: str
    label: str
    env: dict[str, str]
    scheduler_config: str | None = None
    commit: str | None = None
    core: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def interleaved_order(repeat: int) -> list[tuple[int, int]]:
    """(round, side index) in ABBA order: round 1 A B, round 2 B A, ..."""
    out = []
    for r in range(1, repeat + 1):
        sides = (0, 1) if r % 2 else (1, 0)
        out.extend((r, s) for s in sides)
    return out


def _note_core(run: SideRun, result: WorkerResult | None) -> None:
    if result is not None and result.core and not run.core:
        run.core = dict(result.core)


def run_time(sides: Sequence[SideRun], spec: WorkerSpec, repeat: int, workdir: Path, *,
             timeout: float | None = None,
             progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Interleaved rounds; rows for bench.compare.samples. Raw worker results are kept in
    ``workdir/time/<side>/round-<n>/``."""
    rows: list[dict[str, Any]] = []
    order = interleaved_order(repeat)
    for i, (rnd, s) in enumerate(order, 1):
        side = sides[s]
        if progress is not None:
            progress(f"time {i}/{len(order)}: round {rnd}, {side.side} ({side.label})")
        side_spec = spec.replace(mode="time", scheduler_config=side.scheduler_config)
        folder = workdir / "time" / side.side / f"round-{rnd}"
        run = run_worker(side_spec, folder, env=side.env, valgrind=None, timeout=timeout)
        _note_core(side, run.result)
        problem = run.problem()
        if problem is not None or run.result is None:
            side.problems.append(f"time round {rnd}: {problem}")
            continue
        for m in run.result.workloads:
            data = vars(m)
            if m.status != "ok":
                side.problems.append(f"time round {rnd}: {m.name}: {m.status}: {m.reason}")
            rows.extend(time_rows(side.side, rnd, data))
    return rows


def run_instructions(sides: Sequence[SideRun], spec: WorkerSpec, workdir: Path, *,
                     jobs: int = 2, timeout: float | None = None,
                     progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One cachegrind count per workload and side (deterministic: one is enough)."""
    rows: list[dict[str, Any]] = []
    for side in sides:
        if progress is not None:
            progress(f"instructions: {side.side} ({side.label}), {len(spec.workloads)} "
                     f"workloads under valgrind on {jobs} cores")
        side_spec = spec.replace(scheduler_config=side.scheduler_config)
        counts = measure_instructions(side_spec, jobs=jobs, env=side.env, timeout=timeout,
                                      workdir=workdir / "instructions" / side.side)
        for name, c in counts.items():
            if c.core and not side.core:
                side.core = dict(c.core)
            if c.measured is None:
                side.problems.append(f"instructions: {name}: {c.status}: {c.reason}")
                continue
            rows.extend(instruction_rows(side.side, 1, name, c.measured, c.measured_pods))
    return rows


def side_env(pythonpath: Sequence[Path]) -> dict[str, str]:
    """The current environment with ``pythonpath`` first on PYTHONPATH."""
    env = dict(os.environ)
    rest = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), *rest])
    return env
