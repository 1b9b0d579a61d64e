"""NodeResourcesFit: filter reasons, effective requests, the three scoring strategies (golden
vectors V1/V2 and hand-computed values), args validation and queueing hints."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import ActionType, Code, CycleState, QueueingHint
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from tests.builders import make_node, make_pod, run_filter, run_score, table_of

GPU = "example.com/gpu"


def fit(**args: object) -> NodeResourcesFit:
    return NodeResourcesFit(args or None, args_path="args")


def strategy(kind: str, resources: list | None = None, shape: list | None = None) -> dict:
    s: dict = {"type": kind}
    if resources is not None:
        s["resources"] = resources
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return s


# --------------------------------------------------------------------------- filter
def _node(name: str = "n", **alloc: object):
    alloc.setdefault("pods", 110)
    return make_node(name).alloc(**alloc).obj()


FILTER_CASES = [
    # (id, node allocatable, pods already on the node, incoming pod, expected reasons); the
    # status is UnschedulableAndUnresolvable when a failing request exceeds the node's whole
    # allocatable (UNRESOLVABLE below), else Unschedulable
    ("fits", dict(cpu="4", memory="4Gi"), [], make_pod().req(cpu="1", memory="1Gi"), None),
    ("exactly-fits", dict(cpu="1", memory="1Gi"), [], make_pod().req(cpu="1", memory="1Gi"),
     None),
    ("insufficient-cpu", dict(cpu="1", memory="4Gi"), [], make_pod().req(cpu="1500m"),
     ["Insufficient cpu"]),
    ("insufficient-cpu-and-memory", dict(cpu="1", memory="1Gi"),
     [make_pod("old").req(cpu="500m", memory="512Mi")],
     make_pod().req(cpu="600m", memory="600Mi"), ["Insufficient cpu", "Insufficient memory"]),
    ("insufficient-ephemeral", dict(cpu="1", memory="1Gi", ephemeral_storage="1Gi"), [],
     make_pod().req(ephemeral_storage="2Gi"), ["Insufficient ephemeral-storage"]),
    ("too-many-pods-even-without-requests", dict(cpu="4", memory="4Gi", pods=1),
     [make_pod("old")], make_pod(), ["Too many pods"]),
    ("too-many-pods-and-cpu", dict(cpu="1", memory="4Gi", pods=1),
     [make_pod("old").req(cpu="1")], make_pod().req(cpu="1"),
     ["Too many pods", "Insufficient cpu"]),
    ("cpu-used-up-and-memory-too-big", dict(cpu="1", memory="1Gi"),
     [make_pod("old").req(cpu="1")], make_pod().req(cpu="1", memory="2Gi"),
     ["Insufficient cpu", "Insufficient memory"]),
    ("zero-pods-allocatable", dict(cpu="4", pods=0), [], make_pod(), ["Too many pods"]),
    ("extended-insufficient", {"cpu": "4", GPU: "1"}, [], make_pod().req({GPU: "2"}),
     [f"Insufficient {GPU}"]),
    ("extended-missing-on-node", dict(cpu="4"), [], make_pod().req({GPU: "1"}),
     [f"Insufficient {GPU}"]),
    ("extended-fits", {"cpu": "4", GPU: "2"}, [make_pod("old").req({GPU: "1"})],
     make_pod().req({GPU: "1"}), None),
    ("memory-only-requests-skip-cpu", dict(cpu="0", memory="1Gi"), [],
     make_pod().req(memory="1Gi"), None),
]
UNRESOLVABLE = {"insufficient-cpu", "insufficient-ephemeral", "extended-insufficient",
                "extended-missing-on-node", "cpu-used-up-and-memory-too-big"}


@pytest.mark.parametrize(("alloc", "existing", "pod", "reasons"),
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter_reasons(request, alloc, existing, pod, reasons):
    table = table_of([_node(**alloc)], {"n": [p.obj() for p in existing]})
    got = run_filter(fit(), pod.obj(), table)["n"]
    if reasons is None:
        assert got is None
    else:
        case = request.node.callspec.id
        assert got.code == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if case in UNRESOLVABLE
                            else Code.UNSCHEDULABLE)
        assert list(got.reasons) == reasons
        assert got.plugin == "NodeResourcesFit"


def test_effective_request_init_containers_example_from_fit_go():
    # init (2 CPU, 1G), (2 CPU, 3G); containers (2, 1G), (1, 1G)  ->  CPU 3, memory 3G
    pod = (make_pod().init_req(cpu="2", memory="1G").init_req(cpu="2", memory="3G")
           .req(cpu="2", memory="1G").req(cpu="1", memory="1G").obj())
    assert pod.spec.requests == {"cpu": 3000, "memory": 3 * 10**9}
    table = table_of([_node("exact", cpu="3", memory="3G"),
                      _node("cpu-short", cpu="2999m", memory="3G"),
                      _node("mem-short", cpu="3", memory=str(3 * 10**9 - 1))])
    got = run_filter(fit(), pod, table)
    assert got["exact"] is None
    assert got["cpu-short"].reasons == ("Insufficient cpu",)
    assert got["mem-short"].reasons == ("Insufficient memory",)


def test_effective_request_sidecars_and_overhead():
    # sidecar 1 cpu keeps running: containers 1 + sidecar 1 = 2; the init container runs
    # beside the sidecar: 2 + 1 = 3 > 2; overhead adds 500m  ->  3500m
    pod = (make_pod().init_req(cpu="1", sidecar=True).init_req(cpu="2").req(cpu="1")
           .overhead(cpu="500m").obj())
    assert pod.spec.requests["cpu"] == 3500
    table = table_of([_node("fits", cpu="3500m"), _node("short", cpu="3499m")])
    got = run_filter(fit(), pod, table)
    assert got["fits"] is None
    assert got["short"].reasons == ("Insufficient cpu",)


@pytest.mark.parametrize(("args", "passes"), [
    ({}, False),
    ({"ignoredResources": [GPU]}, True),
    ({"ignoredResourceGroups": ["example.com"]}, True),
    ({"ignoredResourceGroups": ["other.io"]}, False),
], ids=["not-ignored", "ignored-resource", "ignored-group", "other-group"])
def test_ignored_extended_resources(args, passes):
    table = table_of([_node(cpu="4")])
    got = run_filter(fit(**args), make_pod().req({GPU: "1"}).obj(), table)["n"]
    assert (got is None) == passes


def test_ignored_resources_only_apply_to_extended_names():
    # hugepages-2Mi is a scalar resource but not an extended one: never ignored
    table = table_of([_node(cpu="4")])
    got = run_filter(fit(ignoredResources=["hugepages-2Mi"]),
                     make_pod().req({"hugepages-2Mi": "2Mi"}).obj(), table)["n"]
    assert got.reasons == ("Insufficient hugepages-2Mi",)


def test_explain_groups_nodes_by_failing_checks():
    table = table_of([_node("ok", cpu="4", memory="4Gi"), _node("cpu", cpu="1", memory="4Gi"),
                      _node("both", cpu="1", memory="1Gi"), _node("cpu2", cpu="1", memory="8Gi")])
    got = run_filter(fit(), make_pod().req(cpu="2", memory="2Gi").obj(), table)
    assert got["ok"] is None
    assert got["cpu"].reasons == got["cpu2"].reasons == ("Insufficient cpu",)
    assert got["both"].reasons == ("Insufficient cpu", "Insufficient memory")


def test_filter_falls_back_without_pre_filter_state():
    table = table_of([_node(cpu="1")])
    got = run_filter(fit(), make_pod().req(cpu="2").obj(), table, pre_filter=False)
    assert got["n"].reasons == ("Insufficient cpu",)


def test_homogeneous_fast_path_follows_node_updates():
    table = table_of([_node("a", cpu="2"), _node("b", cpu="2")])
    pod = make_pod().req(cpu="3").obj()
    assert all(s is not None for s in run_filter(fit(), pod, table).values())
    table.update_node(_node("b", cpu="4"))
    got = run_filter(fit(), pod, table)
    assert got["a"].reasons == ("Insufficient cpu",) and got["b"] is None
    table.remove_node("a")
    assert run_filter(fit(), pod, table) == {"b": None}


# --------------------------------------------------------------------------- score
def _scores(plugin, pod, nodes, pods=None):
    return run_score(plugin, pod.obj(), table_of(nodes, pods))


V_POD = make_pod().req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")


def test_v1_least_allocated_differently_sized_nodes():
    got = _scores(fit(), V_POD, [make_node("node1").alloc(cpu="4000m", memory="10000").obj(),
                                 make_node("node2").alloc(cpu="6000m", memory="10000").obj()])
    assert got == {"node1": 37, "node2": 50}


def test_v2_least_allocated_with_existing_pods():
    nodes = [make_node(n).alloc(cpu="10000m", memory="20000").obj() for n in ("node1", "node2")]
    pods = {"node1": [make_pod("a").req(cpu="3000m", memory="0").obj()],
            "node2": [make_pod("b").req(cpu="3000m", memory="5000").obj()]}
    assert _scores(fit(), V_POD, nodes, pods) == {"node1": 57, "node2": 45}


def test_least_allocated_uses_non_zero_defaults():
    # no requests: 100m cpu and 200Mi memory count for scoring.
    # cpu (1000-100)*100//1000 = 90; memory (1000-200)*100//1000 = 80; (90+80)//2 = 85
    node = make_node("n").alloc(cpu="1000m", memory="1000Mi").obj()
    assert _scores(fit(), make_pod(), [node]) == {"n": 85}


def test_least_allocated_overcommitted_node_scores_zero_for_that_resource():
    # cpu 3000 > 2000 -> 0; memory (10000-5000)*100//10000 = 50; (0+50)//2 = 25
    node = make_node("n").alloc(cpu="2000m", memory="10000").obj()
    assert _scores(fit(), V_POD, [node]) == {"n": 25}


@pytest.mark.parametrize(("resources", "expected"), [
    # node 4000m/10000, pod 3000m/5000: cpu 75, memory 50
    (None, (75 + 50) // 2),
    ([{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}], (2 * 75 + 50) // 3),
    ([{"name": "cpu", "weight": 0}, {"name": "memory"}], (75 + 50) // 2),  # 0 -> 1
], ids=["default-weights", "cpu-weight-2", "zero-weight-defaults-to-1"])
def test_most_allocated(resources, expected):
    plugin = fit(scoringStrategy=strategy("MostAllocated", resources))
    node = make_node("n").alloc(cpu="4000m", memory="10000").obj()
    assert _scores(plugin, V_POD, [node]) == {"n": expected}


def test_most_allocated_caps_requested_at_capacity():
    # cpu min(3000, 2000) -> 100; memory 5000*100//10000 = 50 -> 75
    plugin = fit(scoringStrategy=strategy("MostAllocated"))
    assert _scores(plugin, V_POD, [make_node("n").alloc(cpu="2000m", memory="10000").obj()]) \
        == {"n": 75}


def test_extended_resource_scored_only_when_requested_and_present():
    plugin = fit(scoringStrategy=strategy(
        "MostAllocated", [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 3}]))
    nodes = [make_node("gpu").alloc({"cpu": "4000m", GPU: "4"}).obj(),
             make_node("plain").alloc(cpu="4000m").obj()]
    # gpu node: cpu 3000*100//4000 = 75, gpu 1*100//4 = 25 -> (75 + 3*25) // 4 = 37
    # plain node: gpu allocatable 0 -> skipped -> 75
    assert _scores(plugin, make_pod().req({"cpu": "3000m", GPU: "1"}), nodes) == \
        {"gpu": 37, "plain": 75}
    # a pod without the gpu request bypasses the gpu resource on every node
    assert _scores(plugin, make_pod().req(cpu="3000m"), nodes) == {"gpu": 75, "plain": 75}


BIN_PACKING = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
SPREADING = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]


@pytest.mark.parametrize(("shape", "node", "expected"), [
    # cpu util 75 -> 75, memory util 50 -> 50; round(125 / 2 = 62.5) = 63 (half away from 0)
    (BIN_PACKING, ("4000m", "10000"), 63),
    # decreasing shape: 100 - 75 = 25 and 100 - 50 = 50 -> round(37.5) = 38
    (SPREADING, ("4000m", "10000"), 38),
    # memory util 5000*100 // 10**9 = 0 scores 0 and is left out: round(75 / 1) = 75
    (BIN_PACKING, ("4000m", str(10**9)), 75),
    # requested > capacity scores f(100): cpu 100, memory 50 -> 75
    (BIN_PACKING, ("2000m", "10000"), 75),
], ids=["bin-packing-rounds-half-up", "spreading", "zero-scores-not-counted", "overcommitted"])
def test_requested_to_capacity_ratio(shape, node, expected):
    plugin = fit(scoringStrategy=strategy("RequestedToCapacityRatio", shape=shape))
    n = make_node("n").alloc(cpu=node[0], memory=node[1]).obj()
    assert _scores(plugin, V_POD, [n]) == {"n": expected}


def test_requested_to_capacity_ratio_interpolation_truncates_toward_zero():
    # shape (0, 100) -> (30, 0): f(10) = 100 + (-100 * 10) / 30 = 100 - 33 (Go truncation) = 67
    # (floor division would give 66). cpu only, util 1000*100//10000 = 10.
    shape = [{"utilization": 0, "score": 10}, {"utilization": 30, "score": 0}]
    plugin = fit(scoringStrategy=strategy("RequestedToCapacityRatio",
                                          [{"name": "cpu", "weight": 1}], shape))
    n = make_node("n").alloc(cpu="10000m", memory="10000").obj()
    assert _scores(plugin, make_pod().req(cpu="1000m"), [n]) == {"n": 67}


def test_requested_to_capacity_ratio_weights_and_single_point_shape():
    # one point (50, 5): every utilisation scores 50 -> (50*1 + 50*3) / 4 = 50
    resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}]
    plugin = fit(scoringStrategy=strategy("RequestedToCapacityRatio", resources,
                                          [{"utilization": 50, "score": 5}]))
    n = make_node("n").alloc(cpu="4000m", memory="10000").obj()
    assert _scores(plugin, V_POD, [n]) == {"n": 50}


def test_score_follows_node_updates_on_homogeneous_cluster():
    nodes = [make_node(n).alloc(cpu="4000m", memory="10000").obj() for n in ("a", "b")]
    table = table_of(nodes)
    assert run_score(fit(), V_POD.obj(), table) == {"a": 37, "b": 37}
    table.update_node(make_node("b").alloc(cpu="6000m", memory="10000").obj())
    assert run_score(fit(), V_POD.obj(), table) == {"a": 37, "b": 50}


def test_score_without_pre_score_state_and_no_normalize():
    plugin = fit()
    assert not hasattr(plugin, "normalize")
    table = table_of([make_node("node1").alloc(cpu="4000m", memory="10000").obj()])
    scores = plugin.score(CycleState(), V_POD.obj(), table, slice(0, table.high))
    assert scores.tolist() == [37]


# --------------------------------------------------------------------------- args
BAD_ARGS = [
    ("unknown-field", {"foo": 1}, "args.foo", "unknown field"),
    ("bad-type", {"scoringStrategy": {"type": "Balanced"}}, "args.scoringStrategy.type",
     "Unsupported value"),
    ("missing-type", {"scoringStrategy": {"resources": []}}, "args.scoringStrategy.type",
     "Unsupported value"),
    ("weight-too-high", {"scoringStrategy": strategy("LeastAllocated",
                                                     [{"name": "cpu", "weight": 101}])},
     "args.scoringStrategy.resources[0].weight", "resource weight of cpu not in valid range"),
    ("weight-negative", {"scoringStrategy": strategy("MostAllocated",
                                                     [{"name": "memory", "weight": -1}])},
     "args.scoringStrategy.resources[0].weight", "not in valid range (0, 100]"),
    ("rtcr-without-shape", {"scoringStrategy": strategy("RequestedToCapacityRatio")},
     "args.scoringStrategy.requestedToCapacityRatio", "required"),
    ("empty-shape", {"scoringStrategy": strategy("RequestedToCapacityRatio", shape=[])},
     "args.scoringStrategy.requestedToCapacityRatio.shape", "at least one point"),
    ("shape-not-increasing", {"scoringStrategy": strategy(
        "RequestedToCapacityRatio", shape=[{"utilization": 50, "score": 1},
                                           {"utilization": 50, "score": 2}])},
     "args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
     "sorted in increasing order"),
    ("shape-utilization-range", {"scoringStrategy": strategy(
        "RequestedToCapacityRatio", shape=[{"utilization": 101, "score": 1}])},
     "args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
     "not in valid range [0, 100]"),
    ("shape-score-range", {"scoringStrategy": strategy(
        "RequestedToCapacityRatio", shape=[{"utilization": 10, "score": 11}])},
     "args.scoringStrategy.requestedToCapacityRatio.shape[0].score",
     "not in valid range [0, 10]"),
    ("group-with-slash", {"ignoredResourceGroups": ["example.com/gpu"]},
     "args.ignoredResourceGroups[0]", "can't contain '/'"),
    ("bad-ignored-resource", {"ignoredResources": ["-bad-"]}, "args.ignoredResources[0]",
     "name part"),
    ("weight-not-int", {"scoringStrategy": strategy("LeastAllocated",
                                                    [{"name": "cpu", "weight": "2"}])},
     "args.scoringStrategy.resources[0].weight", "expected an integer"),
]


@pytest.mark.parametrize(("args", "field", "problem"), [c[1:] for c in BAD_ARGS],
                         ids=[c[0] for c in BAD_ARGS])
def test_bad_args(args, field, problem):
    with pytest.raises(ConfigError) as err:
        NodeResourcesFit(args, args_path="args")
    assert err.value.field == field
    assert problem in err.value.problem


def test_default_args():
    a = NodeResourcesFit().args
    assert a.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in a.resources] == [("cpu", 1), ("memory", 1)]
    b = NodeResourcesFit({"kind": "NodeResourcesFitArgs",
                          "scoringStrategy": {"type": "MostAllocated", "resources": []}}).args
    assert b.strategy == "MostAllocated"
    assert [(r.name, r.weight) for r in b.resources] == [("cpu", 1), ("memory", 1)]


# --------------------------------------------------------------------------- hints
def _hint(event_resource: str):
    for e in NodeResourcesFit().events_to_register():
        if e.event.resource == event_resource:
            return e.hint
    raise AssertionError(event_resource)


@pytest.mark.parametrize(("deleted", "expected"), [
    (make_pod("x").node("n1"), QueueingHint.QUEUE),
    (make_pod("x"), QueueingHint.QUEUE_SKIP),
    (make_pod("x").nominated("n1"), QueueingHint.QUEUE),
], ids=["assigned-pod", "unassigned-pod", "nominated-pod"])
def test_hint_pod_deleted(deleted, expected):
    assert _hint("Pod")(make_pod().req(cpu="1").obj(), deleted.obj(), None) == expected


@pytest.mark.parametrize(("old", "new", "expected"), [
    (make_pod("x").req(cpu="2").node("n1"), make_pod("x").req(cpu="1").node("n1"),
     QueueingHint.QUEUE),
    (make_pod("x").req(cpu="2", memory="1Gi").node("n1"),
     make_pod("x").req(cpu="2", memory="512Mi").node("n1"), QueueingHint.QUEUE_SKIP),
    (make_pod("x").req(cpu="2"), make_pod("x").req(cpu="1"), QueueingHint.QUEUE_SKIP),
], ids=["requested-resource-down", "unrequested-resource-down", "unassigned"])
def test_hint_pod_scaled_down(old, new, expected):
    """In-place resize: queue when a resource the waiting pod requests went down."""
    event = next(e for e in NodeResourcesFit().events_to_register()
                 if e.event.resource == "Pod")
    assert event.event.action & ActionType.UPDATE_POD_SCALE_DOWN
    waiting = make_pod().req(cpu="1").obj()
    assert event.hint(waiting, old.obj(), new.obj()) == expected


def test_hint_own_scale_down_queues_the_waiting_pod():
    """The pending pod's own in-place resize: its own event (UnscheduledPod) is registered."""
    event = next(e for e in NodeResourcesFit().events_to_register()
                 if e.event.resource == "UnscheduledPod")
    assert event.event.action == ActionType.UPDATE_POD_SCALE_DOWN
    old = make_pod("w").uid("w").req(cpu="2").obj()
    new = make_pod("w").uid("w").req(cpu="1").obj()
    assert event.hint(new, old, new) == QueueingHint.QUEUE
    other = make_pod("o").uid("o").req(cpu="1").obj()
    assert event.hint(other, old, new) == QueueingHint.QUEUE_SKIP


SMALL = make_node("n").alloc(cpu="1", memory="1Gi", pods=10)
BIG = make_node("n").alloc(cpu="4", memory="1Gi", pods=10)


@pytest.mark.parametrize(("old", "new", "expected"), [
    (None, BIG, QueueingHint.QUEUE),
    (None, SMALL, QueueingHint.QUEUE_SKIP),
    (SMALL, BIG, QueueingHint.QUEUE),
    (BIG, make_node("n").alloc(cpu="4", memory="2Gi", pods=10), QueueingHint.QUEUE_SKIP),
    (BIG, make_node("n").alloc(cpu="4", memory="1Gi", pods=20), QueueingHint.QUEUE),
    (BIG, make_node("n").alloc(cpu="4", memory="1Gi", pods=0), QueueingHint.QUEUE_SKIP),
], ids=["added-fits", "added-too-small", "cpu-increased", "unrequested-increase",
        "pods-increased", "no-pods-allowed"])
def test_hint_node_change(old, new, expected):
    pod = make_pod().req(cpu="2").obj()
    assert _hint("Node")(pod, old and old.obj(), new.obj()) == expected


# --------------------------------------------------------------------------- margins
MARGIN_PODS = [make_pod("m0").req(cpu="300m", memory="1Gi").obj(),
               make_pod("m1").req(cpu="1", **{GPU: "1"}).obj(),
               make_pod("m2").obj()]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.sampled_from(["1", "2", "4"]), st.integers(1, 4),
       st.lists(st.integers(0, 2), max_size=4), st.lists(st.integers(0, 2), max_size=4),
       st.sampled_from([{}, {"cpu": "500m"}, {"cpu": "1", GPU: "1"}, {"memory": "3Gi"}]),
       st.booleans())
def test_margins_decide_the_filter_after_more_pods(cpu, max_pods, placed, added, req, ignore):
    """Filter with ``added`` pods on the node == every margin covers their count and
    summed requests (and the margins themselves say whether the pod fits now)."""
    plugin = fit(ignoredResources=[GPU]) if ignore else fit()
    node = make_node("n").alloc(cpu=cpu, memory="4Gi", pods=max_pods, **{GPU: "1"}).obj()
    t = table_of([node], {"n": [MARGIN_PODS[k].clone(f"p{j}") for j, k in enumerate(placed)]})
    pod = make_pod("in").req(req).obj() if req else make_pod("in").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, t)
    idx = np.asarray([0])
    got = plugin.margins(state, pod, t, idx)
    assert got is not None
    pods_margin, res = got
    now = plugin.filter(state, pod, t, idx)
    assert bool(now[0]) == (pods_margin[0] >= 0 and all(m[0] >= 0 for _, m in res))
    extra = [MARGIN_PODS[k].clone(f"a{j}") for j, k in enumerate(added)]
    for p in extra:
        t.add_pod(p, 0)
    after = plugin.filter(state, pod, t, idx)
    fits = pods_margin[0] >= len(extra) and all(
        m[0] >= sum(p.spec.requests.get(name, 0) for p in extra) for name, m in res)
    assert bool(after[0]) == fits


def test_margins_refuse_numbers_too_large_for_exact_arithmetic():
    node = make_node("n").alloc(cpu="4", memory="4Gi", pods=110, **{GPU: str(2**60)}).obj()
    t = table_of([node])
    pod = make_pod("in").req(cpu="1", **{GPU: "1"}).obj()
    plugin, state = fit(), CycleState()
    plugin.pre_filter(state, pod, t)
    assert plugin.margins(state, pod, t, np.asarray([0])) is None
