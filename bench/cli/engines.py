"""``schedperf run --engine schedperf-core|kube-scheduler|both`` and ``--gomaxprocs``: which
schedulers run each workload, in which order, and the reference binary the kube-scheduler
engine needs (built on first use; a missing Go toolchain is bad input, exit 2).

With ``both`` every workload runs on scheduler_core, then on the kube-scheduler engine once per
GOMAXPROCS value (default ``1,all``: one CPU, then every CPU of the machine), back to back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import click

from bench.selection import BadInput
from workloads.config import TestCase, Workload
from workloads.result import ENGINE_CORE, ENGINE_KUBE, ENGINES, WorkloadResult

__all__ = ["ENGINE_CHOICES", "EngineRun", "engine_options", "plan_engines", "reference_binary",
           "run_on_kube"]

ENGINE_CHOICES = (*ENGINES, "both")


@dataclass(frozen=True)
class EngineRun:
    """One run of a workload: on which engine, with which GOMAXPROCS (kube-scheduler)."""

    engine: str
    gomaxprocs: int | None = None

    @property
    def label(self) -> str:
        return self.engine if self.gomaxprocs is None else \
            f"{self.engine} GOMAXPROCS={self.gomaxprocs}"


def _gomaxprocs(value: str) -> tuple[int, ...]:
    """``1,all`` -> (1, cpu count); duplicates dropped, order kept."""
    out: list[int] = []
    for part in value.split(","):
        part = part.strip()
        if part == "all":
            n = os.cpu_count() or 1
        else:
            try:
                n = int(part)
            except ValueError:
                raise click.BadParameter(
                    f"{part!r}: expected a comma-separated list of positive integers or "
                    "'all'") from None
            if n < 1:
                raise click.BadParameter(f"{part!r}: GOMAXPROCS must be >= 1")
        if n not in out:
            out.append(n)
    return tuple(out)


def engine_options(fn: Callable[..., object]) -> Callable[..., object]:
    """The ``--engine`` and ``--gomaxprocs`` options of ``schedperf run``."""
    fn = click.option(
        "--gomaxprocs", "gomaxprocs", default="1,all", show_default=True, metavar="N[,M]",
        callback=lambda ctx, param, value: _gomaxprocs(value),
        help="GOMAXPROCS of the kube-scheduler engine's Go process, one run per value "
             "('all': the machine's CPUs).")(fn)
    return click.option(
        "--engine", type=click.Choice(ENGINE_CHOICES), default=ENGINE_CORE, show_default=True,
        help="The scheduler that runs the workloads: schedperf's scheduler_core, the real "
             "kube-scheduler loop (the reference binary, Go needed), or both back to back "
             "with their pods/s, CPU per pod and ratio side by side.")(fn)


def plan_engines(engine: str, gomaxprocs: tuple[int, ...]) -> list[EngineRun]:
    runs: list[EngineRun] = []
    if engine in (ENGINE_CORE, "both"):
        runs.append(EngineRun(ENGINE_CORE))
    if engine in (ENGINE_KUBE, "both"):
        runs.extend(EngineRun(ENGINE_KUBE, n) for n in gomaxprocs)
    return runs


def reference_binary(plan: list[EngineRun]) -> object | None:
    """The built reference binary when the plan runs the kube-scheduler engine (built now
    if needed); BadInput naming the missing tool or the build failure."""
    if all(r.engine == ENGINE_CORE for r in plan):
        return None
    from workloads.reference import ReferenceSchedulerError, ensure_built

    try:
        return ensure_built()
    except ReferenceSchedulerError as exc:
        raise BadInput(f"--engine {ENGINE_KUBE}: {exc}") from None


def run_on_kube(tc: TestCase, w: Workload, run: EngineRun, binary: object, *,
                timeout: float | None, detail: Callable[[str], object] | None = None,
                ) -> WorkloadResult:
    """One workload on the kube-scheduler engine (``detail`` gets a progress line per op)."""
    from workloads.engine import KubeEngineOptions, run_kube_workload

    def progress(opcode: str, bound: int) -> None:
        if detail is not None:
            detail(f"{opcode}: {bound} pods")

    assert run.gomaxprocs is not None
    return run_kube_workload(tc, w, KubeEngineOptions(binary, run.gomaxprocs, timeout=timeout,
                                                      progress=progress))
