"""The scheduling loop end to end on small clusters: placement, failures, messages, requeue."""

from __future__ import annotations

import pytest

from scheduler_core.cycle.schedule_pod import num_feasible_nodes_to_find
from scheduler_core.errors import UnknownSchedulerError
from tests.builders import make_node, make_pod


def nodes(n: int, cpu: str = "4", memory: str = "32Gi", pods: int = 110):
    return [make_node(f"n{i}").alloc(cpu=cpu, memory=memory, pods=pods)
            .label("kubernetes.io/hostname", f"n{i}").obj() for i in range(n)]


@pytest.mark.parametrize(("n", "pct", "want"), [
    (10, None, 10), (99, None, 99), (100, None, 100), (1000, None, 420), (1000, 40, 400),
    (6000, None, 300), (5000, None, 500), (15000, None, 750), (150, 10, 100),
], ids=lambda v: str(v))
def test_num_feasible_nodes_to_find_v11(n, pct, want):
    assert num_feasible_nodes_to_find(pct, n) == want


def test_schedules_every_pod_and_respects_capacity(make_scheduler):
    cluster, sched = make_scheduler(nodes(3, cpu="1"))
    for i in range(7):
        cluster.add_pod(make_pod(f"p{i}").req(cpu="400m", memory="1Gi").obj())
    sched.run_until_idle()
    bound = [p for p in cluster.pods.values() if p.node_name]
    assert len(bound) == 6  # 2 per node fit in 1 CPU
    per_node = {n: sum(1 for p in bound if p.node_name == n) for n in ("n0", "n1", "n2")}
    assert per_node == {"n0": 2, "n1": 2, "n2": 2}
    pending = sched.pending_reasons()
    assert list(pending) == ["default/p6"]
    assert pending["default/p6"] == (
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")


def test_fit_error_message_sorts_reasons_and_counts(make_scheduler):
    tainted = make_node("tainted").alloc(cpu="8", memory="32Gi", pods=110)
    ns = [*nodes(2, cpu="1"), tainted.taint("dedicated", "infra").obj()]
    cluster, sched = make_scheduler(ns)
    cluster.add_pod(make_pod("big").req(cpu="2").obj())
    sched.run_until_idle()
    # big asks 2 CPU of 1-CPU nodes: UnschedulableAndUnresolvable there (v1.34), so they are
    # not worth a dry run either
    assert sched.failures["default/big"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.")


def test_least_allocated_spreads_and_same_seed_same_placements(make_scheduler):
    placements = []
    for _ in range(2):
        cluster, sched = make_scheduler(nodes(20), seed=7)
        for i in range(30):
            cluster.add_pod(make_pod(f"p{i}").req(cpu="100m", memory="500Mi").obj())
        sched.run_until_idle()
        placements.append({k: p.node_name for k, p in cluster.pods.items()})
    assert placements[0] == placements[1]
    counts = {}
    for node in placements[0].values():
        counts[node] = counts.get(node, 0) + 1
    assert max(counts.values()) - min(counts.values()) <= 1  # LeastAllocated spreads evenly


def test_different_seeds_break_ties_differently(make_scheduler):
    chosen = set()
    for seed in range(8):
        cluster, sched = make_scheduler(nodes(10), seed=seed)
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle()
        chosen.add(cluster.pods["default/p"].node_name)
    assert len(chosen) > 1


def test_unknown_scheduler_name_is_ignored_and_reported(make_scheduler):
    cluster, sched = make_scheduler(nodes(2))
    cluster.add_pod(make_pod("typo").req(cpu="100m").obj())
    pod = make_pod("lost").obj()
    pod.spec = type(pod.spec)(scheduler_name="defualt-scheduler", containers=pod.spec.containers)
    cluster.add_pod(pod)
    sched.run_until_idle()
    assert cluster.pods["default/typo"].node_name
    assert not cluster.pods["default/lost"].node_name
    ignored = sched.ignored["default/lost"]
    assert (ignored.namespace, ignored.name, ignored.scheduler_name) == (
        "default", "lost", "defualt-scheduler")


def test_reject_unknown_scheduler_fails_at_creation(make_scheduler):
    cluster, _ = make_scheduler(nodes(1), reject_unknown_scheduler=True)
    pod = make_pod("lost").obj()
    pod.spec = type(pod.spec)(scheduler_name="defualt-scheduler", containers=pod.spec.containers)
    with pytest.raises(UnknownSchedulerError) as exc:
        cluster.add_pod(pod)
    assert str(exc.value) == ('pod default/lost: spec.schedulerName: unknown scheduler '
                              '"defualt-scheduler" (known: default-scheduler)')
    assert "default/lost" not in cluster.pods


def test_two_profiles_by_scheduler_name(make_scheduler):
    config = {
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {"schedulerName": "bin-packer", "pluginConfig": [{
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"type": "MostAllocated"}}}]},
        ],
    }
    cluster, sched = make_scheduler(nodes(4), config=config)
    for i in range(4):
        pod = make_pod(f"packed-{i}").req(cpu="500m", memory="1Gi").obj()
        pod.spec = type(pod.spec)(scheduler_name="bin-packer", containers=pod.spec.containers)
        cluster.add_pod(pod)
    sched.run_until_idle()
    used = {p.node_name for p in cluster.pods.values()}
    assert len(used) == 1  # MostAllocated packs onto one node


def test_node_added_later_unblocks_pending_pod(make_scheduler):
    cluster, sched = make_scheduler(nodes(1, cpu="1"))
    cluster.add_pod(make_pod("big").req(cpu="2").obj())
    sched.run_until_idle()
    assert not cluster.pods["default/big"].node_name
    assert sched.queue.unschedulable_count() == 1
    cluster.add_node(make_node("large").alloc(cpu="8", memory="32Gi", pods=110).obj())
    sched.run_until_idle()
    assert cluster.pods["default/big"].node_name == "large"


def test_irrelevant_event_does_not_requeue_with_hints(make_scheduler):
    cluster, sched = make_scheduler(nodes(1, cpu="1"))
    cluster.add_pod(make_pod("big").req(cpu="2").obj())
    sched.run_until_idle()
    attempts = sched.attempts_total
    # a small node cannot help: NodeResourcesFit's hint says QueueSkip
    cluster.add_node(make_node("small").alloc(cpu="1", memory="1Gi", pods=110).obj())
    sched.run_until_idle()
    assert sched.attempts_total == attempts
    assert sched.queue.unschedulable_count() == 1


def test_pod_delete_frees_room(make_scheduler):
    cluster, sched = make_scheduler(nodes(1, cpu="1"))
    cluster.add_pod(make_pod("a").req(cpu="800m").obj())
    sched.run_until_idle()
    cluster.add_pod(make_pod("b").req(cpu="800m").obj())
    sched.run_until_idle()
    assert not cluster.pods["default/b"].node_name
    cluster.delete_pod("default", "a")
    sched.run_until_idle()
    assert cluster.pods["default/b"].node_name == "n0"


def test_gated_pod_waits_for_gate_removal(make_scheduler):
    cluster, sched = make_scheduler(nodes(1))
    cluster.add_pod(make_pod("g").gates("example.com/wait").req(cpu="100m").obj())
    sched.run_until_idle()
    assert not cluster.pods["default/g"].node_name
    assert sched.attempts_total == 0
    ungated = make_pod("g").req(cpu="100m").obj()
    cluster.update_pod(ungated)
    sched.run_until_idle()
    assert cluster.pods["default/g"].node_name == "n0"


def test_daemonset_pattern_narrows_without_scanning(make_scheduler):
    cluster, sched = make_scheduler(nodes(300), record_cycles=True)
    pod = make_pod("ds").req(cpu="100m").required_terms(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n123"]}]}).obj()
    cluster.add_pod(pod)
    sched.run_until_idle()
    assert cluster.pods["default/ds"].node_name == "n123"
    record = sched.cycles[-1]
    assert sum(len(slots) for slots, _ in record.examined) == 1


def test_prefilter_narrowing_to_missing_node_reports_absent_nodes(make_scheduler):
    cluster, sched = make_scheduler(nodes(3))
    pod = make_pod("ds").required_terms(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}).obj()
    cluster.add_pod(pod)
    sched.run_until_idle()
    assert sched.failures["default/ds"] == (
        "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        " no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_rotating_start_index_spreads_filter_work(make_scheduler):
    # 200 nodes -> 100 feasible nodes to find per pod; the start index moves by 100 each time
    cluster, sched = make_scheduler(nodes(200), record_cycles=True)
    for i in range(3):
        cluster.add_pod(make_pod(f"p{i}").req(cpu="100m").obj())
    sched.run_until_idle()
    firsts = [int(r.examined[0][0][0]) for r in sched.cycles]
    assert firsts == [0, 100, 0]
    assert sched.next_start_node_index == 100


def test_no_nodes(make_scheduler):
    cluster, sched = make_scheduler([])
    cluster.add_pod(make_pod("p").obj())
    sched.run_until_idle()
    assert sched.failures["default/p"] == "no nodes available to schedule pods"


def test_backoff_is_simulated_not_slept(make_scheduler):
    cluster, sched = make_scheduler(nodes(1, cpu="1"))
    cluster.add_pod(make_pod("big").req(cpu="2").obj())
    sched.run_until_idle()
    start = sched.clock.now()
    # an event that queues the pod after backoff: a large node arrives
    cluster.add_node(make_node("large").alloc(cpu="8", memory="32Gi", pods=110).obj())
    sched.run_until_idle()
    assert cluster.pods["default/big"].node_name == "large"
    assert sched.clock.now() - start <= 1.0 + 1e-9


class _WaitPermit:
    """A Permit plugin that holds every pod for ``timeout`` seconds."""

    name = "HoldAtPermit"
    timeout = 30.0

    def __init__(self, args=None, handle=None, *, args_path=""):
        self.handle = handle

    def permit(self, state, pod, node_name):
        from scheduler_core.framework.interface import Code, Status
        return Status(Code.WAIT), self.timeout


def _permit_config(monkeypatch):
    import sys
    import types
    mod = types.ModuleType("schedperf_test_permit")
    mod.HoldAtPermit = _WaitPermit
    monkeypatch.setitem(sys.modules, "schedperf_test_permit", mod)
    return {"pluginRegistry": {"HoldAtPermit": "schedperf_test_permit:HoldAtPermit"},
            "profiles": [{"plugins": {"permit": {"enabled": [{"name": "HoldAtPermit"}]}}}]}


def test_permit_wait_then_allow_binds(make_scheduler, monkeypatch):
    cluster, sched = make_scheduler(nodes(2), config=_permit_config(monkeypatch))
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    sched.schedule_one()
    pod = cluster.pods["default/p"]
    assert pod.key in cluster.assumed and pod.uid in sched.waiting
    sched.handle.get_waiting_pod(pod.uid).allow("HoldAtPermit")
    sched.run_until_idle()
    assert pod.node_name and pod.key not in cluster.assumed
    assert cluster.bind_count == 1


def test_permit_wait_times_out_in_simulated_time(make_scheduler, monkeypatch):
    cluster, sched = make_scheduler(nodes(1), config=_permit_config(monkeypatch))
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    sched.run_until_idle()
    pod = cluster.pods["default/p"]
    assert not pod.node_name
    assert sched.clock.now() == 30.0
    assert sched.queue.where(pod.uid) == "unschedulable"
    assert sched.failures["default/p"] == (
        "rejected due to timeout after waiting 30s at plugin HoldAtPermit")
    assert cluster.table.pod_count.sum() == 0  # forgotten, resources released


def test_permit_reject_requeues(make_scheduler, monkeypatch):
    cluster, sched = make_scheduler(nodes(1), config=_permit_config(monkeypatch))
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    sched.schedule_one()
    pod = cluster.pods["default/p"]
    sched.handle.get_waiting_pod(pod.uid).reject("HoldAtPermit", "not now")
    sched.schedule_one()
    assert sched.failures["default/p"] == "not now"
    assert sched.queue.where(pod.uid) in ("unschedulable", "backoff", "active")


@pytest.mark.parametrize(("percent", "sampled"), [(100, 20), (10, 2), (0, 0)])
def test_plugin_metrics_are_sampled_deterministically(make_scheduler, percent, sampled):
    from workloads.collectors.recorder import CollectingRecorder

    recorder = CollectingRecorder(plugin_sample_percent=percent)
    cluster, sched = make_scheduler(nodes(3), recorder=recorder)
    for i in range(20):
        cluster.add_pod(make_pod(f"p{i}").req(cpu="10m").obj())
    sched.run_until_idle()
    filter_samples = recorder.plugins[("NodeResourcesFit", "Filter", "Success")]
    assert len(filter_samples) == sampled
    # extension points are timed on every cycle, whatever the plugin sampling
    assert len(recorder.extension_points[("Filter", "Success", "default-scheduler")]) == 20
    assert recorder.attempt_count("scheduled") == 20
