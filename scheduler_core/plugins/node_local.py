"""When is a what-if filter run over many nodes at once exact?

A dry run asks "would the pod fit on node N if these pods were added there / taken off?" for
many nodes: the nominated pass of RunFilterPluginsWithNominatedPods and the victim search of
DefaultPreemption. Upstream answers one node at a time, with a cloned CycleState updated by the
PreFilter extensions (AddPod/RemovePod). ``node_local`` says when every such node can be
changed and checked together instead:

- every active (not skipped) Filter plugin is an in-tree plugin whose verdict on a node reads
  only that node's columns, and reads pods only through the columns ``NodeTable.add_pod``
  maintains (requests, non-zero requests, pod count, host ports) — so a change on one node
  cannot move another node's verdict, and changing those columns alone (``PodLoads``) is
  enough;
- no active PreFilter plugin has AddPod/RemovePod extensions, so the per-node CycleState
  clones would all stay equal to the original state.

``resource_filter`` narrows it further: when NodeResourcesFit is the only one of those plugins
whose verdict depends on the node's pods at all, whether the pod fits after pods are added or
taken off is integer arithmetic on the node's free resources (``NodeResourcesFit.margins``).
"""

from __future__ import annotations

from typing import Any

from scheduler_core.framework.interface import CycleState
from scheduler_core.plugins import names

__all__ = ["NODE_LOCAL_FILTERS", "POD_BLIND_FILTERS", "node_local", "resource_filter"]

# in-tree Filter plugins whose verdict on a node depends only on that node's own columns
NODE_LOCAL_FILTERS = frozenset({
    names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, names.NODE_AFFINITY,
    names.NODE_PORTS, names.NODE_RESOURCES_FIT, names.VOLUME_RESTRICTIONS,
    names.NODE_VOLUME_LIMITS, names.VOLUME_BINDING, names.VOLUME_ZONE,
})
# node-local Filter plugins whose verdict does not depend on the pods on the node at all
POD_BLIND_FILTERS = frozenset({
    names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, names.NODE_AFFINITY,
    names.VOLUME_RESTRICTIONS, names.NODE_VOLUME_LIMITS, names.VOLUME_BINDING,
    names.VOLUME_ZONE,
})
_IN_TREE_PREFIX = "scheduler_core.plugins."


def node_local(fwk: Any, state: CycleState) -> bool:
    """True when many nodes' dry runs can share one filter call (see the module docstring)."""
    skip = state.skip_filter
    for p in fwk.pre_filter_plugins:
        if p.name not in skip and callable(getattr(p, "add_pod", None)):
            return False
    for p in fwk.filter_plugins:
        if p.name in skip:
            continue
        if p.name not in NODE_LOCAL_FILTERS or \
                not type(p).__module__.startswith(_IN_TREE_PREFIX):
            return False
    return True


def resource_filter(fwk: Any, state: CycleState) -> Any:
    """When ``node_local`` holds and NodeResourcesFit is the only active Filter plugin whose
    verdict depends on the node's pods (the others read node columns only), that plugin: its
    ``margins`` then decide, with integer arithmetic, whether the pod fits once pods are added
    or taken off. Otherwise None."""
    if not node_local(fwk, state):
        return None
    found = None
    skip = state.skip_filter
    for p in fwk.filter_plugins:
        if p.name in skip or p.name in POD_BLIND_FILTERS:
            continue
        if p.name != names.NODE_RESOURCES_FIT or found is not None:
            return None
        found = p
    return found
