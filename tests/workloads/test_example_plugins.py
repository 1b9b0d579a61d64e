"""The PodCap example plugin: the per-node version (through PerNodeAdapter) and the vectorised
version decide the same, on a hand-built node table and on the uncommon catalog's workloads."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scheduler_core.errors import ConfigError
from scheduler_core.framework.adapter import PerNodeAdapter
from scheduler_core.framework.interface import Code, CycleState
from tests.builders import make_node, make_pod, table_of
from workloads.config import load_configs
from workloads.example_plugins import PodCapPerNode, PodCapVectorised
from workloads.example_plugins.pod_cap import CAP_LABEL, ERR_REASON_POD_CAP, NAME, TIER_LABEL
from workloads.runner import run_workload

CATALOG = Path(__file__).resolve().parents[2] / "workloads" / "configs" / "uncommon"

# (node labels, pods on the node, allocatable pods) -> (passes the filter, score)
CASES = {
    "cap-gold-headroom": ({CAP_LABEL: "5", TIER_LABEL: "gold"}, 2, 110, True, 60 + 40 * 3 // 5),
    "cap-reached": ({CAP_LABEL: "5"}, 5, 110, False, 0),
    "over-cap": ({CAP_LABEL: "20", TIER_LABEL: "gold"}, 25, 110, False, 60),
    "uncapped-silver": ({TIER_LABEL: "silver"}, 10, 110, True, 30 + 40 * 100 // 110),
    "unparsable-cap": ({CAP_LABEL: "abc", TIER_LABEL: "bronze"}, 3, 10, True, 40 * 7 // 10),
    "trailing-letter-cap": ({CAP_LABEL: "7x"}, 1, 10, True, 40 * 9 // 10),
    "int64-overflow-cap": ({CAP_LABEL: "99999999999999999999"}, 1, 10, True, 40 * 9 // 10),
    "zero-cap": ({CAP_LABEL: "0"}, 0, 110, False, 0),
    "zero-cap-silver": ({CAP_LABEL: "00", TIER_LABEL: "silver"}, 0, 110, False, 30),
    "cap-one-free": ({CAP_LABEL: "007"}, 6, 110, True, 40 * 1 // 7),
    "no-pod-slots": ({}, 0, 0, True, 0),
    "unknown-tier": ({TIER_LABEL: "platinum"}, 0, 4, True, 40),
}

IMPLEMENTATIONS = {
    "per-node": lambda: PerNodeAdapter(PodCapPerNode()),
    "vectorised": lambda: PodCapVectorised(),
}


def _table():
    nodes, pods = [], {}
    for name, (labels, count, slots, _, _) in CASES.items():
        b = make_node(name).alloc(cpu="8", memory="16Gi", pods=slots)
        for k, v in labels.items():
            b = b.label(k, v)
        nodes.append(b.obj())
        pods[name] = [make_pod(f"{name}-{i}").req(cpu="10m").obj() for i in range(count)]
    return table_of(nodes, pods)


@pytest.fixture(scope="module")
def table():
    return _table()


def _idx(table):
    return np.asarray(table.order())


@pytest.mark.parametrize("impl", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("case", list(CASES))
def test_filter_and_score_per_node(table, impl, case):
    plugin = IMPLEMENTATIONS[impl]()
    slot = np.asarray([table.slot_of[case]])
    pod = make_pod("incoming").req(cpu="100m").obj()
    mask = plugin.filter(CycleState(), pod, table, slot)
    passes = True if mask is None else bool(mask[0])
    score = int(plugin.score(CycleState(), pod, table, slot)[0])
    assert (passes, score) == CASES[case][3:]


def test_both_versions_agree_over_the_whole_table(table):
    pod = make_pod("incoming").obj()
    idx = _idx(table)
    per_node, vectorised = (IMPLEMENTATIONS[k]() for k in ("per-node", "vectorised"))
    masks = [p.filter(CycleState(), pod, table, idx) for p in (per_node, vectorised)]
    assert masks[0].tolist() == masks[1].tolist()
    scores = [p.score(CycleState(), pod, table, idx).tolist() for p in (per_node, vectorised)]
    assert scores[0] == scores[1]
    # a slice over every slot gives the same answers as the array of slots
    whole = slice(0, table.high)
    assert vectorised.filter(CycleState(), pod, table, whole).tolist() == masks[1].tolist()
    rejected = idx[~masks[0]]
    for plugin in (per_node, vectorised):
        rid, statuses = plugin.explain(CycleState(), pod, table, rejected)
        assert {(statuses[i].code, statuses[i].reasons) for i in rid} == {
            (Code.UNSCHEDULABLE, (ERR_REASON_POD_CAP,))}


def test_vectorised_filter_is_a_no_op_without_cap_labels():
    t = table_of([make_node("plain").alloc(cpu="1", pods=1).obj()], {})
    assert PodCapVectorised().filter(CycleState(), make_pod("p").obj(), t, _idx(t)) is None


@pytest.mark.parametrize("cls", [PodCapPerNode, PodCapVectorised], ids=["per-node", "vectorised"])
def test_plugin_takes_no_args(cls):
    with pytest.raises(ConfigError, match=f"plugin {NAME} takes no arguments"):
        cls({"cap": 3}, None, args_path="profiles[0].pluginConfig[0].args")


def _run(test_case: str, workload: str):
    tc = next(t for t in load_configs(CATALOG) if t.name == test_case)
    w = next(w for w in tc.workloads if w.name == workload)
    result = run_workload(tc, w)
    assert result.status == "ok", result.reason
    return {(p.namespace, p.pod): p.node for p in result.placements}


def test_catalog_workloads_place_pods_identically():
    per_node = _run("OutOfTreePluginPerNode", "60Nodes")
    vectorised = _run("OutOfTreePluginVectorised", "60Nodes")
    assert per_node == vectorised
    assert len(per_node) == 300 and all(per_node.values())
    # node-pod-cap.yaml: index % 3 == 0 -> cap 5, == 1 -> cap 20 (node names end in the index)
    per_node_count = Counter(per_node.values())
    for node, count in per_node_count.items():
        index = int(node.rsplit("-", 1)[1])
        cap = {0: 5, 1: 20}.get(index % 3)
        assert cap is None or count <= cap, (node, count)
    # the tier bonus pulls pods to gold nodes (index % 5 == 0, a fifth of the nodes)
    gold = sum(c for n, c in per_node_count.items() if int(n.rsplit("-", 1)[1]) % 5 == 0)
    assert gold > len(per_node) // 2
