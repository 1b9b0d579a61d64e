"""Asynchronous preemption (the SchedulerAsyncPreemption gate, on by default as in v1.34):
PostFilter nominates the preemptor and the victims are evicted off the scheduling cycle (after
one further attempt, or as soon as nothing else can be popped); PreEnqueue holds the preemptor
back meanwhile; other pods are scheduled while the victims are still there; the preemptor
binds once they are gone. With the gate off preemption stays synchronous. Everything runs on
the injected FakeClock: no sleeps, no dependence on machine speed."""

from __future__ import annotations

import pytest

from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import DELETED
from scheduler_core.cycle.off_cycle import ATTEMPTS_BEFORE_DONE, OffCycleWork
from scheduler_core.framework.interface import ActionType, Code, QueueingHint
from scheduler_core.plugins.default_preemption import (
    NAME,
    WAITING_FOR_PREEMPTION,
    DefaultPreemption,
)
from scheduler_core.queue.clock import FakeClock
from scheduler_core.queue.scheduling_queue import ACTIVE_Q, UNSCHEDULABLE_PODS
from tests.builders import make_node, make_pod

HOST = "kubernetes.io/hostname"
PROFILE = "default-scheduler"


def nodes(n: int, cpu: str = "4"):
    return [make_node(f"n{i}").alloc(cpu=cpu, memory="32Gi", pods=110).label(HOST, f"n{i}").obj()
            for i in range(n)]


def pod(name: str, cpu: str, prio: int) -> Pod:
    return make_pod(name).req(cpu=cpu, memory="100Mi").priority(prio).obj()


def bound_on(cluster, node_name: str) -> list[str]:
    return sorted(p.name for p in cluster.pods_on_node(node_name))


def plugin_of(sched) -> DefaultPreemption:
    (plugin,) = [p for p in sched.profiles[PROFILE].post_filter_plugins if p.name == NAME]
    return plugin


def preempting(make_scheduler, *, async_preemption: bool = True, seed: int = 0):
    """3 nodes of 4 CPU, each full with four 900m priority-0 pods; a 3-CPU priority-1000 pod
    has been attempted once (it preempted). Returns (cluster, sched, preemptor)."""
    cluster, sched = make_scheduler(nodes(3), seed=seed, async_preemption=async_preemption)
    for i in range(12):
        cluster.add_pod(pod(f"low{i}", "900m", 0))
    sched.run_until_idle()
    assert all(p.node_name for p in cluster.pods.values())
    high = pod("high", "3000m", 1000)
    cluster.add_pod(high)
    assert sched.schedule_one()
    assert not high.node_name and high.nominated_node_name
    return cluster, sched, high


def test_preemptor_is_nominated_and_the_victims_stay_until_off_cycle_work_runs(make_scheduler):
    cluster, sched, high = preempting(make_scheduler)
    node = high.nominated_node_name
    plugin = plugin_of(sched)
    assert sched.queue.nominated_node_of(high.uid) == node
    assert len(bound_on(cluster, node)) == 4  # nothing evicted yet
    victims = plugin.victims_in_flight(high.uid)
    assert len(victims) == 3 and all(v.node_name == node for v in victims)
    assert plugin.is_pod_running_preemption(high.uid)
    assert len(sched.off_cycle) == 1
    # the preemptor waits in the unschedulable pool; PreEnqueue refuses it
    assert sched.queue.where(high.uid) == UNSCHEDULABLE_PODS
    refused = sched.profiles[PROFILE].run_pre_enqueue(high)
    assert refused is not None
    name, status = refused
    assert name == NAME and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (WAITING_FOR_PREEMPTION,)


def test_other_pods_are_scheduled_while_the_victims_are_there(make_scheduler):
    cluster, sched, high = preempting(make_scheduler)
    node = high.nominated_node_name
    victims = {v.key for v in plugin_of(sched).victims_in_flight(high.uid)}
    small = pod("small", "100m", 0)
    cluster.add_pod(small)
    assert sched.schedule_one()  # the one further attempt: the victims are still there
    assert small.node_name and small.node_name != node  # the nominated pod keeps its room
    assert victims <= set(cluster.pods)
    assert not high.node_name
    # the next pop: the evictions run first, the preemptor comes back and binds
    assert sched.schedule_one()
    assert not victims & set(cluster.pods)
    assert high.node_name == node and not high.nominated_node_name
    assert len(bound_on(cluster, node)) == 2 and "high" in bound_on(cluster, node)
    assert not plugin_of(sched).is_pod_running_preemption(high.uid)
    assert len(sched.off_cycle) == 0


def test_idle_scheduler_finishes_the_preemption_and_binds_the_preemptor(make_scheduler):
    cluster, sched, high = preempting(make_scheduler)
    node = high.nominated_node_name
    before = len(cluster.pods)
    # nothing else is pending: the next call runs the evictions, then pops the preemptor
    assert sched.schedule_one()
    assert high.node_name == node
    assert len(cluster.pods) == before - 3
    assert sched.pending_reasons() == {}


def test_preempting_set_is_left_before_the_last_eviction(make_scheduler):
    """Upstream's goroutine order: every victim but the last, forget the preemptor, the last;
    so the last deletion finds the preemptor no longer held and requeues it."""
    cluster, sched, high = preempting(make_scheduler)
    plugin = plugin_of(sched)
    held: list[bool] = []

    def on_event(ev) -> None:
        if ev.kind == "Pod" and ev.type is DELETED:
            held.append(plugin.is_pod_running_preemption(high.uid))

    cluster.subscribe(on_event)
    sched.off_cycle.run_all()
    assert held == [True, True, False]
    # the first deletions gated the preemptor (PreEnqueue on entering backoffQ); the last
    # one reached it through its gating plugin's registration and let it into activeQ
    assert sched.queue.where(high.uid) == ACTIVE_Q


def test_pre_enqueue_holds_the_preemptor_while_its_preemption_is_in_flight(make_scheduler):
    cluster, sched, high = preempting(make_scheduler)
    node = high.nominated_node_name
    plugin = plugin_of(sched)
    attempts: list[tuple[str, bool]] = []

    class Watch:
        def before_attempt(self, p, fwk) -> None:
            attempts.append((p.name, plugin.is_pod_running_preemption(high.uid)))

        def after_attempt(self, p, fwk, result, status) -> None:
            pass

    sched.observer = Watch()
    # a node added helps the preemptor's rejector (NodeResourcesFit) and would requeue it:
    # PreEnqueue keeps it in the pool, gated by DefaultPreemption
    cluster.add_node(make_node("big").alloc(cpu="8", memory="32Gi", pods=110)
                     .label(HOST, "big").obj())
    qpi = sched.queue.get(high.uid)
    assert sched.queue.where(high.uid) == UNSCHEDULABLE_PODS
    assert qpi is not None and qpi.gated and qpi.gating_plugin == NAME
    # forcing it into activeQ is refused the same way
    assert sched.queue.activate([high]) == 0
    assert sched.queue.where(high.uid) == UNSCHEDULABLE_PODS
    sched.run_until_idle()
    # attempted once more, after its preemption finished, and bound to its nominated node
    assert attempts == [("high", False)]
    assert high.node_name == node


def test_gate_off_preempts_synchronously(make_scheduler):
    cluster, sched, high = preempting(make_scheduler, async_preemption=False)
    node = high.nominated_node_name
    plugin = plugin_of(sched)
    assert len(bound_on(cluster, node)) == 1  # evicted during PostFilter
    assert len(sched.off_cycle) == 0
    assert not plugin.is_pod_running_preemption(high.uid)
    assert plugin.events_to_register() == []
    assert sched.profiles[PROFILE].run_pre_enqueue(high) is None
    assert sched.schedule_one()
    assert high.node_name == node


def test_async_on_registers_the_victims_deletion_with_a_skipping_hint(make_scheduler):
    _, sched = make_scheduler(nodes(1))
    (reg,) = plugin_of(sched).events_to_register()
    assert reg.event.resource == "Pod" and reg.event.action & ActionType.DELETE
    assert reg.hint is not None
    assert reg.hint(pod("x", "1", 0), pod("y", "1", 0), None) == QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize("async_preemption", [False, True], ids=["sync", "async"])
def test_same_seed_same_placements(make_scheduler, async_preemption):
    def run(seed: int) -> dict[str, str]:
        cluster, sched = make_scheduler(nodes(6), seed=seed, async_preemption=async_preemption)
        for i in range(24):
            cluster.add_pod(pod(f"low{i}", "900m", 0))
        sched.run_until_idle()
        for i in range(4):
            cluster.add_pod(pod(f"high{i}", "3000m", 1000))
            cluster.add_pod(pod(f"small{i}", "100m", 5))
        sched.run_until_idle()
        return {p.name: p.node_name for p in cluster.pods.values()}

    first = run(7)
    assert first == run(7)
    assert all(first[f"high{i}"] for i in range(4))


def test_off_cycle_work_runs_after_one_further_attempt():
    work, ran = OffCycleWork(), []
    work.submit(lambda: ran.append("a"), attempts=5)
    work.submit(lambda: ran.append("b"), attempts=6)
    assert work.run_due(5) == 0 and ran == []
    assert work.run_due(5 + ATTEMPTS_BEFORE_DONE) == 1 and ran == ["a"]
    assert work.run_all() == 1 and ran == ["a", "b"] and len(work) == 0


def test_v134_hazard_a_shared_last_victim_leaves_the_second_preemptor_gated(make_scheduler):
    """As in v1.34: a second preemptor may pick victims of a preemption still in flight. When
    its last victim was already evicted by the first one, its own last eviction deletes nothing,
    so no event releases it from the gate an earlier deletion put it behind; only a later pod
    deletion asks it again."""
    clock = FakeClock()
    cluster, sched = make_scheduler(nodes(1), clock=clock)
    for name in ("v1", "v2"):  # v1 starts first, so v2 is the first to be preempted
        cluster.add_pod(pod(name, "2", 0))
        sched.run_until_idle()
        clock.advance(1.0)
    p1, p2 = pod("p1", "2", 100), pod("p2", "2", 50)
    cluster.add_pod(p1)
    cluster.add_pod(p2)
    plugin = plugin_of(sched)
    assert sched.schedule_one() and p1.nominated_node_name == "n0"
    assert [v.name for v in plugin.victims_in_flight(p1.uid)] == ["v2"]
    # p2 counts the nominated p1: it needs both v1 and v2 gone, v2 last
    assert sched.schedule_one() and p2.nominated_node_name == "n0"
    assert [v.name for v in plugin.victims_in_flight(p2.uid)] == ["v1", "v2"]
    sched.run_until_idle()
    assert p1.node_name == "n0" and "default/v1" not in cluster.pods
    qpi = sched.queue.get(p2.uid)
    assert not p2.node_name and qpi is not None and qpi.gated and qpi.gating_plugin == NAME
    assert not plugin.is_pod_running_preemption(p2.uid)  # held although nothing is in flight
    assert len(bound_on(cluster, "n0")) == 1  # while 2 of 4 CPUs are free for it
    cluster.delete_pod("default", "p1")  # a pod deletion asks the gated pod again
    sched.run_until_idle()
    assert p2.node_name == "n0"
