"""Objects for ops: template files, pod and node factories, and an API-server-like facade
over the fake cluster.

Template files are read and parsed once. A template without actions (``Template.is_static``)
is turned into one parsed object (a ``Pod`` or ``Node``) that is cloned per object; a template
with actions is rendered with ``{"Index": i, "Count": n, **templateParams}`` and parsed per
object. Names are deterministic: ``metadata.name`` when the manifest has one, else
``<generateName><n>`` with ``n`` counting per (kind, namespace, generateName) from 0 and
skipping names already in use (the API server appends 5 random characters instead).

:class:`FakeApi` adds what kube-apiserver does around the store and the scheduler does not
see: namespaces created on demand, graceful deletion (a bound pod whose
``terminationGracePeriodSeconds`` is not 0, or any pod with ``metadata.finalizers``, only gets
a ``deletionTimestamp``: without kubelet or finalizer controllers it stays, as in the
upstream integration environment), and the ``resize`` subresource.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.api import (
    UNMODELLED_KINDS,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Service,
    UnsupportedKindError,
    parse_object,
)
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import SchedulerCoreError
from workloads.builtin import DEFAULT_NODE, DEFAULT_POD
from workloads.config.ops import (
    LabelNodePrepareStrategy,
    NodeAllocatableStrategy,
    UniqueNodeLabelStrategy,
)
from workloads.template import Template, TemplateError

__all__ = [
    "CLUSTER_SCOPED",
    "FakeApi",
    "NodeFactory",
    "PodFactory",
    "TemplateFile",
    "UnsupportedWorkload",
    "WorkloadError",
    "load_yaml_text",
    "pod_flags",
    "unsupported_kind_reason",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HOSTNAME_LABEL = "kubernetes.io/hostname"
CLUSTER_SCOPED = ("Node", "Namespace", "PriorityClass")
PodFlags = tuple[bool, bool]  # (deleted at once even when bound, has finalizers)


class WorkloadError(Exception):
    """The workload cannot go on; the message says why (status "failed")."""


class UnsupportedWorkload(WorkloadError):
    """The workload needs something schedperf does not model (status "unsupported")."""


def load_yaml_text(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # a safe loader (CSafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise WorkloadError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None


def unsupported_kind_reason(kind: Any) -> str | None:
    if kind in UNMODELLED_KINDS:
        return f"kind {kind} is not modelled by scheduler_core"
    return None


class TemplateFile:
    """One object template file (Go text/template), parsed once."""

    def __init__(self, path: Path, params: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.source = str(self.path)
        try:
            text = self.path.read_text()
        except OSError as exc:
            raise WorkloadError(f"{self.source}: cannot read: {exc.strerror or exc}") from None
        try:
            self.template = Template(text, source=self.source)
        except TemplateError as exc:
            raise WorkloadError(str(exc)) from None
        self.params = dict(params or {})
        self.static: Any = (load_yaml_text(self.template.render({}), self.source)
                            if self.template.is_static else None)

    @property
    def is_static(self) -> bool:
        return self.template.is_static

    def manifest(self, index: int, count: int) -> Any:
        """The parsed object for ``index``; a static template's shared object (do not mutate
        it: deep-copy first)."""
        if self.template.is_static:
            return self.static
        data = {**self.params, "Index": index, "Count": count}
        try:
            text = self.template.render(data)
        except TemplateError as exc:
            raise WorkloadError(str(exc)) from None
        return load_yaml_text(text, f"{self.source} (Index {index})")

    def kind(self, count: int = 1) -> Any:
        m = self.manifest(0, max(count, 1))
        return m.get("kind") if isinstance(m, dict) else None


def _meta(m: Any) -> dict[str, Any]:
    meta = m.get("metadata") if isinstance(m, dict) else None
    return meta if isinstance(meta, dict) else {}


def pod_flags(m: Any) -> PodFlags:
    spec = m.get("spec") if isinstance(m, dict) else None
    grace = spec.get("terminationGracePeriodSeconds") if isinstance(spec, dict) else None
    return grace == 0, bool(_meta(m).get("finalizers"))


def _parse(parse: Callable[..., Any], m: Any, source: str, **kw: Any) -> Any:
    try:
        return parse(m, source=source, **kw)
    except UnsupportedKindError as exc:
        raise UnsupportedWorkload(str(exc)) from None
    except SchedulerCoreError as exc:
        raise WorkloadError(str(exc)) from None


# --------------------------------------------------------------------------- the API facade


class FakeApi:
    """The harness's API client: namespaces on demand, names, graceful deletion, updates."""

    def __init__(self, cluster: Cluster, now: Callable[[], float]) -> None:
        self.cluster = cluster
        self.now = now
        self._counters: dict[tuple[str, str, str], int] = {}
        self.pod_flags: dict[str, PodFlags] = {}  # pod key -> non-default deletion flags

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
    def ensure_namespace(self, namespace: str) -> None:
        if namespace and namespace not in self.cluster.namespaces:
            self.cluster.add_namespace(Namespace(namespace))

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
        c = self.cluster
        if isinstance(obj, Pod):
            self.create_pod(obj, flags)
        elif isinstance(obj, Node):
            c.add_node(obj)
        elif isinstance(obj, Namespace):
            c.add_namespace(obj)
        elif isinstance(obj, PriorityClass):
            c.add_priority_class(obj)
        elif isinstance(obj, PodDisruptionBudget):
            c.add_pdb(obj)
        elif isinstance(obj, Service):
            c.add_service(obj)
        else:  # pragma: no cover - parse_object returns only the kinds above
            raise WorkloadError(f"cannot create {type(obj).__name__}")

    def delete(self, obj: Any) -> None:
        c = self.cluster
        if isinstance(obj, Pod):
            self.delete_pod(obj.namespace, obj.name)
        elif isinstance(obj, Node):
            c.delete_node(obj.name)
        elif isinstance(obj, (PodDisruptionBudget, Service)):
            c.delete(type(obj).__name__, f"{obj.namespace}/{obj.name}")
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
                raise UnsupportedWorkload(_volume_reason(obj))
            c.update_pod(obj)
        elif isinstance(obj, Node):
            c.update_node(obj)
        elif isinstance(obj, Namespace):
            c.update_namespace(obj)
        elif isinstance(obj, PodDisruptionBudget):
            c.update_pdb(obj)
        elif isinstance(obj, Service):
            c.update_service(obj)
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
        scoped = kind in CLUSTER_SCOPED
        if scoped and namespace:
            raise WorkloadError(f'namespace "{namespace}" set for "{source}", but "{kind}" '
                                'has scope "root"')
        if not scoped and not namespace:
            raise WorkloadError(f'namespace not set for "{source}", but "{kind}" has scope '
                                '"namespace"')
        meta = _meta(manifest)
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
        if not scoped:
            manifest["metadata"]["namespace"] = namespace
        if kind == "Pod":
            obj = _parse(Pod.from_manifest, manifest, source, default_namespace=namespace)
            if obj.spec.unsupported_volumes:
                raise UnsupportedWorkload(_volume_reason(obj, source))
            return obj
        return _parse(parse_object, manifest, source)

    def _store_of(self, kind: str) -> Mapping[str, Any]:
        c = self.cluster
        return {"Namespace": c.namespaces, "PriorityClass": c.priority_classes,
                "PodDisruptionBudget": c.pdbs, "Service": c.services}.get(kind, {})


def _volume_reason(pod: Pod, source: str = "") -> str:
    where = f"{source}: " if source else ""
    kinds = ", ".join(pod.spec.unsupported_volumes)
    return (f"{where}pod volumes of kind {kinds} need PersistentVolumeClaim/CSI objects, "
            "which are not modelled by scheduler_core")


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


# --------------------------------------------------------------------------- factories


class PodFactory:
    """Pods of one createPods op (or one steady-state stream): template -> Pod per index.

    Pods from a template file get upstream's ``signature: signature-label-<index / batch>``
    label (podTemplateWithParams); the built-in pod does not.
    """

    def __init__(self, api: FakeApi, source: TemplateFile | None, namespace: str, *,
                 batch: int = 1) -> None:
        self.api = api
        self.source = source
        self.namespace = namespace
        self.batch = max(1, batch)
        self.signature = source is not None
        self.base: Pod | None = None
        self.fixed_name = ""
        self.prefix = ""
        self.flags: PodFlags = (False, False)
        where = source.source if source is not None else "built-in pod"
        manifest = source.manifest(0, 1) if source is not None else DEFAULT_POD
        self._check(manifest, where)
        if source is None or source.is_static:
            pod = _parse(Pod.from_manifest, manifest, where, default_namespace=namespace)
            if pod.spec.unsupported_volumes:
                raise UnsupportedWorkload(_volume_reason(pod, where))
            meta = _meta(manifest)
            self.base = pod
            self.fixed_name = meta.get("name") or ""
            self.prefix = meta.get("generateName") or ""
            self.flags = pod_flags(manifest)

    def _check(self, manifest: Any, where: str) -> None:
        if not isinstance(manifest, dict):
            raise WorkloadError(f"{where}: expected a Pod manifest (a mapping)")
        kind = manifest.get("kind", "Pod")
        reason = unsupported_kind_reason(kind)
        if reason:
            raise UnsupportedWorkload(f"{where}: {reason}")
        if kind != "Pod":
            raise WorkloadError(f'{where}: parsing Pod: expected kind "Pod", got "{kind}"')
        ns = _meta(manifest).get("namespace")
        if ns and ns != self.namespace:
            raise WorkloadError(f"{where}: the namespace of the provided object ({ns}) does "
                                f"not match the namespace sent on the request "
                                f"({self.namespace})")

    def make(self, index: int, count: int) -> tuple[Pod, PodFlags]:
        base = self.base
        ns = self.namespace
        if base is not None:
            name = self.fixed_name or self.api.pod_name(ns, self.prefix)
            if self.signature:
                labels = dict(base.labels)
                labels["signature"] = f"signature-label-{index // self.batch}"
                return base.clone(name, ns, labels=labels), self.flags
            return base.clone(name, ns), self.flags
        assert self.source is not None
        manifest = self.source.manifest(index, count)
        where = f"{self.source.source} (Index {index})"
        self._check(manifest, where)
        meta = _meta(manifest)
        pod = _parse(Pod.from_manifest, manifest, where, default_namespace=ns)
        if pod.spec.unsupported_volumes:
            raise UnsupportedWorkload(_volume_reason(pod, where))
        if not meta.get("name"):
            pod.name = self.api.pod_name(ns, meta.get("generateName") or "")
            if not meta.get("uid"):
                pod.uid = f"{ns}/{pod.name}"
        pod.namespace = ns
        pod.labels["signature"] = f"signature-label-{index // self.batch}"
        return pod, pod_flags(manifest)


class NodeFactory:
    """Nodes of one createNodes op: template (or upstream's base node ``node-<opIndex>-``),
    the hostname label, and one prepare strategy (allocatable, else round-robin label, else
    unique label, as upstream's getNodePreparer picks)."""

    def __init__(self, api: FakeApi, source: TemplateFile | None, op_index: int, *,
                 allocatable: NodeAllocatableStrategy | None = None,
                 label: LabelNodePrepareStrategy | None = None,
                 unique: UniqueNodeLabelStrategy | None = None) -> None:
        self.api = api
        self.source = source
        self.where = source.source if source is not None else "built-in node"
        if allocatable is not None and (allocatable.csi_node_allocatable
                                        or allocatable.migrated_plugins):
            raise UnsupportedWorkload(
                "nodeAllocatableStrategy.csiNodeAllocatable/migratedPlugins create CSINode "
                "objects: kind CSINode is not modelled by scheduler_core")
        self.extra_allocatable = dict(allocatable.node_allocatable) if allocatable else {}
        self.label = None if allocatable else label
        self.unique = None if (allocatable or label) else unique
        self.base: Node | None = None
        self.fixed_name = ""
        self.prefix = ""
        if source is None:
            manifest: Any = copy.deepcopy(DEFAULT_NODE)
            manifest["metadata"]["generateName"] = f"node-{op_index}-"
            manifest["status"]["allocatable"] = dict(manifest["status"]["capacity"])
        else:
            manifest = source.manifest(0, 1)
        self._check(manifest, self.where)
        if source is None or source.is_static:
            self.base = self._node(manifest, self.where)
            meta = _meta(manifest)
            self.fixed_name = meta.get("name") or ""
            self.prefix = meta.get("generateName") or ""

    @staticmethod
    def _check(manifest: Any, where: str) -> None:
        if not isinstance(manifest, dict):
            raise WorkloadError(f"{where}: expected a Node manifest (a mapping)")
        kind = manifest.get("kind", "Node")
        reason = unsupported_kind_reason(kind)
        if reason:
            raise UnsupportedWorkload(f"{where}: {reason}")
        if kind != "Node":
            raise WorkloadError(f'{where}: parsing Node: expected kind "Node", got "{kind}"')

    def _node(self, manifest: dict[str, Any], where: str) -> Node:
        if self.extra_allocatable:
            status = dict(manifest.get("status") or {})
            alloc = dict(status.get("allocatable") or status.get("capacity") or {})
            alloc.update(self.extra_allocatable)
            status["allocatable"] = alloc
            manifest = {**manifest, "status": status}
        return _parse(Node.from_manifest, manifest, where)

    def make(self, index: int, count: int) -> Node:
        if self.base is not None:
            base = self.base
            name = self.fixed_name or self.api.node_name(self.prefix)
        else:
            assert self.source is not None
            manifest = self.source.manifest(index, count)
            where = f"{self.where} (Index {index})"
            self._check(manifest, where)
            base = self._node(manifest, where)
            meta = _meta(manifest)
            name = meta.get("name") or self.api.node_name(meta.get("generateName") or "")
        labels = dict(base.labels)
        labels[HOSTNAME_LABEL] = name
        if self.label is not None:
            values = self.label.label_values
            labels[self.label.label_key] = values[index % len(values)]
        elif self.unique is not None:
            labels[self.unique.label_key] = f"{name}-{index}"
        return base.with_name(name, labels=labels)
