"""DefaultPreemption: args, candidate counts, eligibility, potential nodes, victim selection,
PDB budgets and split, each pickOneNodeForPreemption criterion, a dry run that leaves no trace,
and the batched victim search agreeing with the per-node one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api.objects import PodDisruptionBudget, PriorityClass
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelSelector
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import ConfigError
from scheduler_core.framework.config import build_frameworks, parse_config
from scheduler_core.framework.diagnosis import Diagnosis
from scheduler_core.framework.interface import Code, CycleState, PostFilterPlugin, Status
from scheduler_core.nodetable.pod_index import NamespaceFilter, priority_loads, selector_counts
from scheduler_core.plugins import default_preemption as dp
from scheduler_core.plugins import default_preemption_victims as dv
from scheduler_core.plugins import registry
from scheduler_core.plugins.default_preemption import (
    NAME,
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    num_candidates,
    pick_one_node,
)
from scheduler_core.plugins.default_preemption_pdb import (
    Budget,
    BudgetTracker,
    budgets,
    disruptions_allowed,
    scaled_value,
    split_by_pdb,
)
from scheduler_core.plugins.default_preemption_victims import (
    Victims,
    select_victims_on_node,
    summary_of,
)
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from tests.builders import make_node, make_pod


@pytest.fixture(autouse=True)
def _register(monkeypatch):
    monkeypatch.setitem(registry.IN_TREE, NAME, DefaultPreemption)


# --------------------------------------------------------------------------- helpers
def node(name: str, cpu: str = "4", pods: int = 110):
    return make_node(name).alloc(cpu=cpu, memory="32Gi", pods=pods) \
        .label("kubernetes.io/hostname", name).obj()


def bound(name: str, node_name: str, cpu: str, prio: int, *, start: float | None = None,
          labels: dict[str, str] | None = None, port: int | None = None) -> Pod:
    b = make_pod(name).req(cpu=cpu, memory="100Mi").priority(prio).node(node_name)
    for k, v in (labels or {}).items():
        b.label(k, v)
    if port is not None:
        b.host_port(port)
    p = b.obj()
    p.start_time = start
    return p


def pending(name: str, cpu: str, prio: int, **kw: Any) -> Pod:
    return make_pod(name).req(cpu=cpu, memory="100Mi").priority(prio).obj()


def pdb(name: str, app: str, *, min_available: Any = None, max_unavailable: Any = None,
        namespace: str = "default", disrupted: tuple[str, ...] = ()) -> PodDisruptionBudget:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    m = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    if disrupted:
        m["status"] = {"disruptedPods": {d: "2024-01-01T00:00:00Z" for d in disrupted}}
    return PodDisruptionBudget.from_manifest(m)


def setup(nodes, pods, *, args: dict | None = None, pdbs=(), seed: int = 0,
          now: float = 100.0, async_preemption: bool = False
          ) -> tuple[Cluster, Scheduler, DefaultPreemption]:
    """A scheduler over the objects; preemption is synchronous unless ``async_preemption``
    (these tests look at the evictions PostFilter makes)."""
    clock = FakeClock(now)
    cluster = Cluster(clock=clock.now)
    for n in nodes:
        cluster.add_node(n)
    for p in pods:
        cluster.add_pod(p)
    for b in pdbs:
        cluster.add_pdb(b)
    config: dict = {"profiles": [{}]}
    if args is not None:
        config["profiles"][0]["pluginConfig"] = [{"name": NAME, "args": args}]
    cfg = parse_config(config)
    sched = Scheduler(cluster, lambda h: build_frameworks(cfg, h), clock=clock, seed=seed,
                      async_preemption=async_preemption)
    # v1.34's default profile runs DynamicResources' PostFilter first
    first, plugin = sched.profiles["default-scheduler"].post_filter_plugins
    assert first.name == "DynamicResources"
    assert isinstance(plugin, DefaultPreemption)
    return cluster, sched, plugin


def diagnose(sched: Scheduler, pod: Pod) -> tuple[CycleState, Diagnosis]:
    """PreFilter + Filter over every node and the statuses of rejected nodes, as a failed
    scheduling cycle leaves them for PostFilter."""
    fwk = sched.profiles["default-scheduler"]
    table = sched.cluster.table
    state = CycleState()
    d = Diagnosis(table.num_nodes)
    _, status, _ = fwk.run_pre_filter(state, pod, table)
    if status is not None:
        d.absent_status = status
        return state, d
    idx = table.order()
    mask, first_fail = fwk.run_filter(state, pod, table, idx, len(idx))
    assert mask is not None and not mask.any(), "these tests need a pod that fits nowhere"
    assert first_fail is not None
    which, statuses = fwk.explain_filter(state, pod, table, idx, first_fail)
    d.slots, d.status_index, d.statuses = idx, which, statuses
    return state, d


def preempt(sched: Scheduler, plugin: DefaultPreemption, pod: Pod):
    state, d = diagnose(sched, pod)
    return plugin.post_filter(state, pod, d)


# --------------------------------------------------------------------------- args
def test_args_defaults_and_protocol():
    plugin = DefaultPreemption()
    assert plugin.args == DefaultPreemptionArgs(10, 100)
    assert isinstance(plugin, PostFilterPlugin)
    assert DefaultPreemption({"minCandidateNodesPercentage": 0,
                              "minCandidateNodesAbsolute": 5}).args == DefaultPreemptionArgs(0, 5)


@pytest.mark.parametrize(("args", "field", "problem"), [
    ({"minCandidateNodesPercentage": -1}, "a.minCandidateNodesPercentage", "[0, 100]"),
    ({"minCandidateNodesPercentage": 101}, "a.minCandidateNodesPercentage", "[0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "a.minCandidateNodesAbsolute", "[0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "a.minCandidateNodesPercentage", "cannot be zero at the same time"),
    ({"minCandidateNodesPercentage": "10"}, "a.minCandidateNodesPercentage",
     "expected an integer"),
    ({"minCandidateNodesAbsolute": True}, "a.minCandidateNodesAbsolute", "expected an integer"),
    ({"minCandidates": 1}, "a.minCandidates", "unknown field"),
    ({"kind": "NodeResourcesFitArgs"}, "a.kind", "DefaultPreemptionArgs"),
], ids=["pct-negative", "pct-over-100", "abs-negative", "both-zero", "pct-string", "abs-bool",
        "unknown-key", "wrong-kind"])
def test_args_errors_name_the_field(args, field, problem):
    with pytest.raises(ConfigError) as err:
        DefaultPreemption(args, args_path="a")
    assert err.value.field == field
    assert problem in err.value.problem


def test_args_error_path_through_the_config_loader():
    with pytest.raises(ConfigError) as err:
        setup([node("n0")], [], args={"minCandidateNodesAbsolute": -3})
    assert err.value.field == "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute"


# --------------------------------------------------------------------------- candidate count
@pytest.mark.parametrize(("potential", "pct", "absolute", "want"), [
    (10, 10, 100, 10),  # capped at the potential nodes
    (1000, 10, 100, 100),  # 10% = 100
    (5000, 10, 100, 500),  # 10% beats the absolute minimum
    (1500, 10, 100, 150),
    (999, 10, 100, 100),  # 99 -> raised to 100
    (1000, 0, 5, 5),
    (1000, 100, 0, 1000),
    (50, 40, 0, 20),
    (7, 50, 0, 3),  # integer division
    (1, 10, 100, 1),
], ids=lambda v: str(v))
def test_num_candidates(potential, pct, absolute, want):
    assert num_candidates(potential, pct, absolute) == want


def _full_cluster(n: int) -> tuple[list, list]:
    nodes = [node(f"n{i}", cpu="1") for i in range(n)]
    pods = [bound(f"low{i}", f"n{i}", "1", 0) for i in range(n)]
    return nodes, pods


def test_dry_run_stops_after_num_candidates_from_the_random_offset():
    nodes, pods = _full_cluster(20)
    _, sched, plugin = setup(nodes, pods, args={"minCandidateNodesPercentage": 0,
                                                "minCandidateNodesAbsolute": 3})
    pod = pending("p", "1", 10)
    state, d = diagnose(sched, pod)
    potential = plugin.potential_nodes(d)
    assert len(potential) == 20
    fwk = sched.profiles["default-scheduler"]
    for offset in (0, 7, 18):
        run = plugin.dry_run(fwk, state, pod, potential, offset, 3)
        assert [c.slot for c in run.candidates] == [int(potential[(offset + i) % 20])
                                                   for i in range(3)]
        assert run.failed == [] and run.errors == []


def test_dry_run_scans_on_until_a_non_violating_candidate():
    """Violating candidates alone never stop the dry run (and are kept at most k)."""
    nodes = [node(f"n{i}", cpu="1") for i in range(6)]
    pods = [bound(f"low{i}", f"n{i}", "1", 0, labels={"app": "guarded" if i < 4 else "free"})
            for i in range(6)]
    _, sched, plugin = setup(nodes, pods, pdbs=[pdb("g", "guarded", min_available=4)],
                             args={"minCandidateNodesPercentage": 0,
                                   "minCandidateNodesAbsolute": 2})
    pod = pending("p", "1", 10)
    state, d = diagnose(sched, pod)
    potential = plugin.potential_nodes(d)
    run = plugin.dry_run(sched.profiles["default-scheduler"], state, pod, potential, 0, 2)
    names = [c.node for c in run.candidates]
    assert names == ["n4", "n0", "n1"]  # non-violating first, then (at most 2) violating
    assert [c.victims.num_pdb_violations for c in run.candidates] == [0, 1, 1]


@pytest.mark.parametrize("k", [1, 4, 10, 40])
def test_dry_run_result_does_not_depend_on_chunking(monkeypatch, k):
    nodes = [node(f"n{i}", cpu="2") for i in range(40)]
    pods = []
    for i in range(40):
        pods += [bound(f"a{i}", f"n{i}", "1", i % 4, labels={"app": "a" if i % 3 else "b"}),
                 bound(f"b{i}", f"n{i}", "600m" if i % 5 else "1", (i * 7) % 5)]
    _, sched, plugin = setup(nodes, pods, pdbs=[pdb("pa", "a", min_available="100%")])
    pod = pending("p", "1500m", 3)
    state, d = diagnose(sched, pod)
    potential = plugin.potential_nodes(d)
    fwk = sched.profiles["default-scheduler"]

    def summary():
        run = plugin.dry_run(fwk, state, pod, potential, 13, k)
        return ([(c.node, [p.name for p in c.victims.pods], c.victims.num_pdb_violations)
                 for c in run.candidates], run.failed)

    default = summary()
    assert default[0]
    monkeypatch.setattr(dp, "_next_chunk", lambda k, found, processed: 1)
    assert summary() == default


# --------------------------------------------------------------------------- eligibility
def test_preemption_policy_never_is_not_eligible():
    nodes, pods = _full_cluster(2)
    _, sched, plugin = setup(nodes, pods)
    m = make_pod("p").req(cpu="1").priority(10).manifest()
    m["spec"]["preemptionPolicy"] = "Never"
    pod = Pod.from_manifest(m)
    sched.cluster.add_pod(pod)
    result, status = preempt(sched, plugin, pod)
    assert result is None
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never.")


def test_preemption_policy_never_from_the_priority_class():
    nodes, pods = _full_cluster(2)
    cluster, sched, plugin = setup(nodes, pods)
    cluster.add_priority_class(PriorityClass("no-preempt", 10, False, "Never"))
    m = make_pod("p").req(cpu="1").manifest()
    m["spec"]["priorityClassName"] = "no-preempt"
    pod = Pod.from_manifest(m)
    cluster.add_pod(pod)
    assert pod.priority == 10
    assert preempt(sched, plugin, pod)[1].message.endswith("preemptionPolicy=Never.")


def _nominated_case(victim_prio: int, terminating: bool, taint_nominated: bool):
    nodes = [node("n0", cpu="1"), node("n1", cpu="1")]
    if taint_nominated:
        nodes[0] = make_node("n0").alloc(cpu="1", memory="32Gi", pods=110) \
            .taint("gone", "", "NoSchedule").obj()
    victim = bound("v", "n0", "1", victim_prio)
    if terminating:
        victim.deletion_timestamp = 1.0
        victim.preempted = True  # evicted by preemption (v1.34: only such a pod counts)
    cluster, sched, plugin = setup(nodes, [victim, bound("w", "n1", "1", 0)])
    pod = make_pod("p").req(cpu="1", memory="100Mi").priority(10).nominated("n0").obj()
    cluster.add_pod(pod)
    return sched, plugin, pod


@pytest.mark.parametrize(("victim_prio", "terminating", "taint", "eligible"), [
    (0, True, False, False),  # lower-priority victim still terminating: wait
    (0, False, False, True),  # nothing terminating
    (10, True, False, True),  # the terminating pod is not lower priority
    (0, True, True, True),  # nominated node now UnschedulableAndUnresolvable: try again
], ids=["terminating-victim-waits", "no-terminating", "equal-priority-terminating",
        "nominated-node-unresolvable"])
def test_nominated_pod_eligibility(victim_prio, terminating, taint, eligible):
    sched, plugin, pod = _nominated_case(victim_prio, terminating, taint)
    result, status = preempt(sched, plugin, pod)
    if eligible:
        assert "not eligible" not in status.message
    else:
        assert result is None
        assert status.message == \
            "preemption: not eligible due to a terminating pod on the nominated node."


def test_a_pod_deleted_by_someone_else_does_not_hold_the_preemptor_back():
    """v1.34 (podTerminatingByPreemption): a lower-priority pod being deleted counts only
    when the scheduler's preemption is evicting it (its DisruptionTarget condition)."""
    sched, plugin, pod = _nominated_case(0, True, False)
    for p in sched.cluster.pods.values():
        p.preempted = False
    _, status = preempt(sched, plugin, pod)
    assert "not eligible" not in status.message


def test_the_disruption_target_condition_is_read_from_the_manifest():
    from scheduler_core.api.pod import Pod

    def pod(conditions):
        return Pod.from_manifest({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "v"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"conditions": conditions}})

    evicted = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
               "lastTransitionTime": "2025-01-01T00:00:00Z"}
    assert pod([{"type": "PodScheduled", "status": "True"}, evicted]).preempted
    assert not pod([{**evicted, "reason": "EvictionByEvictionAPI"}]).preempted
    assert not pod([{**evicted, "status": "False"}]).preempted
    assert not pod([]).preempted


# --------------------------------------------------------------------------- potential nodes
def test_no_potential_node_clears_the_nomination_with_a_fit_error():
    nodes = [make_node(f"n{i}").alloc(cpu="4", pods=110).taint("k", "v").obj()
             for i in range(3)]
    _, sched, plugin = setup(nodes, [])
    pod = make_pod("p").req(cpu="1").priority(10).obj()
    sched.cluster.add_pod(pod)
    result, status = preempt(sched, plugin, pod)
    assert result is not None and result.nominated_node_name == ""
    assert status.code == Code.UNSCHEDULABLE
    assert status.message == ("preemption: 0/3 nodes are available: 3 Preemption is not "
                              "helpful for scheduling.")


def test_potential_nodes_are_exactly_the_unschedulable_ones_in_list_order():
    _, _, plugin = setup([node(f"n{i}") for i in range(4)], [])
    d = Diagnosis(4, slots=np.array([3, 0, 2], dtype=np.int64),
                  status_index=np.array([0, 1, 0], dtype=np.int64),
                  statuses=[Status.unschedulable("Insufficient cpu"),
                            Status.unresolvable("node(s) had untolerated taint")])
    assert plugin.potential_nodes(d).tolist() == [2, 3]
    # PreFilter rejected with Unschedulable: every node is potential
    d = Diagnosis(4, absent_status=Status.unschedulable("pod affinity"))
    assert plugin.potential_nodes(d).tolist() == [0, 1, 2, 3]


def test_no_candidate_lists_dry_run_statuses_and_clears():
    nodes = [node("n0", cpu="1"), node("n1", cpu="1"),
             make_node("n2").alloc(cpu="4", pods=110).taint("k", "v").obj()]
    pods = [bound("eq", "n0", "1", 10), bound("small", "n1", "500m", 0),
            bound("big", "n1", "500m", 20)]
    _, sched, plugin = setup(nodes, pods)
    pod = pending("p", "1", 10)
    sched.cluster.add_pod(pod)
    result, status = preempt(sched, plugin, pod)
    assert result is not None and result.nominated_node_name == ""
    assert status.message == (
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.")


@pytest.mark.parametrize("shortcut", [True, False], ids=["no-lower-priority-shortcut",
                                                      "full-dry-run"])
def test_nobody_to_preempt_fails_every_potential_node_alike(monkeypatch, shortcut):
    """With no placed pod of lower priority the dry run is skipped; the outcome (message,
    nomination, RNG draws) is the one the full dry run gives."""
    if not shortcut:
        monkeypatch.setattr(dp, "priority_loads", lambda table: None)
    nodes = [node(f"n{i}", cpu="1") for i in range(5)]
    pods = [bound(f"b{i}", f"n{i}", "1", 10) for i in range(5)]
    _, sched, plugin = setup(nodes, pods)
    pod = pending("p", "1", 10)
    sched.cluster.add_pod(pod)
    result, status = preempt(sched, plugin, pod)
    assert result is not None and result.nominated_node_name == ""
    assert status.message == ("preemption: 0/5 nodes are available: "
                              "5 No preemption victims found for incoming pod.")
    # the offset over the 5 potential nodes was drawn either way (seed 0's stream goes on)
    expected = np.random.default_rng(0)
    expected.integers(5)
    assert sched.handle.rng.integers(1 << 30) == expected.integers(1 << 30)


# --------------------------------------------------------------------------- victims
def _victim_names(cluster: Cluster, before: set[str]) -> set[str]:
    return before - set(cluster.pods)


def test_victims_are_minimal_and_strictly_lower_priority():
    pods = [bound("a", "n0", "1", 1), bound("b", "n0", "1", 2), bound("c", "n0", "1", 3),
            bound("d", "n0", "500m", 10), bound("e", "n0", "500m", 20)]
    cluster, sched, plugin = setup([node("n0")], pods)
    pod = pending("p", "1500m", 10)
    cluster.add_pod(pod)
    before = set(cluster.pods)
    result, status = preempt(sched, plugin, pod)
    assert status.code == Code.SUCCESS and result.nominated_node_name == "n0"
    # one 1000m pod is not enough; the two least important are evicted, c is reprieved
    assert _victim_names(cluster, before) == {"default/a", "default/b"}


def test_select_victims_order_and_start_time_tie_break():
    pods = [bound("old", "n0", "1", 1, start=10.0), bound("new", "n0", "1", 1, start=50.0),
            bound("nostart", "n0", "1", 1, start=None), bound("hi", "n0", "1", 5)]
    cluster, sched, _ = setup([node("n0")], pods, now=100.0)
    pod = pending("p", "2", 10)
    cluster.add_pod(pod)
    state, _ = diagnose(sched, pod)
    fwk = sched.profiles["default-scheduler"]
    victims, status = select_victims_on_node(sched.handle, fwk, state, pod, 0, [], 100.0)
    assert status is None
    # importance: hi(5) > old(start 10) > new(start 50) > nostart (counts as now=100)
    assert [p.name for p in victims.pods] == ["new", "nostart"]
    assert victims.num_pdb_violations == 0


def test_select_victims_failure_returns_the_filter_status():
    cluster, sched, _ = setup([node("n0", cpu="1")], [bound("a", "n0", "500m", 1),
                                                    bound("b", "n0", "500m", 50)])
    pod = pending("p", "1", 10)
    cluster.add_pod(pod)
    state, _ = diagnose(sched, pod)
    fwk = sched.profiles["default-scheduler"]
    victims, status = select_victims_on_node(sched.handle, fwk, state, pod, 0, [], 100.0)
    assert victims is None
    assert (status.code, status.reasons, status.plugin) == (
        Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")


def test_pdb_violating_victims_are_reprieved_first():
    # "guarded" is the less important pod (started later), so without a PDB it is evicted
    pods = [bound("free", "n0", "1", 1, start=10.0, labels={"app": "free"}),
            bound("guarded", "n0", "1", 1, start=20.0, labels={"app": "guarded"})]
    for budget, evicted, violations in [((), "guarded", 0),
                                        ((pdb("g", "guarded", min_available=1),), "free", 0)]:
        cluster, sched, _ = setup([node("n0", cpu="2")], [p.clone() for p in pods],
                                  pdbs=budget)
        pod = pending("p", "1", 10)
        cluster.add_pod(pod)
        state, _ = diagnose(sched, pod)
        fwk = sched.profiles["default-scheduler"]
        b = budgets(cluster.list_pdbs(), cluster.pods.values())
        victims, _ = select_victims_on_node(sched.handle, fwk, state, pod, 0, b, 100.0)
        assert [p.name for p in victims.pods] == [evicted]
        assert victims.num_pdb_violations == violations


def test_pdb_violations_are_counted_when_unavoidable():
    pods = [bound("free", "n0", "1", 1, labels={"app": "free"}),
            bound("guarded", "n0", "1", 2, labels={"app": "guarded"})]
    cluster, sched, _ = setup([node("n0", cpu="2")], pods,
                              pdbs=[pdb("g", "guarded", min_available=1)])
    pod = pending("p", "2", 10)
    cluster.add_pod(pod)
    state, _ = diagnose(sched, pod)
    fwk = sched.profiles["default-scheduler"]
    b = budgets(cluster.list_pdbs(), cluster.pods.values())
    victims, _ = select_victims_on_node(sched.handle, fwk, state, pod, 0, b, 100.0)
    # sorted again by importance since both groups were non-empty
    assert [p.name for p in victims.pods] == ["guarded", "free"]
    assert victims.num_pdb_violations == 1


# --------------------------------------------------------------------------- PDB budgets
def _app_pods(n_bound: int, n_pending: int = 0, app: str = "x", ns: str = "default"):
    out = [make_pod(f"{app}{i}", ns).label("app", app).node("n0").obj() for i in range(n_bound)]
    out += [make_pod(f"{app}p{i}", ns).label("app", app).obj() for i in range(n_pending)]
    return out


@pytest.mark.parametrize(("budget", "n_bound", "n_pending", "want"), [
    (dict(min_available=2), 5, 0, 3),
    (dict(min_available=5), 5, 0, 0),
    (dict(min_available=7), 5, 0, 0),  # never negative
    (dict(min_available="50%"), 5, 0, 2),  # desired = ceil(2.5) = 3
    (dict(min_available="50%"), 3, 2, 0),  # expected 5 counts pending pods; healthy 3 = 3
    (dict(max_unavailable=1), 5, 0, 1),
    (dict(max_unavailable=1), 4, 1, 0),  # one already unavailable
    (dict(max_unavailable="30%"), 10, 0, 3),  # ceil(3.0)
    (dict(max_unavailable="25%"), 5, 0, 2),  # ceil(1.25) = 2
    (dict(max_unavailable="100%"), 2, 0, 2),
    (dict(), 3, 0, 0),  # neither set: expected count stays 0
    (dict(min_available=0), 0, 0, 0),  # nothing selected
], ids=lambda v: str(v))
def test_disruptions_allowed(budget, n_bound, n_pending, want):
    b = pdb("b", "x", **budget)
    assert disruptions_allowed(b, _app_pods(n_bound, n_pending)) == want


def test_disruptions_allowed_skips_terminating_disrupted_and_other_namespaces():
    pods = _app_pods(4)
    pods[0].deletion_timestamp = 5.0
    pods += _app_pods(3, ns="other")
    b = pdb("b", "x", min_available=1, disrupted=("x1",))
    assert disruptions_allowed(b, pods) == 1  # healthy: x2, x3


@pytest.mark.parametrize(("value", "total", "up", "want"), [
    (3, 10, True, 3), ("50%", 5, True, 3), ("50%", 5, False, 2), ("0%", 9, True, 0),
    ("100%", 9, False, 9), ("33%", 10, True, 4),
], ids=lambda v: str(v))
def test_scaled_value(value, total, up, want):
    assert scaled_value(value, total, round_up=up) == want


def test_split_by_pdb_follows_upstream():
    b = pdb("b", "x")
    other_ns = pdb("o", "x", namespace="other")
    empty = PodDisruptionBudget("e", "default", None)
    pods = [make_pod(n).label("app", "x").obj() for n in ("p0", "p1", "p2", "gone")]
    pods.append(make_pod("nolabels").obj())
    budgets_ = [Budget(b, 1), Budget(other_ns, 0), Budget(empty, 0)]
    b_disrupted = pdb("b", "x", disrupted=("gone",))
    budgets_[0] = Budget(b_disrupted, 1)
    violating, ok = split_by_pdb(pods, budgets_)
    # p0 takes the only disruption; p1, p2 go below zero; "gone" is already disrupted;
    # a pod without labels matches nothing
    assert [p.name for p in violating] == ["p1", "p2"]
    assert [p.name for p in ok] == ["p0", "gone", "nolabels"]


def test_budgets_ignore_pdbs_that_match_nothing():
    pods = _app_pods(3)
    assert budgets([PodDisruptionBudget("e", "default", None)], pods) == []
    (only,) = budgets([pdb("b", "x", max_unavailable=1)], pods)
    assert only.allowed == 1


# --------------------------------------------------------------------------- pickOneNode
def _cand(name: str, prios: list[int], *, viol: int = 0, starts: list[float | None] | None
          = None) -> Candidate:
    pods = []
    for i, p in enumerate(prios):
        pod = make_pod(f"{name}-{i}").priority(p).obj()
        pod.start_time = None if starts is None else starts[i]
        pods.append(pod)
    return Candidate(name, 0, Victims(pods, viol))


@pytest.mark.parametrize(("candidates", "want"), [
    ([_cand("a", [1], viol=2), _cand("b", [9, 9, 9], viol=1)], "b"),
    ([_cand("a", [5, 1]), _cand("b", [4, 4, 4])], "b"),
    ([_cand("a", [5, 3]), _cand("b", [5, 1])], "b"),
    ([_cand("a", [-5, -5]), _cand("b", [-5, -5, -5])], "a"),  # offset keeps sums honest
    ([_cand("a", [3, 1, 1]), _cand("b", [3, 2])], "b"),  # the offset makes count dominate
    ([_cand("a", [0, -2**31]), _cand("b", [0])], "b"),  # equal offset sums: fewer victims
    ([_cand("a", [3, 1], starts=[10.0, 1.0]), _cand("b", [3, 1], starts=[20.0, 1.0])], "b"),
    ([_cand("a", [3, 3], starts=[30.0, 15.0]), _cand("b", [3, 1], starts=[20.0, 90.0])], "b"),
    ([_cand("a", [3], starts=[None]), _cand("b", [3], starts=[50.0])], "a"),  # None = now
    ([_cand("a", [3]), _cand("b", [3]), _cand("c", [3])], "a"),  # all tie: the first
], ids=["fewest-pdb-violations", "lowest-top-priority", "smallest-priority-sum",
        "negative-priorities-sum", "sum-counts-victims", "fewest-victims",
        "latest-start-of-top-victims", "start-among-top-priority-only", "no-start-is-now",
        "first-on-full-tie"])
def test_pick_one_node_criteria(candidates, want):
    assert pick_one_node(candidates, now=100.0).node == want


# --------------------------------------------------------------------------- no trace
def _snapshot(table) -> dict[str, Any]:
    high = table.high
    snap: dict[str, Any] = {}
    for group in ("allocatable", "requested", "image_size", "port_any_ip", "port_by_ip",
                  "label_codes"):
        for k, col in getattr(table, group).items():
            snap[f"{group}[{k}]"] = col[:high].copy()
    for name in ("nonzero_cpu", "nonzero_memory", "pod_count", "unschedulable", "taint_set_id",
                 "live"):
        snap[name] = getattr(table, name)[:high].copy()
    for name, (col, _) in table._extra.items():
        snap[f"extra[{name}]"] = col[:high].copy()
    snap["pods"] = [list(table.pods[s]) for s in range(high)]
    snap["version"] = table.version
    return snap


def _assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "per-node"])
def test_dry_run_leaves_the_node_table_identical(batched, monkeypatch):
    if not batched:
        monkeypatch.setattr(dp, "node_local", lambda fwk, state: False)
    nodes = [node(f"n{i}", cpu="2") for i in range(5)]
    pods = []
    for i in range(5):
        pods += [bound(f"a{i}", f"n{i}", "700m", i % 3, labels={"app": "a"}, port=8000 + i),
                 bound(f"b{i}", f"n{i}", "600m", 5, labels={"app": "b"}),
                 bound(f"c{i}", f"n{i}", "500m", 1, start=float(i))]
    _, sched, plugin = setup(nodes, pods, pdbs=[pdb("pa", "a", min_available=3)])
    table = sched.cluster.table
    # an index column maintained by pod listeners must follow and come back too
    counts = selector_counts(table).counts(NamespaceFilter(frozenset({"default"})),
                                           LabelSelector.parse({"matchLabels": {"app": "a"}}))
    before_counts = counts[:table.high].copy()
    priority_loads(table)  # created on first use: its columns must come back unchanged too
    before = _snapshot(table)
    pod = pending("p", "1500m", 6)
    state, d = diagnose(sched, pod)
    potential = plugin.potential_nodes(d)
    run = plugin.dry_run(sched.profiles["default-scheduler"], state, pod, potential, 2, 5)
    assert run.candidates  # the dry run did real work
    _assert_same(before, _snapshot(table))
    assert np.array_equal(before_counts, counts[:table.high])


def test_success_evicts_victims_and_clears_lower_priority_nominations():
    pods = [bound(f"low{i}", "n0", "1", 0, start=float(i)) for i in range(3)]
    cluster, sched, plugin = setup([node("n0", cpu="3")], pods)
    lower, equal = pending("lower", "1", 5), pending("equal", "1", 10)
    for other in (lower, equal):
        cluster.add_pod(other)
        other.nominated_node_name = "n0"
        sched.queue.add_nominated_pod(other, "n0")
    pod = pending("p", "1", 10)
    cluster.add_pod(pod)
    result, status = preempt(sched, plugin, pod)
    assert (result.nominated_node_name, status.code, status.reasons) == ("n0", Code.SUCCESS, ())
    # the equal-priority nominated pod keeps its 1 CPU, so two of three low pods must go: the
    # least important ones (latest start)
    assert {f"default/low{i}" for i in range(3)} & set(cluster.pods) == {"default/low0"}
    assert lower.nominated_node_name == "" and sched.queue.nominated_node_of(lower.uid) is None
    assert equal.nominated_node_name == "n0" and sched.queue.nominated_node_of(equal.uid) == "n0"


# --------------------------------------------------------------------------- batched == per-node
class _OutOfTree:
    name = "NodeResourcesFit"  # an in-tree name does not make a plugin node-local

    def filter(self, *a):
        return None


class _WithExtension:
    name = "Custom"

    def pre_filter(self, *a):
        return None, None

    def add_pod(self, *a):
        pass

    def remove_pod(self, *a):
        pass


def test_node_local_only_for_in_tree_node_local_filters_without_extensions():
    cluster, sched, _ = setup([node("n0")], [])
    fwk = sched.profiles["default-scheduler"]
    state = CycleState()
    assert not dp.node_local(fwk, state) or not any(
        hasattr(p, "add_pod") for p in fwk.pre_filter_plugins)  # nothing skipped yet
    fwk.run_pre_filter(state, pending("p", "1", 1), cluster.table)  # a plain pod skips PTS/IPA
    assert dp.node_local(fwk, state)
    fwk.filter_plugins.append(_OutOfTree())
    assert not dp.node_local(fwk, state)
    fwk.filter_plugins.pop()
    fwk.pre_filter_plugins.append(_WithExtension())
    assert not dp.node_local(fwk, state)
    state.skip_filter.add("Custom")  # a skipped plugin's extensions do not run
    assert dp.node_local(fwk, state)
    fwk.pre_filter_plugins.pop()


cluster_st = st.fixed_dictionaries({
    "nodes": st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=5),
    "pods": st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["200m", "500m", "900m"]),
                               st.integers(0, 5), st.sampled_from(["x", "x", "y", ""]),
                               st.integers(0, 3)), max_size=14),
    "pdb": st.sampled_from([None, 1, 3, "50%", "100%"]),
    "pod": st.tuples(st.integers(3, 6), st.sampled_from(["500m", "1", "1500m", "2500m"])),
    "nominated": st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6),
                                    st.sampled_from(["300m", "800m"])), max_size=3),
    "offset": st.integers(0, 4),
    "k": st.integers(0, 5),
    "ports": st.lists(st.booleans(), max_size=14),  # which bound pods hold host port 8080
    "pod_port": st.booleans(),  # the preemptor wants it too (NodePorts takes part)
})


def _build(case: dict) -> tuple[Cluster, Scheduler, DefaultPreemption, Pod]:
    nodes = [node(f"n{i}", cpu=c, pods=5) for i, c in enumerate(case["nodes"])]
    pods = []
    ports = case.get("ports", [])
    for j, (ni, cpu, prio, app, start) in enumerate(case["pods"]):
        port = 8080 if j < len(ports) and ports[j] else None
        pods.append(bound(f"q{j}", f"n{ni % len(nodes)}", cpu, prio, start=float(start),
                          labels={"app": app} if app else None, port=port))
    pdbs = [] if case["pdb"] is None else [pdb("b", "x", min_available=case["pdb"])]
    cluster, sched, plugin = setup(nodes, pods, pdbs=pdbs)
    for j, (ni, prio, cpu) in enumerate(case["nominated"]):
        waiting = pending(f"nom{j}", cpu, prio)
        cluster.add_pod(waiting)
        waiting.nominated_node_name = f"n{ni % len(nodes)}"
        sched.queue.add_nominated_pod(waiting, waiting.nominated_node_name)
    prio, cpu = case["pod"]
    b = make_pod("p").req(cpu=cpu, memory="100Mi").priority(prio)
    if case.get("pod_port"):
        b.host_port(8080)
    pod = b.obj()
    cluster.add_pod(pod)
    return cluster, sched, plugin, pod


# how the dry run evaluates nodes: one at a time (upstream's way, the reference); batched with
# the PriorityLoads index and integer margins; batched without the index (every potential
# victim's load taken off) but with margins; batched with one filter call per reprieve round
MODES = ("per-node", "index", "no-index", "filter-rounds")


def _run_summary(case: dict, mode: str) -> Any:
    cluster, sched, plugin, pod = _build(case)
    fwk = sched.profiles["default-scheduler"]
    state = CycleState()
    fwk.run_pre_filter(state, pod, cluster.table)
    potential = np.asarray(cluster.table.order(), dtype=np.int64)
    if not len(potential):
        return None
    priority_loads(cluster.table)  # created on first use
    before = _snapshot(cluster.table)
    with pytest.MonkeyPatch.context() as mp:
        if mode == "per-node":
            mp.setattr(dp, "node_local", lambda f, s: False)
        elif mode == "no-index":
            mp.setattr(dv, "priority_loads", lambda table: None)
        elif mode == "filter-rounds":
            mp.setattr(dv, "resource_filter", lambda f, s: None)
        sched._cycle_pod = pod  # as in a scheduling cycle: the nominated pods are memoised
        run = plugin.dry_run(fwk, state, pod, potential, case["offset"] % len(potential),
                             case["k"])
        sched._cycle_pod = sched._nominated_memo = None
    _assert_same(before, _snapshot(cluster.table))
    for c in run.candidates:  # a summary the batch computed is the one of its pods
        if c.victims.summary is not None:
            assert c.victims.summary == summary_of(Victims(c.victims.pods,
                                                           c.victims.num_pdb_violations))
    return ([(c.node, [p.name for p in c.victims.pods], c.victims.num_pdb_violations,
              summary_of(c.victims)) for c in run.candidates],
            [(s, st_.code, st_.reasons) for s, st_ in run.failed], run.errors)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st)
def test_batched_victim_search_matches_the_per_node_one(case):
    reference = _run_summary(case, "per-node")
    for mode in MODES[1:]:
        assert _run_summary(case, mode) == reference, mode


# --------------------------------------------------------------------------- budget tracker


@pytest.mark.parametrize("seed", range(5))
def test_budget_tracker_matches_a_full_recount_after_every_change(seed):
    """Random adds, binds, assumes, label updates, terminations, deletions and budget changes:
    the event-maintained counts always equal budgets() over every pod."""
    rng = np.random.default_rng(seed)
    cluster = Cluster()
    for i in range(3):
        cluster.add_node(make_node(f"n{i}").alloc(cpu="100", memory="100Gi", pods=500).obj())
    tracker = BudgetTracker(cluster)
    apps, namespaces = ["a", "b", "c"], ["default", "other"]
    cluster.add_pdb(pdb("pa", "a", min_available=2))
    cluster.add_pdb(pdb("pb", "b", max_unavailable="50%", namespace="other"))
    for step in range(300):
        op = rng.integers(9)
        pods = list(cluster.pods.values())
        pick = pods[int(rng.integers(len(pods)))] if pods else None
        if op <= 2 or pick is None:
            ns = namespaces[int(rng.integers(2))]
            p = make_pod(f"p{step}", ns).label("app", apps[int(rng.integers(3))]).obj()
            if rng.integers(2):
                p.node_name = f"n{int(rng.integers(3))}"
            cluster.add_pod(p)
        elif op == 3 and not pick.node_name:
            if pick.key in cluster.assumed:
                cluster.bind(pick, pick.node_name)
            elif rng.integers(2):
                cluster.assume(pick, "n0")
            else:
                cluster.bind(pick, "n1")
        elif op == 4 and pick.key in cluster.assumed:
            cluster.bind(pick, pick.node_name)
        elif op == 5:
            changed = pick.clone()
            changed.labels = {"app": apps[int(rng.integers(3))]}
            changed.node_name = pick.node_name
            if pick.key not in cluster.assumed:
                cluster.update_pod(changed)
        elif op == 6 and pick.key not in cluster.assumed:
            terminating = pick.clone()
            terminating.node_name = pick.node_name
            terminating.deletion_timestamp = float(step)
            cluster.update_pod(terminating)
        elif op == 7 and pick.key not in cluster.assumed:
            cluster.delete_pod(pick.namespace, pick.name)
        elif op == 8:
            cluster.update_pdb(pdb("pa", apps[int(rng.integers(3))],
                                   min_available=int(rng.integers(4))))
        want = budgets(cluster.list_pdbs(), cluster.pods.values())
        assert tracker.budgets() == want, f"step {step} op {op}"
