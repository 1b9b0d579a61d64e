"""NodeName: filter and hint."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import Code, QueueingHint
from scheduler_core.plugins.node_name import NodeName
from tests.builders import make_node, make_pod, run_filter, table_of

PLUGIN = NodeName()


@pytest.mark.parametrize(("node_name", "passing"), [
    ("", {"a", "b"}), ("b", {"b"}), ("zz", set()),
], ids=["unset", "named", "missing-node"])
def test_filter(node_name, passing):
    pod = make_pod().node(node_name).obj() if node_name else make_pod().obj()
    got = run_filter(PLUGIN, pod, table_of([make_node("a").obj(), make_node("b").obj()]))
    assert {n for n, s in got.items() if s is None} == passing
    for s in got.values():
        if s is not None:
            assert s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            assert s.reasons == ("node(s) didn't match the requested node name",)


def test_filter_on_slot_array():
    import numpy as np

    table = table_of([make_node("a").obj(), make_node("b").obj()])
    mask = PLUGIN.filter(None, make_pod().node("b").obj(), table, np.array([1, 0]))
    assert mask.tolist() == [True, False]


def test_hint_node_add():
    (e,) = PLUGIN.events_to_register()
    assert e.hint(make_pod().node("b").obj(), None, make_node("b").obj()) == QueueingHint.QUEUE
    assert e.hint(make_pod().node("b").obj(), None, make_node("a").obj()) == \
        QueueingHint.QUEUE_SKIP
    assert e.hint(make_pod().obj(), None, make_node("a").obj()) == QueueingHint.QUEUE
