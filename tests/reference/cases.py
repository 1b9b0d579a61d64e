"""Small clusters given to both the reference and scheduler_core, as Kubernetes manifests
(built with tests/builders.py, so the core reads them through its real parsers)."""

from __future__ import annotations

from typing import Any

from tests.builders import expr, make_node, make_pod, name_in, term
from workloads.reference import ReferenceClient
from workloads.reference.core import evaluate_core, load_core
from workloads.reference.model import Evaluation

HOST = "kubernetes.io/hostname"
Manifest = dict[str, Any]


def node(name: str, cpu: str = "4", memory: str = "8Gi") -> Any:
    return make_node(name).alloc(cpu=cpu, memory=memory, pods=110).label(HOST, name)


def bound(name: str, node_name: str, cpu: str, *, priority: int = 0, second: int = 0,
          memory: str = "100Mi", labels: dict[str, str] | None = None) -> Manifest:
    """A pod already running on ``node_name`` (its start time given, so both sides order
    preemption victims the same way)."""
    b = make_pod(name).req(cpu=cpu, memory=memory).priority(priority).node(node_name)
    for k, v in (labels or {}).items():
        b.label(k, v)
    m = b.manifest()
    m["status"]["startTime"] = f"2025-01-01T00:00:{second:02d}Z"
    return m


def evaluate_both(reference: ReferenceClient, objects: list[Manifest], pod: str, *,
                  post_filter: bool = False) -> tuple[Evaluation, Evaluation]:
    """(reference's evaluation, core's evaluation) of the pending pod ``default/<pod>``."""
    reference.config(None)
    reference.apply(*objects)
    ref = reference.evaluate("default", pod)
    _, sched = load_core(objects)
    return ref, evaluate_core(sched, "default", pod, post_filter=post_filter)


def fit_cluster() -> list[Manifest]:
    """n1: 4 CPU with 3 used; n2: 2 CPU in all; n3: 8 CPU free. Pod p asks for 3 CPU."""
    return [node("n1").manifest(), node("n2", cpu="2").manifest(), node("n3", cpu="8").manifest(),
            bound("used", "n1", "3", memory="1Gi"),
            make_pod("p").req(cpu="3", memory="1Gi").manifest()]


def taint_cluster(tolerate: bool) -> list[Manifest]:
    """t1 tainted dedicated=gpu:NoSchedule, t2 soft=x:PreferNoSchedule, t3 untainted."""
    pod = make_pod("q").req(cpu="1", memory="100Mi")
    if tolerate:
        pod.toleration("dedicated", "gpu", "NoSchedule", operator="Equal")
    return [node("t1").taint("dedicated", "gpu", "NoSchedule").manifest(),
            node("t2").taint("soft", "x", "PreferNoSchedule").manifest(),
            node("t3").manifest(), pod.manifest()]


def affinity_cluster() -> list[Manifest]:
    """a0 zone a ssd, a1 zone b ssd, a2 zone a hdd; r requires zone a and prefers ssd; s
    selects zone b."""
    nodes = [node(f"a{i}").label("zone", z).label("disk", d).manifest()
             for i, (z, d) in enumerate([("a", "ssd"), ("b", "ssd"), ("a", "hdd")])]
    r = make_pod("r").req(cpu="1", memory="100Mi").node_affinity_in("zone", "a") \
        .preferred(10, term(expr("disk", "In", "ssd"))).manifest()
    s = make_pod("s").req(cpu="1", memory="100Mi").node_selector(zone="b").manifest()
    return [*nodes, r, s]


def score_cluster() -> list[Manifest]:
    """Three nodes of different shapes and usage; s3 holds the pod's image."""
    nodes = [make_node("s1").alloc(cpu="4", memory="8Gi", pods=110).manifest(),
             make_node("s2").alloc(cpu="8", memory="4Gi", pods=110).manifest(),
             make_node("s3").alloc(cpu="2", memory="16Gi", pods=110)
             .image(500 * 1024 * 1024, "img:1").manifest()]
    pod = make_pod("sc").container("img:1", {"cpu": "500m", "memory": "1Gi"}).manifest()
    return [*nodes, bound("u1", "s1", "1", second=1), bound("u2", "s2", "3", second=2), pod]


def preemption_cluster() -> list[Manifest]:
    """Three full 4-CPU nodes. n0: four priority-0 pods of 1 CPU; n1: two priority-5 pods of
    2 CPU; n2: two priority-0 and two priority-10 pods of 1 CPU. The preemptor (PriorityClass
    "high", 1000) asks for 2 CPU: the fewest, lowest victims are c0 and c1 on n2."""
    pods = [bound(f"a{i}", "n0", "1", second=1 + i) for i in range(4)]
    pods += [bound(f"b{i}", "n1", "2", priority=5, second=5 + i) for i in range(2)]
    pods += [bound(f"c{i}", "n2", "1", priority=10 if i >= 2 else 0, second=7 + i)
             for i in range(4)]
    high = make_pod("high").req(cpu="2", memory="100Mi").manifest()
    high["spec"]["priorityClassName"] = "high"
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
          "metadata": {"name": "high"}, "value": 1000}
    return [pc, *(node(f"n{i}", memory="32Gi").manifest() for i in range(3)), *pods, high]


def no_victims_cluster() -> list[Manifest]:
    """Two full nodes whose pods all outrank the pending pod: preemption cannot help."""
    return [node("n0", memory="32Gi").manifest(), node("n1", memory="32Gi").manifest(),
            bound("a0", "n0", "3", priority=50, second=1),
            bound("b0", "n1", "3", priority=50, second=2),
            make_pod("mid").req(cpu="2", memory="100Mi").priority(10).manifest()]


def too_small_cluster() -> list[Manifest]:
    """n0: 4 CPU in all (free); n1: 8 CPU held by two priority-50 pods. big (priority 10)
    asks for 6 CPU: n0 can never hold it, n1 only without pods big may not preempt."""
    return [node("n0", memory="32Gi").manifest(), node("n1", cpu="8", memory="32Gi").manifest(),
            bound("h0", "n1", "4", priority=50, second=1),
            bound("h1", "n1", "4", priority=50, second=2),
            make_pod("big").req(cpu="6", memory="100Mi").priority(10).manifest()]


def conflicting_affinity_cluster() -> list[Manifest]:
    """Two nodes; pod x requires metadata.name to be both n0 and n1 (one term): NodeAffinity's
    PreFilter rejects it at once, before DynamicResources' PreFilter runs."""
    x = make_pod("x").req(cpu="1", memory="100Mi") \
        .required_terms(term(fields=[name_in("n0"), name_in("n1")])).manifest()
    return [node("n0").manifest(), node("n1").manifest(), x]
