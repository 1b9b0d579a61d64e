"""How one workload is run: :class:`RunOptions`, the switches that ``run_workload``,
``execute_workload`` and :class:`~workloads.runner.run.Run` take, and the callbacks they may
hold (:class:`ProgressEvent` receivers, a :class:`Pacer`, the set-up-end hook)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from workloads.runner.clocks import CLOCK_MODES

if TYPE_CHECKING:
    from workloads.runner.run import Run

__all__ = ["STOP_AFTER", "Pacer", "ProgressEvent", "RunOptions"]

STOP_AFTER = ("all", "setup")  # RunOptions.stop_after


class Pacer(Protocol):
    """Takes turns with another process: called after every scheduling cycle, it may block
    while the other process runs; ``now`` is a clock that stops meanwhile."""

    def __call__(self) -> None: ...

    def now(self) -> float: ...


@dataclass(frozen=True)
class ProgressEvent:
    """What ``progress`` is called with: at every op start and about twice a second while
    the scheduler runs."""

    test_case: str
    workload: str
    op_index: int
    op_count: int
    opcode: str
    pods_scheduled: int
    attempts: int
    wall_seconds: float
    virtual_seconds: float


@dataclass(frozen=True)
class RunOptions:
    """The switches of one run; the defaults are the normal run (see
    :mod:`workloads.runner.run` for what each measurement switch does)."""

    seed: int = 0
    clock: str = "virtual"  # "virtual" (deterministic) or "real"
    record_decisions: bool = False
    timeout: float | None = None  # seconds of wall time; None: no limit
    sample_interval: float = 0.1  # seconds between SchedulingThroughput samples
    progress: Callable[[ProgressEvent], None] | None = None
    wall_clock_metrics: bool = True
    plugin_sample_percent: int = 10
    stop_after: str = "all"  # one of STOP_AFTER
    pacer: Pacer | None = None
    at_setup_end: Callable[[Run], None] | None = None
    # called with the new Run before its first op (the fidelity check attaches its mirror)
    at_start: Callable[[Run], None] | None = None

    def check(self) -> None:
        """ValueError naming the first switch out of its range."""
        if self.clock not in CLOCK_MODES:
            raise ValueError(f"clock must be one of {', '.join(CLOCK_MODES)}, "
                             f"got {self.clock!r}")
        if self.sample_interval <= 0:
            raise ValueError(f"sample_interval must be > 0, got {self.sample_interval}")
        if self.stop_after not in STOP_AFTER:
            raise ValueError(f"stop_after must be one of {', '.join(STOP_AFTER)}, "
                             f"got {self.stop_after!r}")
        if not 0 <= self.plugin_sample_percent <= 100:
            raise ValueError(f"plugin_sample_percent must be 0-100, "
                             f"got {self.plugin_sample_percent}")
