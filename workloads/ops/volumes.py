"""createPods with ``persistentVolumeTemplatePath`` and ``persistentVolumeClaimTemplatePath``:
every pod gets its own PersistentVolume and a claim bound to it.

As upstream's CreatePodWithPersistentVolume (test/utils) does it for pod ``i`` of the op in
namespace ``ns``: the volume is the template with name ``<ns>-vol-<i>`` and, for a CSI or AWS
EBS source, volume handle / volume ID ``vol-<i>`` (the same handle in every namespace, as
upstream), its ``claimRef`` the claim and its phase Bound; the claim is the template named
``pvc-<i>``, ``spec.volumeName`` the volume and phase Bound; the pod's volumes are replaced by
one volume ``vol`` naming the claim. The volume and the claim exist before the pod.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from scheduler_core.api.pod import Pod, PodVolume
from scheduler_core.api.storage import (
    ANN_MIGRATED_PLUGINS,
    PersistentVolume,
    PersistentVolumeClaim,
)
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import SchedulerCoreError
from workloads.config.ops import NodeAllocatableStrategy
from workloads.ops.errors import WorkloadError
from workloads.ops.manifests import parse_typed
from workloads.ops.templates import TemplateFile

__all__ = ["VolumeFactory", "csi_node_manifest", "makes_csi_nodes"]


def _template(tf: TemplateFile, kind: str) -> dict[str, Any]:
    m = tf.manifest(0, 1)
    if not isinstance(m, dict):
        raise WorkloadError(f"{tf.source}: expected a {kind} manifest (a mapping)")
    got = m.get("kind", kind)
    if got != kind:
        raise WorkloadError(f'{tf.source}: parsing {kind}: expected kind "{kind}", got '
                            f'"{got}"')
    return m


def _bound_copy(template: dict[str, Any], source: str, name: str, namespace: str = ""
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of ``template`` named ``name`` (in ``namespace``) with status phase Bound, and
    its spec mapping to fill in."""
    m = copy.deepcopy(template)
    for key in ("metadata", "spec"):
        if m.get(key) is None:
            m[key] = {}
        elif not isinstance(m[key], dict):
            raise WorkloadError(f"{source}: {key}: expected a mapping")
    m["metadata"]["name"] = name
    if namespace:
        m["metadata"]["namespace"] = namespace
    m["status"] = {"phase": "Bound"}
    return m, m["spec"]


class VolumeFactory:
    """The volume and claim of each pod of one createPods op (see the module docstring)."""

    def __init__(self, pv_template: TemplateFile, pvc_template: TemplateFile,
                 namespace: str) -> None:
        self.namespace = namespace
        self.pv_source = pv_template.source
        self.pvc_source = pvc_template.source
        self.pv = _template(pv_template, "PersistentVolume")
        self.pvc = _template(pvc_template, "PersistentVolumeClaim")
        # both parse as they are (a bad template is bad input before anything runs)
        self._volume(0)
        self._claim(0)

    def _volume(self, i: int) -> PersistentVolume:
        return parse_typed(PersistentVolume.from_manifest, self.volume_manifest(i),
                           self.pv_source)

    def volume_manifest(self, i: int) -> dict[str, Any]:
        """Pod ``i``'s PersistentVolume."""
        m, spec = _bound_copy(self.pv, self.pv_source, f"{self.namespace}-vol-{i}")
        for key, ident in (("csi", "volumeHandle"), ("awsElasticBlockStore", "volumeID")):
            if isinstance(spec.get(key), dict):
                spec[key][ident] = f"vol-{i}"
                break
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                            "namespace": self.namespace, "name": f"pvc-{i}"}
        return m

    def _claim(self, i: int) -> PersistentVolumeClaim:
        return parse_typed(PersistentVolumeClaim.from_manifest, self.claim_manifest(i),
                           self.pvc_source)

    def claim_manifest(self, i: int) -> dict[str, Any]:
        """Pod ``i``'s claim, bound to its volume."""
        m, spec = _bound_copy(self.pvc, self.pvc_source, f"pvc-{i}", self.namespace)
        spec["volumeName"] = f"{self.namespace}-vol-{i}"
        return m

    @staticmethod
    def pod_volumes(i: int) -> list[dict[str, Any]]:
        """What pod ``i``'s ``spec.volumes`` become: one volume naming its claim."""
        return [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]

    def attach(self, cluster: Cluster, pod: Pod, i: int) -> Pod:
        """Create pod ``i``'s volume and claim in ``cluster`` and return the pod with its
        volumes replaced by the claim."""
        try:
            cluster.put_storage(self._volume(i))
            cluster.put_storage(self._claim(i))
        except SchedulerCoreError as exc:
            raise WorkloadError(f"creating the volume of pod {i}: {exc}") from None
        source = pod.spec.source
        pod.spec = replace(pod.spec, volumes=(PodVolume("vol", claim=f"pvc-{i}"),),
                           source=None if source is None else {
                               **source, "volumes": self.pod_volumes(i)})
        return pod


def csi_node_manifest(strategy: NodeAllocatableStrategy, node: str) -> dict[str, Any]:
    """The CSINode upstream's NodeAllocatableStrategy creates for ``node``: one driver entry
    per csiNodeAllocatable driver (nodeID the node's name, its allocatable count) and the
    migrated-plugins annotation."""
    drivers = []
    for driver in sorted(strategy.csi_node_allocatable):
        count = strategy.csi_node_allocatable[driver]
        entry: dict[str, Any] = {"name": driver, "nodeID": node}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node, "annotations": {
                ANN_MIGRATED_PLUGINS: ",".join(strategy.migrated_plugins)}},
            "spec": {"drivers": drivers}}


def makes_csi_nodes(strategy: NodeAllocatableStrategy | None) -> bool:
    """The node strategy creates CSINodes (CSI limits or migrated plugins)."""
    return strategy is not None and bool(strategy.csi_node_allocatable
                                         or strategy.migrated_plugins)
