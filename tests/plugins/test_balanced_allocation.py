"""NodeResourcesBalancedAllocation: golden vector V5 and hand-computed standard deviations."""

from __future__ import annotations

import pytest

from scheduler_core.errors import ConfigError
from scheduler_core.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from tests.builders import make_node, make_pod, run_score, table_of

V5_POD = make_pod().req(cpu="3000m", memory="5000")
EPH = "ephemeral-storage"


def balanced(resources: list | None = None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(
        None if resources is None else {"resources": resources}, args_path="args")


def test_v5a_differently_sized_nodes():
    nodes = [make_node("node1").alloc(cpu="4000m", memory="10000").obj(),
             make_node("node2").alloc(cpu="6000m", memory="10000").obj()]
    # node1: fractions 0.75 and 0.5 -> std 0.125 -> 87; node2: 0.5 and 0.5 -> 100
    assert run_score(balanced(), V5_POD.obj(), table_of(nodes)) == {"node1": 87, "node2": 100}


def test_v5b_existing_pods_use_real_requests():
    nodes = [make_node(n).alloc(cpu="10000m", memory="20000").obj() for n in ("node1", "node2")]
    pods = {"node1": [make_pod("a").req(cpu="3000m", memory="0").obj()],
            "node2": [make_pod("b").req(cpu="3000m", memory="5000").obj()]}
    # node1: 0.6 and 0.25 -> 82; node2: 0.6 and 0.5 -> 95
    assert run_score(balanced(), V5_POD.obj(), table_of(nodes, pods)) == \
        {"node1": 82, "node2": 95}


@pytest.mark.parametrize("pod", [make_pod(), make_pod().req({"example.com/gpu": "1"})],
                         ids=["no-requests", "only-unconfigured-resources"])
def test_v5d_best_effort_pod_skips(pod):
    table = table_of([make_node("n").alloc(cpu="1", memory="1Gi").obj()])
    assert run_score(balanced(), pod.obj(), table) == "skip"


THREE = [{"name": "cpu"}, {"name": "memory"}, {"name": EPH}]


def test_three_resources_and_mixed_presence():
    pod = make_pod().req(cpu="1000m", memory="5000", ephemeral_storage="2000")
    nodes = [make_node("three").alloc(cpu="4000m", memory="10000", ephemeral_storage="10000")
             .obj(),
             make_node("two").alloc(cpu="4000m", memory="10000").obj(),
             make_node("capped").alloc(cpu="500m", memory="10000").obj()]
    got = run_score(balanced(THREE), pod.obj(), table_of(nodes))
    # three: fractions .25 .5 .2, mean .31667, variance .0172222, std .131233 -> 86
    # two:   ephemeral allocatable 0 is skipped: .25 and .5 -> std .125 -> 87
    # capped: cpu fraction 2 is capped at 1; 1 and .5 -> std .25 -> 75
    assert got == {"three": 86, "two": 87, "capped": 75}


def test_single_fraction_scores_100():
    table = table_of([make_node("n").alloc(cpu="4000m", memory="10000").obj()])
    assert run_score(balanced([{"name": "cpu"}]), V5_POD.obj(), table) == {"n": 100}


def test_unrequested_extended_resource_is_bypassed():
    gpu = "example.com/gpu"
    nodes = [make_node("n").alloc({"cpu": "4000m", "memory": "10000", gpu: "8"}).obj()]
    res = [{"name": "cpu"}, {"name": "memory"}, {"name": gpu}]
    assert run_score(balanced(res), V5_POD.obj(), table_of(nodes)) == {"n": 87}
    # requested: fractions .75 .5 .5 -> mean .58333, std .117851 -> 88
    pod = make_pod().req({"cpu": "3000m", "memory": "5000", gpu: "4"})
    assert run_score(balanced(res), pod.obj(), table_of(nodes)) == {"n": 88}


def test_no_normalize():
    assert not hasattr(balanced(), "normalize")


@pytest.mark.parametrize(("args", "field", "problem"), [
    ({"resources": [{"name": "cpu", "weight": 2}]}, "args.resources[0].weight", "must be 1"),
    ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "args.resources[1].name", "Duplicate"),
    ({"resources": [{"weight": 1}]}, "args.resources[0].name", "expected a string"),
    ({"resource": []}, "args.resource", "unknown field"),
], ids=["weight-not-1", "duplicate", "missing-name", "unknown-field"])
def test_bad_args(args, field, problem):
    with pytest.raises(ConfigError) as err:
        NodeResourcesBalancedAllocation(args, args_path="args")
    assert err.value.field == field
    assert problem in err.value.problem


def test_weight_zero_defaults_to_one():
    p = NodeResourcesBalancedAllocation({"resources": [{"name": "cpu", "weight": 0}]})
    assert [(r.name, r.weight) for r in p.resources] == [("cpu", 1)]


class _V137:
    """A handle with the GenericWorkload gate on (a v1.37-only gate: v1.37 scoring)."""

    generic_workload = True


def test_v137_scores_the_improvement_of_the_balance():
    nodes = [make_node("node1").alloc(cpu="10000m", memory="20000").obj(),
             make_node("node2").alloc(cpu="10000m", memory="20000").obj()]
    pods = {"node1": [make_pod("a").req(cpu="3000m", memory="0").obj()],
            "node2": [make_pod("b").req(cpu="3000m", memory="5000").obj()]}
    v137 = NodeResourcesBalancedAllocation(None, _V137())
    # node1: without the pod .3 and 0 -> std .15 -> 85; with it .6 and .25 -> 82:
    #   50 + (50 + 82 - 85) // 2 = 73 (the pod makes the balance worse)
    # node2: without .3 and .25 -> 97; with .6 and .5 -> 95: 50 + (50 + 95 - 97) // 2 = 74
    assert run_score(v137, V5_POD.obj(), table_of(nodes, pods)) == {"node1": 73, "node2": 74}
    empty = table_of([make_node("n").alloc(cpu="4000m", memory="10000").obj()])
    # from 0 and 0 (100) to .75 and .5 (87): 50 + 37 // 2 = 68
    assert run_score(v137, V5_POD.obj(), empty) == {"n": 68}
