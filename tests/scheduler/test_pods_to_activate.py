"""PodsToActivate: pods a plugin puts in the cycle state are moved to activeQ after a
successful scheduling cycle and again after binding (kube's framework.PodsToActivateKey)."""

from __future__ import annotations

import sys
import types

from scheduler_core.framework.interface import (
    PODS_TO_ACTIVATE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Status,
)
from tests.builders import make_node, make_pod


class WaitForLeader:
    """Rejects followers (label role=follower) until a leader is bound; a leader, once
    reserved, asks the queue to activate every pending follower (a co-scheduling pattern)."""

    name = "WaitForLeader"

    def __init__(self, args=None, handle=None, *, args_path=""):
        self.handle = handle
        self.leader_bound = False

    def pre_filter(self, state: CycleState, pod, table):
        if pod.labels.get("role") == "follower" and not self.leader_bound:
            return None, Status.unschedulable("waiting for the leader", plugin=self.name)
        return None, None

    def reserve(self, state: CycleState, pod, node_name):
        if pod.labels.get("role") == "leader":
            self.leader_bound = True
            pods = state.get(PODS_TO_ACTIVATE)
            for p in self.handle.cluster.pods.values():
                if p.labels.get("role") == "follower" and not p.node_name:
                    pods[p.key] = p
        return None

    def unreserve(self, state: CycleState, pod, node_name):
        return None

    def events_to_register(self):
        # nothing it reacts to: without activation a follower waits for the 5-minute flush
        return [ClusterEventWithHint(ClusterEvent("Namespace", ActionType.ADD))]


def test_a_plugin_activates_pods_after_a_successful_cycle(make_scheduler, monkeypatch):
    mod = types.ModuleType("schedperf_test_activate")
    mod.WaitForLeader = WaitForLeader
    monkeypatch.setitem(sys.modules, "schedperf_test_activate", mod)
    config = {"pluginRegistry": {"WaitForLeader": "schedperf_test_activate:WaitForLeader"},
              "profiles": [{"plugins": {"preFilter": {"enabled": [{"name": "WaitForLeader"}]},
                                        "reserve": {"enabled": [{"name": "WaitForLeader"}]}}}]}
    nodes = [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=110).obj() for i in range(2)]
    cluster, sched = make_scheduler(nodes, config=config)
    followers = [make_pod(f"f{i}").label("role", "follower").req(cpu="100m").obj()
                 for i in range(3)]
    for f in followers:
        cluster.add_pod(f)
    sched.run_until_idle()
    assert all(sched.queue.where(f.uid) == "unschedulable" for f in followers)
    cluster.add_pod(make_pod("leader").label("role", "leader").req(cpu="100m").obj())
    sched.run_until_idle()
    assert cluster.pods["default/leader"].node_name
    assert all(f.node_name for f in followers)
    assert sched.clock.now() < 300  # not the 5-minute leftover flush
