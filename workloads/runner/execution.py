"""Run one workload from start to result: :func:`execute` (and the keyword forms
:func:`run_workload` / :func:`execute_workload`).

Never raises for a problem of the workload itself: the result's ``status`` is ``ok``,
``unsupported``, ``failed``, ``timeout`` or ``threshold-missed`` (see :mod:`workloads.runner`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable

from scheduler_core.errors import SchedulerCoreError
from workloads.config import ConfigFileError, TestCase, Workload, resolve
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.result import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_THRESHOLD_MISSED,
    STATUS_TIMEOUT,
    STATUS_UNSUPPORTED,
    WorkloadResult,
)
from workloads.runner.clocks import RunTimeout
from workloads.runner.options import Pacer, ProgressEvent, RunOptions
from workloads.runner.run import Run, op_label

__all__ = ["execute", "execute_workload", "run_workload"]


def run_workload(test_case: TestCase, workload: Workload, *, seed: int = 0,
                 clock: str = "virtual", record_decisions: bool = False,
                 timeout: float | None = None, sample_interval: float = 0.1,
                 progress: Callable[[ProgressEvent], None] | None = None,
                 wall_clock_metrics: bool = True, plugin_sample_percent: int = 10,
                 stop_after: str = "all") -> WorkloadResult:
    """Run one workload of one test case with the :class:`RunOptions` given as keywords.
    ``clock`` is ``"virtual"`` (deterministic, the default) or ``"real"``."""
    return execute(test_case, workload, RunOptions(
        seed=seed, clock=clock, record_decisions=record_decisions, timeout=timeout,
        sample_interval=sample_interval, progress=progress,
        wall_clock_metrics=wall_clock_metrics, plugin_sample_percent=plugin_sample_percent,
        stop_after=stop_after))[0]


def execute_workload(test_case: TestCase, workload: Workload, *, seed: int = 0,
                     clock: str = "virtual", record_decisions: bool = False,
                     timeout: float | None = None, sample_interval: float = 0.1,
                     progress: Callable[[ProgressEvent], None] | None = None,
                     wall_clock_metrics: bool = True, plugin_sample_percent: int = 10,
                     stop_after: str = "all", pacer: Pacer | None = None,
                     at_setup_end: Callable[[Run], None] | None = None,
                     ) -> tuple[WorkloadResult, Run | None]:
    """:func:`run_workload`, also returning the finished :class:`Run` (cluster, scheduler)
    for inspection; None when the run could not be set up."""
    return execute(test_case, workload, RunOptions(
        seed=seed, clock=clock, record_decisions=record_decisions, timeout=timeout,
        sample_interval=sample_interval, progress=progress,
        wall_clock_metrics=wall_clock_metrics, plugin_sample_percent=plugin_sample_percent,
        stop_after=stop_after, pacer=pacer, at_setup_end=at_setup_end))


def execute(test_case: TestCase, workload: Workload, options: RunOptions | None = None,
            ) -> tuple[WorkloadResult, Run | None]:
    """Run one workload; the result and the finished :class:`Run` (None when the run could
    not be set up). ValueError when an option is out of range."""
    if options is None:
        options = RunOptions()
    options.check()
    started = time.perf_counter()
    result = WorkloadResult(
        test_case=test_case.name, workload=workload.name, topic=test_case.topic,
        params=dict(workload.params), labels=workload.labels,
        feature_gates=dict(workload.feature_gates), seed=options.seed, clock=options.clock)

    run: Run | None = None

    def finish(status: str, reason: str | None) -> tuple[WorkloadResult, Run | None]:
        result.status, result.reason = status, reason
        result.wall_seconds = time.perf_counter() - started
        return result, run

    reason = test_case.unsupported_reason
    if reason:
        return finish(STATUS_UNSUPPORTED, reason)
    try:
        ops = resolve(test_case, workload)
    except ConfigFileError as exc:
        return finish(STATUS_FAILED, str(exc))
    try:
        run = Run(test_case, workload, ops, options)
    except UnsupportedWorkload as exc:
        return finish(STATUS_UNSUPPORTED, str(exc))
    except (SchedulerCoreError, WorkloadError) as exc:
        return finish(STATUS_FAILED, str(exc))
    result.ignored_feature_gates = run.gates.ignored
    if options.at_start is not None:
        options.at_start(run)
    try:
        status, reason = _run_ops(run)
        window = run.windows.current
        if window is not None:  # a window left open by an error or the timeout: keep its data
            run.close_window(window.op_index, check_threshold=False)
        run.result(result)
    finally:
        run.close()
    if status == STATUS_OK and run.errors:
        status, reason = STATUS_FAILED, "; ".join(run.errors)
    if status == STATUS_OK and run.windows.threshold_errors:
        status, reason = STATUS_THRESHOLD_MISSED, "; ".join(run.windows.threshold_errors)
    return finish(status, reason)


def _run_ops(run: Run) -> tuple[str, str | None]:
    """Prepare and execute the ops: (status, reason) of how they ended."""
    run.virtual_start = run.timeline.now()
    try:
        run.prepare()
        run.execute()
    except UnsupportedWorkload as exc:
        return STATUS_UNSUPPORTED, str(exc)
    except RunTimeout:
        op = run.ops[run.op_index] if 0 <= run.op_index < len(run.ops) else None
        where = f" in {op_label(run.op_index, op)}" if op is not None else ""
        return STATUS_TIMEOUT, f"timed out after {run.options.timeout:g} s of wall time{where}"
    except (WorkloadError, SchedulerCoreError) as exc:
        return STATUS_FAILED, str(exc)
    except Exception as exc:  # a bug: report it, never raise for a workload
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return STATUS_FAILED, (f"internal error: {type(exc).__name__}: {exc} "
                               f"({tb.filename}:{tb.lineno})")
    return STATUS_OK, None
