"""Property-based tests of the scheduling loop over random small clusters (hypothesis).

Every scenario is a random sequence of operations on a fresh ``Cluster``: nodes are added and pods
created in random order (some pre-bound with ``spec.nodeName``, some gated, a few for another
scheduler), with a few scheduling attempts run between operations, then ``run_until_idle``.
Each bind the scheduler makes is recorded together with the pods already on the node at that
moment, and re-checked afterwards by a brute-force scalar model written here from the rules
(docs/scheduling-model.md, "Label selectors, taints and tolerations", and the sections of the
filter plugins, NodeUnschedulable to NodeResourcesFit). The model reads the *manifests*
(effective requests, host ports, tolerations, nodeSelector are recomputed from them) and uses
only the scalar ``NodeSelector.matches`` from the code under test, so it is independent of the
vectorised node-table path.

The label vocabulary is small on purpose (zone a/b/c, disk ssd/hdd, a numeric ``cores`` label for
Gt/Lt, including values Go's ``ParseInt`` rejects), so that selectors, taints and ports collide
often.

Preemption, if the default profile enables it, may delete pods: the checks treat a deleted pod
as a victim (it was bound or pending, and is simply gone).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api.node import Node
from scheduler_core.api.objects import Namespace, PriorityClass, Service
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import EventType, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks
from scheduler_core.framework.diagnosis import NO_NODES_AVAILABLE
from scheduler_core.framework.interface import CycleState
from scheduler_core.framework.runtime import Framework
from scheduler_core.plugins.node_affinity import NodeAffinity
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from tests.builders import expr, make_node, make_pod, run_filter, table_of, term

# --------------------------------------------------------------------------- vocabulary
ZONE = "topology.kubernetes.io/zone"  # the real zone key, so the node list order interleaves
ZONES = ("a", "b", "c")
DISK = "disk"
DISKS = ("ssd", "hdd")
CORES = "cores"
# numeric label values for Gt/Lt, with some Go's strconv.ParseInt(v, 10, 64) rejects ("1_0",
# beyond int64) and one a float64 cannot hold (2^53 + 1)
CORE_VALUES = ("2", "4", "8", "16", "1_0", "99999999999999999999", "9007199254740993")
CORE_BOUNDS = ("-1", "1", "3", "4", "8", "9007199254740992")
GPU = "example.com/gpu"
TAINT_KEYS = ("dedicated", "gpu", "maint")
TAINT_VALUES = ("", "x", "y")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
BLOCKING = ("NoSchedule", "NoExecute")
UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"
HOST_PORTS = (80, 8080)
HOST_IPS = ("", "0.0.0.0", "127.0.0.1", "10.0.0.1")
PROTOCOLS = ("", "TCP", "UDP")
WILDCARD = "0.0.0.0"
MAX_NODES = 12
NODE_NAMES = tuple(f"n{i}" for i in range(MAX_NODES))
DEFAULT_SCHEDULER = "default-scheduler"
OTHER_SCHEDULER = "other-scheduler"
MI = 2**20

# the default profile's Filter plugins, in profile order, with their upstream reasons
UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_PORTS = "NodePorts"
FIT = "NodeResourcesFit"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"

# v1.34: when a PreFilter rejection stopped PreFilter before DynamicResources' PreFilter ran,
# DynamicResources' PostFilter errs with "not found" (its missing cycle state), added last
FIT_MESSAGE = re.compile(r"^0/(\d+) nodes are available: (.+)\.(?: not found)?$")

PROPERTY_SETTINGS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------- generators
# Hypothesis pays ~0.1 ms per primitive draw, and a scenario has hundreds of fields. So
# hypothesis draws the *structure* (how many nodes and pods, the seeds objects are expanded
# from, the layout seed) and plain generators expand each manifest from its own seed.
# Shrinking still drops nodes and pods (the others keep their manifests); a failing example
# prints full manifests.
SEEDS = st.integers(0, 2**32 - 1)


def _pick(rng: random.Random, *options: Any) -> Any:
    return options[rng.randrange(len(options))]


def gen_node(rng: random.Random, name: str) -> dict[str, Any]:
    b = make_node(name).alloc(
        cpu=f"{_pick(rng, 1000, 2000, 4000, 8000)}m",
        memory=f"{_pick(rng, 1024, 4096, 8192)}Mi",
        pods=_pick(rng, 0, 1, 2, 3, 4, 6, 110, 110),
    )
    gpus = _pick(rng, None, None, 0, 1, 2)
    if gpus is not None:
        b.alloc({GPU: gpus})
    for key, values in ((ZONE, ZONES), (DISK, DISKS), (CORES, CORE_VALUES)):
        if rng.random() < 0.7:
            b.label(key, _pick(rng, *values))
    if rng.random() < 0.5:
        b.label("kubernetes.io/hostname", name)
    seen = set()
    for _ in range(_pick(rng, 0, 0, 0, 1, 2)):
        key, value, effect = (_pick(rng, *TAINT_KEYS), _pick(rng, *TAINT_VALUES),
                              _pick(rng, *EFFECTS))
        if (key, effect) not in seen:  # API validation: taints unique by key and effect
            seen.add((key, effect))
            b.taint(key, value, effect)
    if rng.random() < 0.1:
        b.unschedulable()
    return b.manifest()


def _resource_map(rng: random.Random) -> dict[str, str] | None:
    """A requests (or limits) map; None means no resources at all."""
    if rng.random() < 0.25:
        return None
    out: dict[str, str] = {}
    cpu = _pick(rng, None, 0, 100, 250, 500, 500, 1000, 1500)
    if cpu is not None:
        out["cpu"] = f"{cpu}m"
    mem = _pick(rng, None, 0, 128, 256, 512, 1024, 2048)
    if mem is not None:
        out["memory"] = f"{mem}Mi"
    if rng.random() < 0.12:
        out[GPU] = _pick(rng, "0", "1", "1")
    return out


def _ports(rng: random.Random) -> list[dict[str, Any]]:
    ports = []
    for _ in range(_pick(rng, 0, 0, 0, 1, 1, 2)):
        port = _pick(rng, *HOST_PORTS)
        p: dict[str, Any] = {"containerPort": port, "hostPort": port}
        ip = _pick(rng, *HOST_IPS)
        if ip:
            p["hostIP"] = ip
        protocol = _pick(rng, *PROTOCOLS)
        if protocol:
            p["protocol"] = protocol
        ports.append(p)
    return ports


def _container(rng: random.Random, name: str, *, init: bool) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name}
    resources = {}
    requests = _resource_map(rng)
    if requests is not None:
        resources["requests"] = requests
    if rng.random() < 0.3:  # SetDefaults_Pod: a limit without a request becomes the request
        limits = _resource_map(rng)
        if limits is not None:
            resources["limits"] = limits
    if resources:
        c["resources"] = resources
    ports = _ports(rng)
    if ports:
        c["ports"] = ports
    if init and rng.random() < 0.5:
        c["restartPolicy"] = "Always"  # a native sidecar
    return c


def _requirement(rng: random.Random) -> dict[str, Any]:
    kind = _pick(rng, "zone-in", "zone-notin", "disk-exists", "disk-absent", "cores-gt",
                 "cores-lt")
    if kind in ("zone-in", "zone-notin"):
        values = rng.sample(ZONES, _pick(rng, 1, 2))
        return expr(ZONE, "In" if kind == "zone-in" else "NotIn", *values)
    if kind == "disk-exists":
        return expr(DISK, "Exists")
    if kind == "disk-absent":
        return expr(DISK, "DoesNotExist")
    return expr(CORES, "Gt" if kind == "cores-gt" else "Lt", _pick(rng, *CORE_BOUNDS))


def _term(rng: random.Random) -> dict[str, Any]:
    """A NodeSelectorTerm; sometimes empty (matches nothing), sometimes with matchFields."""
    expressions = [_requirement(rng) for _ in range(_pick(rng, 0, 1, 1, 2))]
    fields = [{"key": "metadata.name", "operator": _pick(rng, "In", "NotIn"),
               "values": [_pick(rng, *NODE_NAMES[:rng.randint(1, MAX_NODES)])]}  # low n more often
              for _ in range(_pick(rng, 0, 0, 0, 1, 1, 2))]
    return term(*expressions, fields=fields)


def _toleration(rng: random.Random) -> dict[str, str]:
    key = _pick(rng, "", *TAINT_KEYS, UNSCHEDULABLE_KEY)
    operator = "Exists" if not key else _pick(rng, "Equal", "Exists")
    value = "" if operator == "Exists" else _pick(rng, *TAINT_VALUES)
    return {"key": key, "operator": operator, "value": value, "effect": _pick(rng, "", *EFFECTS)}


def gen_pod(rng: random.Random, name: str, *, roles: bool = True,
            p_required: float = 0.25, p_selector: float = 0.15) -> dict[str, Any]:
    """A pod manifest. With ``roles``, a few are pre-bound (spec.nodeName, maybe to a node that
    never exists), gated, or for another scheduler. ``p_required``: how often it has required
    node affinity; ``p_selector``: how often nodeSelector names each of zone and disk."""
    m = make_pod(name).manifest()
    spec = m["spec"]
    spec["containers"] = [_container(rng, f"c{i}", init=False) for i in range(_pick(rng, 1, 1, 2))]
    inits = [_container(rng, f"i{i}", init=True) for i in range(_pick(rng, 0, 0, 0, 1, 2))]
    if inits:
        spec["initContainers"] = inits
    if rng.random() < 0.15:
        spec["overhead"] = {"cpu": "50m", "memory": "16Mi"}
    tolerations = [_toleration(rng) for _ in range(_pick(rng, 0, 1, 2, 3))]
    if tolerations:
        spec["tolerations"] = tolerations
    selector = {key: _pick(rng, *values) for key, values in ((ZONE, ZONES), (DISK, DISKS))
                if rng.random() < p_selector}
    if selector:
        spec["nodeSelector"] = selector
    node_affinity: dict[str, Any] = {}
    if rng.random() < p_required:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [_term(rng) for _ in range(_pick(rng, 1, 1, 2))]}
    preferred = [{"weight": rng.randint(1, 100), "preference": _term(rng)}
                 for _ in range(_pick(rng, 0, 0, 1, 2))]
    if preferred:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    priority = _pick(rng, None, None, 0, 10, 1000)
    if priority is not None:
        spec["priority"] = priority
    if roles:
        role = _pick(rng, *("plain",) * 14, "bound", "bound", "gated", "other")
        if role == "bound":
            spec["nodeName"] = _pick(rng, *NODE_NAMES)  # the node may never exist
        elif role == "gated":
            spec["schedulingGates"] = [{"name": "example.com/gate"}]
        elif role == "other":
            spec["schedulerName"] = OTHER_SCHEDULER
    return m


@dataclass(frozen=True)
class Op:
    kind: str  # "node" | "pod"
    manifest: dict[str, Any]
    steps_after: int = 0  # schedule_one calls right after this operation


@dataclass(frozen=True)
class Scenario:
    ops: tuple[Op, ...]
    seed: int  # the scheduler's seed (tie breaking)

    @property
    def nodes(self) -> dict[str, dict[str, Any]]:
        return {o.manifest["metadata"]["name"]: o.manifest for o in self.ops if o.kind == "node"}

    @property
    def pods(self) -> dict[str, dict[str, Any]]:
        return {_key(o.manifest): o.manifest for o in self.ops if o.kind == "pod"}


def _seeded(master: int, i: int) -> random.Random:
    """The generator of object ``i`` of a scenario: stable when the object count shrinks."""
    return random.Random(f"{master}/{i}")


@st.composite
def scenarios(draw: Any, max_pods: int = 30) -> Scenario:
    """1-12 nodes and 0-30 pods, in a random order, with 0-2 scheduling attempts after each."""
    n_nodes = draw(st.integers(1, MAX_NODES))
    n_pods = draw(st.integers(0, max_pods))
    node_master, pod_master = draw(SEEDS), draw(SEEDS)
    layout = random.Random(draw(SEEDS))
    ops = [Op("node", gen_node(_seeded(node_master, i), NODE_NAMES[i])) for i in range(n_nodes)]
    ops += [Op("pod", gen_pod(_seeded(pod_master, i), f"p{i}")) for i in range(n_pods)]
    layout.shuffle(ops)
    ops = [Op(o.kind, o.manifest, _pick(layout, 0, 0, 0, 1, 2)) for o in ops]
    return Scenario(tuple(ops), draw(st.integers(0, 2**16)))


def _unrelated_objects(i: int) -> dict[str, Any]:
    """Objects no default plugin of this core reacts to (no pods live in their namespace)."""
    kinds = (
        {"kind": "Namespace", "metadata": {"name": f"unrelated-{i}", "labels": {"team": "x"}}},
        {"kind": "Service", "metadata": {"name": f"svc-{i}", "namespace": "elsewhere"},
         "spec": {"selector": {"app": "nothing"}}},
        {"kind": "PriorityClass", "metadata": {"name": f"unused-{i}"}, "value": 5},
    )
    return kinds[i % len(kinds)]


# --------------------------------------------------------------------------- scalar model
def _key(m: dict[str, Any]) -> str:
    return f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}"


def _qty(resource: str, text: str) -> int:
    """The quantities the strategies write: cpu "<n>m", memory "<n>Mi", counts as integers."""
    if resource == "cpu":
        return int(text[:-1]) if text.endswith("m") else int(text) * 1000
    if text.endswith("Mi"):
        return int(text[:-2]) * MI
    return int(text)


def _add(acc: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        acc[k] = acc.get(k, 0) + v


def _container_requests(c: dict[str, Any]) -> dict[str, int]:
    res = c.get("resources", {})
    out = {r: _qty(r, v) for r, v in res.get("limits", {}).items()}
    out.update({r: _qty(r, v) for r, v in res.get("requests", {}).items()})
    return out


def expected_requests(m: dict[str, Any]) -> dict[str, int]:
    """PodRequests, from the manifest."""
    spec = m["spec"]
    reqs: dict[str, int] = {}
    for c in spec["containers"]:
        _add(reqs, _container_requests(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers", []):
        r = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            _add(reqs, r)
            _add(sidecars, r)
            current = dict(sidecars)
        else:
            current = dict(r)
            _add(current, sidecars)
        for k, v in current.items():
            init_max[k] = max(init_max.get(k, 0), v)
    for k, v in init_max.items():
        reqs[k] = max(reqs.get(k, 0), v)
    _add(reqs, {r: _qty(r, v) for r, v in spec.get("overhead", {}).items()})
    return reqs


def expected_host_ports(m: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(ip, protocol, port) of the containers and the sidecars; plain init containers have
    exited before the pod runs and hold no port."""
    spec = m["spec"]
    holders = [c for c in spec.get("initContainers", []) if c.get("restartPolicy") == "Always"]
    holders += spec["containers"]
    return [(p.get("hostIP") or WILDCARD, p.get("protocol") or "TCP", p["hostPort"])
            for c in holders for p in c.get("ports", []) if p.get("hostPort", 0) > 0]


def ports_conflict(a: tuple[str, str, int], b: tuple[str, str, int]) -> bool:
    """NodePorts: same protocol and port, and either IP is the wildcard or both are equal."""
    return a[1:] == b[1:] and (a[0] == WILDCARD or b[0] == WILDCARD or a[0] == b[0])


def tolerates(tol: dict[str, str], taint: dict[str, str]) -> bool:
    """Toleration.ToleratesTaint."""
    if tol.get("effect") and tol["effect"] != taint["effect"]:
        return False
    if tol.get("key") and tol["key"] != taint["key"]:
        return False
    if tol.get("operator", "Equal") == "Exists":
        return True
    return tol.get("value", "") == taint.get("value", "")


def tolerates_any(pm: dict[str, Any], taint: dict[str, str]) -> bool:
    return any(tolerates(t, taint) for t in pm["spec"].get("tolerations", []))


def node_allocatable(nm: dict[str, Any]) -> dict[str, int]:
    return {r: _qty(r, v) for r, v in nm["status"]["allocatable"].items()}


def affinity_matches(pm: dict[str, Any], pod: Pod, nm: dict[str, Any]) -> bool:
    """RequiredNodeAffinity: nodeSelector (from the manifest) AND the scalar NodeSelector."""
    name, labels = nm["metadata"]["name"], nm["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in pm["spec"].get("nodeSelector", {}).items()):
        return False
    required = pod.spec.affinity.required_node
    return required is None or required.matches(name, labels)


def resource_reasons(pm: dict[str, Any], nm: dict[str, Any],
                     others: list[dict[str, Any]]) -> set[str]:
    """NodeResourcesFit's fitsRequest against the pods ``others`` already on the node."""
    alloc = node_allocatable(nm)
    used: dict[str, int] = {}
    for om in others:
        _add(used, expected_requests(om))
    reasons = set()
    if len(others) + 1 > alloc.get("pods", 0):
        reasons.add("Too many pods")
    for r, q in expected_requests(pm).items():
        if q > 0 and q > alloc.get(r, 0) - used.get(r, 0):
            reasons.add(f"Insufficient {r}")
    return reasons


def scalar_filter(pm: dict[str, Any], pod: Pod, nm: dict[str, Any],
                  others: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """Every default Filter plugin that rejects the pod on the node, in profile order, with the
    reasons upstream reports. Empty: the node is feasible."""
    out: list[tuple[str, set[str]]] = []
    unsched_taint = {"key": UNSCHEDULABLE_KEY, "value": "", "effect": "NoSchedule"}
    if nm["spec"].get("unschedulable") and not tolerates_any(pm, unsched_taint):
        out.append((UNSCHEDULABLE, {REASON_UNSCHEDULABLE}))
    wanted = pm["spec"].get("nodeName")
    if wanted and wanted != nm["metadata"]["name"]:
        out.append((NODE_NAME, {REASON_NODE_NAME}))
    for taint in nm["spec"].get("taints", []):
        if taint["effect"] in BLOCKING and not tolerates_any(pm, taint):
            out.append((TAINT_TOLERATION, {"node(s) had untolerated taint(s)"}))
            break  # v1.34 names no taint
    if not affinity_matches(pm, pod, nm):
        out.append((NODE_AFFINITY, {REASON_AFFINITY}))
    used = [hp for om in others for hp in expected_host_ports(om)]
    if any(ports_conflict(w, u) for w in expected_host_ports(pm) for u in used):
        out.append((NODE_PORTS, {REASON_PORTS}))
    fit = resource_reasons(pm, nm, others)
    if fit:
        out.append((FIT, fit))
    return out


# --------------------------------------------------------------------------- running
@dataclass(frozen=True)
class Bind:
    pod: str  # pod key
    node: str
    others: tuple[str, ...]  # keys of the pods already on the node (assumed or bound)


@dataclass
class Outcome:
    scenario: Scenario
    cluster: Cluster
    sched: Scheduler
    binds: list[Bind] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)  # preemption victims, if preemption is on

    def placements(self) -> dict[str, str]:
        return {k: p.node_name for k, p in self.cluster.pods.items()}

    def on_node(self, node: str) -> list[str]:
        return [k for k, p in self.cluster.pods.items() if p.node_name == node]


def _new_scheduler(seed: int) -> tuple[Cluster, Scheduler]:
    """As tests/scheduler/conftest.py: the default profile on a fresh cluster and FakeClock."""
    clock = FakeClock()
    cluster = Cluster(clock=clock.now)
    # synchronous preemption: with v1.34's asynchronous preemption a preemptor whose last
    # victim was already evicted by another preemption stays held by PreEnqueue until some
    # later pod deletion (upstream's behaviour, docs/fidelity.md), which property 5b excludes
    sched = Scheduler(cluster, lambda h: build_frameworks(SchedulerConfig(), h), clock=clock,
                      seed=seed, async_preemption=False)
    return cluster, sched


def run_scenario(scn: Scenario, *, unrelated_every: int = 0) -> Outcome:
    cluster, sched = _new_scheduler(scn.seed)
    out = Outcome(scn, cluster, sched)

    def on_event(ev: WatchEvent) -> None:
        if ev.kind == "Pod" and ev.type is EventType.MODIFIED and not ev.old.node_name \
                and ev.new.node_name:
            pod = ev.new
            others = tuple(k for k in out.on_node(pod.node_name) if k != pod.key)
            out.binds.append(Bind(pod.key, pod.node_name, others))
        elif ev.kind == "Pod" and ev.type is EventType.DELETED:
            out.deleted.add(ev.old.key)

    cluster.subscribe(on_event)
    for i, op in enumerate(scn.ops):
        if unrelated_every and i % unrelated_every == 0:
            data = _unrelated_objects(i)
            if data["kind"] == "Namespace":
                cluster.add_namespace(Namespace.from_manifest({"apiVersion": "v1", **data}))
            elif data["kind"] == "Service":
                cluster.add_service(Service.from_manifest({"apiVersion": "v1", **data}))
            else:
                cluster.add_priority_class(PriorityClass.from_manifest(
                    {"apiVersion": "scheduling.k8s.io/v1", **data}))
        if op.kind == "node":
            cluster.add_node(Node.from_manifest(op.manifest))
        else:
            cluster.add_pod(Pod.from_manifest(op.manifest))
        for _ in range(op.steps_after):
            sched.schedule_one()
    sched.run_until_idle()
    return out


def _scheduler_pods(scn: Scenario) -> dict[str, dict[str, Any]]:
    """Pods created for this scheduler: default schedulerName and no spec.nodeName."""
    return {k: m for k, m in scn.pods.items()
            if not m["spec"].get("nodeName")
            and m["spec"].get("schedulerName", DEFAULT_SCHEDULER) == DEFAULT_SCHEDULER}


# --------------------------------------------------------------------------- properties 1-4
@settings(PROPERTY_SETTINGS, max_examples=120)
@given(scenarios())
def test_binds_never_exceed_allocatable_or_pod_count(scn: Scenario) -> None:
    """1. At every bind, the node's pods (this one included) fit its allocatable on every
    resource the pod requests, and its pod count; at the end, a node holding only
    scheduler-placed pods is within allocatable on every resource."""
    out = run_scenario(scn)
    nodes, pods = scn.nodes, scn.pods
    for b in out.binds:
        reasons = resource_reasons(pods[b.pod], nodes[b.node], [pods[k] for k in b.others])
        assert not reasons, f"{b.pod} bound to {b.node} beside {list(b.others)}: {reasons}"
    placed = {b.pod for b in out.binds}
    for name, nm in nodes.items():
        here = out.on_node(name)
        if not here or not set(here) <= placed:
            continue
        total: dict[str, int] = {}
        for k in here:
            _add(total, expected_requests(pods[k]))
        alloc = node_allocatable(nm)
        assert len(here) <= alloc["pods"], (name, here)
        for r, q in total.items():
            assert q <= alloc.get(r, 0), f"{name}: {r} requested {q} > {alloc.get(r, 0)}"


@settings(PROPERTY_SETTINGS, max_examples=80)
@given(scenarios())
def test_placed_pods_tolerate_blocking_taints_and_unschedulable(scn: Scenario) -> None:
    """2. A scheduler-placed pod tolerates every NoSchedule/NoExecute taint of its node, and
    lands on an unschedulable node only if it tolerates node.kubernetes.io/unschedulable."""
    out = run_scenario(scn)
    nodes, pods = scn.nodes, scn.pods
    unsched_taint = {"key": UNSCHEDULABLE_KEY, "value": "", "effect": "NoSchedule"}
    for b in out.binds:
        pm, nm = pods[b.pod], nodes[b.node]
        for taint in nm["spec"]["taints"]:
            if taint["effect"] in BLOCKING:
                assert tolerates_any(pm, taint), f"{b.pod} on {b.node} ignores {taint}"
        if nm["spec"].get("unschedulable"):
            assert tolerates_any(pm, unsched_taint), f"{b.pod} on unschedulable {b.node}"


@settings(PROPERTY_SETTINGS, max_examples=80)
@given(scenarios())
def test_placed_pods_match_node_selector_and_required_affinity(scn: Scenario) -> None:
    """3. nodeSelector, required node affinity (In/NotIn/Exists/DoesNotExist/Gt/Lt) and
    matchFields metadata.name hold for every scheduler-placed pod (scalar matcher)."""
    out = run_scenario(scn)
    for b in out.binds:
        pod = Pod.from_manifest(scn.pods[b.pod])
        assert affinity_matches(scn.pods[b.pod], pod, scn.nodes[b.node]), (
            f"{b.pod} on {b.node} labels={scn.nodes[b.node]['metadata']['labels']} "
            f"selector={scn.pods[b.pod]['spec'].get('nodeSelector')} "
            f"affinity={pod.spec.affinity.required_node}")


@settings(PROPERTY_SETTINGS, max_examples=80)
@given(scenarios())
def test_host_ports_never_conflict(scn: Scenario) -> None:
    """4. A scheduler-placed pod's host ports conflict with no pod already on the node
    (0.0.0.0 wildcard rules: docs/scheduling-model.md, "NodePorts"), and no two
    scheduler-placed pods on a node conflict."""
    out = run_scenario(scn)
    pods = scn.pods
    for b in out.binds:
        wanted = expected_host_ports(pods[b.pod])
        for k in b.others:
            clash = [(w, u) for w in wanted for u in expected_host_ports(pods[k])
                     if ports_conflict(w, u)]
            assert not clash, f"{b.pod} on {b.node} clashes with {k}: {clash}"
    placed = {b.pod for b in out.binds}
    for name in scn.nodes:
        here = [k for k in out.on_node(name) if k in placed]
        for i, a in enumerate(here):
            for c in here[i + 1:]:
                assert not any(ports_conflict(x, y) for x in expected_host_ports(pods[a])
                               for y in expected_host_ports(pods[c])), (name, a, c)


# --------------------------------------------------------------------------- property 5
@settings(PROPERTY_SETTINGS, max_examples=120)
@given(scenarios())
def test_every_pod_ends_bound_failed_with_reason_or_gated(scn: Scenario) -> None:
    """5. Each pod created for the scheduler ends bound (by the scheduler, to an existing node,
    with no stale failure), gated, or with a recorded reason "0/N nodes are available: ...".
    Pre-bound pods keep their node; pods for another scheduler are ignored and stay pending.
    Nothing is left assumed."""
    out = run_scenario(scn)
    cluster, sched = out.cluster, out.sched
    n_nodes = len(scn.nodes)
    placed = {b.pod for b in out.binds}
    assert not cluster.assumed
    for key, m in scn.pods.items():
        if key in out.deleted:  # a preemption victim: it had a node
            assert m["spec"].get("nodeName") or key in placed, key
            continue
        pod = cluster.pods[key]
        if m["spec"].get("nodeName"):
            assert pod.node_name == m["spec"]["nodeName"] and key not in placed
            continue
        if m["spec"].get("schedulerName") == OTHER_SCHEDULER:
            assert not pod.node_name and key in sched.ignored
            continue
        if pod.node_name:
            assert key in placed and pod.node_name in scn.nodes
            assert key not in sched.failures, sched.failures[key]
            continue
        if m["spec"].get("schedulingGates"):
            qpi = sched.queue.get(pod.uid)
            assert qpi is not None and qpi.gated, key
            assert key not in sched.failures
            continue
        message = sched.failures.get(key, "")
        assert message, f"{key} pending without a reason"
        if message == NO_NODES_AVAILABLE:
            continue
        hit = FIT_MESSAGE.match(message)
        assert hit, message
        assert 1 <= int(hit.group(1)) <= n_nodes, message
        counts = re.findall(r"(?:^|, )(\d+) ", hit.group(2))
        if counts:  # a histogram: every examined node contributes at least one reason
            assert sum(map(int, counts)) >= int(hit.group(1)), message


@settings(PROPERTY_SETTINGS, max_examples=100)
@given(scenarios())
def test_at_idle_no_pending_pod_fits_any_node(scn: Scenario) -> None:
    """5b. Completeness of requeueing (queueing hints): when run_until_idle returns, no pending,
    ungated pod of this scheduler fits any node of the final cluster (scalar model)."""
    out = run_scenario(scn)
    cluster = out.cluster
    for key, m in _scheduler_pods(scn).items():
        pod = cluster.pods.get(key)
        if pod is None or pod.node_name or m["spec"].get("schedulingGates"):
            continue
        for name, nm in scn.nodes.items():
            others = [scn.pods[k] for k in out.on_node(name)]
            rejected = scalar_filter(m, pod, nm, others)
            assert rejected, (f"{key} is pending ({out.sched.failures.get(key)!r}) but fits "
                              f"{name}")


# --------------------------------------------------------------------------- property 6
@settings(PROPERTY_SETTINGS, max_examples=50)
@given(scenarios())
def test_same_seed_same_placements(scn: Scenario) -> None:
    """6. The same scenario and seed give the same pod -> node map (and the same failure
    messages); interleaving unrelated Namespaces, Services and PriorityClasses changes
    nothing."""
    first = run_scenario(scn)
    again = run_scenario(scn)
    noisy = run_scenario(scn, unrelated_every=2)
    assert again.placements() == first.placements()
    assert again.sched.failures == first.sched.failures
    assert noisy.placements() == first.placements()
    assert [b.pod for b in noisy.binds] == [b.pod for b in first.binds]


# --------------------------------------------------------------------------- property 7
@dataclass(frozen=True)
class TableCase:
    node_ops: tuple[tuple[str, dict[str, Any]], ...]  # ("add" | "update" | "delete", manifest)
    bound: tuple[dict[str, Any], ...]  # pre-bound pods
    pod: dict[str, Any]


@st.composite
def table_cases(draw: Any) -> TableCase:
    """Nodes added, then some updated or deleted (freeing slots) and new ones added into the
    freed slots, so slots, list order and label/taint columns are exercised beyond the
    identity layout. Then pre-bound pods (some on deleted or never-added nodes) and the pod
    under test (sometimes with spec.nodeName, for the NodeName filter)."""
    node_seeds = draw(st.lists(SEEDS, min_size=1, max_size=MAX_NODES))
    churn_seeds = draw(st.lists(SEEDS, max_size=4))
    bound_seeds = draw(st.lists(SEEDS, max_size=10))
    names = list(NODE_NAMES[:len(node_seeds)])
    ops = [("add", gen_node(random.Random(s), x)) for s, x in zip(node_seeds, names, strict=True)]
    live = list(names)
    for i, seed in enumerate(churn_seeds):
        rng = random.Random(seed)
        action = _pick(rng, "update", "delete", "add")
        if action == "add" or not live:
            name = f"m{i}"
            live.append(name)
            ops.append(("add", gen_node(rng, name)))
            continue
        name = _pick(rng, *live)
        ops.append((action, gen_node(rng, name)))
        if action == "delete":
            live.remove(name)
    bound = []
    for i, seed in enumerate(bound_seeds):
        rng = random.Random(seed)
        m = gen_pod(rng, f"b{i}", roles=False)
        m["spec"]["nodeName"] = _pick(rng, *names, "m0")
        bound.append(m)
    rng = random.Random(draw(SEEDS))
    pod = gen_pod(rng, "candidate", roles=False, p_required=0.6, p_selector=0.3)
    if rng.random() < 0.2:
        pod["spec"]["nodeName"] = _pick(rng, *names)
    return TableCase(tuple(ops), tuple(bound), pod)


def _build_table_case(case: TableCase) -> tuple[Cluster, Framework, dict[str, dict[str, Any]]]:
    cluster, sched = _new_scheduler(0)
    node_manifests_now: dict[str, dict[str, Any]] = {}
    for action, m in case.node_ops:
        name = m["metadata"]["name"]
        if action == "add":
            cluster.add_node(Node.from_manifest(m))
            node_manifests_now[name] = m
        elif action == "update":
            cluster.update_node(Node.from_manifest(m))
            node_manifests_now[name] = m
        else:
            cluster.delete_node(name)
            del node_manifests_now[name]
    for m in case.bound:
        cluster.add_pod(Pod.from_manifest(m))
    return cluster, sched.profiles[DEFAULT_SCHEDULER], node_manifests_now


@settings(PROPERTY_SETTINGS, max_examples=500)
@given(table_cases())
def test_vector_filter_agrees_with_scalar_model(case: TableCase) -> None:
    """7. After PreFilter, the nodes that the default profile's Filter plugins pass over
    ``table.order()`` (and over the identity slice) are exactly the nodes the scalar model
    accepts; each rejected node is charged to the first rejecting plugin in profile order,
    with the scalar model's reasons."""
    cluster, fwk, nodes = _build_table_case(case)
    table = cluster.table
    pod = Pod.from_manifest(case.pod)
    bound_manifests = {_key(m): m for m in case.bound}
    expected: dict[str, list[tuple[str, set[str]]]] = {}
    for name, nm in nodes.items():
        others = [bound_manifests[k] for k in bound_manifests
                  if cluster.pods[k].node_name == name]
        expected[name] = scalar_filter(case.pod, pod, nm, others)
    want = {name for name, rejected in expected.items() if not rejected}

    state = CycleState()
    pre_res, status, _ = fwk.run_pre_filter(state, pod, table)
    if status is not None:
        assert status.is_rejected, status
        assert not want, f"PreFilter rejected ({status.message}) but {want} fit"
        return
    idx = np.asarray(table.order(), dtype=np.int64)
    assert sorted(table.names_of(idx)) == sorted(nodes)
    mask, first_fail = fwk.run_filter(state, pod, table, idx, len(idx))
    passing = idx if mask is None else idx[mask]
    got = set(table.names_of(passing))
    if pre_res is not None and not pre_res.all_nodes:
        assert pre_res.node_names is not None
        got &= pre_res.node_names
        assert want <= pre_res.node_names, (want, pre_res.node_names)
    assert got == want, {n: expected[n] for n in got ^ want}

    # the identity slice (what the scheduler walks when the order is the identity) agrees
    full, _ = fwk.run_filter(state, pod, table, slice(0, table.high), table.high)
    live = np.flatnonzero(table.live[:table.high])
    by_slice = set(table.names_of(live if full is None else live[full[live]]))
    if pre_res is not None and not pre_res.all_nodes:
        by_slice &= pre_res.node_names
    assert by_slice == want

    # explanations: the first rejecting plugin and its reasons
    if mask is None or mask.all():
        return
    assert first_fail is not None
    rejected = np.flatnonzero(~mask)
    slots = idx[rejected]
    which, statuses = fwk.explain_filter(state, pod, table, slots, first_fail[rejected])
    for slot, k in zip(slots.tolist(), which.tolist(), strict=True):
        name = table.node(slot).name
        s = statuses[k]
        assert expected[name], f"{name} rejected by {s.plugin} ({s.reasons}) but fits"
        plugin, reasons = expected[name][0]
        assert (s.plugin, set(s.reasons)) == (plugin, reasons), (name, expected[name])


# --------------------------------------------------------------------------- pinned examples
_GO_PARSEINT_CASES = [
    # (label value, operator, bound): Go's strconv.ParseInt(label, 10, 64) fails on the first
    # two (so the requirement does not match); the last two are int64s a float64 would round
    pytest.param("1_0", "Gt", "5", False, id="underscore-label-is-not-an-integer"),
    pytest.param("99999999999999999999", "Gt", "5", False, id="label-beyond-int64"),
    pytest.param("9007199254740993", "Gt", "9007199254740992", True, id="2^53+1-gt-2^53"),
    pytest.param("9223372036854775806", "Lt", "9223372036854775807", True,
                 id="int64max-1-lt-int64max"),
]


@pytest.mark.parametrize(("label", "op", "bound", "matches"), _GO_PARSEINT_CASES)
def test_vector_gt_lt_agree_with_scalar_on_edge_integers(label: str, op: str, bound: str,
                                                         matches: bool) -> None:
    """Regression: the vectorised Gt/Lt once parsed labels with Python int() and compared
    float64s (found by test_vector_filter_agrees_with_scalar_model)."""
    node = make_node("n1").alloc(cpu="1", memory="1Gi", pods=10).label(CORES, label).obj()
    pod = make_pod().required_terms(term(expr(CORES, op, bound))).obj()
    required = pod.spec.affinity.required_node
    assert required is not None
    assert required.matches("n1", node.labels) is matches
    assert (run_filter(NodeAffinity(), pod, table_of([node]))["n1"] is None) is matches


def test_gt_affinity_never_places_on_non_integer_label() -> None:
    cluster, sched = _new_scheduler(0)
    cluster.add_node(make_node("n1").alloc(cpu="1", memory="1Gi", pods=10)
                     .label(CORES, "1_0").obj())
    cluster.add_pod(make_pod("p").required_terms(term(expr(CORES, "Gt", "5"))).obj())
    sched.run_until_idle()
    assert cluster.pods["default/p"].node_name == ""
    assert sched.failures["default/p"] == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
        " no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_pod_created_before_any_node_is_scheduled_once_a_node_exists() -> None:
    cluster, sched = _new_scheduler(0)
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    sched.run_until_idle()
    assert sched.failures["default/p"] == NO_NODES_AVAILABLE
    cluster.add_node(make_node("n1").alloc(cpu="1", memory="1Gi", pods=10).obj())
    sched.run_until_idle()
    assert cluster.pods["default/p"].node_name == "n1"
