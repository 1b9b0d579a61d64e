"""``QueuedPodInfo``: a pod plus the bookkeeping the scheduling queue keeps for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod

__all__ = ["QueuedPodInfo"]


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """kube's ``framework.QueuedPodInfo``.

    - ``timestamp``: when the pod was added, refreshed every time it is put back after a
      failed attempt (QueueSort orders by it; backoff counts from it).
    - ``initial_attempt_timestamp``: when the pod first entered activeQ (None until then).
    - ``attempts``: incremented on every Pop (reported; v1.33 drove the backoff with it).
    - ``unschedulable_count`` / ``consecutive_errors``: counted when the pod is put back after
      a failed attempt, the first when plugins rejected it (which resets the second), the
      second when it failed with an error. They drive the backoff duration (v1.34):
      ``backoff_count``.
    - ``unschedulable_plugins`` / ``pending_plugins``: the plugins that rejected the last
      attempt (set by the scheduler from the Diagnosis; cleared on Pop). Only their queueing
      hints are asked when a cluster event arrives.
    - ``gated`` / ``gating_plugin``: a PreEnqueue plugin refused the pod; it waits in the
      unschedulable pool and is asked only about the events its gating plugin registered.
    - ``seq``: creation order, the last tie-breaker of activeQ ordering.
    """

    pod: Pod
    timestamp: float
    seq: int = 0
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def backoff_count(self) -> int:
        """The failures the backoff doubles over: the consecutive errors if the last attempt
        failed with an error, else the times plugins rejected the pod (0: no backoff)."""
        return self.consecutive_errors or self.unschedulable_count

    @property
    def rejector_plugins(self) -> set[str]:
        """``unschedulable_plugins | pending_plugins``."""
        return self.unschedulable_plugins | self.pending_plugins

    def __repr__(self) -> str:
        extra = f", gated by {self.gating_plugin}" if self.gated else ""
        return (f"QueuedPodInfo({self.pod.key}, attempts={self.attempts}, "
                f"ts={self.timestamp}{extra})")
