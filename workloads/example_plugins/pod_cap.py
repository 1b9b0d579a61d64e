"""PodCap: an example out-of-tree plugin, written twice.

The rule (what a team might add on top of the default profile):

* Filter: a node labelled ``example.com/pod-cap: "<n>"`` accepts at most ``n`` pods (a value
  that is not an integer, as Go's ``strconv.ParseInt`` reads it, means no cap). Nodes without
  the label are not capped.
* Score (0-100): a tier bonus from ``example.com/tier`` (gold 60, silver 30, anything else 0)
  plus up to 40 points for pod-slot headroom, ``40 * free // cap``, where ``cap`` is the pod cap
  (or the node's allocatable ``pods`` when uncapped) and ``free = max(cap - pods, 0)``.

:class:`PodCapPerNode` is the shape most people first write: plain Python over one node at a
time, run through ``scheduler_core.framework.adapter.PerNodeAdapter`` (``per_node = True``).
:class:`PodCapVectorised` is the same rule over the node table's numpy columns. Both register
under the plugin name ``PodCap``; the ``OutOfTreePlugin*`` test cases of the ``uncommon``
catalog run one each so their throughput can be compared.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import parse_int64
from scheduler_core.framework.adapter import NodeInfo
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
from scheduler_core.plugins.helper import memo_by_version, no_args

__all__ = [
    "CAP_LABEL",
    "ERR_REASON_POD_CAP",
    "HEADROOM_POINTS",
    "NAME",
    "TIER_BONUS",
    "TIER_LABEL",
    "PodCapPerNode",
    "PodCapVectorised",
]

NAME = "PodCap"
CAP_LABEL = "example.com/pod-cap"
TIER_LABEL = "example.com/tier"
TIER_BONUS = {"gold": 60, "silver": 30}
HEADROOM_POINTS = 40
ERR_REASON_POD_CAP = "node(s) reached their example.com/pod-cap"
_FAILURE = Status.unschedulable(ERR_REASON_POD_CAP, plugin=NAME)


def _events() -> list[ClusterEventWithHint]:
    """A pod leaving a node frees a slot; a node added or relabelled may have a new cap."""
    return [
        ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE)),
        ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                             _after_node_change),
    ]


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    if old is None or old.labels.get(CAP_LABEL) != new.labels.get(CAP_LABEL):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


# --------------------------------------------------------------------------- per node


class PodCapPerNode:
    """PodCap, one node at a time (wrapped by the per-node adapter)."""

    name: ClassVar[str] = NAME
    per_node: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    @staticmethod
    def _cap(node: Node) -> int | None:
        value = node.labels.get(CAP_LABEL)
        return None if value is None else parse_int64(value)

    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        cap = self._cap(node_info.node)
        if cap is not None and len(node_info.pods) >= cap:
            return _FAILURE
        return None

    def score(self, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        bonus = TIER_BONUS.get(node.labels.get(TIER_LABEL, ""), 0)
        cap = self._cap(node)
        if cap is None:
            cap = node_info.allocatable.get("pods", 0)
        headroom = 0
        if cap > 0:
            headroom = HEADROOM_POINTS * max(cap - len(node_info.pods), 0) // cap
        return min(100, max(0, bonus + headroom))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return _events()


# --------------------------------------------------------------------------- vectorised


class PodCapVectorised(FilterBase):
    """PodCap over the node table's columns: label codes mapped through small lookup arrays."""

    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = _FAILURE
    score_in_range: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    @staticmethod
    def _caps(table: NodeTable) -> tuple[np.ndarray, np.ndarray] | None:
        """Per slot (over the table's capacity): the cap and whether the node has one; None
        when no node was ever labelled. Recomputed only when a node changes."""

        def compute() -> tuple[np.ndarray, np.ndarray] | None:
            codes = table.codes(CAP_LABEL)
            if codes is None:
                return None
            ints, ok = table.numeric_values(CAP_LABEL)  # code -1 reads the trailing "absent"
            return ints[codes], ok[codes]

        return memo_by_version(table, (NAME, "caps", table.capacity), compute)

    @staticmethod
    def _bonus(table: NodeTable) -> np.ndarray | None:
        def compute() -> np.ndarray | None:
            codes = table.codes(TIER_LABEL)
            if codes is None:
                return None
            values = table.label_values.get(TIER_LABEL, [])
            per_code = np.array([TIER_BONUS.get(v, 0) for v in values] + [0], dtype=np.int64)
            return per_code[codes]

        return memo_by_version(table, (NAME, "bonus", table.capacity), compute)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
               ) -> np.ndarray | None:
        caps = self._caps(table)
        if caps is None:
            return None
        cap, has = caps
        return ~has[idx] | (table.pod_count[idx] < cap[idx])

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        pods = table.pod_count[idx]
        caps = self._caps(table)
        cap = table.allocatable["pods"][idx]
        if caps is not None:
            cap = np.where(caps[1][idx], caps[0][idx], cap)
        positive = cap > 0
        free = np.maximum(cap - pods, 0)
        headroom = np.where(positive, HEADROOM_POINTS * free // np.where(positive, cap, 1), 0)
        bonus = self._bonus(table)
        total = headroom if bonus is None else headroom + bonus[idx]
        return np.clip(total, 0, 100).astype(np.int64, copy=False)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return _events()
