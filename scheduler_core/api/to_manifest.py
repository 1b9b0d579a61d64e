"""scheduler_core objects -> Kubernetes manifests (plain mappings, JSON-ready): what the
reference scheduler is sent (``workloads.fidelity``) and what an HTTP extender receives
(``scheduler_core.extender``).

A pod's spec is the very mapping the core parsed (``PodSpec.source``, kept under
``retain_spec_sources(True)``); without it, a spec of the fields the core models that an
extender reads (containers with their requests, scheduler name, node selector values are not
rebuilt). Metadata and status are the core object's as it is now. Nodes are written from the
fields the core models, which are all their scheduling-relevant fields.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.api.resources import CPU

__all__ = ["EPOCH", "node_manifest", "pod_manifest", "quantity", "rfc3339"]

# the core's clock starts at 0 s; manifests' times are this instant plus the core's seconds
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def rfc3339(seconds: float) -> str:
    """Core clock seconds as an RFC 3339 time (microseconds kept: ties stay ties)."""
    return (EPOCH + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def quantity(name: str, value: int) -> str:
    return f"{value}m" if name == CPU else str(value)


def node_manifest(node: Node) -> dict[str, Any]:
    alloc = {k: quantity(k, v) for k, v in node.allocatable.items()}
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
    spec = dict(source) if source is not None else _modelled_spec(pod)
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


def _modelled_spec(pod: Pod) -> dict[str, Any]:
    """A pod spec from the fields the core keeps when the manifest was not kept: its
    containers (name, image, requests), scheduler name and priority."""
    def container(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"name": c.name, "image": c.image}
        if c.requests:
            out["resources"] = {"requests": {k: quantity(k, v) for k, v in c.requests.items()}}
        return out

    spec: dict[str, Any] = {"schedulerName": pod.spec.scheduler_name,
                            "containers": [container(c) for c in pod.spec.containers]}
    if pod.spec.init_containers:
        spec["initContainers"] = [container(c) for c in pod.spec.init_containers]
    if pod.spec.priority is not None:
        spec["priority"] = pod.spec.priority
    return spec
