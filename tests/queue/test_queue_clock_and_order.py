"""Clocks, activeQ ordering (PrioritySort), Pop bookkeeping."""

from __future__ import annotations

import pytest

from scheduler_core.queue import Clock, FakeClock, PriorityQueue, RealClock
from tests.queue.queue_helpers import NODE_ADD, fail, make_queue, mkpod, pop_names


# --------------------------------------------------------------------------- clocks
def test_fake_clock_moves_only_when_told():
    c = FakeClock(5.0)
    assert c.now() == 5.0
    assert c.advance(2.5) == 7.5
    c.set(10.0)
    assert c.now() == 10.0
    assert isinstance(c, Clock)


@pytest.mark.parametrize("action", [lambda c: c.set(9.0), lambda c: c.advance(-1)],
                         ids=["set-backwards", "advance-negative"])
def test_fake_clock_refuses_to_go_back(action):
    c = FakeClock(10.0)
    with pytest.raises(ValueError, match=r"backwards|>= 0"):
        action(c)
    assert c.now() == 10.0


def test_real_clock_is_monotonic():
    c = RealClock()
    a, b = c.now(), c.now()
    assert b >= a
    assert isinstance(c, Clock)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(initial_backoff=0), "initial_backoff"),
        (dict(initial_backoff=5, max_backoff=2), "max_backoff"),
        (dict(max_in_unschedulable=0), "max_in_unschedulable"),
        (dict(backoff_flush_period=0), "flush periods"),
    ],
    ids=["zero-initial", "max-below-initial", "zero-leftover", "zero-flush-period"],
)
def test_constructor_rejects_bad_durations(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PriorityQueue(FakeClock(), **kwargs)


# --------------------------------------------------------------------------- ordering
@pytest.mark.parametrize(
    "pods, want",
    [
        ([("low", 0, 0.0), ("high", 10, 1.0), ("mid", 5, 2.0)], ["high", "mid", "low"]),
        ([("a", 1, 3.0), ("b", 1, 1.0), ("c", 1, 2.0)], ["b", "c", "a"]),
        ([("neg", -5, 0.0), ("zero", 0, 9.0)], ["zero", "neg"]),
        ([("x", 7, 0.0), ("y", 7, 0.0), ("z", 7, 0.0)], ["x", "y", "z"]),
    ],
    ids=["priority-first", "same-priority-by-timestamp", "negative-priority",
         "full-tie-by-arrival"],
)
def test_active_q_orders_by_priority_then_timestamp(pods, want):
    q, clock = make_queue()
    for name, prio, t in sorted(pods, key=lambda p: p[2]):
        clock.set(t)
        q.add(mkpod(name, prio))
    assert pop_names(q) == want


def test_custom_sort_key_from_queue_sort_plugin():
    q, _ = make_queue(sort_key=lambda pod, ts, seq: (pod.name,))
    for name in ("c", "a", "b"):
        q.add(mkpod(name, prio=ord(name)))
    assert pop_names(q) == ["a", "b", "c"]


def test_timestamp_refreshed_on_requeue_changes_order():
    q, clock = make_queue()
    q.add(mkpod("first"))  # ts 0
    qpi = q.pop()
    clock.set(1.0)
    q.add(mkpod("second"))  # ts 1
    clock.set(2.0)
    assert fail(q, qpi) == "backoff"  # an error: backoff, timestamp refreshed to 2
    assert qpi.timestamp == 2.0
    clock.set(10.0)
    q.flush_backoff_completed()
    # without the refresh "first" (ts 0) would come before "second" (ts 1)
    assert pop_names(q) == ["second", "first"]


def test_pop_bookkeeping():
    q, clock = make_queue()
    assert q.pop() is None
    clock.set(3.0)
    q.add(mkpod("p"))
    clock.set(4.0)
    qpi = q.pop()
    assert (qpi.attempts, q.scheduling_cycle, qpi.initial_attempt_timestamp) == (1, 1, 3.0)
    assert q.where(qpi.uid) == "in_flight" and q.in_flight_count() == 1
    fail(q, qpi, "NodeResourcesFit", pending=["Custom"])
    assert q.where(qpi.uid) == "unschedulable" and q.in_flight_count() == 0
    # Custom is not in the hints map: registered for every event, so a Pending -> activeQ
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    qpi2 = q.pop()
    assert qpi2 is qpi
    assert (qpi.attempts, q.scheduling_cycle) == (2, 2)
    assert qpi.unschedulable_plugins == set() and qpi.pending_plugins == set()
    assert qpi.initial_attempt_timestamp == 3.0


def test_counts_len_and_pending_pods_listing():
    q, _clock = make_queue()
    for i, name in enumerate(["a", "b", "c", "d"]):
        q.add(mkpod(name, prio=i))
    q.add(mkpod("gated", gates=["g"]))
    d = q.pop()  # highest priority
    fail(q, d)  # -> backoff
    c = q.pop()
    fail(q, c, "NodeAffinity")  # -> unschedulable
    assert q.counts() == {"active": 2, "backoff": 1, "unschedulable": 2, "gated": 1,
                          "in_flight": 0}
    assert len(q) == 5
    assert [p.name for p in q.pending_pods()] == ["b", "a", "d", "gated", "c"]
    assert q.pending_summary() == "activeQ:2; backoffQ:1; unschedulablePods:2"
    assert q.where(d.uid) == "backoff" and q.where("nope") is None
    assert q.get(c.uid) is c
