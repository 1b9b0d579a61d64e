"""The template files' text: node templates (Go template actions per Index), pod manifests
of the groups, and the fixed pods and objects (fill, preemptors, churn)."""

from __future__ import annotations

from typing import Any

from workloads.generator.draft import Draft
from workloads.generator.model import (
    CLASS_KEY,
    DEDICATED_KEY,
    GATE,
    GPU,
    GROUP_KEY,
    IMAGES,
    NODE_KINDS,
    PAUSE,
    POOL_KEY,
    RACK_KEY,
    ROLE_KEY,
    TAINT_KEY,
    TAINT_VALUE,
    ZONE_KEY,
    Group,
    NodeGroup,
    Spread,
    cpu_text,
    dump,
)

__all__ = ["churn_templates", "node_template", "pod_manifest", "simple_pod"]


def node_template(d: Draft, g: NodeGroup) -> str:
    """The node template of group ``g``: labels, taints, cordons and capacity chosen by
    ``.Index`` with template actions."""
    rz = d.zones * d.racks
    shapes = NODE_KINDS[g.kind]
    lines = ["apiVersion: v1", "kind: Node", "metadata:", f"  generateName: node-{g.name}-",
             "  labels:", f"    {POOL_KEY}: {g.name}", f"    {CLASS_KEY}: {g.kind}",
             f"    {RACK_KEY}: rack-{{{{ mod .Index {rz} }}}}"]
    if not g.zone_strategy:
        lines.append(f"    {ZONE_KEY}: zone-{{{{ mod .Index {d.zones} }}}}")
    tainted = f"{{{{- if lt (mod .Index 10) {g.taint_tenths} }}}}"
    if g.taint_tenths:
        lines += [tainted, f'    {DEDICATED_KEY}: "true"', "{{- end }}"]
    lines.append("spec:")
    if g.cordon_every:
        c = g.cordon_every
        lines.append(f"  unschedulable: {{{{ if eq (mod .Index {c}) {c - 1} }}}}true"
                     "{{ else }}false{{ end }}")
    else:
        lines.append("  unschedulable: false")
    if g.taint_tenths:
        lines += [tainted, "  taints:", f"  - key: {TAINT_KEY}", f"    value: {TAINT_VALUE}",
                  f"    effect: {g.taint_effect}", "{{- end }}"]

    def by_index(values: list[str]) -> str:
        if len(set(values)) == 1:
            return f'"{values[0]}"'
        n = len(values)
        parts = [f"{{{{ if eq (mod .Index {n}) 0 }}}}{values[0]}"]
        parts += [f"{{{{ else if eq (mod .Index {n}) {k} }}}}{v}"
                  for k, v in enumerate(values[1:-1], 1)]
        parts.append(f"{{{{ else }}}}{values[-1]}{{{{ end }}}}")
        return '"' + "".join(parts) + '"'

    lines += ["status:", "  capacity:",
              f"    cpu: {by_index([cpu_text(s[0]) for s in shapes])}",
              f"    memory: {by_index([f'{s[1]}Mi' for s in shapes])}",
              f"    pods: {by_index([str(s[2]) for s in shapes])}",
              "  conditions:", "  - type: Ready", '    status: "True"', "  phase: Running"]
    if g.images:
        lines += ["{{- if eq (mod .Index 2) 0 }}", "  images:"]
        for k, image in enumerate(IMAGES):
            lines += ["  - names:", f"    - {image}", f"    sizeBytes: {(k + 1) * 314572800}"]
        lines.append("{{- end }}")
    return "\n".join(lines) + "\n"


def pod_manifest(d: Draft, g: Group, *, named: bool = False,
                 gates: bool = False) -> dict[str, Any]:
    """The pod template of group ``g`` (``named``: ``<group>-<Index>``, else generateName;
    ``gates``: with the scheduling gate)."""
    meta: dict[str, Any] = ({"name": f"{g.name}-{{{{ .Index }}}}"} if named
                            else {"generateName": f"{g.name}-"})
    meta["labels"] = {GROUP_KEY: g.name, ROLE_KEY: "workload"}
    spec: dict[str, Any] = {}
    if g.scheduler:
        spec["schedulerName"] = g.scheduler
    if g.priority:
        spec["priorityClassName"] = g.priority
    if g.grace_zero:
        spec["terminationGracePeriodSeconds"] = 0
    if gates:
        spec["schedulingGates"] = [{"name": GATE}]
    if g.gang:  # pods 0..gang-1 in PodGroup <group>-gang-0, and so on
        spec["schedulingGroup"] = {
            "podGroupName": f"{g.name}-gang-{{{{ DivideInt .Index {g.gang} }}}}"}
    zone_names = [f"zone-{z}" for z in g.sel_zones]
    if g.selection == "selector-zone":
        spec["nodeSelector"] = {ZONE_KEY: zone_names[0]}
        d.tag("nodeSelector")
    elif g.selection == "selector-pool":
        spec["nodeSelector"] = {POOL_KEY: g.sel_pool}
        d.tag("nodeSelector")
    affinity: dict[str, Any] = {}
    node_aff = _node_affinity(d, g, zone_names)
    if node_aff:
        affinity["nodeAffinity"] = node_aff
    _pod_affinity(d, g, affinity)
    if affinity:
        spec["affinity"] = affinity
    tol = {"equal": {"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE},
           "exists": {"key": TAINT_KEY, "operator": "Exists"},
           "all": {"operator": "Exists"},
           "wrong-value": {"key": TAINT_KEY, "operator": "Equal", "value": "other"},
           }.get(g.toleration)
    if tol is not None:
        spec["tolerations"] = [tol]
        d.tag("tolerations")
    if g.spreads:
        spec["topologySpreadConstraints"] = [spread_manifest(d, s, g) for s in g.spreads]
    if g.overhead:
        spec["overhead"] = {"cpu": "10m", "memory": "32Mi"}
        d.tag("overhead")
    _containers(d, g, spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _node_affinity(d: Draft, g: Group, zone_names: list[str]) -> dict[str, Any]:
    """The group's required node affinity (its node selection) and preferred one."""
    terms = None
    if g.selection == "in":
        terms = [{"matchExpressions": [{"key": ZONE_KEY, "operator": "In",
                                        "values": zone_names}]}]
    elif g.selection == "notin":
        terms = [{"matchExpressions": [{"key": ZONE_KEY, "operator": "NotIn",
                                        "values": zone_names[:1]}]}]
    elif g.selection == "or":
        terms = [{"matchExpressions": [{"key": POOL_KEY, "operator": "In",
                                        "values": [g.sel_pool]}]},
                 {"matchExpressions": [{"key": RACK_KEY, "operator": "In",
                                        "values": [f"rack-{k}" for k in g.sel_racks]}]}]
    elif g.selection == "dedicated":
        terms = [{"matchExpressions": [{"key": DEDICATED_KEY, "operator": "Exists"}]}]
    node_aff: dict[str, Any] = {}
    if terms:
        node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": terms}
        d.tag("nodeAffinity:required")
    if g.preferred_node:
        expr = ({"key": ZONE_KEY, "operator": "In", "values": ["zone-0"]}
                if g.preferred_node == "zone"
                else {"key": CLASS_KEY, "operator": "In", "values": ["large", "standard"]})
        node_aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 10, "preference": {"matchExpressions": [expr]}}]
        d.tag("nodeAffinity:preferred")
    return node_aff


def _pod_affinity(d: Draft, g: Group, affinity: dict[str, Any]) -> None:
    """Add the group's pod affinity and anti-affinity blocks (required and preferred)."""
    for kind, api_key in (("affinity", "podAffinity"), ("anti", "podAntiAffinity")):
        block: dict[str, Any] = {}
        label = "podAffinity" if kind == "affinity" else "podAntiAffinity"
        if g.required == kind:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = [
                affinity_term(d, g.required_key, g.name, g)]
            d.tag(f"{label}:required")
        soft = [{"weight": w, "podAffinityTerm": affinity_term(d, key, target, g)}
                for k, key, target, w in g.soft_affinity if k == kind]
        if soft:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = soft
            d.tag(f"{label}:preferred")
        if block:
            affinity[api_key] = block


def _containers(d: Draft, g: Group, spec: dict[str, Any]) -> None:
    """Add the group's init container (if any) and containers with their requests."""
    d.tag("requests" if g.cpu or g.mem else "best-effort-pods")
    requests: dict[str, str] = {}
    if g.cpu:
        requests["cpu"] = cpu_text(g.cpu // g.containers)
    if g.mem:
        requests["memory"] = f"{g.mem // g.containers}Mi"
    if g.init:
        init: dict[str, Any] = {"name": "init", "image": PAUSE,
                                "resources": {"requests": dict(requests)}}
        if g.init == "sidecar":
            init["restartPolicy"] = "Always"
        d.tag("init-containers" if g.init == "init" else "sidecar")
        spec["initContainers"] = [init]
    containers = []
    for c in range(g.containers):
        container: dict[str, Any] = {"name": f"app-{c}", "image": g.image}
        res = dict(requests)
        if g.gpu and c == 0:
            res[GPU] = "1"
        if res:
            container["resources"] = {"requests": res}
        if g.port and c == 0:
            container["ports"] = [{"containerPort": 8080, "hostPort": g.port}]
            d.tag("hostPort")
        containers.append(container)
    spec["containers"] = containers


def affinity_term(d: Draft, key: str, target: str, g: Group) -> dict[str, Any]:
    term: dict[str, Any] = {"labelSelector": {"matchLabels": {GROUP_KEY: target}},
                            "topologyKey": key}
    if g.ns_selector:
        term["namespaceSelector"] = {}
        d.tag("namespaceSelector")
    if g.match_label_keys and target == g.name:
        term["matchLabelKeys"] = [GROUP_KEY]
        d.tag("matchLabelKeys")
    return term


def spread_manifest(d: Draft, s: Spread, g: Group) -> dict[str, Any]:
    m: dict[str, Any] = {"maxSkew": s.max_skew, "topologyKey": s.key,
                         "whenUnsatisfiable": "DoNotSchedule" if s.hard else "ScheduleAnyway",
                         "labelSelector": {"matchLabels": {GROUP_KEY: g.name}}}
    d.tag("spread:DoNotSchedule" if s.hard else "spread:ScheduleAnyway")
    if s.hard and s.min_domains is not None:
        m["minDomains"] = s.min_domains
        d.tag("minDomains")
    if s.affinity_policy:
        m["nodeAffinityPolicy"] = s.affinity_policy
        d.tag("spread:nodeAffinityPolicy")
    if s.taints_policy:
        m["nodeTaintsPolicy"] = s.taints_policy
        d.tag("spread:nodeTaintsPolicy")
    if s.match_label_keys:
        m["matchLabelKeys"] = [GROUP_KEY]
        d.tag("matchLabelKeys")
    return m


def simple_pod(name: str, cpu: int, priority: str, pool: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": f"{name}-", "labels": {ROLE_KEY: name}},
            "spec": {"priorityClassName": priority, "terminationGracePeriodSeconds": 0,
                     "nodeSelector": {POOL_KEY: pool}, "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "pause", "image": PAUSE, "resources": {
                         "requests": {"cpu": cpu_text(cpu), "memory": "64Mi"}}}]}}


def churn_templates(d: Draft, kinds: list[str]) -> list[str]:
    paths = []
    for kind in kinds:
        if kind == "node":
            obj: dict[str, Any] = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"generateName": "node-churn-"},
                "status": {"capacity": {"pods": "0"},
                           "conditions": [{"type": "Ready", "status": "True"}],
                           "phase": "Running"}}
        elif kind == "pod":
            obj = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"generateName": "pod-churn-"},
                   "spec": {"terminationGracePeriodSeconds": 0,
                            "containers": [{"name": "pause", "image": PAUSE}]}}
        else:
            target = d.rng.choice([g.name for g in d.groups] + ["none"])
            obj = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"generateName": "service-churn-"},
                   "spec": {"selector": {GROUP_KEY: target},
                            "ports": [{"protocol": "TCP", "port": 8080,
                                       "targetPort": 8080}]}}
        paths.append(d.template(f"churn-{kind}", dump(obj)))
    return paths
