"""SchedulingGates. Extension points: PreEnqueue, EnqueueExtensions.

A pod with ``spec.schedulingGates`` stays out of activeQ; only the removal of its own gates
requeues it.

See docs/scheduling-model.md, "Scheduling gates".
"""

from __future__ import annotations

from typing import Any, ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Handle,
    QueueingHint,
    Status,
)
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "SchedulingGates"]

NAME = names.SCHEDULING_GATES


class SchedulingGates:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]",
                                   plugin=NAME)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            _after_gates_eliminated)]


def _after_gates_eliminated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or new.uid != pod.uid or new.spec.scheduling_gates:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE
