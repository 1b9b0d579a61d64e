"""Work a plugin starts during a scheduling cycle but that finishes off it (upstream: a
goroutine issuing API calls, such as the evictions of asynchronous preemption).

The core is single-threaded, so "off the cycle" needs a defined moment at which such work takes
effect. The scheduler loop runs it at one of two points, whichever comes first:

* **after one further attempt**: work submitted during attempt ``A`` runs just before the pod
  of attempt ``A + 2`` is popped. Upstream's goroutine starts as the cycle that spawned it
  ends, while the scheduler goes straight on to pop the next pod and snapshot the cluster; each
  eviction is an API round trip plus a watch delivery, so that next attempt still sees the old
  state, and a cycle lasts about as long as those calls, so the attempt after it sees the
  result. :data:`ATTEMPTS_BEFORE_DONE` is that one attempt;
* **when the scheduler would be idle**: nothing can be popped. The goroutine would finish while
  the scheduler waits for work, before any clock-driven flush.

Tasks run in submission order; the same seed gives the same order of attempts and tasks.
See docs/scheduling-model.md, "Preemption".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

__all__ = ["ATTEMPTS_BEFORE_DONE", "OffCycleWork"]

ATTEMPTS_BEFORE_DONE = 1  # further attempts that still see the state before the work's effect

Task = Callable[[], None]


class OffCycleWork:
    """A FIFO of tasks, each due once ``ATTEMPTS_BEFORE_DONE`` attempts followed the one that
    submitted it."""

    __slots__ = ("_tasks",)

    def __init__(self) -> None:
        self._tasks: deque[tuple[int, Task]] = deque()

    def __len__(self) -> int:
        return len(self._tasks)

    def submit(self, task: Task, attempts: int) -> None:
        """Queue ``task`` submitted during attempt number ``attempts`` (the scheduler's count
        of popped pods, this one included)."""
        self._tasks.append((attempts + ATTEMPTS_BEFORE_DONE, task))

    def run_due(self, attempts: int) -> int:
        """Run the tasks due once ``attempts`` attempts were made (before the next pop).
        Returns how many ran."""
        tasks = self._tasks
        ran = 0
        while tasks and tasks[0][0] <= attempts:
            tasks.popleft()[1]()
            ran += 1
        return ran

    def run_all(self) -> int:
        """Run every queued task (the scheduler has nothing to pop). Tasks a task submits run
        too. Returns how many ran."""
        tasks = self._tasks
        ran = 0
        while tasks:
            tasks.popleft()[1]()
            ran += 1
        return ran
