"""Nodes: labels, taints, unschedulable, allocatable and images."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_core.api._fields import Fields, object_key
from scheduler_core.api.resources import canonical_map
from scheduler_core.api.selectors import Taint
from scheduler_core.errors import ManifestError

__all__ = ["ImageState", "Node"]

_META_MODELLED = ("name", "generateName", "labels", "uid", "annotations")
_META_IGNORED = ("creationTimestamp", "finalizers", "resourceVersion", "generation",
                 "managedFields", "ownerReferences", "namespace", "deletionTimestamp",
                 "selfLink")
_SPEC_IGNORED = ("podCIDR", "podCIDRs", "providerID", "configSource", "externalID")
_STATUS_IGNORED = ("conditions", "phase", "addresses", "daemonEndpoints", "nodeInfo",
                   "volumesInUse", "volumesAttached", "config", "features", "runtimeHandlers",
                   "declaredFeatures")


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(slots=True)
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: dict[str, int] = field(default_factory=dict)
    images: tuple[ImageState, ...] = ()
    uid: str = ""
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, data: Any, *, source: str | None = None) -> Node:
        try:
            return _parse_node(data)
        except ManifestError as exc:
            raise exc.located(source=source) from None

    def with_name(self, name: str, labels: dict[str, str] | None = None) -> Node:
        """A copy under another name (and labels); the other fields are shared."""
        return Node(name, dict(self.labels) if labels is None else labels, self.taints,
                    self.unschedulable, self.allocatable, self.images, "", self.warnings)


def _parse_node(data: Any) -> Node:
    if not isinstance(data, dict):
        raise ManifestError("expected a mapping for a Node manifest", obj="node")
    root = Fields(data, "", "node " + object_key(data, cluster_scoped=True))
    root.check_keys(("apiVersion", "kind", "metadata", "spec", "status"))
    kind = root.str("kind", "Node")
    if kind != "Node":
        raise root.error("kind", f'expected "Node", got "{kind}"')
    meta = root.sub("metadata")
    meta.check_keys(_META_MODELLED, _META_IGNORED)
    name = meta.str("name") or meta.str("generateName")
    if not name:
        raise meta.error("name", "required field is missing (name or generateName)")
    spec = root.sub("spec")
    spec.check_keys(("taints", "unschedulable"), _SPEC_IGNORED)
    status = root.sub("status")
    status.check_keys(("allocatable", "capacity", "images"), _STATUS_IGNORED)
    # SetDefaults_NodeStatus: allocatable is copied from capacity only when absent altogether
    capacity = canonical_map(status.quantity_map("capacity"))
    allocatable = (canonical_map(status.quantity_map("allocatable"))
                   if status.has("allocatable") else capacity)
    images = []
    for _, img in status.items("images"):
        img.check_keys(("names", "sizeBytes"))
        images.append(ImageState(tuple(img.str_list("names")), img.int("sizeBytes", 0, minimum=0)
                                 or 0))
    return Node(
        name=name,
        labels=meta.str_map("labels"),
        taints=tuple(Taint.from_fields(t) for _, t in spec.items("taints")),
        unschedulable=spec.bool("unschedulable"),
        allocatable=allocatable,
        images=tuple(images),
        uid=meta.str("uid"),
        warnings=tuple(root.warnings),
    )
