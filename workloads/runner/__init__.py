"""Run one scheduler_perf workload against schedperf's scheduler on a fake in-memory cluster.

Public API (this module names it; the code lives in the modules below)::

    run_workload(test_case, workload, *, seed=0, clock="virtual", record_decisions=False,
                 timeout=None, sample_interval=0.1, progress=None, wall_clock_metrics=True,
                 plugin_sample_percent=10, stop_after="all") -> WorkloadResult
    execute_workload(test_case, workload, *, <the same>, pacer=None, at_setup_end=None)
        -> (WorkloadResult, Run | None)
    execute(test_case, workload, RunOptions(...)) -> (WorkloadResult, Run | None)

The keywords are the fields of :class:`~workloads.runner.options.RunOptions`.

Never raises for a problem of the workload itself: the result's ``status`` is ``ok``,
``unsupported`` (with the precise reason: an op, kind, volume or node strategy schedperf does
not model), ``failed`` (the error text), ``timeout`` (``timeout`` seconds of wall time passed;
checked between scheduling attempts and while creating objects) or ``threshold-missed``
(upstream's message, data kept).

How ops run (upstream's ``runWorkload``, single-threaded): ops execute in order; the scheduler
runs whenever an op waits (createPods waiting for its pods, barrier, sleep, steady state,
rate-limited deletes and updates), interleaved with background timers (churn, asynchronous
deletes) by the rules in :mod:`workloads.runner.clocks`. Object creation by an op happens at
once, before the scheduler resumes. The run ends after the last op, as upstream cancels everything
then (no implicit final barrier).

Feature gates: ``SchedulerQueueingHints`` and ``SchedulerPopFromBackoffQ`` (both on by
default, as in v1.34) are honoured; every other gate is listed in ``ignored_feature_gates``.
``schedulerConfigPath`` is loaded with ``load_config`` + ``build_frameworks``.

Measurement switches (used by ``bench.measure``; the defaults are the normal run):

* ``wall_clock_metrics=False``: nothing in the run reads or depends on wall time (for
  instruction counting under valgrind): no SchedulingThroughput sampling, no resident-memory
  polling, no window wall/CPU time, no progress callbacks, and the scheduler's metrics recorder
  is disabled (no extension point / plugin timing, no histograms). Placements and counts are
  unchanged; the result's timing fields stay 0.
* ``plugin_sample_percent``: share of scheduling cycles whose plugins are timed one by one
  (upstream's 10 by default; 100 times every plugin in every cycle).
* ``stop_after="setup"``: run only the ops before the first op that opens a metrics collection
  (``createPods`` with ``collectMetrics``, ``startCollectingMetrics``), i.e. the cluster set-up
  (``createNodes``, initial pods, ...), then finish as if the workload ended there.
* ``at_setup_end(run)``: called once, with the Run, where ``stop_after="setup"`` would stop:
  before the first op that opens a metrics collection (after the last op when none does).
  Instruction counting forks the process there.
* ``pacer`` (a :class:`Pacer`): called after every scheduling cycle, it may block while
  another process takes its turn (paced time measurements in ``bench.measure.pacing``); the
  windows' wall time and throughput samples then run on ``pacer.now``, a clock that stops
  while the run waits. A paced run has no wall-clock ``timeout`` of its own.

Summed over the measured windows the :class:`Run` also keeps ``window_extension_seconds``
(extension point -> seconds), ``window_plugin_seconds`` ("Plugin/ExtensionPoint" -> seconds,
of the sampled cycles only), ``window_scheduled`` (pods bound in scope) and
``window_attempts``.

Modules: execution (run_workload, execute_workload, execute), options (RunOptions, ProgressEvent,
Pacer), run (Run: set-up, the ops' context, executing the ops), loop (the scheduling loop and
waits), clocks (virtual / real time, timers, the wall-clock budget), pods (pods by namespace,
from the watch), windows (collection windows and their sums), metrics (a window's collectors,
DataItems, thresholds), outcome (placements, the result), gates (feature gates), decisions
(decision records). The ops themselves are :mod:`workloads.ops`. Modules inside this package
import from each other, never from this facade.
"""

from __future__ import annotations

from workloads.runner.execution import execute, execute_workload, run_workload
from workloads.runner.gates import HONOURED_GATES, POP_FROM_BACKOFF_GATE, QUEUEING_HINTS_GATE
from workloads.runner.loop import WAIT_LIMIT
from workloads.runner.options import STOP_AFTER, Pacer, ProgressEvent, RunOptions
from workloads.runner.run import Run

__all__ = [
    "HONOURED_GATES",
    "POP_FROM_BACKOFF_GATE",
    "QUEUEING_HINTS_GATE",
    "STOP_AFTER",
    "WAIT_LIMIT",
    "Pacer",
    "ProgressEvent",
    "Run",
    "RunOptions",
    "execute",
    "execute_workload",
    "run_workload",
]
