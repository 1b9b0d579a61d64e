"""A plain per-node plugin runs through the adapter and decides like its vectorised twin."""

from __future__ import annotations

import sys
import types

import numpy as np

from scheduler_core.framework.interface import Code, CycleState, Status
from tests.builders import make_node, make_pod, table_of


class EvenCpuOnly:
    """Per-node: only nodes whose allocatable milli-CPU is a multiple of 2000; prefer big ones."""

    name = "EvenCpuOnly"
    per_node = True

    def __init__(self, args=None, handle=None, *, args_path=""):
        pass

    def filter(self, pod, node_info):
        if node_info.allocatable.get("cpu", 0) % 2000:
            return Status(Code.UNSCHEDULABLE, ("node(s) had an odd number of CPUs",))
        return None

    def score(self, pod, node_info):
        return min(100, node_info.allocatable.get("cpu", 0) // 100)


def _nodes():
    return [make_node(f"n{i}").alloc(cpu=str(cpu), memory="8Gi", pods=10).obj()
            for i, cpu in enumerate([1, 2, 3, 4, 6, 7])]


def test_adapter_filter_score_and_explain():
    from scheduler_core.framework.adapter import PerNodeAdapter

    table = table_of(_nodes(), {})
    plugin = PerNodeAdapter(EvenCpuOnly())
    pod = make_pod("p").obj()
    idx = np.asarray(table.order())
    mask = plugin.filter(CycleState(), pod, table, idx)
    assert table.names_of(idx[mask]) == ["n1", "n3", "n4"]
    rid, statuses = plugin.explain(CycleState(), pod, table, idx[~mask])
    assert [statuses[i].reasons for i in rid] == [("node(s) had an odd number of CPUs",)] * 3
    assert plugin.score(CycleState(), pod, table, idx).tolist() == [10, 20, 30, 40, 60, 70]


def test_per_node_plugin_in_a_profile(make_scheduler, monkeypatch):
    mod = types.ModuleType("schedperf_test_adapter")
    mod.EvenCpuOnly = EvenCpuOnly
    monkeypatch.setitem(sys.modules, "schedperf_test_adapter", mod)
    config = {"pluginRegistry": {"EvenCpuOnly": "schedperf_test_adapter:EvenCpuOnly"},
              "profiles": [{"plugins": {
                  "filter": {"enabled": [{"name": "EvenCpuOnly"}]},
                  "score": {"disabled": [{"name": "*"}],
                            "enabled": [{"name": "EvenCpuOnly", "weight": 1}]}}}]}
    cluster, sched = make_scheduler(_nodes(), config=config)
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    cluster.add_pod(make_pod("huge").req(cpu="7").obj())
    sched.run_until_idle()
    assert cluster.pods["default/p"].node_name == "n4"  # largest even node scores highest
    # the five smaller nodes can never hold 7 CPU (UnschedulableAndUnresolvable): only n5,
    # rejected by the plugin, is tried by preemption
    assert sched.failures["default/huge"] == (
        "0/6 nodes are available: 1 node(s) had an odd number of CPUs, 5 Insufficient cpu."
        " no new claims to deallocate, preemption: 0/6 nodes are available: 1 No preemption "
        "victims found for incoming pod, 5 Preemption is not helpful for scheduling.")
