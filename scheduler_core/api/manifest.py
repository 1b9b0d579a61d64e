"""Dispatch a manifest dict to its typed object by ``kind``."""

from __future__ import annotations

from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import CompositePodGroup, PodGroup
from scheduler_core.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from scheduler_core.errors import ManifestError

__all__ = ["GROUP_KINDS", "MODELLED_KINDS", "UNMODELLED_KINDS", "UnsupportedKindError",
           "parse_object"]

ApiObject = (Node | Pod | Namespace | PriorityClass | PodDisruptionBudget | Service | PodGroup
             | CompositePodGroup | PersistentVolume | PersistentVolumeClaim | StorageClass
             | CSINode | CSIDriver)

_PARSERS: dict[str, Any] = {
    "Node": Node.from_manifest,
    "Pod": Pod.from_manifest,
    "Namespace": Namespace.from_manifest,
    "PriorityClass": PriorityClass.from_manifest,
    "PodDisruptionBudget": PodDisruptionBudget.from_manifest,
    "Service": Service.from_manifest,
    "PersistentVolume": PersistentVolume.from_manifest,
    "PersistentVolumeClaim": PersistentVolumeClaim.from_manifest,
    "StorageClass": StorageClass.from_manifest,
    "CSINode": CSINode.from_manifest,
    "CSIDriver": CSIDriver.from_manifest,
}
MODELLED_KINDS = tuple(_PARSERS)
# Workload-aware scheduling kinds: parsed and validated, but not scheduled by the core yet (no
# gang semantics); the workload layer reports runs creating them as unsupported.
_GROUP_PARSERS: dict[str, Any] = {
    "PodGroup": PodGroup.from_manifest,
    "CompositePodGroup": CompositePodGroup.from_manifest,
}
GROUP_KINDS = tuple(_GROUP_PARSERS)
# Real Kubernetes kinds that scheduler_perf workloads create but the core does not model.
UNMODELLED_KINDS = (
    "CSIStorageCapacity", "VolumeAttachment", "ResourceClaim", "ResourceClaimTemplate",
    "DeviceClass", "ResourceSlice", "DeviceTaintRule", "Deployment", "ReplicaSet",
    "StatefulSet", "Job", "ConfigMap", "Secret", "Workload",
)


class UnsupportedKindError(ManifestError):
    """A real Kubernetes kind that the core does not model (volumes, DRA, controllers)."""


def parse_object(data: Any, *, source: str | None = None) -> ApiObject:
    if not isinstance(data, dict):
        raise ManifestError("expected a mapping (a Kubernetes object)", source=source)
    kind = data.get("kind")
    parser = (_PARSERS.get(kind) or _GROUP_PARSERS.get(kind)) if isinstance(kind, str) else None
    if parser is None:
        if kind in UNMODELLED_KINDS:
            raise UnsupportedKindError(f"kind {kind} is not modelled by scheduler_core",
                                       field="kind", source=source)
        raise ManifestError(
            f"unknown kind {kind!r} (expected one of: {', '.join(MODELLED_KINDS)})",
            field="kind", source=source)
    return parser(data, source=source)
