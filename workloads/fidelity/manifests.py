"""scheduler_core objects -> the Kubernetes manifests the reference scheduler is sent.

A pod's spec is the very mapping the core parsed (``PodSpec.source``, kept under
``retain_spec_sources(True)``), so the reference decodes what the core read, field for field;
its metadata and status are the core object's as it is now (name, labels, the node it is
bound to, its nomination, its start time). The other kinds are written from the fields the
core models, which are all their scheduling-relevant fields (nodes after the runner's prepare
strategies changed their labels or allocatable).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from scheduler_core.api.pod import Pod
from scheduler_core.api.podgroup import PodGroup
from scheduler_core.api.resources import CPU
from scheduler_core.api.selectors import LabelSelector
from workloads.fidelity.errors import MirrorError

__all__ = ["EPOCH", "manifest_of", "pod_manifest", "podgroup_manifest", "rfc3339"]

# the core's clock starts at 0 s; the reference's logical clock at this instant
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def rfc3339(seconds: float) -> str:
    """Core clock seconds as an RFC 3339 time (microseconds kept: ties stay ties)."""
    return (EPOCH + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def _quantity(name: str, value: int) -> str:
    return f"{value}m" if name == CPU else str(value)


def _selector(sel: LabelSelector | None) -> dict[str, Any] | None:
    if sel is None:
        return None
    return {"matchExpressions": [
        {"key": r.key, "operator": r.op, **({"values": sorted(r.values)} if r.values else {})}
        for r in sel.requirements]}


def node_manifest(node: Node) -> dict[str, Any]:
    alloc = {k: _quantity(k, v) for k, v in node.allocatable.items()}
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect}
                          for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"capacity": alloc, "allocatable": alloc}
    if node.images:
        status["images"] = [{"names": list(i.names), "sizeBytes": i.size_bytes}
                            for i in node.images]
    meta: dict[str, Any] = {"name": node.name, "labels": dict(node.labels)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
            "status": status}


def pod_manifest(pod: Pod) -> dict[str, Any]:
    source = pod.spec.source
    if source is None:
        raise MirrorError(f"pod {pod.key}: its spec was parsed without keeping its manifest "
                          "(retain_spec_sources was off)")
    spec = dict(source)
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    else:
        spec.pop("nodeName", None)
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace,
                            "labels": dict(pod.labels)}
    if pod.annotations:
        meta["annotations"] = dict(pod.annotations)
    if pod.owner_references:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": name, "uid": f"owner-{kind}-{name}"}
            for kind, name in pod.owner_references]
    if pod.deletion_timestamp is not None:
        meta["deletionTimestamp"] = rfc3339(pod.deletion_timestamp)
    status: dict[str, Any] = {}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    if pod.start_time is not None:
        status["startTime"] = rfc3339(pod.start_time)
    if pod.preempted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                 "reason": "PreemptionByScheduler"}]
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if status:
        out["status"] = status
    return out


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
