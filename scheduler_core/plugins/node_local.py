"""When is a what-if filter run over many nodes at once exact?

A dry run asks "would the pod fit on node N if these pods were added there / taken off?" for
many nodes: the nominated pass of RunFilterPluginsWithNominatedPods and the victim search of
DefaultPreemption. Upstream answers one node at a time, with a cloned CycleState updated by the
PreFilter extensions (AddPod/RemovePod). ``node_local`` says when every such node can be
changed and checked together instead:

- every active (not skipped) Filter plugin is node-local: its class sets ``node_local = True``,
  declaring that its verdict on a node reads only that node's columns, and reads pods only
  through the columns ``NodeTable.add_pod`` maintains (requests, non-zero requests, pod count,
  host ports) — so a change on one node cannot move another node's verdict, and changing those
  columns alone (``PodLoads``) is enough;
- no active PreFilter plugin has AddPod/RemovePod extensions, so the per-node CycleState
  clones would all stay equal to the original state.

``resource_filter`` narrows it further: when NodeResourcesFit is the only one of those plugins
whose verdict depends on the node's pods at all (every other one sets ``pod_blind = True``),
whether the pod fits after pods are added or taken off is integer arithmetic on the node's free
resources (``NodeResourcesFit.margins``).

``scores_node_local`` asks the same of scoring, for the pod-group cycle that scores several
disjoint placements with one call: every active (not skipped at PreScore) Score plugin sets
``score_node_local = True``, declaring that its score for a node reads only that node's columns
(its pods only through the accounting columns) and that its NormalizeScore, if it has one,
reads only the scores it is given. In-tree: NodeResourcesFit, NodeResourcesBalancedAllocation,
ImageLocality, TaintToleration and NodeAffinity.

A plugin that is neither may still say so for one cycle: ``blind_in(state)`` true means its
Filter reads neither other nodes nor the node's pods in this cycle (node-local and pod-blind
then). NodeVolumeLimits does when no node has an attach limit for the pod's drivers.

The attributes are read from the plugin object and default to False: a plugin that does not
say so (an out-of-tree one, one run through the per-node adapter) is not node-local, and a
subclass whose Filter reads more than its base's must set them back to False. In-tree:
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, VolumeBinding and VolumeZone are
node-local and pod-blind; NodePorts and NodeResourcesFit are node-local; VolumeRestrictions and
NodeVolumeLimits read the volumes of the node's pods and are not.
"""

from __future__ import annotations

from typing import Any

from scheduler_core.framework.interface import CycleState
from scheduler_core.plugins import names

__all__ = ["node_local", "resource_filter", "scores_node_local"]


def _blind_in(p: Any, state: CycleState) -> bool:
    """The plugin says that in this cycle its Filter reads neither other nodes nor the node's
    pods (``blind_in(state)``), e.g. NodeVolumeLimits when no node limits the pod's drivers."""
    blind_in = getattr(p, "blind_in", None)
    return callable(blind_in) and bool(blind_in(state))


def node_local(fwk: Any, state: CycleState) -> bool:
    """True when many nodes' dry runs can share one filter call (see the module docstring)."""
    skip = state.skip_filter
    for p in fwk.pre_filter_plugins:
        if p.name not in skip and callable(getattr(p, "add_pod", None)):
            return False
    for p in fwk.filter_plugins:
        if (p.name not in skip and not getattr(p, "node_local", False)
                and not _blind_in(p, state)):
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
        if p.name in skip or getattr(p, "pod_blind", False) or _blind_in(p, state):
            continue
        if p.name != names.NODE_RESOURCES_FIT or found is not None:
            return None
        found = p
    return found


def scores_node_local(fwk: Any, state: CycleState) -> bool:
    """True when every Score plugin PreScore left active declares ``score_node_local``: a
    pod's scores on disjoint node lists can then come from one call (see the module
    docstring)."""
    skip = state.skip_score
    for p in fwk.score_plugins:
        if p.name not in skip and not getattr(p, "score_node_local", False):
            return False
    return True
