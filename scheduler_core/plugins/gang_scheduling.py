"""GangScheduling (kube v1.37, GenericWorkload gate). Extension points: PreEnqueue, Permit,
EnqueueExtensions, and the pod-group cycle's PlacementFeasible check.

A pod naming a PodGroup (``spec.schedulingGroup.podGroupName``) stays out of activeQ until its
PodGroup exists and, for ``schedulingPolicy.gang``, until ``minCount`` pods of the group exist
(pending, assumed or bound). In the pod-group cycle, ``placement_feasible`` says whether the
pods placed so far plus the ones still to try can reach ``minCount``. At Permit a gang pod
waits (5 minutes at most) until ``minCount`` pods of its group are assumed or bound; the pod
that completes the quorum lets every waiting member through.

Pods are requeued by the events that can complete a gang: a pod of the same group added
(unscheduled or bound), the PodGroup added, or its ``minCount`` lowered.

See docs/scheduling-model.md, "Pod groups".
"""

from __future__ import annotations

from typing import Any, ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import PodGroup
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    QueueingHint,
    Status,
)
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = [
    "EVENT_POD_GROUP_ADD",
    "EVENT_POD_GROUP_UPDATE",
    "NAME",
    "PERMIT_TIMEOUT",
    "GangScheduling",
    "min_count",
]

NAME = names.GANG_SCHEDULING
PERMIT_TIMEOUT = 300.0  # seconds a gang pod waits at Permit for its quorum
EVENT_POD_GROUP_ADD = ClusterEvent("PodGroup", ActionType.ADD, "PodGroupAdd")
EVENT_POD_GROUP_UPDATE = ClusterEvent("PodGroup", ActionType.UPDATE, "PodGroupUpdate")
_QUEUE, _SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
_NO_QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"


def min_count(pg: PodGroup) -> int:
    """The pods a group needs placed at once: ``gang.minCount``, or 1 for ``basic``."""
    return pg.policy.min_count if pg.policy.gang else 1


class GangScheduling:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self._handle = handle
        # group key -> uids of the pods Permit told to wait (the ones a quorum lets go)
        self._held: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod) -> Status | None:
        group = pod.spec.pod_group
        if not group or self._handle is None:
            return None
        cluster = self._handle.cluster
        key = pod.group_key
        pg = cluster.pod_groups.get(key)
        if pg is None:
            return Status.unresolvable(
                f'waiting for pods\'s pod group "{group}" to appear in scheduling queue',
                plugin=NAME)
        if not pg.policy.gang:
            return None
        if len(cluster.group_pods.get(key, ())) < pg.policy.min_count:
            return Status.unresolvable(_NO_QUORUM, plugin=NAME)
        return None

    # ------------------------------------------------------------------ pod-group cycle
    @staticmethod
    def placement_feasible(pg: PodGroup, scheduled: int, remaining: int) -> Status | None:
        """None: ``minCount`` is met; Wait: it may still be met by the pods left to try;
        Unschedulable: it cannot be met any more."""
        need = min_count(pg)
        if remaining + scheduled < need:
            return Status.unschedulable(
                f"minCount ({need}) cannot be satisfied: {scheduled} scheduled, "
                f"{remaining} remaining", plugin=NAME)
        if scheduled < need:
            return Status(Code.WAIT, (f"minCount ({need}) is not yet satisfied: {scheduled} "
                                      f"scheduled, {remaining} remaining",), NAME)
        return None

    # ------------------------------------------------------------------ Permit
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        group = pod.spec.pod_group
        handle = self._handle
        if not group or handle is None:
            return None, 0.0
        cluster = handle.cluster
        key = pod.group_key
        pg = cluster.pod_groups.get(key)
        if pg is None:
            return Status(Code.ERROR, (f"failed to get podGroup {key}: not found",), NAME), 0.0
        if not pg.policy.gang:
            return None, 0.0
        if cluster.group_scheduled.get(key, 0) < pg.policy.min_count:
            self._held.setdefault(key, set()).add(pod.uid)
            return (Status(Code.WAIT, ("waiting for minCount pods from a gang to be scheduled",),
                           NAME), PERMIT_TIMEOUT)
        # quorum: every assumed member waiting here may go (upstream walks the group's assumed
        # pods; the ones this plugin held are those)
        for uid in self._held.pop(key, ()):
            waiting = handle.get_waiting_pod(uid)
            if waiting is not None and uid != pod.uid:
                waiting.allow(NAME)
        return None, 0.0

    # ------------------------------------------------------------------ EnqueueExtensions
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.ADD), _after_pod_added),
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.ADD), _after_pod_added),
            ClusterEventWithHint(EVENT_POD_GROUP_ADD, _after_group_added),
            ClusterEventWithHint(EVENT_POD_GROUP_UPDATE, _after_group_updated),
        ]


def _after_pod_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or not pod.spec.pod_group or not new.spec.pod_group:
        return _SKIP
    return _QUEUE if new.group_key == pod.group_key else _SKIP


def _after_group_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or not pod.spec.pod_group:
        return _SKIP
    return _QUEUE if new.key == pod.group_key else _SKIP


def _after_group_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is None or old is None or not pod.spec.pod_group:
        return _SKIP
    if new.key != pod.group_key:
        return _SKIP
    if not (old.policy.gang and new.policy.gang):
        return _SKIP
    return _QUEUE if new.policy.min_count < old.policy.min_count else _SKIP
