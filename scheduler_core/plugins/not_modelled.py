"""Placeholders for upstream's volume plugins (VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone).

The core does not model PersistentVolumes, claims or CSI (workloads that need them are reported
unsupported before they run), so for every pod the core can schedule these plugins' PreFilter
returns Skip, exactly as upstream's do for a pod without volumes. They exist so that scheduler
configurations naming them (enabling, disabling, reordering) load unchanged. One class serves
the four names because their behaviour here is identical by construction.
"""

from __future__ import annotations

from typing import Any, ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import SKIP, CycleState, Handle, PreFilterResult, Status
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names

__all__ = ["NOT_MODELLED", "NodeVolumeLimits", "VolumeBinding", "VolumeRestrictions",
           "VolumeZone"]


class _VolumePlaceholder:
    name: ClassVar[str]
    # its Filter reads only the node's own columns, never the pods on it (plugins.node_local)
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        if args:
            binding = self.name == names.VOLUME_BINDING
            allowed = {"bindTimeoutSeconds", "shape"} if binding else set()
            for key in args:
                if key not in allowed:
                    raise ConfigError("unknown field", field=f"{args_path}.{key}")

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        return None, SKIP

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> None:
        return None

    def events_to_register(self) -> list:
        return []


class VolumeRestrictions(_VolumePlaceholder):
    name = names.VOLUME_RESTRICTIONS


class NodeVolumeLimits(_VolumePlaceholder):
    name = names.NODE_VOLUME_LIMITS


class VolumeBinding(_VolumePlaceholder):
    name = names.VOLUME_BINDING


class VolumeZone(_VolumePlaceholder):
    name = names.VOLUME_ZONE


NOT_MODELLED = (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone)
