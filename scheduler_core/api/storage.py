"""Storage kinds the volume plugins read: PersistentVolume, PersistentVolumeClaim,
StorageClass, CSINode and CSIDriver.

Each object keeps ``manifest``, the mapping it was parsed from (keys as read), so the reference
scheduler can be sent exactly what the core read. Volume sources, like the rest, are strict:
the in-tree sources kube-scheduler's plugins look at (AWS EBS, GCE PD, Azure Disk, Cinder, RBD,
iSCSI), CSI, and the local/hostPath/NFS sources they pass over are modelled; any other real
source is reported as not modelled, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler_core.api._fields import Fields
from scheduler_core.api.objects import _locate, _root
from scheduler_core.api.selectors import LabelSelector, NodeSelector
from scheduler_core.errors import ManifestError

__all__ = [
    "ACCESS_MODES",
    "ANN_BIND_COMPLETED",
    "ANN_MIGRATED_PLUGINS",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_CLASS",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "VolumeSource",
    "claim_class",
]

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"

# volume source key -> (modelled fields, ignored fields); the identity fields are read below
_SOURCES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "csi": (("driver", "volumeHandle", "readOnly"),
            ("fsType", "volumeAttributes", "controllerPublishSecretRef", "nodeStageSecretRef",
             "nodePublishSecretRef", "controllerExpandSecretRef", "nodeExpandSecretRef")),
    "awsElasticBlockStore": (("volumeID", "readOnly"), ("fsType", "partition")),
    "gcePersistentDisk": (("pdName", "readOnly"), ("fsType", "partition")),
    "azureDisk": (("diskName", "diskURI", "readOnly"), ("cachingMode", "fsType", "kind")),
    "cinder": (("volumeID", "readOnly"), ("fsType", "secretRef")),
    "rbd": (("monitors", "image", "pool", "readOnly"), ("fsType", "user", "keyring",
                                                         "secretRef")),
    "iscsi": (("targetPortal", "iqn", "lun", "readOnly"),
              ("iscsiInterface", "fsType", "portals", "chapAuthDiscovery", "chapAuthSession",
               "secretRef", "initiatorName")),
    "local": (("path",), ("fsType",)),
    "hostPath": (("path",), ("type",)),
    "nfs": (("server", "path", "readOnly"), ()),
}
# real PersistentVolume sources the volume plugins would need more of than is modelled here
_UNMODELLED_SOURCES = ("azureFile", "cephfs", "fc", "flexVolume", "flocker", "glusterfs",
                       "photonPersistentDisk", "portworxVolume", "quobyte", "scaleIO",
                       "storageos", "vsphereVolume")


@dataclass(frozen=True, slots=True)
class VolumeSource:
    """One volume source: its kind (the manifest key) and the fields that identify it.
    ``ident``: volumeHandle, volumeID, pdName, diskURI, iqn, image or path; ``driver`` for
    CSI; ``pool`` and ``monitors`` for RBD."""

    kind: str
    ident: str = ""
    driver: str = ""
    read_only: bool = False
    pool: str = ""
    monitors: tuple[str, ...] = ()

    @classmethod
    def read(cls, f: Fields, key: str) -> VolumeSource:
        modelled, ignored = _SOURCES[key]
        s = f.sub(key)
        s.check_keys(modelled, ignored)
        ro = s.bool("readOnly")
        if key == "csi":
            driver = s.str("driver", required=True)
            if not driver:
                raise s.error("driver", "must be non-empty")
            return cls(key, s.str("volumeHandle"), driver, ro)
        if key == "rbd":
            return cls(key, s.str("image", required=True), "", ro, s.str("pool") or "rbd",
                       tuple(s.str_list("monitors")))
        ident_key = {"awsElasticBlockStore": "volumeID", "gcePersistentDisk": "pdName",
                     "azureDisk": "diskURI", "cinder": "volumeID", "iscsi": "iqn"}.get(key,
                                                                                    "path")
        ident = s.str(ident_key, required=key not in ("nfs",))
        return cls(key, ident, "", ro)


def _source_of(f: Fields, keys: tuple[str, ...]) -> VolumeSource | None:
    found = [k for k in (*_SOURCES, *_UNMODELLED_SOURCES) if k in keys and f.has(k)]
    if len(found) > 1:
        raise f.error(found[1], f"may not specify more than 1 volume type (also {found[0]})")
    if not found:
        return None
    if found[0] in _UNMODELLED_SOURCES:
        raise f.error(found[0], f"volume source {found[0]} is not modelled by scheduler_core "
                      f"(modelled: {', '.join(_SOURCES)})")
    return VolumeSource.read(f, found[0])


def _access_modes(f: Fields, key: str) -> tuple[str, ...]:
    modes = f.str_list(key)
    for i, m in enumerate(modes):
        if m not in ACCESS_MODES:
            raise ManifestError(f'unsupported value "{m}" (expected one of: '
                                f'{", ".join(ACCESS_MODES)})', field=f"{f.field(key)}[{i}]",
                                obj=f.obj)
    if "ReadWriteOncePod" in modes and len(set(modes)) > 1:
        raise f.error(key, "may not use ReadWriteOncePod with other access modes")
    return tuple(modes)


def _storage(f: Fields, key: str, *, required: bool) -> int | None:
    amounts = f.quantity_map(key)
    extra = sorted(set(amounts) - {"storage"})
    if extra:
        raise f.error(key, f'unsupported resource "{extra[0]}" (expected storage)')
    if "storage" not in amounts:
        if required:
            raise f.error(f"{key}.storage" if f.has(key) else key, "required field is missing")
        return None
    return amounts["storage"].value


@dataclass(slots=True, eq=False)
class PersistentVolume:
    kind = "PersistentVolume"
    name: str
    labels: dict[str, str]
    capacity: int  # bytes of spec.capacity.storage
    access_modes: tuple[str, ...]
    storage_class: str
    source: VolumeSource | None
    node_affinity: NodeSelector | None = None
    claim_ref: tuple[str, str] | None = None  # (namespace, name)
    volume_mode: str = "Filesystem"
    phase: str = "Pending"
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    def _parse(cls, data: Any) -> PersistentVolume:
        root, meta, name, _ = _root(data, "PersistentVolume", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata", "spec", "status"))
        spec = root.sub("spec")
        spec.check_keys(("capacity", "accessModes", "storageClassName", "claimRef",
                         "nodeAffinity", "volumeMode", *_SOURCES, *_UNMODELLED_SOURCES),
                        ("persistentVolumeReclaimPolicy", "mountOptions",
                         "volumeAttributesClassName"))
        source = _source_of(spec, tuple(spec.data))
        if source is None:
            raise spec.error("csi", "must specify a volume type (e.g. csi, "
                             "awsElasticBlockStore, local)")
        capacity = _storage(spec, "capacity", required=True)
        assert capacity is not None
        modes = _access_modes(spec, "accessModes")
        if not modes:
            raise spec.error("accessModes", "required field is missing")
        affinity = None
        if spec.has("nodeAffinity"):
            na = spec.sub("nodeAffinity")
            na.check_keys(("required",))
            if na.has("required"):
                affinity = NodeSelector.from_fields(na.sub("required"))
        if source.kind == "local" and affinity is None:
            raise spec.error("nodeAffinity", "Local volumes require node affinity")
        claim_ref = None
        if spec.has("claimRef"):
            ref = spec.sub("claimRef")
            ref.check_keys(("namespace", "name"), ("kind", "apiVersion", "uid",
                                                   "resourceVersion", "fieldPath"))
            claim_ref = (ref.str("namespace") or "default", ref.str("name", required=True))
        status = root.sub("status")
        status.check_keys(("phase",), ("message", "reason", "lastPhaseTransitionTime"))
        return cls(name, meta.str_map("labels"), capacity, modes,
                   spec.str("storageClassName"), source, affinity, claim_ref,
                   spec.enum("volumeMode", ("Filesystem", "Block"), "Filesystem"),
                   status.enum("phase", ("Pending", "Available", "Bound", "Released", "Failed"),
                               "Pending"),
                   root.data)

    from_manifest = _locate(_parse)


@dataclass(slots=True, eq=False)
class PersistentVolumeClaim:
    kind = "PersistentVolumeClaim"
    name: str
    namespace: str
    annotations: dict[str, str]
    access_modes: tuple[str, ...]
    request: int  # bytes of spec.resources.requests.storage
    storage_class_name: str | None  # None: unset (no default class is modelled)
    volume_name: str = ""
    selector: LabelSelector | None = None
    volume_mode: str = "Filesystem"
    phase: str = "Pending"
    deleting: bool = False  # metadata.deletionTimestamp is set
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def fully_bound(self) -> bool:
        """Bound to a volume and the binding completed (upstream isPVCFullyBound)."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    def _parse(cls, data: Any) -> PersistentVolumeClaim:
        root, meta, name, namespace = _root(data, "PersistentVolumeClaim", namespaced=True,
                                            meta_extra=("deletionTimestamp",))
        root.check_keys(("apiVersion", "kind", "metadata", "spec", "status"))
        spec = root.sub("spec")
        spec.check_keys(("accessModes", "resources", "storageClassName", "volumeName",
                         "selector", "volumeMode"),
                        ("dataSource", "dataSourceRef", "volumeAttributesClassName"))
        modes = _access_modes(spec, "accessModes")
        if not modes:
            raise spec.error("accessModes", "at least 1 access mode is required")
        res = spec.sub("resources")
        res.check_keys(("requests",), ("limits",))
        request = _storage(res, "requests", required=True)
        assert request is not None
        selector = (LabelSelector.from_fields(spec.sub("selector")) if spec.has("selector")
                    else None)
        status = root.sub("status")
        status.check_keys(("phase",), ("accessModes", "capacity", "conditions",
                                       "allocatedResources", "allocatedResourceStatuses",
                                       "currentVolumeAttributesClassName",
                                       "modifyVolumeStatus"))
        sc = spec.raw("storageClassName")
        return cls(name, namespace, meta.str_map("annotations"), modes, request,
                   None if sc is None else spec.str("storageClassName"),
                   spec.str("volumeName"), selector,
                   spec.enum("volumeMode", ("Filesystem", "Block"), "Filesystem"),
                   status.enum("phase", ("Pending", "Bound", "Lost"), "Pending"),
                   meta.raw("deletionTimestamp") is not None, root.data)

    from_manifest = _locate(_parse)


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """The claim's storage class: the beta annotation first, then spec.storageClassName
    (upstream GetPersistentVolumeClaimClass)."""
    ann = pvc.annotations.get(ANN_STORAGE_CLASS)
    if ann is not None:
        return ann
    return pvc.storage_class_name or ""


@dataclass(slots=True, eq=False)
class StorageClass:
    kind = "StorageClass"
    name: str
    provisioner: str
    binding_mode: str = "Immediate"
    # allowedTopologies: terms ORed, each {key: values} ANDed; empty: any node
    allowed_topologies: tuple[tuple[tuple[str, frozenset[str]], ...], ...] = ()
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.binding_mode == "WaitForFirstConsumer"

    def allows(self, labels: dict[str, str]) -> bool:
        """The node's labels satisfy allowedTopologies (MatchTopologySelectorTerms)."""
        if not self.allowed_topologies:
            return True
        return any(all(labels.get(k) in vs for k, vs in term)
                   for term in self.allowed_topologies)

    def _parse(cls, data: Any) -> StorageClass:
        root, _meta, name, _ = _root(data, "StorageClass", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata", "provisioner", "volumeBindingMode",
                         "allowedTopologies"),
                        ("parameters", "reclaimPolicy", "mountOptions", "allowVolumeExpansion"))
        provisioner = root.str("provisioner", required=True)
        if not provisioner:
            raise root.error("provisioner", "must be non-empty")
        terms = []
        for _, t in root.items("allowedTopologies"):
            t.check_keys(("matchLabelExpressions",))
            reqs = []
            for _, e in t.items("matchLabelExpressions"):
                e.check_keys(("key", "values"))
                values = e.str_list("values")
                if not values:
                    raise e.error("values", "must specify as least one value")
                reqs.append((e.str("key", required=True), frozenset(values)))
            terms.append(tuple(reqs))
        return cls(name, provisioner,
                   root.enum("volumeBindingMode", ("Immediate", "WaitForFirstConsumer"),
                             "Immediate"),
                   tuple(terms), root.data)

    from_manifest = _locate(_parse)


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    count: int | None  # allocatable.count: the attach limit, None for no limit
    topology_keys: tuple[str, ...] = ()


@dataclass(slots=True, eq=False)
class CSINode:
    kind = "CSINode"
    name: str
    drivers: tuple[CSINodeDriver, ...]
    migrated_plugins: frozenset[str] = frozenset()
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    def limits(self) -> dict[str, int]:
        """Attach limit per driver, for the drivers that have one (getVolumeLimits)."""
        return {d.name: d.count for d in self.drivers if d.count is not None}

    def _parse(cls, data: Any) -> CSINode:
        root, meta, name, _ = _root(data, "CSINode", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata", "spec"))
        spec = root.sub("spec")
        spec.check_keys(("drivers",))
        if spec.raw("drivers") is None:
            raise spec.error("drivers", "required field is missing")
        drivers = []
        seen = set()
        for where, d in spec.items("drivers"):
            d.check_keys(("name", "nodeID", "allocatable", "topologyKeys"))
            dname = d.str("name", required=True)
            if dname in seen:
                raise ManifestError(f'duplicate driver "{dname}"', field=f"{where}.name",
                                    obj=spec.obj)
            seen.add(dname)
            alloc = d.sub("allocatable")
            alloc.check_keys(("count",))
            drivers.append(CSINodeDriver(dname, d.str("nodeID", required=True),
                                         alloc.int("count", minimum=0),
                                         tuple(d.str_list("topologyKeys"))))
        ann = meta.str_map("annotations").get(ANN_MIGRATED_PLUGINS, "")
        migrated = frozenset(p for p in ann.split(",") if p) if ann else frozenset()
        return cls(name, tuple(drivers), migrated, root.data)

    from_manifest = _locate(_parse)


@dataclass(slots=True, eq=False)
class CSIDriver:
    kind = "CSIDriver"
    name: str
    attach_required: bool = True
    storage_capacity: bool = False
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    def _parse(cls, data: Any) -> CSIDriver:
        root, _meta, name, _ = _root(data, "CSIDriver", namespaced=False)
        root.check_keys(("apiVersion", "kind", "metadata", "spec"))
        spec = root.sub("spec")
        spec.check_keys(("attachRequired", "storageCapacity"),
                        ("podInfoOnMount", "volumeLifecycleModes", "fsGroupPolicy",
                         "tokenRequests", "requiresRepublish", "seLinuxMount",
                         "nodeAllocatableUpdatePeriodSeconds"))
        return cls(name, spec.bool("attachRequired", True), spec.bool("storageCapacity"),
                   root.data)

    from_manifest = _locate(_parse)
