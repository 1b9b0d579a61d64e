"""PrioritySort: higher priority first, then older timestamp, then arrival order."""

from __future__ import annotations

from scheduler_core.plugins.priority_sort import PrioritySort
from tests.builders import make_pod


def test_sort_key_orders_by_priority_then_timestamp_then_sequence():
    plugin = PrioritySort()
    entries = [
        ("low-early", make_pod("a").priority(1).obj(), 1.0, 0),
        ("high-late", make_pod("b").priority(10).obj(), 5.0, 1),
        ("default", make_pod("c").obj(), 0.0, 2),
        ("low-late", make_pod("d").priority(1).obj(), 2.0, 3),
        ("low-late-tie", make_pod("e").priority(1).obj(), 2.0, 4),
    ]
    ordered = sorted(entries, key=lambda e: plugin.sort_key(e[1], e[2], e[3]))
    assert [e[0] for e in ordered] == ["high-late", "low-early", "low-late", "low-late-tie",
                                       "default"]
    assert plugin.sort_key(entries[1][1], 5.0, 1) == (-10, 5.0, 1)
