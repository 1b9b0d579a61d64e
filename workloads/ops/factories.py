"""Pod and node factories: one op's template (or upstream's built-in object) -> the object for
each index, with upstream's labels (``signature``, the hostname, the node prepare strategy)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

from scheduler_core.api import Node, Pod
from scheduler_core.api.storage import CSINode
from workloads.config.ops import (
    LabelNodePrepareStrategy,
    NodeAllocatableStrategy,
    UniqueNodeLabelStrategy,
)
from workloads.ops.api import FakeApi
from workloads.ops.defaults import DEFAULT_NODE, DEFAULT_POD
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.manifests import (
    HOSTNAME_LABEL,
    PodFlags,
    check_namespace,
    manifest_pod_group,
    metadata_of,
    parse_typed,
    pod_flags,
    pod_group_reason,
    unsupported_kind_reason,
    volume_reason,
)
from workloads.ops.templates import TemplateFile
from workloads.ops.volumes import VolumeFactory, csi_node_manifest, makes_csi_nodes

__all__ = ["NodeFactory", "PodFactory", "prepared_node_labels"]


class PodFactory:
    """Pods of one createPods op (or one steady-state stream): template -> Pod per index.

    Pods from a template file get upstream's ``signature: signature-label-<index / batch>``
    label (podTemplateWithParams); the built-in pod does not.
    """

    def __init__(self, api: FakeApi, source: TemplateFile | None, namespace: str, *,
                 batch: int = 1, volumes: VolumeFactory | None = None) -> None:
        self.api = api
        self.volumes = volumes  # each pod's own volume and claim, created with it
        self.source = source
        self.namespace = namespace
        self.batch = max(1, batch)
        self.signature = source is not None
        self.base: Pod | None = None
        self.fixed_name = ""
        self.prefix = ""
        self.flags: PodFlags = (False, False)
        # templated pods: the last few parsed pods by manifest-without-name (_memo_key)
        self._memo: dict[str, Pod] = {}
        where = source.source if source is not None else "built-in pod"
        manifest = source.manifest(0, 1) if source is not None else DEFAULT_POD
        self._check(manifest, where)
        if source is None or source.is_static:
            pod = parse_typed(Pod.from_manifest, manifest, where, default_namespace=namespace)
            _check_pod(pod, where, api.pod_groups)
            meta = metadata_of(manifest)
            self.base = pod
            self.fixed_name = meta.get("name") or ""
            self.prefix = meta.get("generateName") or ""
            self.flags = pod_flags(manifest)
        elif manifest_pod_group(manifest) is not None:
            # pods in a PodGroup: found when preparing (schedperf list), after a strict parse
            # (a typo in the group fields is bad input, not "unsupported")
            _check_pod(parse_typed(Pod.from_manifest, manifest, where,
                                   default_namespace=namespace), where, api.pod_groups)

    def _check(self, manifest: Any, where: str) -> None:
        _check_kind(manifest, where, "Pod")
        check_namespace(manifest, self.namespace, where)

    def make(self, index: int, count: int) -> tuple[Pod, PodFlags]:
        pod, flags = self._make(index, count)
        if self.volumes is not None:
            pod = self.volumes.attach(self.api.cluster, pod, index)
        return pod, flags

    def _make(self, index: int, count: int) -> tuple[Pod, PodFlags]:
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
        meta = metadata_of(manifest)
        key = _memo_key(manifest, meta)
        base = self._memo.get(key) if key is not None else None
        group = _group_name(manifest) if key is not None and base is None else None
        other = self._memo.get(_memo_key(_without_group(manifest), meta)) if group else None
        if base is not None:  # the same manifest but for its name: parsed already
            pod = base.clone(meta["name"], ns)
        elif other is not None:  # ... and for its PodGroup: the same pod in another group
            pod = other.clone(meta["name"], ns)
            src = other.spec.source  # the spec as written, when fidelity keeps it
            pod.spec = replace(other.spec, pod_group=group, source=None if src is None else
                               {**src, "schedulingGroup": {"podGroupName": group}})
            self._remember(key, pod)
        else:
            pod = parse_typed(Pod.from_manifest, manifest, where, default_namespace=ns)
            _check_pod(pod, where, self.api.pod_groups)
            self._remember(key, pod)
            if group:
                self._remember(_memo_key(_without_group(manifest), meta), pod)
        if not meta.get("name"):
            pod.name = self.api.pod_name(ns, meta.get("generateName") or "")
            if not meta.get("uid"):
                pod.uid = f"{ns}/{pod.name}"
        pod.namespace = ns
        pod.labels["signature"] = f"signature-label-{index // self.batch}"
        return pod, pod_flags(manifest)

    def _remember(self, key: str | None, pod: Pod) -> None:
        if key is not None:
            if len(self._memo) >= _MEMO_SIZE:
                del self._memo[next(iter(self._memo))]
            self._memo[key] = pod.clone()


_MEMO_SIZE = 64


def _memo_key(manifest: Any, meta: Any) -> str | None:
    """The manifest without ``metadata.name`` as canonical JSON: two templated pods with the
    same key parse to the same pod but for its name (and the uid derived from it). None when
    the pod's identity comes from elsewhere (generateName, uid) or the name is not a string."""
    name = meta.get("name")
    if not isinstance(name, str) or not name or "uid" in meta or "generateName" in meta:
        return None
    rest = {**manifest, "metadata": {k: v for k, v in meta.items() if k != "name"}}
    try:
        return json.dumps(rest, sort_keys=True, default=_tagged)
    except (TypeError, ValueError):  # keys of mixed types, circular data: parse as usual
        return None


def _group_name(manifest: Any) -> str | None:
    """``spec.schedulingGroup.podGroupName`` when it is all the schedulingGroup holds and a
    non-empty string (anything else goes through the full parse and its checks)."""
    spec = manifest.get("spec")
    group = spec.get("schedulingGroup") if isinstance(spec, dict) else None
    if isinstance(group, dict) and len(group) == 1:
        name = group.get("podGroupName")
        if isinstance(name, str) and name:
            return name
    return None


def _without_group(manifest: Any) -> Any:
    """The manifest with a fixed PodGroup name: pods that differ only there share a key."""
    return {**manifest, "spec": {**manifest["spec"], "schedulingGroup": {"podGroupName": "\x00"}}}


def _tagged(value: Any) -> str:
    """A YAML value JSON has no type for (a date...), tagged so it never equals a string."""
    return f"\x00{type(value).__name__}:{value!r}"


def _check_pod(pod: Pod, where: str, pod_groups: bool) -> None:
    """A pod the core cannot schedule as upstream would makes the workload unsupported
    (``pod_groups``: the GenericWorkload gate is on, a pod may name a PodGroup)."""
    if pod.spec.unsupported_volumes:
        raise UnsupportedWorkload(volume_reason(pod, where))
    if pod.spec.pod_group and not pod_groups:
        raise UnsupportedWorkload(pod_group_reason(pod, where))


def prepared_node_labels(labels: dict[str, str], name: str, index: int,
                         label: LabelNodePrepareStrategy | None,
                         unique: UniqueNodeLabelStrategy | None) -> dict[str, str]:
    """``labels`` (changed in place and returned) with the node's hostname label and the label
    of its prepare strategy: round-robin values (``label``) or a unique value (``unique``)."""
    labels[HOSTNAME_LABEL] = name
    if label is not None:
        values = label.label_values
        labels[label.label_key] = values[index % len(values)]
    elif unique is not None:
        labels[unique.label_key] = f"{name}-{index}"
    return labels


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
        self.csi = allocatable if makes_csi_nodes(allocatable) else None
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
            meta = metadata_of(manifest)
            self.fixed_name = meta.get("name") or ""
            self.prefix = meta.get("generateName") or ""

    @staticmethod
    def _check(manifest: Any, where: str) -> None:
        _check_kind(manifest, where, "Node")

    def _node(self, manifest: dict[str, Any], where: str) -> Node:
        if self.extra_allocatable:
            status = dict(manifest.get("status") or {})
            alloc = dict(status.get("allocatable") or status.get("capacity") or {})
            alloc.update(self.extra_allocatable)
            status["allocatable"] = alloc
            manifest = {**manifest, "status": status}
        return parse_typed(Node.from_manifest, manifest, where)

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
            meta = metadata_of(manifest)
            name = meta.get("name") or self.api.node_name(meta.get("generateName") or "")
        labels = prepared_node_labels(dict(base.labels), name, index, self.label, self.unique)
        return base.with_name(name, labels=labels)


    def csi_node(self, node: Node) -> CSINode | None:
        """The node's CSINode, when the allocatable strategy has CSI limits or migrated
        plugins (upstream NodeAllocatableStrategy.PrepareDependentObjects): one driver entry
        per csiNodeAllocatable driver (nodeID the node's name) and the migrated-plugins
        annotation."""
        if self.csi is None:
            return None
        manifest = csi_node_manifest(self.csi, node.name)
        return parse_typed(CSINode.from_manifest, manifest, self.where)


def _check_kind(manifest: Any, where: str, want: str) -> None:
    """The template rendered a mapping of kind ``want`` (the default when ``kind`` is
    absent); a kind the core does not model makes the workload unsupported."""
    if not isinstance(manifest, dict):
        raise WorkloadError(f"{where}: expected a {want} manifest (a mapping)")
    kind = manifest.get("kind", want)
    reason = unsupported_kind_reason(kind)
    if reason:
        raise UnsupportedWorkload(f"{where}: {reason}")
    if kind != want:
        raise WorkloadError(f'{where}: parsing {want}: expected kind "{want}", got "{kind}"')
