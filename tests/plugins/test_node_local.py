"""Node-locality is what a plugin class declares (``node_local`` / ``pod_blind``)."""

from __future__ import annotations

from scheduler_core.framework.adapter import PerNodeAdapter
from scheduler_core.framework.interface import CycleState
from scheduler_core.plugins import names
from scheduler_core.plugins.node_local import node_local, resource_filter
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.plugins.registry import IN_TREE

NODE_LOCAL = {names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION,
              names.NODE_AFFINITY, names.NODE_PORTS, names.NODE_RESOURCES_FIT,
              names.VOLUME_BINDING, names.VOLUME_ZONE, names.DYNAMIC_RESOURCES}
# VolumeRestrictions and NodeVolumeLimits read the disks and volumes of the node's pods (not
# accounting columns): not node-local
READS_PODS = {names.NODE_PORTS, names.NODE_RESOURCES_FIT}


def test_in_tree_classes_declare_node_locality():
    assert {n for n, cls in IN_TREE.items() if getattr(cls, "node_local", False)} == NODE_LOCAL
    assert {n for n, cls in IN_TREE.items()
            if getattr(cls, "pod_blind", False)} == NODE_LOCAL - READS_PODS


class _Fwk:
    def __init__(self, *filters: object) -> None:
        self.pre_filter_plugins: list[object] = []
        self.filter_plugins = list(filters)


class _Declared:
    name = "Custom"
    node_local = True
    pod_blind = True


def test_the_attribute_decides_not_the_name_or_the_module():
    fit = NodeResourcesFit()
    state = CycleState()
    assert node_local(_Fwk(fit, _Declared()), state)
    assert resource_filter(_Fwk(fit, _Declared()), state) is fit
    # a plugin run through the per-node adapter is not node-local, whatever it declares
    assert not node_local(_Fwk(fit, PerNodeAdapter(_Declared())), state)
    state.skip_filter.add("Custom")  # a skipped plugin does not count
    assert node_local(_Fwk(fit, PerNodeAdapter(_Declared())), state)
