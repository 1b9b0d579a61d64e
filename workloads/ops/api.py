"""An API-server-like facade over the fake cluster.

:class:`FakeApi` adds what kube-apiserver does around the store and the scheduler does not
see: namespaces created on demand, deterministic names (``metadata.name`` when the manifest has
one, else ``<generateName><n>`` with ``n`` counting per (kind, namespace, generateName) from 0
and skipping names already in use; the API server appends 5 random characters instead),
graceful deletion (a bound pod whose ``terminationGracePeriodSeconds`` is not 0, or any pod
with ``metadata.finalizers``, only gets a ``deletionTimestamp``: without kubelet or finalizer
controllers it stays, as in the upstream integration environment), and the ``resize``
subresource.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from scheduler_core.api import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    Service,
    parse_object,
)
from scheduler_core.cluster.store import STORAGE_TYPES, Cluster
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.manifests import (
    CLUSTER_SCOPED,
    PodFlags,
    check_scope,
    metadata_of,
    parse_typed,
    pod_group_reason,
    unsupported_kind_reason,
    volume_reason,
)

__all__ = ["FakeApi"]



class FakeApi:
    """The harness's API client: namespaces on demand, names, graceful deletion, updates."""

    def __init__(self, cluster: Cluster, now: Callable[[], float]) -> None:
        self.cluster = cluster
        self.now = now
        self._counters: dict[tuple[str, str, str], int] = {}
        self.pod_flags: dict[str, PodFlags] = {}  # pod key -> non-default deletion flags
        # the GenericWorkload gate: PodGroups served, pods may name one (else unsupported)
        self.pod_groups = False
        # the TopologyAwareWorkloadScheduling gate: PodGroups may carry a topology constraint
        self.topology_aware = False

    # -- names
    def generate_name(self, kind: str, namespace: str, prefix: str,
                      exists: Callable[[str], bool]) -> str:
        key = (kind, namespace, prefix)
        n = self._counters.get(key, 0)
        name = f"{prefix}{n}"
        while exists(name):
            n += 1
            name = f"{prefix}{n}"
        self._counters[key] = n + 1
        return name

    def pod_name(self, namespace: str, prefix: str) -> str:
        pods = self.cluster.pods
        return self.generate_name("Pod", namespace, prefix,
                                  lambda name: f"{namespace}/{name}" in pods)

    def node_name(self, prefix: str) -> str:
        return self.generate_name("Node", "", prefix, self.cluster.has_node)

    # -- namespaces
    def ensure_namespace(self, namespace: str, labels: Mapping[str, str] | None = None) -> None:
        """Create ``namespace`` (with ``labels``) unless it exists."""
        if namespace and namespace not in self.cluster.namespaces:
            self.cluster.add_namespace(Namespace(namespace, dict(labels or {})))

    # -- pods
    def create_pod(self, pod: Pod, flags: PodFlags = (False, False)) -> None:
        self.cluster.add_pod(pod)
        if flags[0] or flags[1]:
            self.pod_flags[pod.key] = flags

    def delete_pod(self, namespace: str, name: str, *, grace_zero: bool = False) -> bool:
        """Delete like kube-apiserver; False if the pod does not exist."""
        key = f"{namespace}/{name}"
        pod = self.cluster.pods.get(key)
        if pod is None:
            return False
        immediate, finalizers = self.pod_flags.get(key, (False, False))
        graceful = bool(pod.node_name) and not (immediate or grace_zero)
        if finalizers or graceful:
            if pod.deletion_timestamp is None:
                terminating = pod.clone()
                terminating.deletion_timestamp = self.now()
                self.cluster.update_pod(terminating)
            return True
        self.cluster.delete_pod(namespace, name)
        self.pod_flags.pop(key, None)
        return True

    # -- any object
    def create(self, obj: Any, flags: PodFlags = (False, False)) -> None:
        if isinstance(obj, Pod):
            self.create_pod(obj, flags)
        else:
            self.cluster.add(obj)

    def delete(self, obj: Any) -> None:
        c = self.cluster
        if isinstance(obj, Pod):
            self.delete_pod(obj.namespace, obj.name)
        elif isinstance(obj, Node):
            c.delete_node(obj.name)
        elif isinstance(obj, (PodDisruptionBudget, Service)):
            c.delete(type(obj).__name__, f"{obj.namespace}/{obj.name}")
        elif isinstance(obj, STORAGE_TYPES):
            c.delete(obj.kind, getattr(obj, "key", obj.name))
        else:
            c.delete(type(obj).__name__, obj.name)

    def update(self, obj: Any, subresources: tuple[str, ...] = ()) -> None:
        """Update (and UpdateStatus) an existing object with the rendered one."""
        c = self.cluster
        if isinstance(obj, Pod):
            old = c.get_pod(obj.namespace, obj.name)
            if "resize" in subresources:
                obj = _resized(old, obj)
            elif obj.spec.unsupported_volumes:
                raise UnsupportedWorkload(volume_reason(obj))
            c.update_pod(obj)
        elif isinstance(obj, Node):
            c.update_node(obj)
        elif isinstance(obj, Namespace):
            c.update_namespace(obj)
        elif isinstance(obj, PodDisruptionBudget):
            c.update_pdb(obj)
        elif isinstance(obj, Service):
            c.update_service(obj)
        elif isinstance(obj, STORAGE_TYPES):
            c.put_storage(obj, update=True)
        else:
            raise WorkloadError(f"updating a {type(obj).__name__} is not supported by the "
                                "fake cluster")

    def parse(self, manifest: Any, *, source: str, namespace: str, index: int) -> Any:
        """A typed object from a rendered manifest: name generated from ``generateName``,
        namespace set to the op's (it must be empty for cluster-scoped kinds)."""
        if not isinstance(manifest, dict):
            raise WorkloadError(f"{source}: expected a Kubernetes object (a mapping)")
        kind = manifest.get("kind")
        reason = unsupported_kind_reason(kind)
        if reason:
            raise UnsupportedWorkload(f"{source}: {reason}")
        check_scope(kind, namespace, source)
        meta = metadata_of(manifest)
        name = meta.get("name")
        if not name:
            prefix = meta.get("generateName") or ""
            if not prefix:
                raise WorkloadError(f"{source}: metadata.name or metadata.generateName must be "
                                    "set")
            if kind == "Pod":
                name = self.pod_name(namespace, prefix)
            elif kind == "Node":
                name = self.node_name(prefix)
            else:
                store = self._store_of(kind)
                name = self.generate_name(kind, namespace, prefix,
                                          lambda n: (f"{namespace}/{n}" if namespace else n)
                                          in store)
        manifest = {**manifest, "metadata": {**meta, "name": name}}
        if kind not in CLUSTER_SCOPED:
            manifest["metadata"]["namespace"] = namespace
        if kind == "Pod":
            obj = parse_typed(Pod.from_manifest, manifest, source, default_namespace=namespace)
            if obj.spec.unsupported_volumes:
                raise UnsupportedWorkload(volume_reason(obj, source))
            if obj.spec.pod_group and not self.pod_groups:
                raise UnsupportedWorkload(pod_group_reason(obj, source))
            return obj
        return parse_typed(parse_object, manifest, source)

    def _store_of(self, kind: str) -> Mapping[str, Any]:
        c = self.cluster
        return {"Namespace": c.namespaces, "PriorityClass": c.priority_classes,
                "PodDisruptionBudget": c.pdbs, "Service": c.services, "PersistentVolume": c.pvs,
                "PersistentVolumeClaim": c.pvcs, "StorageClass": c.storage_classes,
                "CSINode": c.csi_nodes, "CSIDriver": c.csi_drivers}.get(kind, {})


def _resized(old: Pod, new: Pod) -> Pod:
    """The ``resize`` subresource: only container resources change."""
    spec = replace(old.spec, containers=tuple(
        replace(c, requests=n.requests) for c, n in zip(old.spec.containers,
                                                        new.spec.containers, strict=False)
    ) + old.spec.containers[len(new.spec.containers):])
    pod = Pod(old.name, old.namespace, spec=spec, labels=dict(old.labels), uid=old.uid,
              owner_references=old.owner_references, annotations=old.annotations,
              nominated_node_name=old.nominated_node_name, start_time=old.start_time,
              deletion_timestamp=old.deletion_timestamp)
    pod.node_name = old.node_name
    pod.priority = old.priority
    return pod
