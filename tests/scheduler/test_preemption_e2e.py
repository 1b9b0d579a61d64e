"""DefaultPreemption through the scheduling loop: a PreemptionBasic-shaped run, the preemptor's
next attempt going straight to its nominated node, lower- and equal-priority pods leaving the
freed room to it, PDBs steering the choice, failure messages and nominations being cleared;
plus a property test: never a victim of equal or higher priority, never one too many."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api.objects import PodDisruptionBudget
from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import CycleState
from scheduler_core.plugins import registry
from scheduler_core.plugins.default_preemption import NAME, DefaultPreemption
from tests.builders import make_node, make_pod

HOST = "kubernetes.io/hostname"


@pytest.fixture(autouse=True)
def _register(monkeypatch):
    monkeypatch.setitem(registry.IN_TREE, NAME, DefaultPreemption)


@pytest.fixture
def make_scheduler(make_scheduler):
    """Synchronous preemption (the SchedulerAsyncPreemption gate off) unless a test asks:
    these tests look at the cluster right after the preemptor's attempt; the asynchronous
    path is tested in test_async_preemption.py."""

    def factory(*args, **kw):
        kw.setdefault("async_preemption", False)
        return make_scheduler(*args, **kw)

    return factory


def nodes(n: int, cpu: str = "4"):
    return [make_node(f"n{i}").alloc(cpu=cpu, memory="32Gi", pods=110).label(HOST, f"n{i}").obj()
            for i in range(n)]


def pod(name: str, cpu: str, prio: int, *, app: str = "") -> Pod:
    b = make_pod(name).req(cpu=cpu, memory="100Mi").priority(prio)
    if app:
        b.label("app", app)
    return b.obj()


def bound_on(cluster, node_name: str) -> list[str]:
    return sorted(p.name for p in cluster.pods_on_node(node_name))


def fill(cluster, sched, count: int, cpu: str = "900m", prio: int = 0, app: str = "") -> None:
    for i in range(count):
        cluster.add_pod(pod(f"low{i}", cpu, prio, app=app))
    sched.run_until_idle()
    assert all(p.node_name for p in cluster.pods.values())


@pytest.mark.parametrize("async_preemption", [False, True], ids=["sync", "async"])
def test_preemption_basic(make_scheduler, async_preemption):
    """10 nodes of 4 CPU full of low-priority 900m pods; 10 high-priority 3000m pods each
    evict three low pods (the fewest that make room) and get scheduled, with the
    SchedulerAsyncPreemption gate off and on."""
    cluster, sched = make_scheduler(nodes(10), async_preemption=async_preemption)
    fill(cluster, sched, 40)
    for i in range(10):
        cluster.add_pod(pod(f"high{i}", "3000m", 1000))
    sched.run_until_idle()
    high = [p for p in cluster.pods.values() if p.name.startswith("high")]
    assert all(p.node_name for p in high)
    assert all(p.nominated_node_name == "" for p in high)
    low = [p for p in cluster.pods.values() if p.name.startswith("low")]
    assert len(low) == 10  # 30 victims, no more
    for n in (f"n{i}" for i in range(10)):
        names = bound_on(cluster, n)
        assert len(names) == 2 and sum(x.startswith("high") for x in names) == 1
    assert not sched.queue.has_nominated_pods()
    assert sched.pending_reasons() == {}


def _preempt_once(make_scheduler, **kw):
    """3 full nodes; one high-priority pod preempts. Returns (cluster, sched, preemptor)."""
    cluster, sched = make_scheduler(nodes(3), **kw)
    fill(cluster, sched, 12)
    high = pod("high", "3000m", 1000)
    cluster.add_pod(high)
    assert sched.schedule_one()
    assert not high.node_name and high.nominated_node_name
    assert sched.queue.nominated_node_of(high.uid) == high.nominated_node_name
    assert len(bound_on(cluster, high.nominated_node_name)) == 1
    return cluster, sched, high


def test_next_attempt_takes_the_nominated_node_first(make_scheduler):
    cluster, sched, high = _preempt_once(make_scheduler, record_cycles=True)
    target = high.nominated_node_name
    sched.run_until_idle()
    assert high.node_name == target and high.nominated_node_name == ""
    last = sched.cycles[-1]
    assert last.pod is high and last.examined == []  # the fast path, no node search
    assert last.selected == cluster.table.slot_of[target]
    assert sched.queue.nominated_node_of(high.uid) is None


@pytest.mark.parametrize("prio", [0, 1000], ids=["lower-priority", "equal-priority"])
def test_others_leave_the_freed_room_to_the_nominated_pod(make_scheduler, prio):
    cluster, sched, high = _preempt_once(make_scheduler)
    target = high.nominated_node_name
    # fits in the room the victims freed, but only if the nominated pod is ignored
    other = pod("other", "900m", prio)
    cluster.add_pod(other)
    assert sched.schedule_one()  # `high` is backing off; `other` is popped
    assert other.node_name == ""
    msg = sched.failures[other.key]
    # the nominated node is rejected by the nominated pass, with that pass's reason
    assert msg.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    if not prio:
        assert msg.startswith("0/3 nodes are available: 3 Insufficient cpu. "
                              "no new claims to deallocate, preemption: 0/3 "
                              "nodes are available: 3 No preemption victims found for incoming "
                              "pod.")
    sched.run_until_idle()
    assert high.node_name == target
    if prio:  # an equal-priority pod may preempt too (it sees `high` on the target node)
        assert other.node_name
    for n in ("n0", "n1", "n2"):
        used = sum(p.spec.requests["cpu"] for p in cluster.pods_on_node(n))
        assert used <= 4000


def test_a_higher_priority_pod_may_take_the_nominated_room(make_scheduler):
    cluster, sched, high = _preempt_once(make_scheduler)
    target = high.nominated_node_name
    vip = pod("vip", "3000m", 2000)
    cluster.add_pod(vip)
    assert sched.schedule_one()
    assert vip.node_name == target  # nominated pods of lower priority do not hold room


def test_pdb_protected_pods_are_spared_when_possible(make_scheduler):
    cluster, sched = make_scheduler(nodes(3, cpu="2"))
    layout = {"n0": [("guarded0", 0, "guarded"), ("guarded1", 0, "guarded")],
              "n1": [("free0", 5, "free"), ("free1", 5, "free")],
              "n2": [("guarded2", 0, "guarded"), ("free2", 5, "free")]}
    for n, specs in layout.items():
        for name, prio, app in specs:
            cluster.add_pod(make_pod(name).req(cpu="1").priority(prio).label("app", app)
                            .node(n).obj())
    cluster.add_pdb(PodDisruptionBudget.from_manifest({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "guarded"}}, "minAvailable": 3}}))
    high = pod("high", "2", 10)
    cluster.add_pod(high)
    sched.run_until_idle()
    # n0 has the lowest-priority victims but two PDB violations, n2 one: n1 breaks none
    assert high.node_name == "n1"
    assert bound_on(cluster, "n1") == ["high"]
    assert {p.name for p in cluster.pods.values() if p.name.startswith("guarded")} == \
        {"guarded0", "guarded1", "guarded2"}


def test_anti_affinity_goes_through_the_per_node_search(make_scheduler, monkeypatch):
    """With InterPodAffinity active the batched search does not apply: the per-node one runs
    the PreFilter extensions, so the victim is the pod the anti-affinity rule names, not the
    one that frees CPU."""
    import scheduler_core.plugins.default_preemption as dp

    calls = []
    real = dp.select_victims_on_node
    monkeypatch.setattr(dp, "select_victims_on_node",
                        lambda *a, **k: calls.append(a[4]) or real(*a, **k))
    cluster, sched = make_scheduler(
        [make_node("n0").alloc(cpu="3", memory="8Gi", pods=110).label(HOST, "n0").obj(),
         make_node("n1").alloc(cpu="2", memory="8Gi", pods=110).label(HOST, "n1").obj()])
    for name, n, prio, app, start in [("web-low", "n0", 0, "web", 1.0),
                                      ("db-low", "n0", 0, "db", 2.0),
                                      ("db-n1", "n1", 0, "db", 1.0),
                                      ("web-high", "n1", 100, "web", 1.0)]:
        p = make_pod(name).req(cpu="1").priority(prio).label("app", app).node(n).obj()
        cluster.add_pod(p)
        p.start_time = start
    m = make_pod("picky").req(cpu="1").priority(50).manifest()
    m["spec"]["affinity"] = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}
    picky = Pod.from_manifest(m)
    cluster.add_pod(picky)
    sched.run_until_idle()
    assert picky.node_name == "n0"
    assert bound_on(cluster, "n0") == ["db-low", "picky"]
    assert "default/web-high" in cluster.pods and "default/db-n1" in cluster.pods
    assert calls  # the per-node path ran


def test_not_helpful_message_and_never_policy(make_scheduler):
    tainted = [make_node(f"t{i}").alloc(cpu="8", memory="8Gi", pods=110).taint("k", "v").obj()
               for i in range(2)]
    cluster, sched = make_scheduler([*tainted, *nodes(1, cpu="1")])
    cluster.add_pod(pod("low", "1", 0))
    sched.run_until_idle()
    m = make_pod("never").req(cpu="1").priority(100).manifest()
    m["spec"]["preemptionPolicy"] = "Never"
    never = Pod.from_manifest(m)
    cluster.add_pod(never)
    big = pod("big", "4", 100)
    cluster.add_pod(big)
    sched.run_until_idle()
    assert "default/low" in cluster.pods and not never.node_name and not big.node_name
    assert sched.failures["default/never"] == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.")
    # big asks 4 CPU of a 1-CPU node: UnschedulableAndUnresolvable there (v1.34), so no node
    # is worth a dry run
    assert sched.failures["default/big"] == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.")


def test_nomination_is_cleared_when_preemption_no_longer_helps(make_scheduler):
    cluster, sched, high = _preempt_once(make_scheduler)
    target = high.nominated_node_name
    old = cluster.node(target)
    tainted = make_node(target).alloc(cpu="4", memory="32Gi", pods=110).label(HOST, target) \
        .taint("maintenance", "", "NoSchedule").obj()
    assert old.name == tainted.name
    cluster.update_node(tainted)
    # every other node is full of pods the preemptor cannot evict
    for i, n in enumerate(x for x in ("n0", "n1", "n2") if x != target):
        for p in list(cluster.pods_on_node(n)):
            cluster.delete_pod(p.namespace, p.name)
        cluster.add_pod(make_pod(f"vip{i}").req(cpu="4").priority(5000).node(n).obj())
    sched.run_until_idle()
    assert high.node_name == "" and high.nominated_node_name == ""
    assert sched.queue.nominated_node_of(high.uid) is None
    assert "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, " \
        "2 No preemption victims found for incoming pod." in sched.failures[high.key]


# --------------------------------------------------------------------------- property
case_st = st.fixed_dictionaries({
    "nodes": st.lists(st.sampled_from([1000, 2000, 3000]), min_size=1, max_size=3),
    "pods": st.lists(st.tuples(st.integers(0, 2), st.sampled_from([100, 300, 700, 1000]),
                               st.integers(0, 5)), min_size=4, max_size=16),
    "preemptor": st.tuples(st.integers(1, 6), st.sampled_from([300, 800, 1500, 2500])),
})


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case_st)
def test_property_victims_are_lower_priority_and_minimal(make_scheduler, case):
    ns = [make_node(f"n{i}").alloc(cpu=f"{c}m", memory="32Gi", pods=110).obj()
          for i, c in enumerate(case["nodes"])]
    cluster, sched = make_scheduler(ns)
    for j, (ni, cpu, prio) in enumerate(case["pods"]):
        name = f"n{ni % len(ns)}"
        p = make_pod(f"q{j}").req(cpu=f"{cpu}m").priority(prio).node(name).obj()
        if sum(x.spec.requests.get("cpu", 0) for x in cluster.pods_on_node(name)) + cpu \
                <= case["nodes"][ni % len(ns)]:
            cluster.add_pod(p)
    prio, cpu = case["preemptor"]
    pre = make_pod("pre").req(cpu=f"{cpu}m").priority(prio).obj()
    cluster.add_pod(pre)
    before = dict(cluster.pods)
    assert sched.schedule_one()
    evicted = [p for k, p in before.items() if k not in cluster.pods]
    if pre.node_name:
        assert evicted == []
        return
    if not pre.nominated_node_name:
        assert evicted == []
        return
    target = pre.nominated_node_name
    assert evicted, "a nomination always comes with victims"
    assert all(v.priority < pre.priority for v in evicted)
    assert all(v.node_name == target for v in evicted)
    # the preemptor fits now, and would not if any single victim came back
    fwk = sched.profiles["default-scheduler"]
    table = cluster.table
    slot = table.slot_of[target]

    def fits() -> bool:
        state = CycleState()
        fwk.run_pre_filter(state, pre, table)
        return sched.filter_one_node(fwk, state, pre, slot) is None

    assert fits()
    for v in evicted:
        table.add_pod(v, slot)
        try:
            assert not fits(), f"{v.name} was evicted needlessly"
        finally:
            table.remove_pod(v, slot)


def test_deleting_a_nominated_preemptor_requeues_the_pods_it_kept_out(make_scheduler):
    """mid is rejected on n0 because the nominated preemptor high holds the room there; when
    high is deleted before it binds, mid is asked again at once (v1.34's
    deletePodFromSchedulingQueue and NodeResourcesFit's hint for a nominated pod), instead of
    waiting for the 5-minute flush."""
    cluster, sched = make_scheduler(nodes(1))
    cluster.add_pod(pod("victim", "4", 0))
    sched.run_until_idle()
    high = pod("high", "4", 100)
    cluster.add_pod(high)
    sched.schedule_one()  # preempts victim, nominated to n0, backing off
    assert "default/victim" not in cluster.pods and high.nominated_node_name == "n0"
    mid = pod("mid", "1", 50)
    cluster.add_pod(mid)
    sched.schedule_one()  # mid pops first: n0's room is high's
    assert not mid.node_name and "Insufficient cpu" in sched.failures["default/mid"]
    assert sched.queue.where(mid.uid) == "unschedulable"
    cluster.delete_pod("default", "high")
    assert sched.queue.where(mid.uid) in ("active", "backoff")
    sched.run_until_idle()
    assert mid.node_name == "n0"
