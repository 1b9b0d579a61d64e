"""Storage objects and a small cluster for the volume plugin tests."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from scheduler_core.api.manifest import parse_object
from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.store import Cluster

ZONE = "topology.kubernetes.io/zone"
EBS = "ebs.csi.aws.com"


def pv(name: str, *, csi: str | None = EBS, handle: str | None = None, aws: str | None = None,
       claim: tuple[str, str] | None = None, sc: str = "", size: str = "1Gi",
       modes: tuple[str, ...] = ("ReadWriteOnce",), labels: dict[str, str] | None = None,
       affinity: list[dict[str, Any]] | None = None, phase: str | None = None) -> dict:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes)}
    if aws is not None:
        spec["awsElasticBlockStore"] = {"volumeID": aws}
    else:
        spec["csi"] = {"driver": csi, "volumeHandle": handle or name}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    if sc:
        spec["storageClassName"] = sc
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    status = phase or ("Bound" if claim else "Available")
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}}, "spec": spec,
            "status": {"phase": status}}


def pvc(name: str, *, volume: str = "", sc: str | None = None, size: str = "1Gi",
        modes: tuple[str, ...] = ("ReadWriteOnce",), namespace: str = "default",
        annotations: dict[str, str] | None = None, deleting: bool = False) -> dict:
    ann = dict(annotations or {})
    if volume:
        ann.setdefault("pv.kubernetes.io/bind-completed", "yes")
    spec: dict[str, Any] = {"accessModes": list(modes),
                            "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": ann}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": spec, "status": {"phase": "Bound" if volume else "Pending"}}


def bound(name: str, **pv_kw: Any) -> list[dict]:
    """A claim ``name`` bound to volume ``pv-<name>``."""
    return [pv(f"pv-{name}", claim=("default", name), **pv_kw), pvc(name, volume=f"pv-{name}")]


def storage_class(name: str, *, provisioner: str = EBS, late: bool = True,
                  topologies: list[dict[str, list[str]]] | None = None) -> dict:
    m: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                         "metadata": {"name": name}, "provisioner": provisioner,
                         "volumeBindingMode": "WaitForFirstConsumer" if late else "Immediate"}
    if topologies is not None:
        m["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in t.items()]}
            for t in topologies]
    return m


def csi_node(node: str, limits: dict[str, int], migrated: tuple[str, ...] = ()) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node, "annotations": {
                "storage.alpha.kubernetes.io/migrated-plugins": ",".join(migrated)}},
            "spec": {"drivers": [{"name": d, "nodeID": node, "allocatable": {"count": c}}
                                 for d, c in limits.items()]}}


def cluster_of(nodes: list[Node], objects: list[dict] = (), placed: dict[str, list[Pod]] | None
               = None) -> tuple[Cluster, Any]:
    """A cluster with ``nodes``, storage ``objects`` and bound pods per node name; and the
    handle the plugins are given (its ``cluster``)."""
    c = Cluster()
    for n in nodes:
        c.add_node(n)
    for m in objects:
        c.add(parse_object(m))
    for node, pods in (placed or {}).items():
        for p in pods:
            p.node_name = node
            c.add_pod(p)
    return c, SimpleNamespace(cluster=c)
