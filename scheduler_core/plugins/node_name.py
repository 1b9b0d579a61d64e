"""NodeName. Extension points: Filter, EnqueueExtensions.

A pod with ``spec.nodeName`` set fits only the node of that name.

See docs/scheduling-model.md, "NodeName".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
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
from scheduler_core.plugins.helper import count, no_args

__all__ = ["ERR_REASON", "NAME", "NodeName"]

NAME = names.NODE_NAME
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterBase):
    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = Status.unresolvable(ERR_REASON, plugin=NAME)
    # its Filter reads only the node's own columns, never the pods on it (plugins.node_local)
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        wanted = pod.spec.node_name
        if not wanted:
            return None
        slot = table.slot_of.get(wanted)
        if slot is None:
            return np.zeros(count(table, idx), dtype=bool)
        if isinstance(idx, slice):
            return np.arange(*idx.indices(table.capacity)) == slot
        return np.asarray(idx) == slot

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD), _after_node_add)]


def _after_node_add(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    wanted = pod.spec.node_name
    if not wanted or wanted == new.name:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
