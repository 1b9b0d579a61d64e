"""Backoff durations and expiry (docs/scheduling-model.md, "Backoff"), the 1 s / 30 s flush
grid, next_event_time."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import ClusterEventWithHint
from scheduler_core.queue import backoff_duration
from tests.queue.queue_helpers import NODE_ADD, fail, make_queue, mkpod, pop_fail


@pytest.mark.parametrize(
    "attempts, want",
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (50, 10.0)],
    ids=lambda v: str(v),
)
def test_default_backoff_durations(attempts, want):
    assert backoff_duration(attempts) == want


@pytest.mark.parametrize(
    "initial, maximum, want",
    [(0.5, 3.0, [0.5, 1.0, 2.0, 3.0, 3.0]), (2.0, 2.0, [2.0, 2.0, 2.0, 2.0, 2.0]),
     (1.0, 5.0, [1.0, 2.0, 4.0, 5.0, 5.0])],
    ids=["half-to-3", "flat-2", "1-to-5"],
)
def test_configured_backoff_durations(initial, maximum, want):
    assert [backoff_duration(a, initial, maximum) for a in range(1, 6)] == want


def test_backoff_expiry_grows_with_each_failed_attempt():
    q, clock = make_queue()
    q.add(mkpod("p"))
    for attempt, duration in enumerate([1, 2, 4, 8, 10, 10], start=1):
        qpi = q.pop()
        assert qpi.attempts == attempt
        t_fail = 100.0 * attempt
        clock.set(t_fail)
        assert fail(q, qpi) == "backoff"  # an error: always after backoff
        assert q.backoff_expiry(qpi) == t_fail + duration
        clock.set(t_fail + duration - 0.001)
        assert q.flush_backoff_completed() == 0
        assert q.where(qpi.uid) == "backoff" and q.is_backing_off(qpi)
        clock.set(t_fail + duration)
        assert q.flush_backoff_completed() == 1
        assert q.where(qpi.uid) == "active"


def test_backoff_queue_releases_in_expiry_order():
    q, clock = make_queue()
    for name in ("a", "b", "c"):
        q.add(mkpod(name))
    a = q.pop()
    a.consecutive_errors = 3  # the 4th error in a row: 8 s
    b = q.pop()  # 1 s
    c = q.pop()
    c.consecutive_errors = 1  # 2 s
    for qpi in (a, b, c):
        fail(q, qpi)
    released = []
    for t in (1, 2, 8):
        clock.set(t)
        q.flush_backoff_completed()
        while (x := q.pop()) is not None:
            released.append((t, x.pod.name))
            q.done(x.uid)
    assert released == [(1, "b"), (2, "c"), (8, "a")]


def test_tick_flushes_backoff_only_on_its_one_second_grid():
    q, clock = make_queue()  # grid starts at t=0
    assert q.tick() == 0  # t=0: both flushes run (nothing to do)
    q.add(mkpod("p"))
    clock.set(0.5)
    qpi = q.pop()
    fail(q, qpi)  # expiry 1.5
    assert q.next_event_time() == 2.0  # first flush at or after 1.5
    clock.set(1.0)
    assert q.tick() == 0  # flush at 1 ran: still backing off
    clock.set(1.6)
    assert q.tick() == 0  # expired, but the next flush is at 2
    assert q.where(qpi.uid) == "backoff"
    clock.set(2.0)
    assert q.tick() == 1
    assert q.where(qpi.uid) == "active"
    assert q.next_event_time() is None


def test_next_event_time_lets_a_driver_skip_idle_time():
    q, clock = make_queue()
    q.add(mkpod("p"))
    qpi = q.pop()
    qpi.consecutive_errors = 4  # the 5th error: 10 s
    clock.set(3.25)
    fail(q, qpi)
    t = q.next_event_time()
    assert t == 14.0  # expiry 13.25 -> flush at 14
    clock.set(t)
    assert q.tick() == 1
    assert q.pop() is qpi


def test_next_event_time_in_the_past_means_tick_now():
    q, clock = make_queue()
    q.add(mkpod("p"))
    qpi = q.pop()
    fail(q, qpi)  # expiry 1.0
    clock.set(7.3)  # nobody ticked in between
    assert q.next_event_time() == 1.0
    assert q.tick() == 1


def test_gated_pod_never_counts_as_backing_off():
    q, _clock = make_queue()
    q.add(mkpod("g", gates=["wait"]))
    qpi = q.get(mkpod("g").uid)
    qpi.attempts = 3
    assert qpi.gated and not q.is_backing_off(qpi)


def test_error_failure_with_pending_plugins_is_not_an_error():
    q, _clock = make_queue()
    q.add(mkpod("p"))
    qpi = pop_fail(q, pending=["Custom"])
    # rejected by a Pending plugin: no events in flight, so it waits for one
    assert q.where(qpi.uid) == "unschedulable"


def test_next_event_time_can_ignore_error_backoff():
    q, clock = make_queue({"A": [ClusterEventWithHint(NODE_ADD)]})
    q.add(mkpod("err"))
    q.add(mkpod("rej"))
    err = pop_fail(q)  # an error: backoff until 1
    assert q.next_event_time(include_errors=False) is None
    assert q.next_event_time() == 1.0
    rej = q.pop()
    rej.unschedulable_count = 2  # the 3rd rejection: 4 s
    clock.set(0.5)
    fail(q, rej, "A")
    q.move_all_to_active_or_backoff(NODE_ADD)  # rejected pod: backoff until 4.5
    assert q.where(rej.uid) == "backoff"
    assert q.next_event_time(include_errors=False) == 5.0
    assert q.next_event_time() == 1.0
    clock.set(5.0)
    assert q.flush_backoff_completed() == 2
    assert (q.where(err.uid), q.where(rej.uid)) == ("active", "active")


def test_backoff_counts_failures_not_attempts():
    """v1.34: the backoff doubles over the rejections by plugins, or over the consecutive
    errors when the last attempt failed with one (a rejection resets them); how often the pod
    was popped does not matter."""
    q, clock = make_queue({"A": [ClusterEventWithHint(NODE_ADD)]})
    q.add(mkpod("p"))
    qpi = q.pop()
    qpi.attempts = 7  # popped often, e.g. scheduled but its binding failed: no backoff owed
    fail(q, qpi)  # 1st consecutive error: 1 s
    assert (qpi.consecutive_errors, qpi.unschedulable_count) == (1, 0)
    assert q.backoff_expiry(qpi) == 1.0
    clock.set(1.0)
    q.flush_backoff_completed()
    qpi = q.pop()
    fail(q, qpi)  # 2nd consecutive error: 2 s from t=1
    assert q.backoff_expiry(qpi) == 3.0
    clock.set(3.0)
    q.flush_backoff_completed()
    qpi = q.pop()
    fail(q, qpi, "A")  # a rejection: errors reset, 1st rejection: 1 s
    assert (qpi.consecutive_errors, qpi.unschedulable_count) == (0, 1)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(qpi.uid) == "backoff" and q.backoff_expiry(qpi) == 4.0
