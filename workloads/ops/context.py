"""What an op may use of the run it is part of: :class:`OpContext`.

Ops change the cluster (directly, or through the API facade), read the run's clock and set
timers, create pods, wait while the scheduler runs, open and close metrics collection windows,
and keep the namespaces a barrier waits for (:class:`PodView`). They never touch the run's
other state; :class:`workloads.runner.run.Run` implements both protocols.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.cluster.store import Cluster
    from workloads.ops.api import FakeApi
    from workloads.ops.factories import PodFactory

__all__ = ["OpContext", "PodView", "TimerFn"]

# A timer callback returns the time it wants to run next, or None when it is done.
TimerFn = Callable[[], "float | None"]


class PodView(Protocol):
    """Pods by namespace as the cluster's watch shows them, and the namespaces a barrier
    waits for (upstream's ``numPodsScheduledPerNamespace``)."""

    @property
    def bound(self) -> Mapping[str, int]:
        """Namespace -> pods with a node now."""
        ...

    def in_namespace(self, ns: str) -> Mapping[str, Pod]:
        """The pods of ``ns`` (key -> pod), in creation order."""
        ...

    def bind_hook(self, hook: Callable[[Pod], None]) -> AbstractContextManager[None]:
        """Call ``hook(pod)`` for every pod that gets a node while the block runs."""
        ...

    def knows(self, ns: str) -> bool: ...

    def expect(self, ns: str, count: int) -> None:
        """``count`` more pods of ``ns`` that the next Scheduled barrier waits for."""
        ...

    def expected(self, namespaces: Sequence[str]) -> dict[str, int]:
        """Namespace -> pods a barrier on ``namespaces`` (every known one when empty) waits
        for."""
        ...

    def release(self, namespaces: Sequence[str]) -> None:
        """A Scheduled barrier on ``namespaces`` (every one when empty) passed."""
        ...


class OpContext(Protocol):
    """The run as an op sees it."""

    cluster: Cluster  # the store: nodes are added here directly
    api: FakeApi  # objects created, updated and deleted as kube-apiserver would
    pods: PodView
    now: Callable[[], float]  # the run's clock (virtual or real seconds)
    call_at: Callable[[float, TimerFn], None]  # a timer on the run's clock

    @property
    def failures(self) -> Mapping[str, str]:
        """Pod key -> its last scheduling failure."""
        ...

    @property
    def window_open(self) -> bool:
        """Whether a metrics collection window is open."""
        ...

    def prepared(self, index: int) -> Any:
        """What op ``index``'s prepare step returned (None without one)."""
        ...

    def check_timeout(self) -> None:
        """Raise when the run's wall-clock budget is spent (long loops call it)."""
        ...

    def register_namespace(self, ns: str, labels: Mapping[str, str] | None = None) -> None:
        """Create ``ns`` if missing (with ``labels``) and make it known to barriers."""
        ...

    def create_pods(self, factory: PodFactory, count: int) -> None:
        """Create ``count`` pods at once (no time passes)."""
        ...

    def start_creating_pods(self, factory: PodFactory, count: int) -> Callable[[], bool]:
        """Start creating ``count`` pods interleaved with scheduling; the predicate is true
        once every pod exists."""
        ...

    def run_until(self, done: Callable[[], bool] | None, *, until: float | None = None,
                  what: str = "", describe: Callable[[], str] | None = None,
                  limited: bool = False) -> None:
        """Let the scheduler run until ``done()`` or the clock reaches ``until``."""
        ...

    def wait_scheduled(self, ns: str, want: int) -> None:
        """Let the scheduler run until ``want`` pods of ``ns`` have a node."""
        ...

    def throttled(self, check: Callable[[], bool]) -> Callable[[], bool]:
        """``check`` as a ``done`` predicate evaluated only every few attempts."""
        ...

    def run_rate_limited(self, count: int, per_second: int, fn: Callable[[int], None], *,
                         wait: bool, what: str) -> None:
        """Call ``fn(0..count-1)`` from a ticker at ``per_second``; wait for the last call
        (the scheduler runs meanwhile) unless ``wait`` is False."""
        ...

    def open_window(self, index: int, name: str, namespaces: Sequence[str],
                    selector: Mapping[str, str], collectors: Sequence[str]) -> None: ...

    def close_window(self, index: int) -> None: ...

    def report_error(self, message: str) -> None:
        """A problem that fails the workload at its end without stopping it."""
        ...
