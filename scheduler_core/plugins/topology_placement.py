"""TopologyPlacementGenerator (kube v1.37, TopologyAwareWorkloadScheduling gate): the
PlacementGenerate plugin of the pod-group cycle.

For a PodGroup with ``spec.schedulingConstraints.topology`` it returns one placement per value
of the first constraint's key among the parent placement's nodes (nodes without the label are
in none). Once members of the group have nodes (assumed or bound) only their domain is
offered; members on nodes of different domains, or on a node without the label, are an error.
A group without a topology constraint gets the parent placement unchanged.

Placements come in ascending order of the domain's value (upstream walks a Go map: random
order; docs/fidelity.md, "Topology-aware placement"). The grouping is vectorised: one stable
sort of the parent's label codes, then a split; the result is memoised per node-table version.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.podgroup import PodGroup
from scheduler_core.framework.interface import Code, Handle, Status
from scheduler_core.framework.placement import Placement
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "TopologyPlacementGenerator", "domain_placements"]

NAME = names.TOPOLOGY_PLACEMENT_GENERATOR


def domain_placements(table: Any, key: str, parent: Placement) -> list[Placement]:
    """One placement per value of label ``key`` over ``parent``'s slots (list order kept in
    each), ascending by value."""
    codes_col = table.codes(key)
    if codes_col is None or not len(parent.slots):
        return []
    codes = codes_col[parent.slots]
    has = codes >= 0
    slots, codes = parent.slots[has], codes[has]
    if not len(slots):
        return []
    order = np.argsort(codes, kind="stable")
    slots, codes = slots[order], codes[order]
    uniq, starts = np.unique(codes, return_index=True)
    values = table.label_values[key]
    parts = np.split(slots, starts[1:])
    out = [Placement.of(values[int(c)], part, table.capacity)
           for c, part in zip(uniq, parts, strict=True)]
    out.sort(key=lambda p: p.name)
    return out


class TopologyPlacementGenerator:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self._handle = handle
        self._memo: tuple[Any, ...] | None = None  # (table version, key, parent, placements)

    def generate_placements(self, pg: PodGroup, parent: Placement
                            ) -> tuple[list[Placement], Status | None]:
        if not pg.topology_keys or self._handle is None:
            return [parent], None
        key = pg.topology_keys[0]  # the API allows one constraint
        cluster = self._handle.cluster
        table = cluster.table
        required, status = _scheduled_domain(cluster, pg, key)
        if status is not None:
            return [], status
        memo = self._memo
        if memo is not None and memo[0] == table.version and memo[1] == key \
                and memo[2] is parent.slots:
            placements = memo[3]
        else:
            placements = domain_placements(table, key, parent)
            self._memo = (table.version, key, parent.slots, placements)
        if required is not None:
            placements = [p for p in placements if p.name == required]
        return placements, None


def _scheduled_domain(cluster: Any, pg: PodGroup, key: str) -> tuple[str | None, Status | None]:
    """The domain of the group's members that have a node (None: no member has one)."""
    gk = pg.key
    if not cluster.group_scheduled.get(gk):
        return None, None
    domain: str | None = None
    table = cluster.table
    for pod in cluster.group_pods.get(gk, {}).values():
        if not pod.node_name:
            continue
        slot = table.slot_of.get(pod.node_name)
        if slot is None:
            return None, _error(f"getting node for pod {pod.key}: node \"{pod.node_name}\" "
                                "not found")
        value = table.node(slot).labels.get(key)
        if value is None:
            return None, _error(f"no topology domain found for pod {pod.key}")
        if domain is not None and value != domain:
            return None, _error(f"more than 1 domain found for pod group: {domain}, {value}")
        domain = value
    return domain, None


def _error(message: str) -> Status:
    return Status(Code.ERROR, (f"cannot determine domain for already scheduled pods: {message}",))
