"""What the volume plugins look up about a pod's claims: the claim, its volume, its class, the
CSI driver and handle a volume counts under, and the Kubernetes errors for missing objects.

In-tree to CSI translation follows csi-translation-lib for the sources the scheduler counts
(AWS EBS, GCE PD, Azure Disk, Cinder): the driver name, and the volume handle (the volume ID,
the disk URI, or for GCE ``projects/UNSPECIFIED/zones/<zone>/disks/<name>``). A migrated
volume counts only on a node whose CSINode lists the plugin in its migrated-plugins annotation
(isCSIMigrationOn; all four are GA in v1.34, Portworx is not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.api.pod import Pod
from scheduler_core.api.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeSource,
    claim_class,
)
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.interface import QueueingHint

__all__ = [
    "IN_TREE",
    "CSIVolume",
    "claim_not_found",
    "claims_of",
    "csi_volume",
    "migration_on",
    "pod_claim_hint",
    "pv_not_found",
    "storage_class_not_found",
]

# in-tree source -> (plugin name, CSI driver)
IN_TREE: dict[str, tuple[str, str]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
}
_PLUGIN_DRIVER = dict(IN_TREE.values())
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def claim_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def claims_of(pod: Pod) -> list[str]:
    """The claim names of the pod's persistentVolumeClaim volumes, in order."""
    return [v.claim for v in pod.spec.volumes if v.claim]


def pod_claim_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """The queueing hint for a claim added or updated: Queue when the pod uses it (same
    namespace, one of its claim names), else QueueSkip."""
    if new.namespace == pod.namespace and any(v.claim == new.name for v in pod.spec.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """isCSIMigrationOn: the node's CSINode lists ``plugin`` as migrated."""
    return csi_node is not None and plugin in csi_node.migrated_plugins


@dataclass(frozen=True, slots=True)
class CSIVolume:
    """A volume as NodeVolumeLimits counts it: ``driver`` and its unique name
    ``<driver>/<handle>``; ``plugin``: the in-tree plugin it was translated from ("" for a
    CSI volume), which counts only where that plugin is migrated."""

    driver: str
    unique: str
    plugin: str = ""


def _translated(source: VolumeSource, labels: dict[str, str]) -> tuple[str, str, str] | None:
    entry = IN_TREE.get(source.kind)
    if entry is None:
        return None
    plugin, driver = entry
    handle = source.ident
    if source.kind == "awsElasticBlockStore" and handle.startswith("aws://"):
        handle = handle.rsplit("/", 1)[-1]  # aws://<zone>/<id>
    elif source.kind == "gcePersistentDisk":
        zone = next((labels[k] for k in _ZONE_LABELS if k in labels), "UNSPECIFIED")
        handle = f"projects/UNSPECIFIED/zones/{zone}/disks/{source.ident}"
    return plugin, driver, handle


def inline_csi_volume(source: VolumeSource) -> CSIVolume | None:
    """An inline in-tree volume of a pod, as counted once migrated (IsInlineMigratable)."""
    t = _translated(source, {})
    if t is None:
        return None
    plugin, driver, handle = t
    return CSIVolume(driver, f"{driver}/{handle}", plugin)


def csi_volume(cluster: Cluster, pvc: PersistentVolumeClaim) -> CSIVolume | None:
    """The driver and unique name a bound or pending claim counts under (getCSIDriverInfo),
    or None when it is not counted. A claim without a volume (or whose volume is missing)
    counts under its class's provisioner with a handle of its own."""
    pv = cluster.pvs.get(pvc.volume_name) if pvc.volume_name else None
    if pv is None:
        return _from_class(cluster, pvc)
    return pv_csi_volume(pv)


def pv_csi_volume(pv: PersistentVolume) -> CSIVolume | None:
    source = pv.source
    if source is None:
        return None
    if source.kind == "csi":
        if not source.ident:
            return None  # no volume handle: not counted
        return CSIVolume(source.driver, f"{source.driver}/{source.ident}")
    t = _translated(source, pv.labels)
    if t is None:
        return None
    plugin, driver, handle = t
    return CSIVolume(driver, f"{driver}/{handle}", plugin) if handle else None


def _from_class(cluster: Cluster, pvc: PersistentVolumeClaim) -> CSIVolume | None:
    name = claim_class(pvc)
    sc = cluster.storage_classes.get(name) if name else None
    if sc is None:
        return None
    handle = f"{pvc.namespace}/{pvc.name}"  # upstream prefixes a random ID: unique anyway
    driver = _PLUGIN_DRIVER.get(sc.provisioner)
    if driver is not None:
        return CSIVolume(driver, f"{driver}/{handle}", sc.provisioner)
    return CSIVolume(sc.provisioner, f"{sc.provisioner}/{handle}")
