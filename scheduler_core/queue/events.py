"""The cluster events the scheduling queue raises itself, and the events of a pod update.

Cluster events from the rest of the scheduler (a node added, a PV bound, ...) are built by their
senders; the queue defines only the pod events and its own wildcard events
(docs/scheduling-model.md, "Requeueing and queueing hints"):

- ``EVENT_ASSIGNED_POD_*`` / ``EVENT_UNSCHEDULED_POD_*``: a bound / a pending pod changed;
- ``EVENT_UNSCHEDULABLE_TIMEOUT``: the leftover flush of pods that waited too long;
- ``EVENT_FORCE_ACTIVATE``: PodsToActivate for an in-flight pod;
- ``pod_scheduling_properties_change``: the update events one pod update raises (kube's
  ``PodSchedulingPropertiesChange``), and ``pod_updated`` for the legacy mode without
  queueing hints (kube's ``isPodUpdated``).
"""

from __future__ import annotations

import dataclasses

from scheduler_core.api.pod import Pod, PodSpec
from scheduler_core.framework.interface import ActionType, ClusterEvent, ClusterEventWithHint

__all__ = [
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "REGISTER_ALL_EVENTS",
    "pod_scheduling_properties_change",
    "pod_updated",
]

# resources, as named in framework/interface.py
_POD = "Pod"  # assigned pods
_UNSCHEDULED_POD = "UnscheduledPod"
_WILDCARD = "*"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(_POD, ActionType.ADD, "AssignedPodAdd")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(_POD, ActionType.DELETE, "AssignedPodDelete")
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(_UNSCHEDULED_POD, ActionType.ADD, "UnscheduledPodAdd")
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(_UNSCHEDULED_POD, ActionType.UPDATE,
                                            "UnscheduledPodUpdate")
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(_UNSCHEDULED_POD, ActionType.DELETE,
                                            "UnscheduledPodDelete")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(_WILDCARD, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(_WILDCARD, ActionType.ALL, "ForceActivate")

#: The registration of a plugin without EnqueueExtensions: every event, no hint (= Queue).
REGISTER_ALL_EVENTS: tuple[ClusterEventWithHint, ...] = (
    ClusterEventWithHint(ClusterEvent(_WILDCARD, ActionType.ALL)),
)

# Upstream has an ``updatePodOther`` bit that only a plain ``Update`` registration matches.
# Until interface.ActionType grows one, an "other" pod update is reported as UPDATE.
_UPDATE_POD_OTHER: int = getattr(ActionType, "UPDATE_POD_OTHER", ActionType.UPDATE)

_POD_UPDATE_LABELS = {
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
}
_POD_UPDATE_EVENTS: dict[tuple[str, int], ClusterEvent] = {
    (res, action): ClusterEvent(res, action, f"{res}/{label}")
    for res in (_POD, _UNSCHEDULED_POD)
    for action, label in (*_POD_UPDATE_LABELS.items(), (_UPDATE_POD_OTHER, "Update"))
}


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod) -> list[ClusterEvent]:
    """kube's ``PodSchedulingPropertiesChange``: the update events one pod update raises.

    The resource is ``Pod`` for an assigned pod and ``UnscheduledPod`` otherwise; an update
    that changes none of labels, requests (scale-down), gates (all removed) or tolerations
    is a plain update.
    """
    res = _POD if new_pod.node_name else _UNSCHEDULED_POD
    old_spec, new_spec = old_pod.spec, new_pod.spec
    actions = []
    if new_pod.labels != old_pod.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if old_spec is not new_spec:
        new_req = new_spec.requests
        for name, value in old_spec.requests.items():
            nv = new_req.get(name)
            if nv is None or value > nv:
                actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
                break
        if old_spec.scheduling_gates and not new_spec.scheduling_gates:
            actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
        if len(old_spec.tolerations) != len(new_spec.tolerations):
            actions.append(ActionType.UPDATE_POD_TOLERATION)
    if not actions:
        actions.append(_UPDATE_POD_OTHER)
    return [_POD_UPDATE_EVENTS[(res, a)] for a in actions]


_SPEC_FIELDS = tuple(f.name for f in dataclasses.fields(PodSpec) if f.init)


def pod_updated(old: Pod | None, new: Pod) -> bool:
    """Legacy ``isPodUpdated``: anything but status (nominated node, start time) changed."""
    if old is None:
        return True
    if (old.labels != new.labels or old.annotations != new.annotations
            or old.owner_references != new.owner_references
            or old.deletion_timestamp != new.deletion_timestamp
            or old.node_name != new.node_name or old.priority != new.priority
            or old.name != new.name or old.namespace != new.namespace or old.uid != new.uid):
        return True
    a, b = old.spec, new.spec
    return a is not b and any(getattr(a, f) != getattr(b, f) for f in _SPEC_FIELDS)
