"""TaintToleration: golden vector V9 (score and filter), explain per taint set, hints."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import Code, QueueingHint
from scheduler_core.plugins.taint_toleration import UNTOLERATED, TaintToleration
from tests.builders import make_node, make_pod, run_filter, run_score, table_of

PLUGIN = TaintToleration()


def test_v9_score_prefer_no_schedule():
    nodes = [make_node("nodeA").obj(),
             make_node("nodeB").taint("cpu-type", "arm64", "PreferNoSchedule").obj(),
             make_node("nodeC").taint("cpu-type", "arm64", "PreferNoSchedule")
             .taint("disk-type", "ssd", "PreferNoSchedule").obj()]
    pod = make_pod().toleration("foo", "bar", "PreferNoSchedule", operator="Equal").obj()
    assert run_score(PLUGIN, pod, table_of(nodes)) == {"nodeA": 100, "nodeB": 50, "nodeC": 0}


def test_v9_score_all_tolerated_prefer_taints_get_100():
    nodes = [make_node("nodeA").taint("foo", "bar", "PreferNoSchedule")
             .taint("foo2", "bar2", "PreferNoSchedule").obj(),
             make_node("nodeB").taint("foo", "bar", "PreferNoSchedule").obj()]
    pod = (make_pod().toleration("foo", "bar", "PreferNoSchedule", operator="Equal")
           .toleration("foo2", "bar2", "PreferNoSchedule", operator="Equal").obj())
    assert run_score(PLUGIN, pod, table_of(nodes)) == {"nodeA": 100, "nodeB": 100}


def test_v9_score_ignores_no_schedule_taints_and_no_schedule_tolerations():
    nodes = [make_node("nodeA").taint("cpu-type", "arm64", "NoSchedule").obj(),
             make_node("nodeB").taint("cpu-type", "arm64", "PreferNoSchedule").obj()]
    # a NoSchedule toleration is dropped at PreScore, so it does not tolerate the Prefer taint
    pod = make_pod().toleration("cpu-type", "arm64", "NoSchedule", operator="Equal").obj()
    assert run_score(PLUGIN, pod, table_of(nodes)) == {"nodeA": 100, "nodeB": 0}


def test_score_no_taints_anywhere():
    nodes = [make_node("a").obj(), make_node("b").obj()]
    assert run_score(PLUGIN, make_pod().obj(), table_of(nodes)) == {"a": 100, "b": 100}


FILTER_CASES = [
    ("no-tolerations-vs-no-schedule", make_node("n").taint("dedicated", "user1", "NoSchedule"),
     make_pod(), UNTOLERATED),
    ("equal-toleration-empty-effect", make_node("n").taint("foo", "bar", "NoSchedule"),
     make_pod().toleration("foo", "bar", "", operator="Equal"), None),
    ("prefer-toleration-vs-no-schedule", make_node("n").taint("foo", "bar", "NoSchedule"),
     make_pod().toleration("foo", "bar", "PreferNoSchedule", operator="Equal"),
     UNTOLERATED),
    ("only-prefer-taint", make_node("n").taint("foo", "bar", "PreferNoSchedule"), make_pod(),
     None),
    ("no-execute-blocks", make_node("n").taint("k", "", "NoExecute"), make_pod(),
     UNTOLERATED),
    ("exists-toleration", make_node("n").taint("k", "v", "NoExecute"),
     make_pod().toleration("k", operator="Exists"), None),
    ("tolerate-everything", make_node("n").taint("a", "1").taint("b", "2", "NoExecute"),
     make_pod().toleration(), None),
    ("one-untolerated-of-two", make_node("n").taint("a", "1").taint("b", "2"),
     make_pod().toleration("a", "1", "NoSchedule"), UNTOLERATED),
]


@pytest.mark.parametrize(("node", "pod", "reason"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_v9_filter(node, pod, reason):
    # an untainted node in the table too, so the filter takes its vector path
    table = table_of([node.obj(), make_node("plain").obj()])
    got = run_filter(PLUGIN, pod.obj(), table)
    assert got["plain"] is None
    if reason is None:
        assert got["n"] is None
    else:
        assert got["n"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert got["n"].reasons == (reason,)


def test_explain_gives_every_rejected_taint_set_the_same_reason():
    # v1.34 names no taint (v1.33 named the first untolerated one)
    nodes = [make_node("a1").taint("a", "1").obj(), make_node("b").taint("b", "2").obj(),
             make_node("ok").obj(), make_node("a2").taint("a", "1").obj()]
    got = run_filter(PLUGIN, make_pod().obj(), table_of(nodes))
    assert got["ok"] is None
    assert got["a1"].reasons == got["a2"].reasons == got["b"].reasons == (
        "node(s) had untolerated taint(s)",)


def test_filter_returns_none_without_taints():
    table = table_of([make_node("a").obj()])
    assert PLUGIN.filter(None, make_pod().obj(), table, slice(0, table.high)) is None


def _hints():
    return {e.event.resource: e for e in PLUGIN.events_to_register()}


TAINTED = make_node("n").taint("k", "v")
CLEAN = make_node("n")


@pytest.mark.parametrize(("old", "new", "expected"), [
    (None, CLEAN, QueueingHint.QUEUE),
    (None, TAINTED, QueueingHint.QUEUE_SKIP),
    (TAINTED, CLEAN, QueueingHint.QUEUE),
    (CLEAN, make_node("n").label("x", "y"), QueueingHint.QUEUE_SKIP),
    (TAINTED, make_node("n").taint("k", "v").taint("k2", "v"), QueueingHint.QUEUE_SKIP),
], ids=["added-untainted", "added-tainted", "taint-removed", "was-tolerated", "still-tainted"])
def test_hint_node_change(old, new, expected):
    hint = _hints()["Node"].hint
    assert hint(make_pod().obj(), old and old.obj(), new.obj()) == expected


def test_hint_pod_toleration_change_only_for_the_pod_itself():
    e = _hints()["UnscheduledPod"]
    pod = make_pod("p").uid("u1").obj()
    assert e.hint(pod, pod, make_pod("p").uid("u1").toleration("k", "v").obj()) == \
        QueueingHint.QUEUE
    assert e.hint(pod, None, make_pod("q").uid("u2").obj()) == QueueingHint.QUEUE_SKIP
