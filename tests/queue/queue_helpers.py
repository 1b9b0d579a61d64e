"""Small builders for the queue tests: pods, a gate-checking PreEnqueue, recording hints."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from scheduler_core.api.affinity import Affinity
from scheduler_core.api.pod import Container, Pod, PodSpec
from scheduler_core.api.selectors import Toleration
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Status,
)
from scheduler_core.plugins import names
from scheduler_core.queue import FakeClock, PriorityQueue, QueuedPodInfo

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP

NODE_ADD = ClusterEvent("Node", ActionType.ADD)
NODE_DELETE = ClusterEvent("Node", ActionType.DELETE)
NODE_LABEL = ClusterEvent("Node", ActionType.UPDATE_NODE_LABEL)
GATES_ELIMINATED = ClusterEvent("UnscheduledPod",
                                ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)


def mkpod(name: str, prio: int = 0, *, ns: str = "default", gates: Iterable[str] = (),
          labels: dict[str, str] | None = None, affinity: Affinity | None = None,
          cpu: int | None = None, tolerations: tuple[Toleration, ...] = (),
          nominated: str = "", uid: str = "") -> Pod:
    containers = (Container("c", "img", {"cpu": cpu}),) if cpu is not None else ()
    spec = PodSpec(priority=prio, scheduling_gates=tuple(gates),
                   affinity=affinity or Affinity(), containers=containers,
                   tolerations=tolerations)
    return Pod(name, ns, spec=spec, labels=dict(labels or {}), nominated_node_name=nominated,
               uid=uid)


def with_spec(pod: Pod, **changes: Any) -> Pod:
    """A new version of ``pod`` (same uid) with a rebuilt spec."""
    fields = dict(priority=pod.spec.priority, scheduling_gates=pod.spec.scheduling_gates,
                  affinity=pod.spec.affinity, containers=pod.spec.containers,
                  tolerations=pod.spec.tolerations)
    fields.update(changes)
    new = Pod(pod.name, pod.namespace, spec=PodSpec(**fields), labels=dict(pod.labels),
              uid=pod.uid, nominated_node_name=pod.nominated_node_name)
    return new


def relabel(pod: Pod, **labels: str) -> Pod:
    new = pod.clone()
    new.uid = pod.uid
    new.labels = {**pod.labels, **labels}
    return new


def gates_pre_enqueue(pod: Pod) -> tuple[str, Status] | None:
    gates = pod.spec.scheduling_gates
    if not gates:
        return None
    return names.SCHEDULING_GATES, Status.unresolvable(
        f"waiting for scheduling gates: [{' '.join(gates)}]")


def gates_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or new.uid != pod.uid or new.spec.scheduling_gates:
        return SKIP
    return QUEUE


GATES_REGISTRATION = [ClusterEventWithHint(GATES_ELIMINATED, gates_hint)]


class Hints:
    """Recording hint functions: ``h.fn("A", QUEUE)`` answers QUEUE and logs each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []  # (plugin, pod name, event label/obj)

    def fn(self, plugin: str, answer: QueueingHint | Callable[..., Any]
           ) -> Callable[[Pod, Any, Any], QueueingHint]:
        def hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
            self.calls.append((plugin, pod.name, repr(new)))
            return answer(pod, old, new) if callable(answer) else answer
        return hint

    def plugins_called(self) -> list[str]:
        return [c[0] for c in self.calls]


def make_queue(hints: dict[str, list[ClusterEventWithHint]] | None = None, *,
               start: float = 0.0, **kw: Any) -> tuple[PriorityQueue, FakeClock]:
    clock = FakeClock(start)
    kw.setdefault("pre_enqueue", gates_pre_enqueue)
    all_hints = {names.SCHEDULING_GATES: GATES_REGISTRATION, **(hints or {})}
    return PriorityQueue(clock, hints=all_hints, **kw), clock


def fail(q: PriorityQueue, qpi: QueuedPodInfo, *unschedulable: str,
         pending: Iterable[str] = ()) -> str | None:
    """Hand a popped pod back as rejected by these plugins (none = an error)."""
    qpi.unschedulable_plugins = set(unschedulable)
    qpi.pending_plugins = set(pending)
    return q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def pop_fail(q: PriorityQueue, *unschedulable: str, pending: Iterable[str] = ()
             ) -> QueuedPodInfo:
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, *unschedulable, pending=pending)
    return qpi


def pop_names(q: PriorityQueue) -> list[str]:
    out = []
    while (qpi := q.pop()) is not None:
        out.append(qpi.pod.name)
        q.done(qpi.pod.uid)
    return out
