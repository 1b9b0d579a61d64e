"""The objects of createNodes / createNamespaces / createPods / createAny / updateAny / churn
as Kubernetes manifests (plain mappings, sent as JSON to the kube-scheduler engine), with the
same names, labels and strategies as :mod:`workloads.ops.factories` gives scheduler_core's
objects, and the same namespace rules as :class:`workloads.ops.api.FakeApi`."""

from __future__ import annotations

import copy
from typing import Any

from workloads.config.ops import CreateNodes, CreatePods
from workloads.ops.defaults import DEFAULT_NODE, DEFAULT_POD
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.factories import prepared_node_labels
from workloads.ops.manifests import CLUSTER_SCOPED, check_namespace, check_scope, metadata_of
from workloads.ops.templates import TemplateFile
from workloads.ops.volumes import VolumeFactory, csi_node_manifest, makes_csi_nodes

__all__ = ["ENGINE_KINDS", "AnyManifests", "NameGenerator", "NodeManifests", "PodManifests",
           "namespace_manifest"]

# the kinds the engine's fake clientset is given (reference_scheduler/internal/world/objects.go
# "kinds"); any other is refused there as unsupported
ENGINE_KINDS = ("Node", "Pod", "Namespace", "Service", "ReplicationController", "PriorityClass",
                "PodDisruptionBudget", "ReplicaSet", "StatefulSet", "PersistentVolume",
                "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver")

# pod volume kinds whose objects the engine is never given (generic ephemeral volumes' claims
# come from the ephemeral volume controller)
_UNSUPPORTED_VOLUMES = ("ephemeral",)


class NameGenerator:
    """generateName: ``<prefix><n>``, n counting from 0 per (kind, namespace, prefix)."""

    def __init__(self) -> None:
        self._counters: dict[tuple[str, str, str], int] = {}

    def next(self, kind: str, namespace: str, prefix: str) -> str:
        key = (kind, namespace, prefix)
        n = self._counters.get(key, 0)
        self._counters[key] = n + 1
        return f"{prefix}{n}"


def namespace_manifest(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _check_kind(m: Any, where: str, want: str) -> dict[str, Any]:
    if not isinstance(m, dict):
        raise WorkloadError(f"{where}: expected a {want} manifest (a mapping)")
    kind = m.get("kind", want)
    if kind != want:
        raise WorkloadError(f'{where}: parsing {want}: expected kind "{want}", got "{kind}"')
    return m


def _named(m: dict[str, Any], name: str, labels: dict[str, str], **meta: Any,
           ) -> dict[str, Any]:
    """``m`` with metadata.name set (generateName dropped) and the labels given; the mapping
    is copied where it changes, never mutated."""
    md = {k: v for k, v in metadata_of(m).items() if k != "generateName"}
    md.update(name=name, labels=labels, **meta)
    return {**m, "apiVersion": m.get("apiVersion", "v1"), "kind": m.get("kind"),
            "metadata": md}


class NodeManifests:
    """Nodes of one createNodes op (see :class:`workloads.ops.factories.NodeFactory`)."""

    def __init__(self, op: CreateNodes, op_index: int, names: NameGenerator) -> None:
        strategy = op.node_allocatable_strategy
        # CSI limits or migrated plugins: each node's CSINode, created after the nodes
        self.csi = strategy if makes_csi_nodes(strategy) else None
        self.names = names
        self.extra = dict(strategy.node_allocatable) if strategy is not None else {}
        self.label = None if strategy else op.label_node_prepare_strategy
        self.unique = None if (strategy or op.label_node_prepare_strategy) else \
            op.unique_node_label_strategy
        self.source = (TemplateFile(op.node_template_path, op.template_params)
                       if op.node_template_path is not None else None)
        self.where = self.source.source if self.source is not None else "built-in node"
        if self.source is None:
            base = copy.deepcopy(DEFAULT_NODE)
            base["metadata"]["generateName"] = f"node-{op_index}-"
            self.base: dict[str, Any] | None = base
        else:
            self.base = self.source.static if self.source.is_static else None
            _check_kind(self.source.manifest(0, 1), self.where, "Node")

    def make(self, index: int, count: int) -> dict[str, Any]:
        if self.base is not None:
            m = self.base
        else:
            assert self.source is not None
            m = _check_kind(self.source.manifest(index, count),
                            f"{self.where} (Index {index})", "Node")
        meta = metadata_of(m)
        name = meta.get("name") or self.names.next("Node", "", meta.get("generateName") or "")
        labels = prepared_node_labels(
            {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}, name, index,
            self.label, self.unique)
        out = _named(m, name, labels)
        status = dict(m.get("status") or {})
        # scheduler_core reads a node without allocatable as its capacity: the same here
        alloc = dict(status.get("allocatable") or status.get("capacity") or {})
        alloc.update(self.extra)
        status["allocatable"] = alloc
        out["status"] = status
        return out

    def csi_node(self, node: dict[str, Any]) -> dict[str, Any] | None:
        """The node's CSINode, when the strategy creates them."""
        if self.csi is None:
            return None
        return csi_node_manifest(self.csi, node["metadata"]["name"])


class PodManifests:
    """Pods of one createPods op (see :class:`workloads.ops.factories.PodFactory`): pods from
    a template file get the ``signature`` label, the built-in pod does not."""

    def __init__(self, op: CreatePods, names: NameGenerator) -> None:
        assert op.namespace is not None  # resolve() fills it in
        self.namespace = op.namespace
        # each pod's own volume and claim (workloads.ops.volumes), created before the pod
        self.volumes: VolumeFactory | None = None
        pv, pvc = op.persistent_volume_template_path, op.persistent_volume_claim_template_path
        if pv is not None or pvc is not None:
            if pv is None or pvc is None:
                raise WorkloadError("createPods: persistentVolumeTemplatePath and "
                                    "persistentVolumeClaimTemplatePath must be set together")
            self.volumes = VolumeFactory(TemplateFile(pv), TemplateFile(pvc), op.namespace)
        self.names = names
        self.batch = max(1, op.signature_batch_size)
        self.source = (TemplateFile(op.pod_template_path, op.template_params)
                       if op.pod_template_path is not None else None)
        self.where = self.source.source if self.source is not None else "built-in pod"
        first = self.source.manifest(0, 1) if self.source is not None else DEFAULT_POD
        self._check(first, self.where)
        self.base = (DEFAULT_POD if self.source is None
                     else self.source.static if self.source.is_static else None)

    def _check(self, m: Any, where: str) -> dict[str, Any]:
        m = _check_kind(m, where, "Pod")
        check_namespace(m, self.namespace, where)
        spec = m.get("spec")
        for vol in (spec.get("volumes") or []) if isinstance(spec, dict) else []:
            kinds = [k for k in _UNSUPPORTED_VOLUMES if isinstance(vol, dict) and k in vol]
            if kinds:
                raise UnsupportedWorkload(
                    f"{where}: pod volumes of kind {', '.join(kinds)} need claims or CSI "
                    "objects, which the kube-scheduler engine is not given")
        return m

    def make(self, index: int, count: int) -> dict[str, Any]:
        if self.base is not None:
            m = self.base
        else:
            assert self.source is not None
            m = self._check(self.source.manifest(index, count),
                            f"{self.where} (Index {index})")
        meta = metadata_of(m)
        ns = self.namespace
        name = meta.get("name") or self.names.next("Pod", ns, meta.get("generateName") or "")
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        if self.source is not None:
            labels["signature"] = f"signature-label-{index // self.batch}"
        out = _named(m, name, labels, namespace=ns)
        if self.volumes is not None:
            out["spec"] = {**out.get("spec", {}), "volumes": self.volumes.pod_volumes(index)}
        return out

    def storage(self, index: int) -> list[dict[str, Any]]:
        """Pod ``index``'s volume and claim (none without volume templates)."""
        if self.volumes is None:
            return []
        return [self.volumes.volume_manifest(index), self.volumes.claim_manifest(index)]


class AnyManifests:
    """Objects of one template file for createAny / updateAny / churn: rendered with
    ``Index``/``Count``, a kind the engine holds, the op's namespace on namespaced kinds (none
    allowed on cluster-scoped ones), a name from ``generateName`` when ``names`` is given
    (churn leaves ``generateName`` to the engine, which appends random characters as the API
    server does)."""

    def __init__(self, path: Any, params: Any, namespace: str, count: int,
                 kinds: tuple[str, ...] = ENGINE_KINDS) -> None:
        self.source = TemplateFile(path, params)
        self.where = self.source.source
        self.namespace = namespace
        self.kinds = kinds
        self.kind = self._kind(self.source.manifest(0, max(count, 1)), self.where)

    def _kind(self, m: Any, where: str) -> str:
        if not isinstance(m, dict):
            raise WorkloadError(f"{where}: expected a Kubernetes object (a mapping)")
        kind = m.get("kind")
        if kind not in self.kinds:
            if self.kinds != ENGINE_KINDS:
                raise WorkloadError(f"{where}: expected kind {' or '.join(self.kinds)}, got "
                                    f"{kind}")
            raise UnsupportedWorkload(
                f"{where}: kind {kind} is not supported by the kube-scheduler engine (its fake "
                f"clientset holds {', '.join(ENGINE_KINDS)})")
        return str(kind)

    def make(self, index: int, count: int, names: NameGenerator | None) -> dict[str, Any]:
        where = f"{self.where} (Index {index})" if not self.source.is_static else self.where
        m = self.source.manifest(index, count)
        kind = self._kind(m, where)
        ns = self.namespace
        check_scope(kind, ns, self.where)
        scoped = kind in CLUSTER_SCOPED
        meta = {k: v for k, v in metadata_of(m).items() if k != "namespace"}
        if not meta.get("name"):
            prefix = meta.get("generateName") or ""
            if not prefix:
                raise WorkloadError(f"{where}: metadata.name or metadata.generateName must be "
                                    "set")
            if names is not None:
                meta = {k: v for k, v in meta.items() if k != "generateName"}
                meta["name"] = names.next(kind, ns, str(prefix))
        if not scoped:
            meta["namespace"] = ns
        return {**m, "apiVersion": m.get("apiVersion", "v1"), "metadata": meta}
