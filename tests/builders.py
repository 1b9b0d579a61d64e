"""Fluent test builders (kube's testing/wrappers.go): objects go through the real manifest
parsers, so tests exercise what users write.

    make_node("n1").alloc(cpu="4", memory="32Gi", pods=110).label("zone", "a")
        .taint("k", "v", "NoSchedule").obj()
    make_pod("p").req(cpu="100m", memory="500Mi").toleration("k", "v", "NoSchedule").obj()
    table_of([node, ...], {"n1": [pod, ...]})
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.nodetable.table import NodeTable

__all__ = [
    "NodeBuilder",
    "PodBuilder",
    "expr",
    "make_node",
    "make_pod",
    "name_in",
    "run_filter",
    "run_score",
    "table_of",
    "term",
]


def _resources(res: dict[str, Any] | None, kw: dict[str, Any]) -> dict[str, str]:
    """Keyword names use "_" for "-" (ephemeral_storage); extended names go in ``res``."""
    out = {k: str(v) for k, v in (res or {}).items()}
    out.update({k.replace("_", "-"): str(v) for k, v in kw.items()})
    return out


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {}},
            "spec": {"taints": []},
            "status": {"allocatable": {}, "images": []},
        }

    def alloc(self, res: dict[str, Any] | None = None, **kw: Any) -> NodeBuilder:
        self._m["status"]["allocatable"].update(_resources(res, kw))
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._m["metadata"]["labels"][key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._m["spec"]["taints"].append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self, flag: bool = True) -> NodeBuilder:
        self._m["spec"]["unschedulable"] = flag
        return self

    def image(self, size: int, *names: str) -> NodeBuilder:
        self._m["status"]["images"].append({"names": list(names), "sizeBytes": size})
        return self

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self._m)

    def obj(self) -> Node:
        return Node.from_manifest(self.manifest())


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {}},
            "spec": {"containers": []},
            "status": {},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        return self._m["spec"]

    # -- containers -------------------------------------------------------------------------
    def container(self, image: str = "", requests: dict[str, str] | None = None,
                  ports: list[dict[str, Any]] | None = None) -> PodBuilder:
        c: dict[str, Any] = {"name": f"c{len(self._spec['containers'])}"}
        if image:
            c["image"] = image
        if requests is not None:
            c["resources"] = {"requests": requests}
        if ports:
            c["ports"] = ports
        self._spec["containers"].append(c)
        return self

    def req(self, res: dict[str, Any] | None = None, **kw: Any) -> PodBuilder:
        """Add a container requesting these resources (kube's ``Req``)."""
        return self.container(requests=_resources(res, kw))

    def init_req(self, res: dict[str, Any] | None = None, *, sidecar: bool = False,
                 ports: list[dict[str, Any]] | None = None, **kw: Any) -> PodBuilder:
        inits = self._spec.setdefault("initContainers", [])
        c: dict[str, Any] = {"name": f"i{len(inits)}",
                             "resources": {"requests": _resources(res, kw)}}
        if sidecar:
            c["restartPolicy"] = "Always"
        if ports:
            c["ports"] = ports
        inits.append(c)
        return self

    def overhead(self, res: dict[str, Any] | None = None, **kw: Any) -> PodBuilder:
        self._spec["overhead"] = _resources(res, kw)
        return self

    def host_port(self, port: int, ip: str = "", protocol: str = "") -> PodBuilder:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port}
        if ip:
            p["hostIP"] = ip
        if protocol:
            p["protocol"] = protocol
        return self.container(ports=[p])

    def images(self, *images: str) -> PodBuilder:
        for image in images:
            self.container(image=image)
        return self

    def init_image(self, image: str) -> PodBuilder:
        inits = self._spec.setdefault("initContainers", [])
        inits.append({"name": f"i{len(inits)}", "image": image})
        return self

    # -- scheduling fields ------------------------------------------------------------------
    def toleration(self, key: str = "", value: str = "", effect: str = "",
                   operator: str | None = None) -> PodBuilder:
        t: dict[str, Any] = {"key": key, "value": value, "effect": effect}
        if operator is not None:
            t["operator"] = operator
        elif not key:
            t["operator"] = "Exists"
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def _node_affinity(self) -> dict[str, Any]:
        return self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})

    def required_terms(self, *terms: dict[str, Any]) -> PodBuilder:
        """Required node affinity, terms given as NodeSelectorTerm dicts."""
        na = self._node_affinity()
        req = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution",
                            {"nodeSelectorTerms": []})
        req["nodeSelectorTerms"].extend(terms)
        return self

    def node_affinity_in(self, key: str, *values: str) -> PodBuilder:
        return self.required_terms(term(expr(key, "In", *values)))

    def preferred(self, weight: int, preference: dict[str, Any]) -> PodBuilder:
        na = self._node_affinity()
        na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": preference})
        return self

    def gates(self, *names: str) -> PodBuilder:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def group(self, name: str) -> PodBuilder:
        """``spec.schedulingGroup.podGroupName``."""
        self._spec["schedulingGroup"] = {"podGroupName": name}
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._m["metadata"]["uid"] = uid
        return self

    def node(self, name: str) -> PodBuilder:
        self._spec["nodeName"] = name
        return self

    def nominated(self, name: str) -> PodBuilder:
        self._m["status"]["nominatedNodeName"] = name
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._m["metadata"]["labels"][key] = value
        return self

    def claim(self, name: str) -> PodBuilder:
        """A persistentVolumeClaim volume naming claim ``name``."""
        return self.volume({"persistentVolumeClaim": {"claimName": name}})

    def volume(self, source: dict[str, Any]) -> PodBuilder:
        """A volume with this source, e.g. ``{"awsElasticBlockStore": {"volumeID": "v"}}``."""
        vols = self._spec.setdefault("volumes", [])
        vols.append({"name": f"v{len(vols)}", **source})
        return self

    def manifest(self) -> dict[str, Any]:
        m = copy.deepcopy(self._m)
        if not m["spec"]["containers"]:
            m["spec"]["containers"] = [{"name": "c0"}]
        return m

    def obj(self) -> Pod:
        return Pod.from_manifest(self.manifest())


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(*expressions: dict[str, Any], fields: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """A NodeSelectorTerm dict; ``fields`` are matchFields requirements (use ``name_in``)."""
    out: dict[str, Any] = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    fields = list(fields)
    if fields:
        out["matchFields"] = fields
    return out


def name_in(name: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": [name]}


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def make_pod(name: str = "p", namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def table_of(nodes: Iterable[Node], pods: dict[str, Iterable[Pod]] | None = None) -> NodeTable:
    """A node table with ``nodes`` (in order) and, per node name, pods accounted on it."""
    t = NodeTable()
    for n in nodes:
        t.add_node(n)
    for node_name, node_pods in (pods or {}).items():
        slot = t.slot_of[node_name]
        for p in node_pods:
            p.node_name = node_name
            t.add_pod(p, slot)
    return t


# --------------------------------------------------------------------------- plugin drivers
def run_filter(plugin: Any, pod: Pod, table: NodeTable, *, pre_filter: bool = True
               ) -> dict[str, Any]:
    """Run (PreFilter and) Filter over every node in slot order, then explain rejections.

    Returns node name -> None (passes) or the plugin's Status for that node. A PreFilter Skip
    lets every node pass; a PreFilter rejection is returned under the key ``"*"``.
    """
    from scheduler_core.framework.interface import Code, CycleState

    state = CycleState()
    if pre_filter and hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod, table)
        if status is not None and status.code == Code.SKIP:
            return {table.node(s).name: None for s in range(table.high) if table.live[s]}
        if status is not None and not status.is_success:
            return {"*": status}
    idx = slice(0, table.high)
    mask = plugin.filter(state, pod, table, idx)
    out: dict[str, Any] = {table.node(s).name: None for s in range(table.high) if table.live[s]}
    if mask is None:
        return out
    import numpy as np

    rejected = np.flatnonzero(~mask)
    if len(rejected):
        which, statuses = plugin.explain(state, pod, table, rejected.astype(np.int64))
        for slot, k in zip(rejected.tolist(), which.tolist(), strict=True):
            out[table.node(slot).name] = statuses[k]
    return out


def run_score(plugin: Any, pod: Pod, table: NodeTable, *, normalize: bool = True
              ) -> dict[str, int] | str:
    """PreScore, Score and (if the plugin has it) NormalizeScore over every node in slot
    order. Returns node name -> score, or ``"skip"`` when PreScore said Skip."""
    from scheduler_core.framework.interface import Code, CycleState

    state = CycleState()
    idx = slice(0, table.high)
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod, table, idx)
        if status is not None and status.code == Code.SKIP:
            return "skip"
    scores = plugin.score(state, pod, table, idx)
    if normalize and hasattr(plugin, "normalize"):
        scores = plugin.normalize(state, pod, scores)
    return {table.node(s).name: int(scores[s]) for s in range(table.high) if table.live[s]}


def tiny_config(*workloads: tuple[str, list[str], int, int, int], labels: str = "performance",
                thresholds: dict[str, str] | None = None) -> str:
    """A tiny scheduler_perf config of our own: test case ``Tiny`` (createNodes, init pods,
    measured pods) with one workload per ``(name, labels, nodes, init pods, measured pods)``;
    ``thresholds`` maps a workload name to its threshold text."""
    out = [
        "- name: Tiny",
        f"  labels: [{labels}]",
        "  workloadTemplate:",
        "  - opcode: createNodes",
        "    countParam: $nodes",
        "  - opcode: createPods",
        "    countParam: $initPods",
        "  - opcode: createPods",
        "    countParam: $measurePods",
        "    collectMetrics: true",
        "  workloads:",
    ]
    for name, wl_labels, nodes, init, measure in workloads:
        out.append(f"  - name: {name}")
        if wl_labels:
            out.append(f"    labels: [{', '.join(wl_labels)}]")
        if thresholds and name in thresholds:
            out.append(f"    threshold: {thresholds[name]}")
        out.append(f"    params: {{nodes: {nodes}, initPods: {init}, measurePods: {measure}}}")
    return "\n".join(out) + "\n"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (argument list, no shell); its stdout, stripped."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def two_commit_core_repo(root: Path) -> Path:
    """A repository whose scheduler_core says which commit it is: commits (and tags) "one"
    and "two", each setting ``VERSION`` in scheduler_core/__init__.py."""
    (root / "scheduler_core").mkdir(parents=True)
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    for version in ("one", "two"):
        (root / "scheduler_core" / "__init__.py").write_text(f"VERSION = {version!r}\n")
        git(root, "add", ".")
        git(root, "commit", "--quiet", "-m", version)
        git(root, "tag", version)
    return root


# a test case whose createAny makes a VolumeAttachment (not modelled): listed as unsupported
UNMODELLED = """\
- name: Volumes
  workloadTemplate:
  - opcode: createNodes
    count: 2
  - opcode: createAny
    templatePath: pv.yaml
  - opcode: createPods
    count: 2
    collectMetrics: true
  workloads:
  - name: small
    labels: [integration-test]
"""
