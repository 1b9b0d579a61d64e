"""NodeUnschedulable. Extension points: Filter, EnqueueExtensions.

A node with ``spec.unschedulable`` rejects every pod that does not tolerate the taint
``node.kubernetes.io/unschedulable:NoSchedule``.

See docs/scheduling-model.md, "NodeUnschedulable".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import Taint, tolerates_any
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterBase,
    Handle,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import memo_by_version, no_args

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NAME", "UNSCHEDULABLE_TAINT", "NodeUnschedulable"]

NAME = names.NODE_UNSCHEDULABLE
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(FilterBase):
    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = Status.unresolvable(ERR_REASON_UNSCHEDULABLE, plugin=NAME)
    # its Filter reads only the node's own columns, never the pods on it (plugins.node_local)
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        if not memo_by_version(table, (NAME,), lambda: bool(table.unschedulable.any())):
            return None
        if tolerates_any(pod.spec.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return ~table.unschedulable[idx]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                _after_node_change),
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_TOLERATION),
                                 _after_pod_toleration_change),
        ]


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    if (old is None or old.unschedulable) and not new.unschedulable:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod) -> QueueingHint:
    if new.uid == pod.uid and tolerates_any(new.spec.tolerations, UNSCHEDULABLE_TAINT):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
