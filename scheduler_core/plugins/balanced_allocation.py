"""NodeResourcesBalancedAllocation. Extension points: PreScore, Score (no
NormalizeScore).

Args (``NodeResourcesBalancedAllocationArgs``): ``resources`` [{name, weight}], default cpu and
memory; weights must be 1 (0 means 1) and names unique. Scores use the pod's actual requests and
the node's real ``requested`` sums (no non-zero defaults).

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
        resources = self.resources
        self._requests = SpecCache(  # per PodSpec: its requests
            lambda spec: pod_requests(spec, resources, use_requested=True))

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
        return balanced_scorer(parts, count(table, idx))
