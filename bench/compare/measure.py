"""Running both sides of a comparison: fresh worker processes, never mixing code.

Time mode runs ``repeat`` rounds. In each round both sides run every selected workload at
the same time in two fresh ``python -P -m bench.measure.worker`` processes that take turns on
the CPU in slices of a few milliseconds (bench.measure.pacing), so the drifts of a shared
machine hit both alike and cancel in the round's ratio; which side starts alternates (A B,
B A, ...). Rounds pair up for the statistics.

Instructions mode counts each workload once per side under cachegrind (bench.measure.
instructions: the measured section only, deterministic to the instruction), both cores busy.

Whatever happens to a side, every (workload, round) it was asked to run ends up in its
``outcomes`` (bench.compare.samples.OUTCOME_SCHEMA): the workload's status, or ``error`` /
``timeout`` with the end of the worker's log when the worker could not import its code,
crashed or was killed before it finished that workload. Nothing is dropped silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.compare.samples import instruction_rows, outcome_row, time_rows
from bench.measure.children import ChildProcesses, map_stoppable
from bench.measure.instructions import measure_instructions
from bench.measure.pacing import DEFAULT_SLICE, PacedRun, run_paced_pair
from bench.measure.spec import WorkerResult, WorkerSpec

__all__ = ["SideRun", "first_side", "run_instructions", "run_time"]


@dataclass
class SideRun:
    """How to run one side: its name (base/head), label, environment (PYTHONPATH selects its
    scheduler_core) and scheduler-config override; what it recorded: ``problems`` (one line
    per problem, for the console) and ``outcomes`` (rows of the outcomes table)."""

    side: str
    label: str
    env: dict[str, str]
    scheduler_config: str | None = None
    commit: str | None = None
    core: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)


def _note_core(run: SideRun, result: WorkerResult | None) -> None:
    if result is not None and result.core and not run.core:
        run.core = dict(result.core)


def first_side(rnd: int, k: int) -> int:
    """The side (0 = base, 1 = head) that starts workload ``k`` (0-based) in round ``rnd``
    (1-based): A B in round 1, B A in round 2, ..., and alternating again workload by workload
    inside a round, so neither side is always first."""
    return (rnd + 1 + k) % 2


def run_time(sides: Sequence[SideRun], spec: WorkerSpec, repeat: int, workdir: Path, *,
             jobs: int = 1, timeout: float | None = None, slice_seconds: float = DEFAULT_SLICE,
             progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """``repeat`` rounds of paced pairs (bench.measure.pacing): in each round both sides run
    every workload in fresh processes, taking turns in ``slice_seconds`` slices, with the
    round's PYTHONHASHSEED (the round number) on both. ``jobs`` rounds run at once (one
    process of each pair runs at a time, so ``jobs`` = cores keeps them busy; the pairs do not
    disturb each other's ratios). Rows for bench.compare.samples; raw worker results are kept
    in ``workdir/time/<side>/round-<n>/``. ``timeout`` bounds one round (wall seconds).
    Interrupted (SIGINT, SIGTERM) or failing, it kills every worker's process group and
    starts no further round before the exception leaves."""
    base, head = sides
    children = ChildProcesses()
    specs = [spec.replace(mode="time", scheduler_config=s.scheduler_config) for s in sides]

    def one_round(rnd: int) -> list[PacedRun]:
        if progress is not None:
            order = "base, head" if first_side(rnd, 0) == 0 else "head, base"
            progress(f"time round {rnd}/{repeat}: {base.label} and {head.label} taking turns "
                     f"({order} first)")
        folders = [workdir / "time" / s.side / f"round-{rnd}" for s in sides]
        return run_paced_pair(specs, folders, [s.env for s in sides],
                              first=lambda k: first_side(rnd, k),
                              slice_seconds=slice_seconds, hash_seed=rnd, timeout=timeout,
                              children=children)

    rounds = range(1, repeat + 1)
    results = map_stoppable(one_round, rounds, jobs=jobs, children=children)
    rows: list[dict[str, Any]] = []
    for rnd, runs in zip(rounds, results, strict=True):
        for side, run in zip(sides, runs, strict=True):
            _note_core(side, run.result)
            problem = run.problem()
            if problem is not None:
                side.problems.append(f"time round {rnd}: {problem}")
            # a crashed worker's RESULT.json holds the workloads finished before the crash
            done = {m.name: m for m in (run.result.workloads if run.result is not None
                                        else ())}
            lost = "timeout" if "pacing: timed out" in run.log else "error"
            for name in spec.workloads:
                m = done.get(name)
                if m is None:
                    side.outcomes.append(outcome_row(
                        side.side, "time", name, rnd, lost,
                        problem or "the worker wrote no measurement of this workload"))
                    continue
                if m.status != "ok":
                    side.problems.append(f"time round {rnd}: {m.name}: {m.status}: {m.reason}")
                side.outcomes.append(outcome_row(side.side, "time", name, rnd, m.status,
                                                 m.reason))
                rows.extend(time_rows(side.side, rnd, vars(m)))
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
        for name in spec.workloads:
            c = counts.get(name)
            if c is not None and c.core and not side.core:
                side.core = dict(c.core)
            if c is None or c.measured is None:
                status = "error" if c is None or c.status == "ok" else c.status
                reason = (c.reason if c is not None else None) or "no instruction count"
                side.problems.append(f"instructions: {name}: {status}: {reason}")
                side.outcomes.append(outcome_row(side.side, "instructions", name, 1, status,
                                                 reason))
                continue
            side.outcomes.append(outcome_row(side.side, "instructions", name, 1, c.status,
                                             c.reason))
            rows.extend(instruction_rows(side.side, 1, name, c.measured, c.measured_pods))
    return rows


def side_env(pythonpath: Sequence[Path]) -> dict[str, str]:
    """The current environment with ``pythonpath`` first on PYTHONPATH."""
    env = dict(os.environ)
    rest = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), *rest])
    return env
