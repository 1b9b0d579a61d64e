"""One worker session, in-process: load the spec's workloads, run them one after the other,
turn each run into a :class:`~bench.measure.spec.WorkloadMeasurement`.

Mode ``time``: the runner as ``schedperf run`` uses it (virtual clock, SchedulingThroughput
sampled on the wall clock, process CPU time per metrics window), with every plugin timed in
every scheduling cycle by default (``plugin_sample_percent`` 100, upstream samples 10 %).

Mode ``instructions``: the same run with ``wall_clock_metrics=False``: no wall-clock sampling,
no memory polling, no progress output and the scheduler's metrics recorder off, so the
instructions executed do not depend on how fast the run goes (see
:mod:`bench.measure.instructions`). All timing fields are null.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.measure.coreinfo import core_info, harness_info
from bench.measure.preimport import freeze_before_counting, preimport, read_preimport
from bench.measure.spec import SpecError, WorkerResult, WorkerSpec, WorkloadMeasurement

if TYPE_CHECKING:
    from bench.measure.pacing import TurnPacer

__all__ = [
    "ENV_VARIABLES",
    "measure_workload",
    "measurement_of",
    "resolve_spec_workloads",
    "run_spec",
    "worker_env",
]

# environment variables that change what a run does or how fast it goes, recorded as given
ENV_VARIABLES = ("PYTHONHASHSEED", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "POLARS_MAX_THREADS", "PYTHONPATH")
THROUGHPUT_METRIC = "SchedulingThroughput"


def worker_env(mode: str) -> dict[str, Any]:
    """The RESULT ``env`` object: variables as set (null when unset), the clock, valgrind."""
    env: dict[str, Any] = {var: os.environ.get(var) for var in ENV_VARIABLES}
    env["hash_randomization"] = bool(sys.flags.hash_randomization)
    env["clock"] = "virtual"
    env["wall_clock_metrics"] = mode == "time"
    env["valgrind"] = "vgpreload" in os.environ.get("LD_PRELOAD", "")
    env["cpu_count"] = os.cpu_count()
    env["machine"] = platform.machine()
    return env


def resolve_spec_workloads(spec: WorkerSpec) -> list[tuple[Any, Any]]:
    """(test case, workload) per spec name, in spec order, with the scheduler_config override
    applied. Raises SpecError for unreadable configs and names found nowhere or twice."""
    from workloads.config import ConfigFileError, load_configs

    found: dict[str, tuple[Any, Any]] = {}
    for path in spec.configs:
        if not Path(path).exists():
            raise SpecError(f"config {path}: no such file or folder")
        try:
            test_cases = load_configs(path)
        except ConfigFileError as exc:
            raise SpecError(str(exc)) from None
        for tc in test_cases:
            for w in tc.workloads:
                prev = found.get(w.full_name)
                if prev is not None and prev[0].source != tc.source:
                    raise SpecError(f"workload {w.full_name} is defined in both "
                                    f"{prev[0].source} and {tc.source}")
                found[w.full_name] = (tc, w)
    missing = [n for n in spec.workloads if n not in found]
    if missing:
        raise SpecError(f"no such workload(s) in {', '.join(spec.configs)}: "
                        f"{', '.join(missing)}")
    override: Path | None = None
    if spec.scheduler_config is not None:
        override = Path(spec.scheduler_config).resolve()
        if not override.is_file():
            raise SpecError(f"scheduler_config {spec.scheduler_config}: no such file")
    out = []
    for name in spec.workloads:
        tc, w = found[name]
        if override is not None:
            tc = dataclasses.replace(tc, scheduler_config_path=override)
        out.append((tc, w))
    return out


def _throughput(result: Any) -> float | None:
    values = [d.data["Average"] for d in result.data_items
              if d.labels.get("Metric") == THROUGHPUT_METRIC and "Average" in d.data]
    return statistics.fmean(values) if values else None


def measurement_of(w: Any, result: Any, run: Any) -> WorkloadMeasurement:
    """The counts every mode records of a finished run (the runner's result and Run)."""
    m = WorkloadMeasurement(
        name=w.full_name, status=result.status, reason=result.reason,
        scheduled_pods=result.scheduled_pods, attempts=result.attempts,
        virtual_seconds=result.virtual_seconds)
    if run is not None:
        m.measured_pods = run.window_scheduled
        m.measured_attempts = run.window_attempts
        m.stopped_before_op = run.stopped_before
    return m


def measure_workload(tc: Any, w: Any, spec: WorkerSpec, *,
                     keep_alive: list[Any] | None = None,
                     pacer: TurnPacer | None = None) -> WorkloadMeasurement:
    """Run one workload as the spec says. ``keep_alive`` receives the runner's result and
    Run (see :func:`run_spec`); ``pacer`` makes it a paced run (bench.measure.pacing)."""
    from workloads.runner import execute_workload

    timing = spec.mode == "time"
    pct = spec.plugin_sample_percent if timing else 0
    result, run = execute_workload(
        tc, w, seed=spec.seed, clock="virtual", timeout=spec.timeout if timing else None,
        sample_interval=spec.sample_interval, wall_clock_metrics=timing,
        plugin_sample_percent=pct, stop_after=spec.stop_after, pacer=pacer)
    if keep_alive is not None:
        keep_alive.append((result, run))
    m = measurement_of(w, result, run)
    if not timing:
        return m
    m.throughput_avg = _throughput(result)
    m.cpu_seconds = result.cpu_seconds
    m.wall_seconds = result.wall_seconds
    m.measured_seconds = result.measured_seconds
    m.cpu_per_pod = result.cpu_seconds / m.measured_pods if m.measured_pods else None
    if run is not None:
        m.extension_point_seconds = dict(sorted(run.window_extension_seconds.items()))
        if pct > 0:
            scale = 100 / pct
            m.plugin_seconds = {k: v * scale
                                for k, v in sorted(run.window_plugin_seconds.items())}
    return m


def run_spec(spec: WorkerSpec, *, keep_alive: list[Any] | None = None,
             pacer: TurnPacer | None = None,
             on_workload: Callable[[WorkerResult], None] | None = None) -> WorkerResult:
    """Run every workload of the spec in this process. ``keep_alive`` receives each finished
    run's result and Run (instructions mode: freeing a run's objects would otherwise be
    counted, in proportion to its size, when the next one starts or the interpreter exits).
    With a ``pacer`` each workload waits for its turn first and reports when it is done
    (a spec that cannot be run ends the process without taking a turn: the orchestrator
    sees its pipe close). ``on_workload`` gets the result so far after each workload (before
    the turn is handed on): the worker writes RESULT.json there, so a crash in a later
    workload keeps what finished."""
    timing = spec.mode == "time"
    import numpy

    result = WorkerResult(
        core={}, python=platform.python_version(), executable=sys.executable,
        pid=os.getpid(), env=worker_env(spec.mode), spec=spec.to_dict(),
        numpy=numpy.__version__)
    try:
        result.core = core_info(allow_subprocess=timing)
    except ImportError as exc:
        result.error = f"cannot import scheduler_core: {exc}"
        return result
    result.harness = harness_info()
    try:
        chosen = resolve_spec_workloads(spec)
    except SpecError as exc:
        result.error = str(exc)
        return result
    if not timing:  # what the warm-up imported, as bench.measure.forked's parent does
        preimport(read_preimport())
    for tc, w in chosen:
        if pacer is not None:
            pacer.wait_turn()
            turns, paused = pacer.turns, pacer.paused
        if not timing:
            freeze_before_counting()
        m = measure_workload(tc, w, spec, keep_alive=keep_alive, pacer=pacer)
        result.workloads.append(m)
        if timing:
            gc.collect()  # the next workload starts without the last one's garbage
        if on_workload is not None:
            on_workload(result)
        if pacer is not None:
            m.paced_turns, m.paused_seconds = pacer.turns - turns, pacer.paused - paused
            pacer.done()
    return result
