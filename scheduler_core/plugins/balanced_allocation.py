"""NodeResourcesBalancedAllocation. Extension points: PreScore, Score (no
NormalizeScore).

Args (``NodeResourcesBalancedAllocationArgs``): ``resources`` [{name, weight}], default cpu and
memory; weights must be 1 (0 means 1) and names unique. Scores use the pod's actual requests and
the node's real ``requested`` sums (no non-zero defaults).

v1.34 scores the balance with the pod: ``int((1 - std) * 100)``. v1.37 scores how much the pod
improves it: ``50 + (50 + with - without) // 2`` of the scores with and without the pod. The
GenericWorkload gate exists only from v1.37, so a scheduler with it on (``Handle.
generic_workload``) scores as v1.37 does.

See docs/scheduling-model.md, "NodeResourcesBalancedAllocation".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import SKIP, CycleState, Handle, Status
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import SpecCache, check_keys, count, require_mapping
from scheduler_core.plugins.resource_allocation import (
    ResourceSpec,
    allocatable_requested,
    balanced_scorer,
    parse_resources,
    pod_requests,
)

__all__ = ["NAME", "NodeResourcesBalancedAllocation", "parse_args"]

NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
_PRE_SCORE_KEY = "PreScore" + NAME
_HALF = 50  # MaxNodeScore / 2


def parse_args(args: dict | None, path: str = "") -> tuple[ResourceSpec, ...]:
    data = require_mapping(args, path)
    check_keys(data, path, ("resources",), "NodeResourcesBalancedAllocationArgs")
    rpath = f"{path}.resources" if path else "resources"
    resources = parse_resources(data.get("resources"), rpath)
    seen: set[str] = set()
    for i, r in enumerate(resources):
        if r.name in seen:
            raise ConfigError(f'Duplicate value: "{r.name}"', field=f"{rpath}[{i}].name")
        seen.add(r.name)
        if r.weight != 1:
            raise ConfigError(f"must be 1, got {r.weight}", field=f"{rpath}[{i}].weight")
    return resources


class NodeResourcesBalancedAllocation:
    name: ClassVar[str] = NAME
    score_in_range: ClassVar[bool] = True  # final scores are in [0, 100] by construction
    # its Score reads the node's own columns, its pods only through the accounting columns
    # (plugins.node_local.scores_node_local)
    score_node_local: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.resources = parse_args(args, args_path)
        self._handle = handle
        resources = self.resources
        self._requests = SpecCache(  # per PodSpec: its requests
            lambda spec: pod_requests(spec, resources, use_requested=True))

    @staticmethod
    def _v137(handle: Handle | None) -> bool:
        """Score as v1.37 does: the GenericWorkload gate (v1.37 only) is on."""
        return bool(getattr(handle, "generic_workload", False))

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        reqs = self._requests(pod.spec)
        if not any(reqs):  # best-effort for the configured resources: nothing to balance
            return SKIP
        state.write(_PRE_SCORE_KEY, reqs)
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self._requests(pod.spec)
        parts = []
        for r, q in zip(self.resources, reqs, strict=True):
            part = allocatable_requested(table, r.name, q, idx, True)
            if part is not None:
                parts.append(part)
        n = count(table, idx)
        with_pod = balanced_scorer(parts, n)
        if not self._v137(self._handle):
            return with_pod
        # v1.37: how much the pod improves the node's balance, from the score without it
        without = balanced_scorer([(a, u, 0, w, p) for a, u, _, w, p in parts], n)
        return _HALF + (_HALF + with_pod - without) // 2
