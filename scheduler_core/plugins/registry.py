"""The in-tree plugin registry: plugin name -> plugin class (kube's plugins/registry.go).

Every class is constructed as ``cls(args, handle, args_path=...)`` (``handle``: the
``framework.interface.Handle``, everything a plugin may use of the scheduler). Which plugins a
profile enables, and their score weights, live elsewhere (the default profile).
"""

from __future__ import annotations

from scheduler_core.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler_core.plugins.default_binder import DefaultBinder
from scheduler_core.plugins.default_preemption import DefaultPreemption
from scheduler_core.plugins.dynamic_resources import DynamicResources
from scheduler_core.plugins.gang_scheduling import GangScheduling
from scheduler_core.plugins.image_locality import ImageLocality
from scheduler_core.plugins.inter_pod_affinity import InterPodAffinity
from scheduler_core.plugins.node_affinity import NodeAffinity
from scheduler_core.plugins.node_name import NodeName
from scheduler_core.plugins.node_ports import NodePorts
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.plugins.node_unschedulable import NodeUnschedulable
from scheduler_core.plugins.node_volume_limits import NodeVolumeLimits
from scheduler_core.plugins.pod_topology_spread import PodTopologySpread
from scheduler_core.plugins.podgroup_pods_count import PodGroupPodsCount
from scheduler_core.plugins.priority_sort import PrioritySort
from scheduler_core.plugins.scheduling_gates import SchedulingGates
from scheduler_core.plugins.taint_toleration import TaintToleration
from scheduler_core.plugins.topology_placement import TopologyPlacementGenerator
from scheduler_core.plugins.volume_binding import VolumeBinding
from scheduler_core.plugins.volume_restrictions import VolumeRestrictions
from scheduler_core.plugins.volume_zone import VolumeZone

__all__ = ["IN_TREE", "build_registry"]


def build_registry(*classes: type) -> dict[str, type]:
    """A name -> class map; a second class under the same name is an error."""
    out: dict[str, type] = {}
    for cls in classes:
        name = cls.name  # type: ignore[attr-defined]
        if name in out:
            raise ValueError(f"plugin {name!r} registered twice")
        out[name] = cls
    return out


IN_TREE: dict[str, type] = build_registry(
    SchedulingGates,
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
    PodTopologySpread,
    InterPodAffinity,
    DynamicResources,
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
    GangScheduling,
    TopologyPlacementGenerator,
    PodGroupPodsCount,
)
