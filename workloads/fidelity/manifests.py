"""scheduler_core objects -> the Kubernetes manifests the reference scheduler is sent.

A pod's spec is the very mapping the core parsed (``PodSpec.source``, kept under
``retain_spec_sources(True)``), so the reference decodes what the core read, field for field;
its metadata and status are the core object's as it is now (name, labels, the node it is
bound to, its nomination, its start time). The other kinds are written from the fields the
core models, which are all their scheduling-relevant fields (nodes after the runner's prepare
strategies changed their labels or allocatable); the storage kinds as the core parsed them.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import PodGroup
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.api.to_manifest import EPOCH, node_manifest, rfc3339
from scheduler_core.api.to_manifest import pod_manifest as core_pod_manifest
from scheduler_core.cluster.store import STORAGE_TYPES
from workloads.fidelity.errors import MirrorError

__all__ = ["EPOCH", "manifest_of", "node_manifest", "pod_manifest", "podgroup_manifest",
           "rfc3339"]


def _selector(sel: LabelSelector | None) -> dict[str, Any] | None:
    if sel is None:
        return None
    return {"matchExpressions": [
        {"key": r.key, "operator": r.op, **({"values": sorted(r.values)} if r.values else {})}
        for r in sel.requirements]}


def pod_manifest(pod: Pod) -> dict[str, Any]:
    """The pod as the reference is sent it: the very spec the core parsed (required)."""
    if pod.spec.source is None:
        raise MirrorError(f"pod {pod.key}: its spec was parsed without keeping its manifest "
                          "(retain_spec_sources was off)")
    return core_pod_manifest(pod)


def manifest_of(obj: object) -> dict[str, Any]:
    """The manifest of any object the core's cluster holds."""
    if isinstance(obj, Pod):
        return pod_manifest(obj)
    if isinstance(obj, Node):
        return node_manifest(obj)
    if isinstance(obj, Namespace):
        return {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": obj.name, "labels": dict(obj.labels)}}
    if isinstance(obj, PriorityClass):
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": obj.name}, "value": obj.value,
                "globalDefault": obj.global_default, "preemptionPolicy": obj.preemption_policy}
    if isinstance(obj, PodDisruptionBudget):
        spec: dict[str, Any] = {}
        if obj.selector is not None:
            spec["selector"] = _selector(obj.selector)
        if obj.min_available is not None:
            spec["minAvailable"] = obj.min_available
        if obj.max_unavailable is not None:
            spec["maxUnavailable"] = obj.max_unavailable
        pdb: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                               "metadata": {"name": obj.name, "namespace": obj.namespace},
                               "spec": spec}
        if obj.disrupted_pods:
            pdb["status"] = {"disruptedPods": dict.fromkeys(sorted(obj.disrupted_pods),
                                                            rfc3339(0))}
        return pdb
    if isinstance(obj, Service):
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": obj.name, "namespace": obj.namespace},
                "spec": {"selector": dict(obj.selector)}}
    if isinstance(obj, PodGroup):
        return podgroup_manifest(obj)
    if isinstance(obj, STORAGE_TYPES):
        # the mapping the core parsed, status included (the reference keeps the status of
        # PersistentVolumes and claims as sent)
        return copy.deepcopy(obj.manifest)
    raise MirrorError(f"the reference is not sent {type(obj).__name__} objects")


def podgroup_manifest(pg: PodGroup) -> dict[str, Any]:
    """A PodGroup as scheduling.k8s.io/v1beta1 (the version the v1.37 reference reads): its
    policy and topology constraint, and its parent and workload reference when set. Priority,
    disruption mode and claims have no v1beta1 field: a group with one is refused (the core
    reports such workloads unsupported before anything is mirrored)."""
    if pg.priority is not None or pg.disruption_mode or pg.resource_claims:
        raise MirrorError(f"PodGroup {pg.key}: priority, disruptionMode and resourceClaims are "
                          "not sent to the reference (no scheduling.k8s.io/v1beta1 field)")
    policy: dict[str, Any] = ({"gang": {"minCount": pg.policy.min_count}} if pg.policy.gang
                              else {"basic": {}})
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if pg.topology_keys:
        spec["schedulingConstraints"] = {"topology": [{"key": k} for k in pg.topology_keys]}
    if pg.parent:
        spec["parentCompositePodGroupName"] = pg.parent
    if pg.workload_ref is not None:
        spec["workloadRef"] = {"workloadName": pg.workload_ref.workload_name,
                               "templateName": pg.workload_ref.template_name}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": pg.name, "namespace": pg.namespace}, "spec": spec}
