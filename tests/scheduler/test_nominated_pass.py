"""The nominated pass of RunFilterPluginsWithNominatedPods: batched over every nominated node at
once (node-local filters, nominated pods added as loads on the accounting columns) it gives the
feasible nodes, the per-node diagnosis statuses and the FitError text of the per-node pass (the
table path with cloned CycleStates), and leaves the table as it found it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scheduler_core.cycle.nominated as nominated_module
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.store import Cluster
from scheduler_core.framework.config import SchedulerConfig, build_frameworks
from scheduler_core.framework.diagnosis import FitError
from scheduler_core.framework.interface import Code, CycleState
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from tests.builders import make_node, make_pod


def _node(name: str, cpu: str, pods: int = 110, taint: bool = False) -> Any:
    b = make_node(name).alloc(cpu=cpu, memory="8Gi", pods=pods) \
        .label("kubernetes.io/hostname", name)
    if taint:
        b.taint("dedicated", "x")
    return b.obj()


def _pod(name: str, cpu: str, prio: int, *, port: int | None = None,
         node: str | None = None) -> Pod:
    b = make_pod(name).req(cpu=cpu, memory="100Mi").priority(prio)
    if port is not None:
        b.host_port(port)
    if node is not None:
        b.node(node)
    return b.obj()


def _setup(nodes: list[Any], bound: list[Pod], nominated: list[tuple[Pod, str]]
           ) -> tuple[Cluster, Scheduler]:
    clock = FakeClock(10.0)
    cluster = Cluster(clock=clock.now)
    for n in nodes:
        cluster.add_node(n)
    for p in bound:
        cluster.add_pod(p)
    sched = Scheduler(cluster, lambda h: build_frameworks(SchedulerConfig(), h), clock=clock)
    for p, where in nominated:
        cluster.add_pod(p)
        p.nominated_node_name = where
        sched.queue.add_nominated_pod(p, where)
    return cluster, sched


def _snapshot(cluster: Cluster) -> list[Any]:
    t = cluster.table
    h = t.high
    cols = [t.pod_count[:h].copy(), t.nonzero_cpu[:h].copy(), t.nonzero_memory[:h].copy()]
    cols += [c[:h].copy() for _, c in sorted(t.requested.items())]
    # a dry run may leave a new all-zero port column behind, as add_pod/remove_pod do
    ports = {k: c[:h].tolist() for k, c in {**t.port_any_ip, **t.port_by_ip}.items()
             if c[:h].any()}
    return [*cols, ports, [list(t.pods[s]) for s in range(h)]]


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(a, b, strict=True))


def _find(sched: Scheduler, pod: Pod, *, batched: bool) -> Any:
    """One filter phase (nominated pass included) from a fresh state: the feasible nodes,
    the examined nodes' statuses (kept when no node fits) and the FitError text; then, per
    node, both passes on that node alone (``filter_one_node``)."""
    fwk = sched.profiles["default-scheduler"]
    sched.next_start_node_index = 0
    sched._cycle_pod, sched._nominated_memo = pod, None
    with pytest.MonkeyPatch.context() as mp:
        if not batched:
            mp.setattr(nominated_module, "node_local", lambda f, s: False)
        state = CycleState()
        feasible, d, _evaluated, _error = sched._find_nodes_that_fit(fwk, state, pod, None)
        table = sched.cluster.table
        one = {table.node(s).name: _status(sched.filter_one_node(fwk, state, pod, s))
               for s in table.order().tolist()}
    sched._cycle_pod = sched._nominated_memo = None
    names = sched.cluster.table.names_of
    statuses = {names([s])[0]: _status(d.statuses[int(i)])
                for s, i in zip(d.slots.tolist(), d.status_index.tolist(), strict=True)}
    return sorted(names(feasible)), statuses, FitError(pod.key, d).message, one


def _status(status: Any) -> Any:
    return None if status is None else (status.code, status.reasons, status.plugin)


# --------------------------------------------------------------------------- table-driven
CASES = {
    # a higher-priority nominated pod takes the room on n1: pass 1 rejects it there
    "higher-priority-nominee-blocks": ("3", 5, None, [("hi", "1500m", 9, None, "n1")],
                                       ["n0", "n2"], {"n1": ("Insufficient cpu",)}),
    # an equal-priority nominee counts too; a lower-priority one is ignored
    "equal-counts-lower-ignored": ("3", 5, None, [("eq", "1500m", 5, None, "n0"),
                                                       ("lo", "3500m", 1, None, "n1")],
                                   ["n1", "n2"], {"n0": ("Insufficient cpu",)}),
    # two nominees on one node add up
    "two-nominees-add-up": ("1", 5, None, [("a", "2", 6, None, "n2"),
                                            ("b", "1500m", 6, None, "n2")],
                            ["n0", "n1"], {"n2": ("Insufficient cpu",)}),
    # a nominee's host port: NodePorts rejects the node in pass 1
    "nominee-host-port": ("100m", 5, 8080, [("hp", "100m", 7, 8080, "n0")],
                          ["n1", "n2"],
                          {"n0": ("node(s) didn't have free ports for the requested pod ports",)}),
    # the pod's own nomination does not count against it (its nominated node is tried first)
    "own-nomination-ignored": ("3500m", 5, None, [("p", "3500m", 5, None, "n0")],
                               ["n0"], {}),
}


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "per-node"])
@pytest.mark.parametrize(("cpu", "prio", "port", "nominees", "feasible", "rejected"),
                         list(CASES.values()), ids=list(CASES))
def test_nominated_pass(cpu, prio, port, nominees, feasible, rejected, batched):
    cluster, sched = _setup([_node(f"n{i}", "4") for i in range(3)], [],
                            [(_pod(name, c, pr, port=pt), where)
                             for name, c, pr, pt, where in nominees if name != "p"])
    pod = _pod("p", cpu, prio, port=port)
    cluster.add_pod(pod)
    if any(name == "p" for name, *_ in nominees):
        pod.nominated_node_name = "n0"
        sched.queue.add_nominated_pod(pod, "n0")
    before = _snapshot(cluster)
    got_feasible, _, _, one = _find(sched, pod, batched=batched)
    assert got_feasible == feasible
    assert {n: st[1] for n, st in one.items() if st is not None} == rejected
    assert all(st[0] == Code.UNSCHEDULABLE for st in one.values() if st is not None)
    assert _same(before, _snapshot(cluster))


def test_diagnosis_keeps_the_nominated_pass_status_when_nothing_fits():
    """n0 is full; n1 fits only without its higher-priority nominee: the FitError counts
    n1's pass-1 reason."""
    cluster, sched = _setup([_node("n0", "1"), _node("n1", "4")], [],
                            [(_pod("hi", "2", 9, port=8080), "n1")])
    pod = _pod("p", "3", 5, port=8080)
    cluster.add_pod(pod)
    for batched in (True, False):
        feasible, statuses, message, _ = _find(sched, pod, batched=batched)
        assert feasible == []
        assert statuses["n1"] == (
            Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",),
            "NodePorts")
        assert message == ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't "
                           "have free ports for the requested pod ports.")


def test_nominated_placement_is_memoised_for_the_cycle_and_dropped_on_events():
    cluster, sched = _setup([_node("n0", "4"), _node("n1", "4")], [],
                            [(_pod("hi", "1", 9), "n0"), (_pod("lo", "1", 1), "n1")])
    pod = _pod("p", "1", 5)
    cluster.add_pod(pod)
    sched._cycle_pod = pod
    first = sched.nominated_placement(pod)
    assert ([p.name for p in first.pods], first.pod_slots.tolist()) == (["hi"], [0])
    assert sched.nominated_placement(pod) is first
    cluster.add_pod(_pod("other", "1", 0))  # any event may change the nominations
    assert sched.nominated_placement(pod) is not first
    sched._cycle_pod = None


# --------------------------------------------------------------------------- property
case_st = st.fixed_dictionaries({
    "nodes": st.lists(st.tuples(st.sampled_from(["1", "2", "4"]), st.sampled_from([2, 3, 110]),
                                st.booleans()), min_size=1, max_size=6),
    "bound": st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["200m", "700m", "1500m"]),
                                st.sampled_from([None, None, 8080, 9090])), max_size=8),
    "nominated": st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["300m", "900m", "2"]),
                                    st.integers(0, 8), st.sampled_from([None, None, 8080])),
                          max_size=6),
    "pod": st.tuples(st.sampled_from(["100m", "800m", "1500m", "3"]), st.integers(2, 6),
                     st.sampled_from([None, None, 8080, 9090])),
})


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(case_st)
def test_batched_nominated_pass_matches_the_per_node_one(case):
    nodes = [_node(f"n{i}", cpu, pods, taint) for i, (cpu, pods, taint)
             in enumerate(case["nodes"])]
    n = len(nodes)
    bound = [_pod(f"b{j}", cpu, 0, port=port, node=f"n{ni % n}")
             for j, (ni, cpu, port) in enumerate(case["bound"])]
    nominated = [(_pod(f"m{j}", cpu, prio, port=port), f"n{ni % n}")
                 for j, (ni, cpu, prio, port) in enumerate(case["nominated"])]
    cluster, sched = _setup(nodes, bound, nominated)
    cpu, prio, port = case["pod"]
    pod = _pod("p", cpu, prio, port=port)
    cluster.add_pod(pod)
    before = _snapshot(cluster)
    batched = _find(sched, pod, batched=True)
    assert _same(before, _snapshot(cluster))
    per_node = _find(sched, pod, batched=False)
    assert _same(before, _snapshot(cluster))
    assert batched == per_node
