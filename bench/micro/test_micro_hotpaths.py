"""Hot-path micro-benchmarks (pytest-benchmark): the same cases as the asv ``time_`` suite,
built by :mod:`bench.hotpaths`. Groups: one per plugin and node count (its Filter and Score
side by side), one per node count for the table updates, one per pool size for the requeue.
Each benchmark also checks that the call did the work it is meant to do.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import hotpaths as hp

NODES = hp.node_counts()
# node count outermost: hotpaths keeps one cluster at a time, so each is built once
PLUGIN_CASES = [(nodes, op, plugin)
                for nodes in NODES
                for op, plugins in (("filter", hp.FILTER_PLUGINS), ("score", hp.SCORE_PLUGINS))
                for plugin in plugins]


@pytest.mark.parametrize(("nodes", "op", "plugin"), PLUGIN_CASES,
                         ids=[f"{plugin}-{op}-{nodes}" for nodes, op, plugin in PLUGIN_CASES])
def test_plugin(benchmark, nodes: int, op: str, plugin: str) -> None:
    case = hp.filter_case(plugin, nodes) if op == "filter" else hp.score_case(plugin, nodes)
    benchmark.group = f"{plugin} {nodes} nodes"
    benchmark.extra_info.update(plugin=plugin, op=op, nodes=nodes)
    out = benchmark(case.run)
    if op == "filter":
        # None means every node passes; otherwise one bool per node
        assert out is None or (out.dtype == np.bool_ and len(out) == nodes)
    else:
        assert len(out) == nodes and out.min() >= 0 and out.max() <= 100


@pytest.mark.parametrize("nodes", NODES, ids=[f"{n}" for n in NODES])
@pytest.mark.parametrize("op", ["add_pod", "remove_pod", "add_node"])
def test_snapshot_update(benchmark, min_rounds: int, nodes: int, op: str) -> None:
    benchmark.group = f"snapshot {nodes} nodes"
    benchmark.extra_info.update(op=op, nodes=nodes)
    if op == "add_node":
        case = hp.node_add_case(nodes)
        run, setup = case.add, case.reset_absent
    else:
        case = hp.pod_update_case(nodes)
        run, setup = ((case.add, case.reset_absent) if op == "add_pod"
                      else (case.remove, case.reset_present))
    benchmark.pedantic(run, setup=setup, rounds=max(min_rounds, 200), warmup_rounds=5,
                       iterations=1)
    if op == "add_node":
        assert case.node.name in case.table.slot_of
        case.reset_absent()
    else:
        assert case.present() == (op == "add_pod")
        case.reset_absent()


@pytest.mark.parametrize("pending", hp.QUEUE_SIZES, ids=[f"{n}" for n in hp.QUEUE_SIZES])
def test_requeue_on_node_add(benchmark, min_rounds: int, pending: int) -> None:
    case = hp.requeue_case(pending)
    benchmark.group = f"requeue {pending} pods"
    benchmark.extra_info.update(pending_pods=pending)
    moved = benchmark.pedantic(case.run, setup=case.reset, rounds=min_rounds, warmup_rounds=1,
                               iterations=1)
    assert moved == pending * 4 // 5  # the NodeResourcesFit-rejected pods; the others stay
