"""PodTopologySpread: golden vectors V6 (filter) and V8 (score), upstream filter/score/state
cases, minDomains, inclusion policies, matchLabelKeys, counting rules, AddPod/RemovePod on a
cloned state, system default constraints, args and queueing hints."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_core.api._fields import Fields
from scheduler_core.api.affinity import TopologySpreadConstraint
from scheduler_core.api.objects import Service
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelRequirement, LabelSelector
from scheduler_core.errors import ConfigError
from scheduler_core.framework import interface as fw
from scheduler_core.framework.interface import Code, CycleState, QueueingHint
from scheduler_core.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    _go_round,
)
from scheduler_core.plugins.pod_topology_spread_args import SYSTEM_DEFAULT_CONSTRAINTS
from tests.builders import PodBuilder, expr, make_node, make_pod, run_filter, table_of, term

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
HARD, SOFT = "DoNotSchedule", "ScheduleAnyway"
LIST = {"defaultingType": "List"}


# --------------------------------------------------------------------------- helpers
def tsc(skew: int, key: str, when: str = HARD, selector: dict | None = FOO, **extra) -> dict:
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if selector is not None:
        c["labelSelector"] = selector
    return c


def spread(builder: PodBuilder, *constraints: dict) -> Pod:
    m = builder.manifest()
    if constraints:
        m["spec"]["topologySpreadConstraints"] = list(constraints)
    return Pod.from_manifest(m)


def unvalidated(pod: Pod, *constraints: dict) -> Pod:
    """``pod`` with constraints the API would reject as duplicates (upstream's unit tests
    build such pods directly)."""
    parsed = tuple(TopologySpreadConstraint.from_fields(Fields(c, "c", "")) for c in constraints)
    pod.spec = dataclasses.replace(pod.spec, topology_spread_constraints=parsed)
    return pod


def incoming(*constraints: dict, labels: dict | None = None, ns: str = "default") -> Pod:
    b = make_pod("p", ns)
    for k, v in (labels if labels is not None else {"foo": ""}).items():
        b.label(k, v)
    return spread(b, *constraints)


_SEQ = itertools.count()


def placed(spec: str, *, ns: str = "default", terminating: bool = False) -> Pod:
    """``"node-a:foo,bar"``: a pod on node-a with labels foo="" and bar=""."""
    node, _, labels = spec.partition(":")
    b = make_pod(f"{node}-{next(_SEQ)}", ns)
    for k in filter(None, labels.split(",")):
        b.label(k, "")
    m = b.manifest()
    if terminating:
        m["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    pod = Pod.from_manifest(m)
    pod.node_name = node
    return pod


def cluster(nodes, pods=()):
    by_node: dict[str, list[Pod]] = {}
    for p in pods:
        by_node.setdefault(p.node_name, []).append(p)
    return table_of([n.obj() for n in nodes], by_node)


def zn(name: str, zone: str | None, *, key: str = "node", **labels: str):
    """A node labelled ``zone`` (if given) and ``key=name``."""
    b = make_node(name).label(key, name)
    if zone is not None:
        b.label("zone", zone)
    for k, v in labels.items():
        b.label(k, v)
    return b


def hosts(*names: str):
    return [make_node(n).label(HOST, n) for n in names]


def filter_codes(plugin, pod, table) -> dict[str, str]:
    got = run_filter(plugin, pod, table)
    return {n: "Success" if s is None else s.code.upstream_name for n, s in got.items()}


def score_over(plugin, pod, table, candidates=None, *, normalize=True):
    """PreScore/Score(/NormalizeScore) over the candidate nodes (default: every node)."""
    names = candidates or [table.node(s).name for s in table.order()]
    idx = np.asarray([table.slot_of[n] for n in names], dtype=np.int64)
    state = CycleState()
    status = plugin.pre_score(state, pod, table, idx)
    if status is not None and status.code == Code.SKIP:
        return "skip"
    scores = plugin.score(state, pod, table, idx)
    if normalize:
        scores = plugin.normalize(state, pod, scores)
    return dict(zip(names, scores.tolist(), strict=True))


def state_totals(state: CycleState, table, i: int = 0) -> dict[str, int]:
    """Constraint ``i``'s TpValueToMatchNum: eligible domain -> matching pods."""
    s = state.read("PreFilterPodTopologySpread")
    key = s.constraints[i].key
    values = table.label_values[key]
    return {values[c]: int(s.totals[i][c]) for c in np.flatnonzero(s.present[i])}


class FakeHandle:
    def __init__(self, *services: Service) -> None:
        self.services = list(services)

    def list_services(self, namespace: str) -> list[Service]:
        return [s for s in self.services if s.namespace == namespace]


PLUGIN = PodTopologySpread(LIST)
FOUR = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
SPREAD_2103 = ["node-a:foo", "node-a:foo", "node-b:foo", "node-y:foo", "node-y:foo", "node-y:foo"]


# --------------------------------------------------------------------------- golden vectors
@pytest.mark.parametrize(("skew", "want"), [
    (1, {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
         "node-y": "Unschedulable"}),
    (2, {"node-a": "Unschedulable", "node-b": "Success", "node-x": "Success",
         "node-y": "Unschedulable"}),
], ids=["v6-max-skew-1", "v6-max-skew-2"])
def test_v6_single_constraint_filter(skew, want):
    table = cluster(FOUR, [placed(s) for s in SPREAD_2103])
    assert filter_codes(PLUGIN, incoming(tsc(skew, "node")), table) == want


@pytest.mark.parametrize(("skew", "want", "raw"), [
    (1, {"a": 20, "b": 60, "c": 100, "d": 0}, {"a": 4, "b": 2, "c": 0, "d": 5}),
    (2, {"a": 33, "b": 66, "c": 100, "d": 16}, {"a": 5, "b": 3, "c": 1, "d": 6}),
], ids=["v8-max-skew-1", "v8-max-skew-2"])
def test_v8_hostname_score(skew, want, raw):
    table = cluster(hosts("a", "b", "c", "d"),
                    [placed(s) for s in ("a:foo", "a:foo", "b:foo", "d:foo", "d:foo", "d:foo")])
    pod = incoming(tsc(skew, HOST, SOFT))
    assert score_over(PLUGIN, pod, table) == want
    assert score_over(PLUGIN, pod, table, normalize=False) == raw


# --------------------------------------------------------------------------- filter
FILTER_CASES = [
    # (id, nodes, placed pods, incoming pod, expected codes)
    ("zone-label-typo-is-unresolvable",
     [zn("node-a", "zone1"), zn("node-b", None, zon="zone1"), zn("node-x", "zone2"),
      zn("node-y", "zone2")],
     ["node-a:foo", "node-b:foo", "node-x:foo", "node-y:foo"], incoming(tsc(1, "zone")),
     {"node-a": "Success", "node-b": "UnschedulableAndUnresolvable",
      "node-x": "Unschedulable", "node-y": "Unschedulable"}),
    ("no-node-has-the-key", [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
     incoming(tsc(1, "rack")),
     {"node-a": "UnschedulableAndUnresolvable", "node-x": "UnschedulableAndUnresolvable"}),
    ("pod-does-not-match-itself", FOUR, SPREAD_2103,
     incoming(tsc(1, "node"), labels={"bar": ""}),
     {"node-a": "Unschedulable", "node-b": "Success", "node-x": "Success",
      "node-y": "Unschedulable"}),
    ("node-affinity-narrows-the-domains", FOUR, SPREAD_2103,
     spread(make_pod("p").label("foo", "").node_affinity_in("node", "node-a", "node-y"),
            tsc(1, "node")),
     {"node-a": "Success", "node-b": "Success", "node-x": "Success",
      "node-y": "Unschedulable"}),
    ("node-affinity-not-in-zone", FOUR, ["node-b:foo", "node-b:foo", "node-y:foo"],
     spread(make_pod("p").label("foo", "").required_terms(term(expr("node", "NotIn", "node-b"))),
            tsc(1, "zone")),
     {"node-a": "Success", "node-b": "Success", "node-x": "Unschedulable",
      "node-y": "Unschedulable"}),
    ("terminating-pods-not-counted", [zn("node-a", None), zn("node-b", None)],
     [("node-a:foo", True), "node-b:foo"], incoming(tsc(1, "node")),
     {"node-a": "Success", "node-b": "Unschedulable"}),
    ("other-namespaces-not-counted", [zn("node-a", None), zn("node-b", None)],
     [("node-a:foo", "other"), ("node-a:foo", "other"), "node-b:foo"],
     incoming(tsc(1, "node")), {"node-a": "Success", "node-b": "Unschedulable"}),
    ("min-domains-above-domain-count-zeroes-the-minimum",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None)],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-b:foo", "node-c:foo"],
     incoming(tsc(2, "node", minDomains=4)),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-c": "Success"}),
    ("min-domains-below-domain-count",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None)],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-b:foo", "node-c:foo"],
     incoming(tsc(2, "node", minDomains=2)),
     {"node-a": "Success", "node-b": "Success", "node-c": "Success"}),
    ("min-domains-zone", FOUR, ["node-a:foo", "node-b:foo", "node-y:foo"],
     incoming(tsc(2, "zone", minDomains=3)),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
      "node-y": "Success"}),
    ("node-affinity-policy-honor",
     [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-x", None, foo=""),
      zn("node-y", None)],
     ["node-a:foo", "node-b:foo", "node-y:foo"],
     spread(make_pod("p").label("foo", "").node_selector(foo=""), tsc(1, "node")),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
      "node-y": "Success"}),
    ("node-affinity-policy-ignore",
     [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-x", None, foo=""),
      zn("node-y", None)],
     ["node-a:foo", "node-b:foo", "node-y:foo"],
     spread(make_pod("p").label("foo", "").node_selector(foo=""),
            tsc(1, "node", nodeAffinityPolicy="Ignore")),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
      "node-y": "Unschedulable"}),
    ("node-taints-policy-honor",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None).taint("dedicated", "x")],
     ["node-a:foo", "node-b:foo"], incoming(tsc(1, "node", nodeTaintsPolicy="Honor")),
     {"node-a": "Success", "node-b": "Success", "node-c": "Success"}),
    ("node-taints-policy-ignore-is-default",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None).taint("dedicated", "x")],
     ["node-a:foo", "node-b:foo"], incoming(tsc(1, "node")),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-c": "Success"}),
    ("tolerated-taint-counts-under-honor",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None).taint("dedicated", "x")],
     ["node-a:foo", "node-b:foo"],
     spread(make_pod("p").label("foo", "").toleration("dedicated", "x", "NoSchedule"),
            tsc(1, "node", nodeTaintsPolicy="Honor")),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-c": "Success"}),
    ("match-label-keys-narrow-the-selector", FOUR,
     ["node-a:foo", "node-b:foo", "node-x:foo,rev", "node-y:foo,rev"],
     incoming(tsc(1, "zone", matchLabelKeys=["rev"]), labels={"foo": "", "rev": ""}),
     {"node-a": "Success", "node-b": "Success", "node-x": "Unschedulable",
      "node-y": "Unschedulable"}),
    ("match-label-keys-absent-on-pod-are-ignored", FOUR,
     ["node-a:foo", "node-b:foo", "node-x:foo,rev"],
     incoming(tsc(1, "zone", matchLabelKeys=["rev"])),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
      "node-y": "Success"}),
    ("nil-selector-counts-nothing-and-never-self-matches", FOUR, SPREAD_2103,
     incoming(tsc(1, "node", selector=None)),
     {"node-a": "Success", "node-b": "Success", "node-x": "Success", "node-y": "Success"}),
    ("empty-selector-counts-nothing-but-self-matches", FOUR, SPREAD_2103,
     incoming(tsc(1, "node", selector={})),
     {"node-a": "Success", "node-b": "Success", "node-x": "Success", "node-y": "Success"}),
    ("two-constraints-zone-blocks-the-emptiest-node", FOUR, [*SPREAD_2103, "node-y:foo"],
     incoming(tsc(1, "zone"), tsc(1, "node")),
     {"node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Unschedulable",
      "node-y": "Unschedulable"}),
    ("two-constraints", FOUR, ["node-a:foo", "node-y:foo", "node-y:foo"],
     incoming(tsc(1, "zone"), tsc(1, "node")),
     {"node-a": "Unschedulable", "node-b": "Success", "node-x": "Unschedulable",
      "node-y": "Unschedulable"}),
]


def _placed(spec) -> Pod:
    if isinstance(spec, tuple):
        s, extra = spec
        return placed(s, terminating=True) if extra is True else placed(s, ns=extra)
    return placed(spec)


@pytest.mark.parametrize(("nodes", "pods", "pod", "want"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(nodes, pods, pod, want):
    table = cluster(nodes, [_placed(p) for p in pods])
    assert filter_codes(PLUGIN, pod, table) == want


def test_filter_reasons_first_failing_constraint_decides():
    # node-z fails constraint 0 (zone skew) before constraint 1 (missing "node"): Unschedulable;
    # node-w misses "zone", constraint 0's key: unresolvable
    nodes = [zn("node-a", "zone1"), zn("node-b", "zone2"), zn("node-z", "zone2", key="other"),
             zn("node-w", None)]
    table = cluster(nodes, [placed(s) for s in ("node-b:foo", "node-b:foo")])
    got = run_filter(PLUGIN, incoming(tsc(1, "zone"), tsc(1, "node")), table)
    assert got["node-a"] is None
    assert got["node-b"].code == got["node-z"].code == Code.UNSCHEDULABLE
    assert got["node-z"].reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
    assert got["node-w"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got["node-w"].reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
    assert got["node-w"].plugin == "PodTopologySpread"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)")


def test_filter_without_failures_returns_none_and_skip_without_hard_constraints():
    table = cluster(FOUR)
    state = CycleState()
    assert PLUGIN.pre_filter(state, incoming(tsc(1, "zone")), table) == (None, None)
    assert PLUGIN.filter(state, incoming(tsc(1, "zone")), table, slice(0, table.high)) is None
    _, status = PLUGIN.pre_filter(CycleState(), incoming(tsc(1, "zone", SOFT)), table)
    assert status.code == Code.SKIP
    _, status = PLUGIN.pre_filter(CycleState(), make_pod().obj(), table)
    assert status.code == Code.SKIP


# --------------------------------------------------------------------------- PreFilter state
STATE_CASES = [
    ("one-constraint", FOUR,
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-y:foo", "node-y:foo"],
     incoming(tsc(1, "zone")), [{"zone1": 3, "zone2": 2}], [2]),
    ("three-zones-zero-count-domain-included",
     [*FOUR, zn("node-o", "zone3"), zn("node-p", "zone3")],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-y:foo", "node-y:foo"],
     incoming(tsc(1, "zone")), [{"zone1": 3, "zone2": 2, "zone3": 0}], [0]),
    ("namespace-mismatch", FOUR,
     ["node-a:foo", ("node-a:foo", "ns1"), "node-b:foo", ("node-y:foo", "ns2"), "node-y:foo"],
     incoming(tsc(1, "zone")), [{"zone1": 2, "zone2": 1}], [1]),
    ("null-selector", FOUR, ["node-a:foo", "node-y:foo"], incoming(tsc(1, "zone", selector=None)),
     [{"zone1": 0, "zone2": 0}], [0]),
    ("two-constraints-same-key", FOUR,
     ["node-a:foo,bar", "node-b:foo", "node-x:bar", "node-y:foo,bar", "node-y:bar"],
     unvalidated(incoming(labels={"foo": "", "bar": ""}), tsc(1, "zone"),
                 tsc(1, "zone", selector=BAR)),
     [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}], [1, 1]),
    ("soft-constraints-bypassed",
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
     ["node-a:foo", "node-a:foo", "node-b:foo"] + ["node-y:foo"] * 4,
     incoming(tsc(1, "zone", SOFT), tsc(1, "zone"), tsc(1, "node", SOFT), tsc(1, "node")),
     [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}], [3, 1]),
]


@pytest.mark.parametrize(("nodes", "pods", "pod", "want", "minimum"),
                         [c[1:] for c in STATE_CASES], ids=[c[0] for c in STATE_CASES])
def test_pre_filter_state(nodes, pods, pod, want, minimum):
    table = cluster(nodes, [_placed(p) for p in pods])
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    assert [state_totals(state, table, i) for i in range(len(want))] == want
    assert state.read("PreFilterPodTopologySpread").minimum == minimum


# --------------------------------------------------------------------------- AddPod / RemovePod
ADD_CASES = [
    ("both-nodes-impact-min", [zn("node-a", "zone1"), zn("node-b", "zone1")], [],
     incoming(tsc(1, "node")), "node-a:foo", [{"node-a": 1, "node-b": 0}], [0]),
    ("only-node-a-impacts-min", [zn("node-a", "zone1"), zn("node-b", "zone1")], ["node-b:foo"],
     incoming(tsc(1, "node")), "node-a:foo", [{"node-a": 1, "node-b": 1}], [1]),
    ("other-namespace-ignored", [zn("node-a", "zone1"), zn("node-b", "zone1")], ["node-b:foo"],
     incoming(tsc(1, "node")), ("node-a:foo", "ns1"), [{"node-a": 0, "node-b": 1}], [0]),
    ("zone-and-node", [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     ["node-b:foo", "node-b:foo", "node-x:foo"], incoming(tsc(1, "zone"), tsc(1, "node")),
     "node-a:foo", [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}], [1, 1]),
    ("selectors-differ", [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     ["node-b:foo,bar", "node-x:foo,bar", "node-x:bar"],
     incoming(tsc(1, "zone"), tsc(1, "node", selector=BAR), labels={"foo": "", "bar": ""}),
     "node-a:foo", [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}], [1, 0]),
]


@pytest.mark.parametrize(("nodes", "pods", "pod", "added", "want", "minimum"),
                         [c[1:] for c in ADD_CASES], ids=[c[0] for c in ADD_CASES])
def test_add_pod_on_cloned_state(nodes, pods, pod, added, want, minimum):
    table = cluster(nodes, [_placed(p) for p in pods])
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    before = [state_totals(state, table, i) for i in range(len(want))]
    clone = state.clone()
    other = _placed(added)
    PLUGIN.add_pod(clone, pod, other, table.slot_of[other.node_name])
    assert [state_totals(clone, table, i) for i in range(len(want))] == want
    assert clone.read("PreFilterPodTopologySpread").minimum == minimum
    assert [state_totals(state, table, i) for i in range(len(want))] == before  # untouched
    PLUGIN.remove_pod(clone, pod, other, table.slot_of[other.node_name])
    assert [state_totals(clone, table, i) for i in range(len(want))] == before


def test_remove_pod_lowers_the_minimum_and_unblocks_a_node():
    table = cluster([zn("node-a", None), zn("node-b", None)],
                    [placed(s) for s in ("node-a:foo", "node-a:foo", "node-b:foo")])
    pod = incoming(tsc(1, "node"))
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    idx = slice(0, table.high)
    assert PLUGIN.filter(state, pod, table, idx).tolist() == [False, True]
    victim = next(iter(table.pods[table.slot_of["node-a"]].values()))
    clone = state.clone()
    PLUGIN.remove_pod(clone, pod, victim, table.slot_of["node-a"])
    assert PLUGIN.filter(clone, pod, table, idx) is None  # 1/1: both fit
    PLUGIN.remove_pod(clone, pod, victim, table.slot_of["node-a"])  # a second victim
    assert clone.read("PreFilterPodTopologySpread").minimum == [0]
    assert PLUGIN.filter(clone, pod, table, idx).tolist() == [True, False]
    assert PLUGIN.filter(state, pod, table, idx).tolist() == [False, True]


def test_updates_never_leak_into_later_cycles():
    table = cluster([zn("node-a", None), zn("node-b", None)], [placed("node-b:foo")])
    pod = incoming(tsc(1, "node"))
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    PLUGIN.add_pod(state, pod, placed("node-a:foo"), table.slot_of["node-a"])  # no clone
    PLUGIN.add_pod(state, pod, placed("node-a:foo"), table.slot_of["node-a"])
    fresh = CycleState()
    PLUGIN.pre_filter(fresh, pod, table)
    assert state_totals(fresh, table) == {"node-a": 0, "node-b": 1}
    assert PLUGIN.filter(fresh, pod, table, slice(0, table.high)).tolist() == [True, False]


def test_add_pod_respects_inclusion_policies_of_the_incoming_pod():
    nodes = [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)]
    table = cluster(nodes)
    pod = spread(make_pod("p").label("foo", "").node_selector(foo=""), tsc(1, "node"))
    state = CycleState()
    PLUGIN.pre_filter(state, pod, table)
    clone = state.clone()
    PLUGIN.add_pod(clone, pod, placed("node-c:foo"), table.slot_of["node-c"])  # not eligible
    PLUGIN.add_pod(clone, pod, placed("node-a:bar"), table.slot_of["node-a"])  # no match
    assert state_totals(clone, table) == {"node-a": 0, "node-b": 0}


# --------------------------------------------------------------------------- score
SCORE_CASES = [
    # (id, nodes, failed (non-candidate) nodes, placed pods, pod, expected)
    ("no-existing-pods", hosts("node-a", "node-b"), [], [], incoming(tsc(1, HOST, SOFT)),
     {"node-a": 100, "node-b": 100}),
    ("only-one-candidate", hosts("node-a"), hosts("node-b"),
     ["node-a:foo", "node-a:foo", "node-b:foo"], incoming(tsc(1, HOST, SOFT)),
     {"node-a": 100}),
    ("same-counts", hosts("node-a", "node-b"), [], ["node-a:foo", "node-b:foo"],
     incoming(tsc(1, HOST, SOFT)), {"node-a": 100, "node-b": 100}),
    ("null-selector", hosts("a", "b", "c", "d"), [], ["a:foo", "a:foo", "b:foo", "d:foo"],
     incoming(tsc(1, HOST, SOFT, selector=None)), {"a": 100, "b": 100, "c": 100, "d": 100}),
    ("max-skew-3", hosts("a", "b", "c", "d"), [],
     ["a:foo"] * 4 + ["b:foo"] * 3 + ["c:foo"] * 2 + ["d:foo"],
     incoming(tsc(3, HOST, SOFT)), {"a": 44, "b": 66, "c": 77, "d": 100}),
    ("3-of-4-candidates", hosts("node-a", "node-b", "node-x"), hosts("node-y"),
     ["node-a:foo"] * 4 + ["node-b:foo"] * 2 + ["node-x:foo"] + ["node-y:foo"] * 3,
     incoming(tsc(1, HOST, SOFT)), {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("candidate-without-key-is-ignored",
     [make_node("node-a").label(HOST, "node-a"), make_node("node-b").label("n", "node-b"),
      make_node("node-x").label(HOST, "node-x")], hosts("node-y"),
     ["node-a:foo"] * 4 + ["node-b:foo"] * 2 + ["node-x:foo"] + ["node-y:foo"] * 3,
     incoming(tsc(1, HOST, SOFT)), {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("zone-3-of-4-candidates-counts-non-candidates",
     [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
     [zn("node-y", "zone2")],
     ["node-a:foo"] * 4 + ["node-b:foo"] * 2 + ["node-x:foo"] + ["node-y:foo"] * 3,
     incoming(tsc(1, "zone", SOFT)), {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("zone-and-host-2-of-4-candidates",
     [zn("node-a", "zone1", key=HOST), zn("node-x", "zone2", key=HOST)],
     [zn("node-b", "zone1", key=HOST), zn("node-y", "zone2", key=HOST)],
     ["node-a:foo"] * 2 + ["node-b:foo"] + ["node-x:foo"] * 2 + ["node-y:foo"] * 4,
     incoming(tsc(1, "zone", SOFT), tsc(1, HOST, SOFT)), {"node-a": 100, "node-x": 63}),
    ("two-zone-constraints-different-selectors",
     [zn("node-a", "zone1"), zn("node-x", "zone2")],
     [zn("node-b", "zone1"), zn("node-y", "zone2")],
     ["node-a:foo,bar", "node-a:foo", "node-b:foo,bar", "node-y:foo", "node-y:foo,bar",
      "node-y:foo"],
     unvalidated(incoming(labels={"foo": "", "bar": ""}), tsc(1, "zone", SOFT),
                 tsc(1, "zone", SOFT, selector=BAR)), {"node-a": 85, "node-x": 100}),
    ("zone-and-host-different-selectors",
     [zn(n, z, key=HOST) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                      ("node-x", "zone2"), ("node-y", "zone2"))], [],
     ["node-a:foo", "node-b:foo,bar", "node-y:foo", "node-y:bar"],
     incoming(tsc(1, "zone", SOFT), tsc(1, HOST, SOFT, selector=BAR),
              labels={"foo": "", "bar": ""}),
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("other-namespace-not-counted", hosts("node-a", "node-b"), [],
     [("node-a:foo", "ns1"), "node-a:foo", "node-b:foo", "node-b:foo"],
     incoming(tsc(1, HOST, SOFT)), {"node-a": 100, "node-b": 33}),
    ("terminating-not-counted", hosts("node-a", "node-b"), [],
     [("node-a:foo", True), "node-b:foo"], incoming(tsc(1, HOST, SOFT)),
     {"node-a": 100, "node-b": 0}),
    ("min-domains-no-effect-on-score",
     [zn("node-a", None), zn("node-b", None), zn("node-c", None)], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-b:foo", "node-c:foo"],
     incoming(tsc(2, "node", SOFT)), {"node-a": 75, "node-b": 75, "node-c": 100}),
    ("node-affinity-policy-honor",
     [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-c:foo"],
     spread(make_pod("p").label("foo", "").node_selector(foo=""), tsc(1, "node", SOFT)),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("node-affinity-policy-ignore",
     [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-c:foo"],
     spread(make_pod("p").label("foo", "").node_selector(foo=""),
            tsc(1, "node", SOFT, nodeAffinityPolicy="Ignore")),
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("required-node-affinity-honored",
     [zn("node-a", None, foo=""), zn("node-b", None, foo=""), zn("node-c", None)], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-c:foo"],
     spread(make_pod("p").label("foo", "").node_affinity_in("foo", ""), tsc(1, "node", SOFT)),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("node-taints-policy-honor",
     [zn("node-a", None), zn("node-b", None),
      zn("node-c", None).taint("node.kubernetes.io/unschedulable", "")], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-c:foo"],
     incoming(tsc(1, "node", SOFT, nodeTaintsPolicy="Honor")),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("node-taints-policy-ignore",
     [zn("node-a", None), zn("node-b", None),
      zn("node-c", None).taint("node.kubernetes.io/unschedulable", "")], [],
     ["node-a:foo", "node-a:foo", "node-b:foo", "node-c:foo"],
     incoming(tsc(1, "node", SOFT)), {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("match-label-keys-with-empty-selector",
     [zn(n, z, key=HOST) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                      ("node-c", "zone2"), ("node-d", "zone2"))], [],
     ["node-a:foo", "node-b:foo,bar", "node-c:foo", "node-c:bar"],
     incoming(tsc(1, "zone", SOFT, selector={}, matchLabelKeys=["foo"]),
              tsc(1, HOST, SOFT, selector={}, matchLabelKeys=["bar"]),
              labels={"foo": "", "bar": ""}),
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    ("match-label-keys-anded-with-selector",
     [zn(n, z, key=HOST) for n, z in (("node-a", "zone1"), ("node-b", "zone1"),
                                      ("node-c", "zone2"), ("node-d", "zone2"))], [],
     ["node-a:foo", "node-b:foo,bar,baz", "node-c:foo", "node-c:bar", "node-c:bar,baz"],
     incoming(tsc(1, "zone", SOFT), tsc(1, HOST, SOFT, selector=BAR, matchLabelKeys=["baz"]),
              labels={"foo": "", "bar": "", "baz": ""}),
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]


@pytest.mark.parametrize(("nodes", "failed", "pods", "pod", "want"),
                         [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(nodes, failed, pods, pod, want):
    table = cluster([*nodes, *failed], [_placed(p) for p in pods])
    assert score_over(PLUGIN, pod, table, list(want)) == want


def test_system_default_with_service_spreads_nodes_without_zone():
    """Upstream "system defaulting, nodes don't have zone, pods match service": the same
    scores as a single hostname constraint; keyless nodes share the "" zone domain."""
    plugin = PodTopologySpread(None, FakeHandle(Service("svc", "default", {"foo": ""})))
    table = cluster(hosts("node-a", "node-b", "node-c", "node-d"),
                    [placed(s) for s in ["node-a:foo"] * 4 + ["node-b:foo"] * 3
                     + ["node-c:foo"] * 2 + ["node-d:foo"]])
    pod = make_pod("p").label("foo", "").obj()
    assert score_over(plugin, pod, table) == {"node-a": 44, "node-b": 66, "node-c": 77,
                                              "node-d": 100}
    state = CycleState()
    plugin.pre_score(state, pod, table, np.arange(4))
    s = state.read("PreScorePodTopologySpread")
    assert not s.require_all
    assert s.weights == [math.log(4 + 2), math.log(1 + 2)]  # hostname; the "" zone domain


def test_system_defaults_keyless_nodes_share_the_empty_zone_value():
    """Without requireAllTopologies a node lacking the zone label reads it as "": it joins
    (and counts into) the domain of nodes labelled zone="", but scores no zone term itself."""
    plugin = PodTopologySpread(None, FakeHandle(Service("svc", "default", {"foo": ""})))
    nodes = [make_node("a").label(HOST, "a").label(ZONE, ""), make_node("b").label(HOST, "b"),
             make_node("c").label(HOST, "c").label(ZONE, "z1")]
    table = cluster(nodes, [placed("b:foo"), placed("b:foo")])
    pod = make_pod("p").label("foo", "").obj()
    # host: w=ln5, counts 0/2/0; zone: domains {"", z1}, w=ln4, "" holds b's two pods
    assert score_over(plugin, pod, table, normalize=False) == {"a": 9, "b": 5, "c": 6}
    assert score_over(plugin, pod, table) == {"a": 55, "b": 100, "c": 88}


@pytest.mark.parametrize(("services", "pod", "want_skip"), [
    ((), make_pod("p").label("foo", ""), True),
    ((Service("svc", "default", {"foo": "x"}),), make_pod("p").label("foo", ""), True),
    ((Service("svc", "other", {"foo": ""}),), make_pod("p").label("foo", ""), True),
    ((Service("svc", "default", {}),), make_pod("p").label("foo", ""), True),
    ((Service("svc", "default", {"foo": ""}),), make_pod("p").label("foo", ""), False),
], ids=["no-service", "selector-mismatch", "other-namespace", "empty-selector", "selected"])
def test_system_defaults_need_a_selecting_service(services, pod, want_skip):
    plugin = PodTopologySpread(None, FakeHandle(*services))
    table = cluster(hosts("node-a", "node-b"))
    assert (score_over(plugin, pod.obj(), table) == "skip") == want_skip
    _, status = plugin.pre_filter(CycleState(), pod.obj(), table)
    assert status.code == Code.SKIP  # system defaults are all ScheduleAnyway


def test_default_selector_is_the_union_of_selecting_services():
    plugin = PodTopologySpread(None, FakeHandle(Service("s1", "default", {"app": "web"}),
                                                Service("s2", "default", {"tier": "fe"})))
    pod = make_pod("p").label("app", "web").label("tier", "fe").obj()
    got = plugin.constraints(pod, SOFT)
    assert [(c.key, c.max_skew) for c in got] == [(HOST, 3), (ZONE, 5)]
    assert got[0].matches({"app": "web", "tier": "fe", "x": "y"})
    assert not got[0].matches({"app": "web"})


def test_list_defaulting_requires_all_keys_and_its_hard_defaults_filter():
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": HARD}]}
    plugin = PodTopologySpread(args, FakeHandle(Service("s", "default", {"foo": ""})))
    table = cluster(FOUR, [placed(s) for s in ("node-a:foo", "node-b:foo")])
    pod = make_pod("p").label("foo", "").obj()
    assert filter_codes(plugin, pod, table) == {
        "node-a": "Unschedulable", "node-b": "Unschedulable", "node-x": "Success",
        "node-y": "Success"}
    # explicit constraints replace the defaults entirely
    assert filter_codes(plugin, incoming(tsc(5, "zone")), table)["node-a"] == "Success"


def test_pre_score_skips_without_soft_constraints_or_nodes():
    table = cluster(FOUR)
    assert score_over(PLUGIN, incoming(tsc(1, "zone")), table) == "skip"
    assert score_over(PLUGIN, make_pod("p").obj(), table) == "skip"
    empty = table_of([])
    assert PLUGIN.pre_score(CycleState(), incoming(tsc(1, "zone", SOFT)), empty,
                            np.zeros(0, dtype=np.int64)).code == Code.SKIP


def test_all_candidates_ignored_score_zero():
    table = cluster(hosts("a", "b"))
    assert score_over(PLUGIN, incoming(tsc(1, "rack", SOFT)), table) == {"a": 0, "b": 0}


@pytest.mark.parametrize(("x", "want"), [
    (0.0, 0), (0.5, 1), (1.5, 2), (2.5, 3), (0.49999999999999994, 0), (4.4999, 4), (7.0, 7),
])
def test_go_round_halves_away_from_zero(x, want):
    assert int(_go_round(np.asarray([x]))[0]) == want


# --------------------------------------------------------------------------- args
def test_args_defaults():
    plugin = PodTopologySpread()
    assert plugin.system_defaulted
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable)
            for c in plugin.default_constraints] == [(HOST, 3, SOFT), (ZONE, 5, SOFT)]
    listed = PodTopologySpread({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": HARD, "minDomains": 2,
         "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["rev"]}]})
    assert not listed.system_defaulted
    (c,) = listed.default_constraints
    assert (c.max_skew, c.topology_key, c.min_domains, c.node_taints_policy,
            c.match_label_keys) == (2, "rack", 2, "Honor", ("rev",))
    assert PodTopologySpread({"defaultingType": "List"}).default_constraints == ()


def _dc(**kw):
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": HARD, **kw}


ARG_ERRORS = [
    ("unknown-field", {"bogus": 1}, "args.bogus", "unknown field"),
    ("bad-defaulting-type", {"defaultingType": "Auto"}, "args.defaultingType",
     "Unsupported value: 'Auto'"),
    ("system-with-constraints", {"defaultConstraints": [_dc()]}, "args.defaultingType",
     "when .defaultConstraints are not empty"),
    ("max-skew-zero", {"defaultingType": "List", "defaultConstraints": [_dc(maxSkew=0)]},
     "args.defaultConstraints[0].maxSkew", "not in valid range (0, inf)"),
    ("empty-key", {"defaultingType": "List", "defaultConstraints": [_dc(topologyKey="")]},
     "args.defaultConstraints[0].topologyKey", "Required value"),
    ("bad-key", {"defaultingType": "List", "defaultConstraints": [_dc(topologyKey="a b")]},
     "args.defaultConstraints[0].topologyKey", "name part"),
    ("no-when", {"defaultingType": "List", "defaultConstraints": [_dc(whenUnsatisfiable="")]},
     "args.defaultConstraints[0].whenUnsatisfiable", "Required value"),
    ("bad-when", {"defaultingType": "List",
                  "defaultConstraints": [_dc(whenUnsatisfiable="Maybe")]},
     "args.defaultConstraints[0].whenUnsatisfiable", "Unsupported value"),
    ("selector-forbidden", {"defaultingType": "List",
                            "defaultConstraints": [_dc(labelSelector={})]},
     "args.defaultConstraints[0].labelSelector", "Forbidden"),
    ("duplicate", {"defaultingType": "List", "defaultConstraints": [_dc(), _dc(maxSkew=2)]},
     "args.defaultConstraints[1]", 'Duplicate value: "{zone, DoNotSchedule}"'),
    ("unknown-constraint-field", {"defaultingType": "List",
                                  "defaultConstraints": [_dc(skew=1)]},
     "args.defaultConstraints[0].skew", "unknown field"),
    ("bad-policy", {"defaultingType": "List",
                    "defaultConstraints": [_dc(nodeAffinityPolicy="Maybe")]},
     "args.defaultConstraints[0].nodeAffinityPolicy", "unsupported value"),
]


@pytest.mark.parametrize(("args", "field", "problem"), [c[1:] for c in ARG_ERRORS],
                         ids=[c[0] for c in ARG_ERRORS])
def test_args_errors(args, field, problem):
    with pytest.raises(ConfigError) as err:
        PodTopologySpread(args, args_path="args")
    assert err.value.field == field
    assert problem in err.value.problem


# --------------------------------------------------------------------------- interface, hints
def test_declared_extension_points():
    for proto in (fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin,
                  fw.ScoreExtensions, fw.EnqueueExtensions):
        assert isinstance(PLUGIN, proto), proto.__name__
    assert PodTopologySpread.score_in_range
    assert callable(PLUGIN.add_pod) and callable(PLUGIN.remove_pod)


def _hint(resource: str):
    return next(e for e in PLUGIN.events_to_register() if e.event.resource == resource)


def test_registered_events():
    actions = {e.event.resource: e.event.action for e in PLUGIN.events_to_register()}
    A = fw.ActionType
    assert actions == {
        "Pod": A.ADD | A.UPDATE_POD_LABEL | A.DELETE,
        "UnscheduledPod": A.UPDATE_POD_TOLERATION,
        "Node": A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT,
    }


TARGET = incoming(tsc(1, "zone"))


def _assigned(labels: str = "foo", ns: str = "default") -> Pod:
    return placed(f"node-a:{labels}", ns=ns)


@pytest.mark.parametrize(("old", "new", "want"), [
    (None, _assigned("foo"), QueueingHint.QUEUE),
    (None, _assigned("bar"), QueueingHint.QUEUE_SKIP),
    (None, _assigned("foo", ns="other"), QueueingHint.QUEUE_SKIP),
    (None, make_pod("pending").label("foo", "").obj(), QueueingHint.QUEUE_SKIP),
    (_assigned("foo"), None, QueueingHint.QUEUE),
    (_assigned("bar"), None, QueueingHint.QUEUE_SKIP),
], ids=["add-matching", "add-unrelated", "add-other-namespace", "add-unassigned",
        "delete-matching", "delete-unrelated"])
def test_hint_pod_add_delete(old, new, want):
    assert _hint("Pod").hint(TARGET, old, new) == want


def test_hint_pod_label_update():
    hint = _hint("Pod").hint
    old = _assigned("foo")
    relabelled = old.clone(labels={"bar": ""})
    relabelled.node_name = old.node_name
    unchanged = old.clone(labels={"foo": "", "x": ""})
    unchanged.node_name = old.node_name
    assert hint(TARGET, old, relabelled) == QueueingHint.QUEUE
    assert hint(TARGET, old, unchanged) == QueueingHint.QUEUE_SKIP
    assert hint(TARGET, old, old.clone()) == QueueingHint.QUEUE_SKIP  # unassigned clone


def test_hint_toleration_update_of_the_pod_itself():
    hint = _hint("UnscheduledPod").hint
    honor = incoming(tsc(1, "zone", nodeTaintsPolicy="Honor"))
    tolerating = spread(make_pod("p").label("foo", "").toleration("k", "v", "NoSchedule"),
                        tsc(1, "zone", nodeTaintsPolicy="Honor"))
    assert hint(honor, honor, tolerating) == QueueingHint.QUEUE
    assert hint(TARGET, TARGET, spread(make_pod("p").label("foo", "").toleration("k"),
                                       tsc(1, "zone"))) == QueueingHint.QUEUE_SKIP


ZONED = make_node("n").label("zone", "z1")
ZONED2 = make_node("n").label("zone", "z2")
UNZONED = make_node("n").label("other", "x")


@pytest.mark.parametrize(("old", "new", "want"), [
    (None, ZONED, QueueingHint.QUEUE),
    (None, UNZONED, QueueingHint.QUEUE_SKIP),
    (ZONED, None, QueueingHint.QUEUE),
    (UNZONED, None, QueueingHint.QUEUE_SKIP),
    (UNZONED, ZONED, QueueingHint.QUEUE),
    (ZONED, UNZONED, QueueingHint.QUEUE),
    (ZONED, ZONED2, QueueingHint.QUEUE),
    (ZONED, make_node("n").label("zone", "z1").label("x", "y"), QueueingHint.QUEUE_SKIP),
    (ZONED, make_node("n").label("zone", "z1").taint("k", "v"), QueueingHint.QUEUE),
    (UNZONED, make_node("n").label("other", "x").taint("k", "v"), QueueingHint.QUEUE_SKIP),
], ids=["add-with-key", "add-without-key", "delete-with-key", "delete-without-key",
        "key-gained", "key-lost", "value-changed", "unrelated-label", "taint-changed",
        "taint-changed-without-key"])
def test_hint_node_change(old, new, want):
    hint = _hint("Node").hint
    assert hint(TARGET, old and old.obj(), new and new.obj()) == want


# --------------------------------------------------------------------------- reference model
# A scalar model written from the rules (docs/scheduling-model.md, "PodTopologySpread") over
# Node/Pod objects (only the API's scalar label, node-selector and toleration matchers are
# shared), compared with the vectorised plugin on random small clusters: filter codes per
# node and normalised scores per candidate.
MAXINT32 = 2**31 - 1


def _ref_selector(c: TopologySpreadConstraint, labels: dict[str, str]):
    sel = c.label_selector
    if sel is not None and c.match_label_keys:
        extra = {k: labels[k] for k in c.match_label_keys if k in labels}
        if extra:
            sel = LabelSelector(tuple(LabelRequirement(k, "In", frozenset((v,)))
                                      for k, v in extra.items()) + sel.requirements)
    return sel


def _ref_count(pods, sel, ns: str) -> int:
    if sel is None or sel.empty:
        return 0
    return sum(1 for p in pods if p.deletion_timestamp is None and p.namespace == ns
               and sel.matches(p.labels))


def _ref_included(c, pod, node) -> bool:
    spec = pod.spec
    if (c.node_affinity_policy or "Honor") == "Honor":
        if any(node.labels.get(k) != v for k, v in spec.node_selector.items()):
            return False
        req = spec.affinity.required_node
        if req is not None and not req.matches(node.name, node.labels):
            return False
    if (c.node_taints_policy or "Ignore") == "Honor":
        for t in node.taints:
            if t.effect in ("NoSchedule", "NoExecute") and \
                    not any(tol.tolerates(t) for tol in spec.tolerations):
                return False
    return True


def ref_filter(pod: Pod, nodes, pods_on) -> dict[str, str]:
    hard_cs = [c for c in pod.spec.topology_spread_constraints
               if c.when_unsatisfiable == HARD]
    if not hard_cs:
        return {n.name: "Success" for n in nodes}
    keys = [c.topology_key for c in hard_cs]
    tallies = []
    for c in hard_cs:
        sel = _ref_selector(c, pod.labels)
        tally: dict[str, int] = {}
        for n in nodes:
            if all(k in n.labels for k in keys) and _ref_included(c, pod, n):
                v = n.labels[c.topology_key]
                tally[v] = tally.get(v, 0) + _ref_count(pods_on[n.name], sel, pod.namespace)
        tallies.append((sel, tally))
    out = {}
    for n in nodes:
        code = "Success"
        for c, (sel, tally) in zip(hard_cs, tallies, strict=True):
            if c.topology_key not in n.labels:
                code = "UnschedulableAndUnresolvable"
                break
            low = min(tally.values()) if tally else MAXINT32
            if len(tally) < (c.min_domains or 1):
                low = 0
            me = int(sel is not None and sel.matches(pod.labels))
            if tally.get(n.labels[c.topology_key], 0) + me - low > c.max_skew:
                code = "Unschedulable"
                break
        out[n.name] = code
    return out


def ref_scores(pod: Pod, nodes, pods_on, candidates: list[str], defaults=None):
    """``defaults``: (system default constraints, the selector the Services give them)."""
    if defaults is None:
        soft = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == SOFT]
        sels = [_ref_selector(c, pod.labels) for c in soft]
        require_all = True
    else:
        soft, sels, require_all = list(defaults[0]), [defaults[1]] * len(defaults[0]), False
    if not soft:
        return "skip"
    keys = [c.topology_key for c in soft] if require_all else []
    by_name = {n.name: n for n in nodes}
    ignored = {n for n in candidates if not all(k in by_name[n].labels for k in keys)}
    kept = [by_name[n] for n in candidates if n not in ignored]
    tallies, weights = [], []
    for c in soft:
        if c.topology_key == HOST:
            tallies.append(None)
            weights.append(math.log(len(kept) + 2))
            continue
        tally = {n.labels.get(c.topology_key, ""): 0 for n in kept}
        weights.append(math.log(len(tally) + 2))
        tallies.append(tally)
    for n in nodes:
        if not all(k in n.labels for k in keys):
            continue
        for c, sel, tally in zip(soft, sels, tallies, strict=True):
            if tally is None or not _ref_included(c, pod, n):
                continue
            v = n.labels.get(c.topology_key, "")
            if v in tally:
                tally[v] += _ref_count(pods_on[n.name], sel, pod.namespace)
    raw = {}
    for name in candidates:
        if name in ignored:
            raw[name] = 0
            continue
        n, total = by_name[name], 0.0
        for c, sel, tally, w in zip(soft, sels, tallies, weights, strict=True):
            if c.topology_key not in n.labels:
                continue
            cnt = (_ref_count(pods_on[name], sel, pod.namespace) if tally is None
                   else tally[n.labels[c.topology_key]])
            total += float(cnt) * w + float(c.max_skew - 1)
        raw[name] = math.floor(total + 0.5)
    valid = [raw[n] for n in candidates if n not in ignored]
    lo, hi = (min(valid), max(max(valid), 0)) if valid else (0, 0)
    return {n: 0 if n in ignored else 100 if hi == 0 else 100 * (hi + lo - raw[n]) // hi
            for n in candidates}


_label_sets = st.sampled_from([("foo",), ("foo",), ("foo", "rev"), ("foo", "bar"), ("bar",),
                               ("bar", "rev"), ()])


@st.composite
def _scenarios(draw, zone_key: str = "zone"):
    nodes = []
    for i in range(draw(st.integers(1, 7))):
        b = make_node(f"n{i}")
        if draw(st.integers(0, 5)):
            b.label(HOST, f"n{i}")
        zone = draw(st.sampled_from([None, "z1", "z2", "z3", ""]))
        if zone is not None:
            b.label(zone_key, zone)
        rack = draw(st.sampled_from([None, "r1", "r2"]))
        if rack is not None:
            b.label("rack", rack)
        if draw(st.booleans()):
            b.label("foo", "")
        taint = draw(st.sampled_from([None, "NoSchedule", "PreferNoSchedule"]))
        if taint:
            b.taint("dedicated", "x", taint)
        nodes.append(b.obj())
    pods = []
    for j in range(draw(st.integers(0, 20))):
        b = make_pod(f"e{j}", draw(st.sampled_from(["default", "default", "other"])))
        for k in draw(_label_sets):
            b.label(k, "1" if k == "rev" else "")
        m = b.manifest()
        if draw(st.integers(0, 5)) == 0:
            m["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        p = Pod.from_manifest(m)
        p.node_name = nodes[draw(st.integers(0, len(nodes) - 1))].name
        pods.append(p)
    cons, seen = [], set()
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["zone", HOST, "rack"]))
        when = draw(st.sampled_from([HARD, SOFT]))
        if (key, when) in seen:
            continue
        seen.add((key, when))
        extra = {}
        if when == HARD and draw(st.booleans()):
            extra["minDomains"] = draw(st.integers(1, 4))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            choice = draw(st.sampled_from([None, "Honor", "Ignore"]))
            if choice:
                extra[policy] = choice
        if draw(st.booleans()):
            extra["matchLabelKeys"] = ["rev"]
        cons.append(tsc(draw(st.integers(1, 3)), key, when,
                        draw(st.sampled_from([FOO, FOO, FOO, BAR, None, {}])), **extra))
    b = make_pod("p")
    for k in draw(_label_sets):
        b.label(k, "1" if k == "rev" else "")
    if draw(st.booleans()):
        b.node_selector(foo="")
    if draw(st.booleans()):
        b.toleration("dedicated", "x", "NoSchedule")
    candidates = [n.name for n in nodes if draw(st.booleans())] or [nodes[0].name]
    return nodes, pods, spread(b, *cons), candidates


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_scenarios())
def test_matches_scalar_reference_model(scenario):
    nodes, pods, pod, candidates = scenario
    table = table_of(nodes)
    pods_on: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    for p in pods:
        table.add_pod(p, table.slot_of[p.node_name])
        pods_on[p.node_name].append(p)
    assert filter_codes(PLUGIN, pod, table) == ref_filter(pod, nodes, pods_on)
    assert score_over(PLUGIN, pod, table, candidates) == ref_scores(pod, nodes, pods_on,
                                                                    candidates)


_SERVICE_SELECTORS = [{"foo": ""}, {"foo": "", "rev": "1"}, {"bar": ""}, {}]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_scenarios(zone_key=ZONE), st.sampled_from(_SERVICE_SELECTORS))
def test_system_defaults_match_scalar_reference_model(scenario, service_selector):
    nodes, pods, pod, candidates = scenario
    pod.spec = dataclasses.replace(pod.spec, topology_spread_constraints=())
    plugin = PodTopologySpread(None, FakeHandle(Service("svc", "default", service_selector)))
    table = table_of(nodes)
    pods_on: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    for p in pods:
        table.add_pod(p, table.slot_of[p.node_name])
        pods_on[p.node_name].append(p)
    selects = bool(service_selector) and all(pod.labels.get(k) == v
                                             for k, v in service_selector.items())
    selector = LabelSelector(tuple(LabelRequirement(k, "In", frozenset((v,)))
                                   for k, v in service_selector.items()))
    want = ref_scores(pod, nodes, pods_on, candidates,
                      (SYSTEM_DEFAULT_CONSTRAINTS, selector)) if selects else "skip"
    assert score_over(plugin, pod, table, candidates) == want
