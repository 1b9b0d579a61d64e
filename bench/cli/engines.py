"""``schedperf run --engine schedperf-core|kube-scheduler|both`` and ``--gomaxprocs``: which
schedulers run each workload, in which order, and the reference binary the kube-scheduler
engine needs (built on first use; a missing Go toolchain is bad input, exit 2): one build per
pinned Kubernetes release the chosen workloads need (workloads.engine.release: v1.37 for pod
groups, v1.34 otherwise).

With ``both`` every workload runs on scheduler_core, then on the kube-scheduler engine once per
GOMAXPROCS value (default ``1,all``: one CPU, then every CPU of the machine), back to back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
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


def reference_binary(plan: list[EngineRun], chosen: Sequence[tuple[TestCase, Workload]] = (),
                     ) -> dict[str, object] | None:
    """The built reference binaries by release name (``v1.34``, ``v1.37``) when the plan runs
    the kube-scheduler engine: the releases the chosen workloads need (built now if needed;
    the default release when none is chosen); BadInput naming the missing tool or the build
    failure."""
    if all(r.engine == ENGINE_CORE for r in plan):
        return None
    from workloads.engine.release import release_for
    from workloads.reference import ReferenceSchedulerError, ensure_built
    from workloads.reference.build import DEFAULT_RELEASE

    releases = {r.name: r for r in (release_for(tc, w) for tc, w in chosen)} or \
        {DEFAULT_RELEASE.name: DEFAULT_RELEASE}
    out: dict[str, object] = {}
    for name, release in sorted(releases.items()):
        try:
            out[name] = ensure_built(release=release)
        except ReferenceSchedulerError as exc:
            raise BadInput(f"--engine {ENGINE_KUBE} (reference {name}): {exc}") from None
    return out


def run_on_kube(tc: TestCase, w: Workload, run: EngineRun, binaries: dict[str, object], *,
                timeout: float | None, detail: Callable[[str], object] | None = None,
                ) -> WorkloadResult:
    """One workload on the kube-scheduler engine, on the build of the release it needs
    (``detail`` gets a progress line per op)."""
    from workloads.engine import KubeEngineOptions, run_kube_workload
    from workloads.engine.release import release_for

    binary = binaries[release_for(tc, w).name]

    def progress(opcode: str, bound: int) -> None:
        if detail is not None:
            detail(f"{opcode}: {bound} pods")

    assert run.gomaxprocs is not None
    return run_kube_workload(tc, w, KubeEngineOptions(binary, run.gomaxprocs, timeout=timeout,
                                                      progress=progress))
