"""Run a plain per-node plugin (``filter(pod, node_info) -> Status | None``,
``score(pod, node_info) -> int``) inside the vectorised framework.

This is the shape in which most people first write a plugin. It is correct but loops over
nodes in Python, which is exactly what schedperf can measure against a vectorised version.
A per-node plugin class sets ``per_node = True`` and is constructed like any other plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import Code, CycleState, Status
from scheduler_core.nodetable.table import NodeTable

__all__ = ["NodeInfo", "PerNodeAdapter"]


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A read-only per-node view built from the node table."""

    node: Node
    pods: tuple[Pod, ...]
    requested: dict[str, int]
    allocatable: dict[str, int]

    @classmethod
    def from_table(cls, table: NodeTable, slot: int) -> NodeInfo:
        node = table.node(slot)
        requested = {r: int(col[slot]) for r, col in table.requested.items() if col[slot]}
        return cls(node, tuple(table.pods[slot].values()), requested, dict(node.allocatable))


def _slots(table: NodeTable, idx: Any) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(*idx.indices(table.capacity))
    return np.asarray(idx)


class PerNodeAdapter:
    """Wraps a per-node plugin; exposes only the extension points the wrapped one has."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.name = plugin.name
        if not hasattr(plugin, "filter"):
            self.filter = None  # type: ignore[assignment]
            self.explain = None  # type: ignore[assignment]
        if not hasattr(plugin, "score"):
            self.score = None  # type: ignore[assignment]
        if hasattr(plugin, "normalize"):
            self.normalize = lambda state, pod, scores: np.asarray(
                plugin.normalize(pod, scores), dtype=np.int64)
        if hasattr(plugin, "events_to_register"):
            self.events_to_register = plugin.events_to_register

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        slots = _slots(table, idx)
        out = np.ones(len(slots), dtype=bool)
        for i, slot in enumerate(slots):
            status = self.plugin.filter(pod, NodeInfo.from_table(table, int(slot)))
            if status is not None and status.code != Code.SUCCESS:
                out[i] = False
        return out

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        slots = _slots(table, idx)
        statuses: list[Status] = []
        seen: dict[Status, int] = {}
        rid = np.zeros(len(slots), dtype=np.int64)
        for i, slot in enumerate(slots):
            status = self.plugin.filter(pod, NodeInfo.from_table(table, int(slot)))
            status = status or Status(Code.UNSCHEDULABLE)
            if status not in seen:
                seen[status] = len(statuses)
                statuses.append(status)
            rid[i] = seen[status]
        return rid, statuses

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        slots = _slots(table, idx)
        return np.fromiter((int(self.plugin.score(pod, NodeInfo.from_table(table, int(s))))
                            for s in slots), dtype=np.int64, count=len(slots))
