"""``FlushGrid``: the times of one periodic queue flush, ``t0 + k * period`` (k = 0, 1, ...).

kube runs the backoffQ flush every 1 s and the unschedulable-pool leftover flush every 30 s
with ``wait.Until``, which starts immediately; here both grids start when the queue is
constructed, and the caller drives them from the injected clock
(docs/scheduling-model.md, "Backoff").
"""

from __future__ import annotations

import math

__all__ = ["FlushGrid"]


class FlushGrid:
    """Flush times ``t0 + k * period``; ``k`` is the index of the next flush not yet run."""

    __slots__ = ("k", "period", "t0")

    def __init__(self, t0: float, period: float) -> None:
        self.t0 = t0
        self.period = float(period)
        self.k = 0

    def due(self, now: float) -> bool:
        """The next flush's time has come."""
        return now >= self.t0 + self.k * self.period

    def ran(self, now: float) -> None:
        """The flush ran at ``now``: the next one is the first grid time after ``now``."""
        k = math.floor((now - self.t0) / self.period) + 1
        while self.t0 + k * self.period <= now:
            k += 1
        self.k = k

    def window(self, t: float) -> float:
        """Start of the flush window holding ``t``."""
        period = self.period
        return self.t0 + math.floor((t - self.t0) / period) * period

    def first_at_or_after(self, t: float) -> float:
        """The first flush not yet run whose time is >= ``t``."""
        period = self.period
        k = max(self.k, math.ceil((t - self.t0) / period))
        at = self.t0 + k * period
        while at < t:
            k += 1
            at = self.t0 + k * period
        return at

    def first_over(self, ts: float, limit: float) -> float:
        """The first flush not yet run at which more than ``limit`` has passed since ``ts``."""
        period = self.period
        k = max(self.k, math.floor((ts + limit - self.t0) / period))
        at = self.t0 + k * period
        while not at - ts > limit:
            k += 1
            at = self.t0 + k * period
        return at
