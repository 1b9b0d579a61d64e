"""Running one scheduler_perf workload against schedperf's scheduler on a fake in-memory
cluster.

Public API (this module names it; the code lives in the modules below)::

    run_workload(test_case, workload, *, seed=0, clock="virtual", ...) -> WorkloadResult
    execute_workload(test_case, workload, *, ...) -> (WorkloadResult, Run | None)

See :mod:`workloads.runner.run` for how ops run and what the measurement switches do.
Modules inside this package import from each other, never from this facade.
"""

from __future__ import annotations

from workloads.runner.run import (
    HONOURED_GATES,
    POP_FROM_BACKOFF_GATE,
    QUEUEING_HINTS_GATE,
    STOP_AFTER,
    WAIT_LIMIT,
    Pacer,
    ProgressEvent,
    Run,
    execute_workload,
    run_workload,
)

__all__ = [
    "HONOURED_GATES",
    "POP_FROM_BACKOFF_GATE",
    "QUEUEING_HINTS_GATE",
    "STOP_AFTER",
    "WAIT_LIMIT",
    "Pacer",
    "ProgressEvent",
    "Run",
    "execute_workload",
    "run_workload",
]
