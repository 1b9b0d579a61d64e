"""PodGroupPodsCount (kube v1.37, TopologyAwareWorkloadScheduling gate): a PlacementScore
plugin favouring the placement that holds more pods of the group.

A placement's raw score is the group's pods that already have a node (assumed or bound) plus
the pods proposed in it; normalising scales each by the largest raw score to 0..100 (integer
division). Every raw score 0 is an error, as upstream.
"""

from __future__ import annotations

from typing import Any, ClassVar

from scheduler_core.api.podgroup import PodGroup
from scheduler_core.framework.interface import Code, Handle, Status
from scheduler_core.framework.placement import Placement
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "PodGroupPodsCount"]

NAME = names.POD_GROUP_PODS_COUNT
_MAX_SCORE = 100


class PodGroupPodsCount:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self._handle = handle

    def score_placement(self, pg: PodGroup, placement: Placement, proposed: list[Any]
                        ) -> tuple[int, Status | None]:
        scheduled = 0
        if self._handle is not None:
            scheduled = self._handle.cluster.group_scheduled.get(pg.key, 0)
        return scheduled + len(proposed), None

    def normalize_placement_scores(self, pg: PodGroup, scores: list[int]) -> Status | None:
        top = max(scores, default=0)
        if top == 0:
            return Status(Code.ERROR, ("no pods from pod group are assigned to any of the "
                                       "candidate placements",))
        for i, s in enumerate(scores):
            scores[i] = s * _MAX_SCORE // top
        return None
