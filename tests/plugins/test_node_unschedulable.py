"""NodeUnschedulable: filter, toleration of the unschedulable taint, hints."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import Code, QueueingHint
from scheduler_core.plugins.node_unschedulable import NodeUnschedulable
from tests.builders import make_node, make_pod, run_filter, table_of

PLUGIN = NodeUnschedulable()
KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(("pod", "passes"), [
    (make_pod(), False),
    (make_pod().toleration(KEY, effect="NoSchedule", operator="Exists"), True),
    (make_pod().toleration(), True),
    (make_pod().toleration(KEY, effect="NoExecute", operator="Exists"), False),
    (make_pod().toleration("other", effect="NoSchedule", operator="Exists"), False),
], ids=["no-toleration", "tolerates-taint", "tolerates-everything", "wrong-effect",
        "wrong-key"])
def test_filter(pod, passes):
    table = table_of([make_node("off").unschedulable().obj(), make_node("on").obj()])
    got = run_filter(PLUGIN, pod.obj(), table)
    assert got["on"] is None
    if passes:
        assert got["off"] is None
    else:
        assert got["off"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert got["off"].reasons == ("node(s) were unschedulable",)


def test_filter_is_none_without_unschedulable_nodes_and_sees_updates():
    table = table_of([make_node("a").obj()])
    idx = slice(0, table.high)
    assert PLUGIN.filter(None, make_pod().obj(), table, idx) is None
    table.update_node(make_node("a").unschedulable().obj())
    assert PLUGIN.filter(None, make_pod().obj(), table, idx).tolist() == [False]


def _hints():
    return {e.event.resource: e.hint for e in PLUGIN.events_to_register()}


@pytest.mark.parametrize(("old", "new", "expected"), [
    (None, make_node("n"), QueueingHint.QUEUE),
    (None, make_node("n").unschedulable(), QueueingHint.QUEUE_SKIP),
    (make_node("n").unschedulable(), make_node("n"), QueueingHint.QUEUE),
    (make_node("n"), make_node("n").label("a", "b"), QueueingHint.QUEUE_SKIP),
], ids=["added-schedulable", "added-unschedulable", "became-schedulable", "unrelated"])
def test_hint_node(old, new, expected):
    assert _hints()["Node"](make_pod().obj(), old and old.obj(), new.obj()) == expected


def test_hint_pod_toleration():
    hint = _hints()["UnscheduledPod"]
    pod = make_pod("p").uid("u").obj()
    tolerating = make_pod("p").uid("u").toleration(KEY, effect="NoSchedule",
                                                   operator="Exists").obj()
    assert hint(pod, pod, tolerating) == QueueingHint.QUEUE
    assert hint(pod, pod, make_pod("p").uid("u").toleration("x", operator="Exists").obj()) == \
        QueueingHint.QUEUE_SKIP
    other = make_pod("q").uid("v").toleration(KEY, effect="NoSchedule", operator="Exists").obj()
    assert hint(pod, None, other) == QueueingHint.QUEUE_SKIP
