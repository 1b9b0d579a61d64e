"""InterPodAffinity through the scheduling loop: required anti-affinity never co-locates
matching pods, required affinity follows the first pod of its kind, preferred terms steer
placement, unschedulable pods come back on the right events; plus a property test over random
clusters and pods."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api.pod import Pod
from scheduler_core.plugins import registry
from scheduler_core.plugins.inter_pod_affinity import NAME, InterPodAffinity
from tests.builders import make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


@pytest.fixture(autouse=True)
def _register(monkeypatch):
    monkeypatch.setitem(registry.IN_TREE, NAME, InterPodAffinity)


def node(name: str, zone: str | None):
    b = make_node(name).alloc(cpu="16", memory="64Gi", pods=110).label(HOST, name)
    if zone is not None:
        b.label(ZONE, zone)
    return b.obj()


def term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def pod(name: str, app: str | None = None, *, affinity: list[dict] = (),
        anti: list[dict] = (), pref: list[tuple[int, dict]] = ()) -> Pod:
    b = make_pod(name).req(cpu="100m", memory="128Mi")
    if app is not None:
        b.label("app", app)
    m = b.manifest()
    aff: dict[str, Any] = {}
    if affinity or pref:
        aff["podAffinity"] = {}
        if affinity:
            aff["podAffinity"][REQ] = list(affinity)
        if pref:
            aff["podAffinity"][PREF] = [{"weight": w, "podAffinityTerm": t} for w, t in pref]
    if anti:
        aff["podAntiAffinity"] = {REQ: list(anti)}
    if aff:
        m["spec"]["affinity"] = aff
    return Pod.from_manifest(m)


def bound(cluster) -> dict[str, str]:
    return {k: p.node_name for k, p in cluster.pods.items() if p.node_name}


def step(sched) -> bool:
    """One scheduling attempt (advancing the fake clock past backoff when idle)."""
    return sched.run_until_idle(max_attempts=1) > 0


# --------------------------------------------------------------------------- examples
def test_required_anti_affinity_on_hostname_never_colocates(make_scheduler):
    cluster, sched = make_scheduler([node(f"n{i}", "z1") for i in range(5)])
    for i in range(7):
        cluster.add_pod(pod(f"web{i}", "web", anti=[term("web", HOST)]))
    cluster.add_pod(pod("plain-web", "web"))  # no terms: repelled by the others' terms
    for _ in range(40):
        if not step(sched):
            break
        nodes = list(bound(cluster).values())
        assert len(nodes) == len(set(nodes))  # checked after every attempt
    assert len(bound(cluster)) == 5
    reasons = sched.pending_reasons()
    assert reasons["default/web6"] == (
        "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules."
        " no new claims to deallocate, "
        "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.")
    assert reasons["default/plain-web"] == (
        "0/5 nodes are available: 5 node(s) didn't satisfy existing pods anti-affinity rules."
        " no new claims to deallocate, "
        "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.")


def test_required_affinity_on_zone_follows_the_first_pod(make_scheduler):
    nodes = [node(f"n{i}", f"z{i % 3}") for i in range(9)]
    cluster, sched = make_scheduler(nodes)
    zone_of = {n.name: n.labels[ZONE] for n in nodes}
    for i in range(6):
        cluster.add_pod(pod(f"db{i}", "db", affinity=[term("db", ZONE)]))
    sched.run_until_idle()
    placed = bound(cluster)
    assert len(placed) == 6
    assert len({zone_of[n] for n in placed.values()}) == 1


def test_affinity_without_a_peer_waits_then_follows_it(make_scheduler):
    nodes = [node(f"n{i}", f"z{i % 2}") for i in range(4)] + [node("nozone", None)]
    cluster, sched = make_scheduler(nodes)
    cluster.add_pod(pod("client", "client", affinity=[term("db", ZONE)]))
    sched.run_until_idle()
    assert sched.pending_reasons()["default/client"] == (
        "0/5 nodes are available: 5 node(s) didn't match pod affinity rules."
        " no new claims to deallocate, "
        "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")
    peer = pod("db", "db")
    peer.node_name = "n3"  # a bound pod appears: the hint requeues the client
    cluster.add_pod(peer)
    sched.run_until_idle()
    assert cluster.pods["default/client"].node_name in {"n1", "n3"}


@pytest.mark.parametrize("hints, requeued", [(False, True), (True, False)])
def test_a_peer_in_a_namespace_picked_by_labels_requeues_the_waiting_pod(make_scheduler, hints,
                                                                         requeued):
    """The queue's cross-topology check (getUnschedulablePodsWithCrossTopologyTerm) reads the
    cluster's namespace labels: without queueing hints a peer bound in a namespace the term's
    namespaceSelector picks wakes the waiting pod at once. With hints on, InterPodAffinity's
    hint matches terms with no namespace labels, as upstream does, so the pod keeps waiting
    (for the 5-minute flush)."""
    from scheduler_core.api.objects import Namespace

    nodes = [node(f"n{i}", f"z{i % 2}") for i in range(4)]
    cluster, sched = make_scheduler(nodes, queueing_hints=hints)
    cluster.add_namespace(Namespace("team-a", {"team": "a"}))
    t = term("db", ZONE) | {"namespaceSelector": {"matchLabels": {"team": "a"}}}
    cluster.add_pod(pod("client", "client", affinity=[t]))
    sched.run_until_idle()
    assert "default/client" in sched.pending_reasons()
    m = make_pod("db").req(cpu="100m", memory="128Mi").label("app", "db").manifest()
    m["metadata"]["namespace"] = "team-a"
    peer = Pod.from_manifest(m)
    peer.node_name = "n3"
    cluster.add_pod(peer)
    assert sched.queue.counts()["unschedulable"] == int(not requeued)
    sched.run_until_idle()
    assert (cluster.pods["default/client"].node_name in {"n1", "n3"}) is requeued


def test_preferred_affinity_steers_into_the_peer_zone(make_scheduler):
    nodes = [node(f"n{i}", f"z{i % 3}") for i in range(6)]
    cluster, sched = make_scheduler(nodes)
    cache = pod("cache", "cache")
    cache.node_name = "n4"
    cluster.add_pod(cache)
    for i in range(4):
        cluster.add_pod(pod(f"app{i}", "app", pref=[(50, term("cache", ZONE))]))
    sched.run_until_idle()
    zones = {nodes[int(n[1:])].labels[ZONE] for k, n in bound(cluster).items() if "app" in k}
    assert zones == {"z1"}


def test_nominated_pod_counts_through_add_pod(make_scheduler):
    # a higher-priority pod nominated to n0 (not bound) is added to n0 for the filter pass:
    # pods with anti-affinity to it keep off n0 (AddPod on the cloned PreFilter state)
    cluster, sched = make_scheduler([node(f"n{i}", "z1") for i in range(3)])
    vip = pod("vip", "web")
    vip.priority = 10
    sched.queue.add_nominated_pod(vip, "n0")
    for i in range(6):
        cluster.add_pod(pod(f"client{i}", "client", anti=[term("web", HOST)]))
    sched.run_until_idle()
    placed = bound(cluster)
    assert len(placed) == 6 and "n0" not in placed.values()


# --------------------------------------------------------------------------- property
APPS = ("a", "b")
KEYS = (HOST, ZONE)
term_st = st.tuples(st.sampled_from(APPS), st.sampled_from(KEYS))
pod_st = st.tuples(st.sampled_from(APPS), st.lists(term_st, max_size=1),
                   st.lists(term_st, max_size=2),
                   st.lists(st.tuples(st.integers(1, 100), term_st), max_size=1))
cluster_st = st.tuples(st.lists(st.sampled_from(["z0", "z1", "z2", None]), min_size=1,
                                max_size=6),
                       st.lists(pod_st, min_size=1, max_size=9))


def _domain(labels: dict[str, str], key: str) -> str | None:
    return labels.get(key)


def _check_new_pod(cluster, new_key: str) -> None:
    """The pod bound in this attempt against every pod bound before it."""
    p = cluster.pods[new_key]
    node_labels = {n: cluster.node(n).labels for n in cluster.table.slot_of}
    here = node_labels[p.node_name]
    others = [q for k, q in cluster.pods.items() if q.node_name and k != new_key]
    aff = p.spec.affinity
    # required anti-affinity, both directions: never two matching pods in one domain
    for q in others:
        there = node_labels[q.node_name]
        for owner, target in ((p, q), (q, p)):
            for t in owner.spec.affinity.required_pod_anti_affinity:
                key = t.topology_key
                if key in here and key in there and here[key] == there[key]:
                    assert not t.label_selector.matches(target.labels), (owner, target, key)
    # required affinity: a pod matching all terms in each term's domain, or the first
    # pod of its kind (no pod matching all terms sits on a node with a term's key, the pod
    # matches itself, keys present)
    terms = aff.required_pod_affinity
    if terms:
        peers = [q for q in others if all(t.label_selector.matches(q.labels) for t in terms)]
        assert all(t.topology_key in here for t in terms)
        if any(t.topology_key in node_labels[q.node_name] for q in peers for t in terms):
            for t in terms:
                key = t.topology_key
                assert any(node_labels[q.node_name].get(key) == here[key] for q in peers)
        else:
            assert all(t.label_selector.matches(p.labels) for t in terms)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cluster_st)
def test_property_affinity_rules_hold_after_every_attempt(make_scheduler, spec):
    zones, pods = spec
    cluster, sched = make_scheduler([node(f"n{i}", z) for i, z in enumerate(zones)])
    for i, (app, affinity, anti, pref) in enumerate(pods):
        cluster.add_pod(pod(f"p{i}", app, affinity=[term(a, k) for a, k in affinity],
                            anti=[term(a, k) for a, k in anti],
                            pref=[(w, term(a, k)) for w, (a, k) in pref]))
    before = bound(cluster)
    for _ in range(3 * len(pods)):
        if not step(sched):
            break
        now = bound(cluster)
        new = set(now) - set(before)
        assert len(new) <= 1
        for key in new:
            _check_new_pod(cluster, key)
        before = now
