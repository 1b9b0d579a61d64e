"""TierGate: the rule of schedperf's extender server (``workloads.extender_server.rule``) as
an in-process plugin, written twice, so that extending the scheduler in process, per node, by
WebAssembly or over HTTP can be compared on the very same logic.

* Filter: a node labelled ``example.com/tier: excluded`` is rejected.
* Score (0-100): ``gold`` 100, ``silver`` 50, anything else 0: the extender's 0-10 score times
  10, which is how the scheduler scales an extender's score, so with the same weight the
  totals (and the placements, where the same nodes are examined) are the same.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
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
from workloads.extender_server.rule import (
    EXCLUDED,
    REJECT_MESSAGE,
    TIER_LABEL,
    node_passes,
    node_score,
)

__all__ = ["NAME", "SCORE_SCALE", "TierGatePerNode", "TierGateVectorised"]

NAME = "TierGate"
SCORE_SCALE = 10  # MaxNodeScore / MaxExtenderPriority
_FAILURE = Status.unschedulable(REJECT_MESSAGE, plugin=NAME)


def _events() -> list[ClusterEventWithHint]:
    node_changed = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    return [ClusterEventWithHint(node_changed, _after_node_change)]


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    if old is None or old.labels.get(TIER_LABEL) != new.labels.get(TIER_LABEL):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


class TierGatePerNode:
    """TierGate one node at a time (wrapped by the per-node adapter)."""

    name: ClassVar[str] = NAME
    per_node: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if node_passes(node_info.node.labels) else _FAILURE

    def score(self, pod: Pod, node_info: NodeInfo) -> int:
        return node_score(node_info.node.labels) * SCORE_SCALE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return _events()


class TierGateVectorised(FilterBase):
    """TierGate over the node table: the tier label's codes through two small lookups."""

    name: ClassVar[str] = NAME
    failure: ClassVar[Status] = _FAILURE
    score_in_range: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    @staticmethod
    def _lookups(table: NodeTable) -> tuple[np.ndarray, np.ndarray] | None:
        """Per slot: whether the node passes, and its score; None when no node has the label."""

        def compute() -> tuple[np.ndarray, np.ndarray] | None:
            codes = table.codes(TIER_LABEL)
            if codes is None:
                return None
            values = table.label_values.get(TIER_LABEL, [])
            passes = np.array([v != EXCLUDED for v in values] + [True], dtype=bool)
            scores = np.array([node_score({TIER_LABEL: v}) * SCORE_SCALE for v in values] + [0],
                              dtype=np.int64)
            return passes[codes], scores[codes]

        return memo_by_version(table, (NAME, table.capacity), compute)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
               ) -> np.ndarray | None:
        lookups = self._lookups(table)
        return None if lookups is None else lookups[0][idx]

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        lookups = self._lookups(table)
        if lookups is None:
            return np.zeros(len(table.pod_count[idx]), dtype=np.int64)
        return lookups[1][idx]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return _events()
