"""Placements of the pod-group cycle (topology-aware workload scheduling, kube v1.37's
``fwk.Placement``): a named subset of the node table in which a whole group is tried.

A placement is a boolean mask over the node table's slots (``mask``) together with its
live slots in snapshot list order (``slots``), the order the filter search walks them in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scheduler_core.nodetable.table import NodeTable

__all__ = ["Placement", "whole_table"]


@dataclass(frozen=True, slots=True, eq=False)
class Placement:
    """``name`` (a topology domain's value; "" for the whole table), ``slots`` (int64, list
    order) and ``mask`` (bool, one entry per table slot, True on ``slots``)."""

    name: str
    slots: np.ndarray
    mask: np.ndarray

    @classmethod
    def of(cls, name: str, slots: np.ndarray, capacity: int) -> Placement:
        mask = np.zeros(capacity, dtype=bool)
        mask[slots] = True
        return cls(name, slots, mask)

    def __len__(self) -> int:
        return len(self.slots)


def whole_table(table: NodeTable) -> Placement:
    """Every live node (upstream's parent placement: the snapshot's node list)."""
    return Placement("", table.order(), table.live[: table.capacity])
