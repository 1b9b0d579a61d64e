"""Pod groups (GenericWorkload, v1.37 semantics): minCount waiting at PreEnqueue, the pod-group
cycle placing a group all or nothing and releasing what it assumed, Permit waiting on the
injected clock, requeueing by the right events, determinism."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.podgroup import PodGroup
from scheduler_core.framework.interface import QueueingHint
from scheduler_core.plugins import gang_scheduling as gs
from scheduler_core.queue.clock import FakeClock
from tests.builders import make_node, make_pod


def nodes(n: int, cpu: str = "4") -> list[Any]:
    return [make_node(f"n{i}").alloc(cpu=cpu, memory="32Gi", pods=110)
            .label("kubernetes.io/hostname", f"n{i}").obj() for i in range(n)]


def group(name: str, min_count: int | None = None, ns: str = "default") -> PodGroup:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return PodGroup.from_manifest({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"schedulingPolicy": policy}})


def member(name: str, grp: str, cpu: str = "100m") -> Any:
    return make_pod(name).req(cpu=cpu, memory="100Mi").group(grp).obj()


@pytest.fixture
def gang_scheduler(make_scheduler):
    def factory(ns, **kw):
        return make_scheduler(ns, generic_workload=True, **kw)
    return factory


def bound(cluster) -> dict[str, str]:
    return {p.name: p.node_name for p in cluster.pods.values()
            if p.node_name and p.key not in cluster.assumed}


# --------------------------------------------------------------------------- PreEnqueue


def test_gang_pods_wait_for_min_count_then_schedule_together(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(3))
    cluster.add_pod_group(group("g", 3))
    cluster.add_pod(member("a", "g"))
    cluster.add_pod(member("b", "g"))
    sched.run_until_idle()
    assert bound(cluster) == {}
    assert sched.queue.gated_count() == 2  # held by GangScheduling's PreEnqueue
    assert sched.group_stats.cycles == 0
    cluster.add_pod(member("c", "g"))  # the quorum: the waiting members are asked again
    sched.run_until_idle()
    assert set(bound(cluster)) == {"a", "b", "c"}
    assert sched.waiting == {}  # a and b waited at Permit until c made the quorum
    assert sched.group_stats.cycles == 1 and sched.group_stats.scheduled == 1
    assert sched.group_stats.wasted_pods == 0
    assert len(sched.group_stats.latencies) == 1


def test_pods_wait_for_their_pod_group_object(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2))
    cluster.add_pod(member("a", "g"))
    cluster.add_pod(member("b", "g"))
    sched.run_until_idle()
    assert bound(cluster) == {} and sched.queue.gated_count() == 2
    cluster.add_pod_group(group("other"))  # another group's creation moves nothing
    assert sched.queue.gated_count() == 2
    cluster.add_pod_group(group("g"))  # basic policy: no quorum needed
    assert sched.queue.gated_count() == 0
    sched.run_until_idle()
    assert set(bound(cluster)) == {"a", "b"}


def test_lowering_min_count_requeues_raising_does_not(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2))
    cluster.add_pod_group(group("g", 3))
    cluster.add_pod(member("a", "g"))
    cluster.add_pod(member("b", "g"))
    sched.run_until_idle()
    cluster.update_pod_group(group("g", 4))
    assert sched.queue.gated_count() == 2
    cluster.update_pod_group(group("g", 2))
    assert sched.queue.gated_count() == 0
    sched.run_until_idle()
    assert set(bound(cluster)) == {"a", "b"}


def test_queueing_hints_pick_the_pods_of_the_right_group():
    a = member("a", "g")
    assert gs._after_pod_added(a, None, member("x", "g")) == QueueingHint.QUEUE
    assert gs._after_pod_added(a, None, member("x", "h")) == QueueingHint.QUEUE_SKIP
    assert gs._after_pod_added(a, None, make_pod("plain").obj()) == QueueingHint.QUEUE_SKIP
    assert gs._after_group_added(a, None, group("g")) == QueueingHint.QUEUE
    assert gs._after_group_added(a, None, group("g", ns="other")) == QueueingHint.QUEUE_SKIP
    assert gs._after_group_updated(a, group("g", 3), group("g", 2)) == QueueingHint.QUEUE
    assert gs._after_group_updated(a, group("g", 3), group("g", 3)) == QueueingHint.QUEUE_SKIP
    assert gs._after_group_updated(a, group("g"), group("g", 2)) == QueueingHint.QUEUE_SKIP
    assert gs._after_group_updated(a, group("h", 3), group("h", 1)) == QueueingHint.QUEUE_SKIP


# --------------------------------------------------------------------------- all or nothing


def test_a_gang_that_cannot_fit_binds_nothing_and_releases_its_assumptions(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2, cpu="1"))
    cluster.add_pod_group(group("g", 3))
    for name in ("a", "b", "c"):
        cluster.add_pod(member(name, "g", cpu="600m"))  # one per node: only 2 fit
    sched.run_until_idle()
    assert bound(cluster) == {}
    assert cluster.assumed == set()
    assert cluster.group_scheduled == {}
    assert all(not cluster.pods_on_node(n) for n in ("n0", "n1"))
    stats = sched.group_stats
    assert stats.unschedulable == 1 and stats.scheduled == 0
    assert stats.wasted_pods == 2  # a and b were assumed, then released
    assert "Insufficient cpu" in sched.failures["default/c"]
    assert "pod group" not in sched.failures["default/c"]
    assert sched.failures["default/a"].startswith("minCount (3) cannot be satisfied")
    # a node that gives room requeues the group (NodeResourcesFit's hint) and it fits
    cluster.add_node(nodes(3, cpu="1")[2])
    sched.run_until_idle()
    assert sorted(bound(cluster).values()) == ["n0", "n1", "n2"]


def test_a_failing_gang_beside_one_that_fits(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2, cpu="1"))
    cluster.add_pod_group(group("big", 2))
    cluster.add_pod_group(group("small", 2))
    cluster.add_pod(member("big-1", "big", cpu="100m"))  # tried first: fits
    cluster.add_pod(member("big-0", "big", cpu="2"))
    cluster.add_pod(member("small-0", "small"))
    cluster.add_pod(member("small-1", "small"))
    sched.run_until_idle()
    assert set(bound(cluster)) == {"small-0", "small-1"}
    # big-1 fit alone but its group could not reach minCount: released
    assert sched.group_stats.wasted_pods == 1
    assert cluster.group_scheduled == {"default/small": 2}


def test_basic_group_places_what_fits(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(1, cpu="1"))
    cluster.add_pod_group(group("g"))
    for name in ("a", "b"):
        cluster.add_pod(member(name, "g", cpu="600m"))
    sched.run_until_idle()
    assert list(bound(cluster)) == ["a"]
    assert sched.group_stats.wasted_pods == 0
    assert "Insufficient cpu" in sched.failures["default/b"]


def test_group_members_with_different_scheduler_names_are_an_error(gang_scheduler):
    cfg = {"profiles": [{"schedulerName": "default-scheduler"},
                        {"schedulerName": "other"}]}
    cluster, sched = gang_scheduler(nodes(2), config=cfg)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("a", "g"))
    other = make_pod("b").req(cpu="100m").group("g").manifest()
    other["spec"]["schedulerName"] = "other"
    from scheduler_core.api.pod import Pod
    cluster.add_pod(Pod.from_manifest(other))
    sched.run_until_idle()
    assert bound(cluster) == {}
    assert "different scheduler names" in sched.failures["default/a"]
    assert sched.group_stats.errors >= 1


def test_same_seed_same_group_placements(gang_scheduler):
    placements = []
    for _ in range(2):
        cluster, sched = gang_scheduler(nodes(12), seed=11)
        for g in range(4):
            cluster.add_pod_group(group(f"g{g}", 3))
            for i in range(3):
                cluster.add_pod(member(f"g{g}-{i}", f"g{g}"))
        sched.run_until_idle()
        placements.append(bound(cluster))
    assert len(placements[0]) == 12
    assert placements[0] == placements[1]


# --------------------------------------------------------------------------- Permit


def test_permit_waits_for_the_quorum_and_times_out_on_the_injected_clock(make_scheduler):
    """The single-pod path with GangScheduling enabled (no pod-group cycle): a gang pod waits
    at Permit for 5 minutes of the injected clock, then is rejected and released."""
    clock = FakeClock()
    cfg = {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}}}]}
    cluster, sched = make_scheduler(nodes(1, cpu="1"), config=cfg, clock=clock)
    cluster.add_pod_group(group("g", 2))
    cluster.add_pod(member("b", "g", cpu="2"))  # gated (alone), and would never fit
    cluster.add_pod(member("a", "g"))
    sched.run_until_idle(advance_clock=False)
    assert list(sched.waiting) == [cluster.pods["default/a"].uid]
    assert cluster.assumed == {"default/a"} and bound(cluster) == {}
    clock.set(299.0)
    sched.run_until_idle(advance_clock=False)
    assert cluster.assumed == {"default/a"}
    clock.set(300.0)
    sched.run_until_idle(advance_clock=False)
    assert sched.waiting == {} and cluster.assumed == set() and bound(cluster) == {}
    assert sched.failures["default/a"] == (
        "rejected due to timeout after waiting 300s at plugin GangScheduling")


def test_permit_holds_members_until_the_quorum_then_lets_them_go():
    from scheduler_core.cluster.store import Cluster
    from scheduler_core.framework.interface import Code, CycleState

    cluster = Cluster()
    for n in nodes(2):
        cluster.add_node(n)
    cluster.add_pod_group(group("g", 2))
    a, b = member("a", "g"), member("b", "g")
    cluster.add_pod(a)
    cluster.add_pod(b)
    allowed: list[str] = []

    class Waiting:
        def __init__(self, uid: str) -> None:
            self.uid = uid

        def allow(self, plugin: str) -> None:
            allowed.append(f"{self.uid}:{plugin}")

    class Handle:
        def __init__(self) -> None:
            self.cluster = cluster

        def get_waiting_pod(self, uid: str) -> Any:
            return Waiting(uid)

    plugin = gs.GangScheduling(None, Handle())
    cluster.assume(a, "n0")
    status, timeout = plugin.permit(CycleState(), a, "n0")
    assert status is not None and status.code == Code.WAIT and timeout == gs.PERMIT_TIMEOUT
    assert allowed == []
    cluster.assume(b, "n1")
    assert plugin.permit(CycleState(), b, "n1") == (None, 0.0)
    assert allowed == [f"{a.uid}:GangScheduling"]
    assert plugin.placement_feasible(group("g", 2), 1, 0).code == Code.UNSCHEDULABLE
    assert plugin.placement_feasible(group("g", 2), 1, 1).code == Code.WAIT
    assert plugin.placement_feasible(group("g", 2), 2, 0) is None
    assert plugin.placement_feasible(group("g"), 0, 1).code == Code.WAIT


def test_pods_of_a_deleted_pod_group_wait_for_it_again(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2, cpu="1"))
    cluster.add_pod_group(group("g"))
    for name in ("a", "b", "c"):
        cluster.add_pod(member(name, "g", cpu="600m"))
    sched.run_until_idle()
    assert set(bound(cluster)) == {"a", "b"}  # basic: what fits is placed
    cluster.delete("PodGroup", "default/g")
    cluster.add_node(nodes(3, cpu="1")[2])  # room for c, but its group is gone
    sched.run_until_idle()
    assert "c" not in bound(cluster)
    # the node's event sends c towards backoffQ, where PreEnqueue (v1.34, with
    # SchedulerPopFromBackoffQ) keeps it back: gated by GangScheduling, not attempted
    qpi = sched.queue.get(cluster.pods["default/c"].uid)
    assert qpi is not None and qpi.gated and qpi.gating_plugin == "GangScheduling"
    cluster.add_pod_group(group("g"))  # GangScheduling's hint requeues c
    sched.run_until_idle()
    assert bound(cluster)["c"] == "n2"


def test_group_members_evaluations_are_recorded_for_the_decisions_log(gang_scheduler):
    cluster, sched = gang_scheduler(nodes(2, cpu="1"), record_cycles=True)
    cluster.add_pod_group(group("g", 3))
    for name in ("a", "b", "c"):
        cluster.add_pod(member(name, "g", cpu="600m"))
    sched.run_until_idle()
    assert [(r.pod.name, r.selected is not None) for r in sched.cycles] == [
        ("a", True), ("b", True), ("c", False)]
    assert sched.cycles[2].status is not None
