"""Injectable clocks for the scheduling queue (kube's ``WithClock``). Time is float seconds.

Tests and benchmarks use ``FakeClock`` and never sleep; a simulated-time driver advances it
to ``PriorityQueue.next_event_time()`` when nothing is active.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "RealClock"]


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale (only differences matter)."""
        ...


class RealClock:
    """``time.monotonic``."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def __repr__(self) -> str:
        return "RealClock()"


class FakeClock:
    """A clock that moves only when told to; it never goes backwards."""

    __slots__ = ("_t",)

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)

    def now(self) -> float:
        return self._t

    def set(self, t: float) -> None:
        if t < self._t:
            raise ValueError(f"FakeClock cannot go backwards: {t} < now {self._t}")
        self._t = float(t)

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError(f"FakeClock.advance needs seconds >= 0, got {seconds}")
        self._t += seconds
        return self._t

    def __repr__(self) -> str:
        return f"FakeClock(now={self._t})"
