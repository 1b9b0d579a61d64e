"""The 5-minute leftover flush, Update / Delete / Activate, add_unschedulable edge cases."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import ClusterEventWithHint
from scheduler_core.queue import EVENT_UNSCHEDULED_POD_UPDATE
from tests.queue.queue_helpers import (
    NODE_ADD,
    fail,
    make_queue,
    mkpod,
    pop_fail,
    pop_names,
    with_spec,
)

NEVER = {"A": []}  # plugin A is registered for no event: only the timeout can move its pods


# --------------------------------------------------------------------------- leftover flush
@pytest.mark.parametrize(
    "fail_at, moved_at",
    [(0.0, 330.0), (10.0, 330.0), (29.0, 330.0), (30.0, 360.0), (45.5, 360.0)],
    ids=lambda v: str(v),
)
def test_leftover_flush_after_five_minutes_on_the_30s_grid(fail_at, moved_at):
    q, clock = make_queue(NEVER)
    q.add(mkpod("p"))
    qpi = q.pop()
    clock.set(fail_at)
    fail(q, qpi, "A")
    assert q.next_event_time() == moved_at
    assert q.next_event_time(include_leftover=False) is None
    t = float(int(fail_at))
    while t < moved_at:
        clock.set(max(t, fail_at))
        q.tick()
        assert q.where(qpi.uid) == "unschedulable", t
        t += 1.0
    clock.set(moved_at)
    assert q.tick() == 1
    assert q.where(qpi.uid) == "active"


@pytest.mark.parametrize("now, want", [(300.0, "unschedulable"), (300.5, "active")],
                         ids=["exactly-5min", "past-5min"])
def test_leftover_limit_is_strict(now, want):
    q, clock = make_queue(NEVER)
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    clock.set(now)
    q.flush_unschedulable_leftover()
    assert q.where(qpi.uid) == want


def test_leftover_moves_to_backoff_if_still_backing_off():
    q, clock = make_queue(NEVER, initial_backoff=400.0, max_backoff=400.0)
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    clock.set(301.0)
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(qpi.uid) == "backoff"
    assert q.next_event_time() == 400.0


def test_leftover_takes_only_old_pods():
    q, clock = make_queue(NEVER)
    for name in ("old", "young"):
        q.add(mkpod(name))
    pop_fail(q, "A")  # old, at t=0
    clock.set(100.0)
    pop_fail(q, "A")  # young, at t=100
    clock.set(330.0)
    assert q.tick() == 1
    assert pop_names(q) == ["old"]
    assert q.next_event_time() == 420.0


# --------------------------------------------------------------------------- update
def test_update_in_active_q_replaces_pod_and_reorders():
    q, _ = make_queue()
    a, b = mkpod("a", 1), mkpod("b", 2)
    q.add(a)
    q.add(b)
    a2 = with_spec(a, priority=5)
    assert q.update(a, a2) == "active"
    assert q.active_count() == 2
    first = q.pop()
    assert first.pod is a2


def test_update_in_backoff_q_stays_there():
    q, _ = make_queue()
    pod = mkpod("p")
    q.add(pod)
    qpi = pop_fail(q)
    new = with_spec(pod, priority=3)
    assert q.update(pod, new) == "backoff"
    assert qpi.pod is new


def test_update_of_unknown_pod_adds_it():
    q, _ = make_queue()
    pod = mkpod("p")
    assert q.update(pod, with_spec(pod, priority=1)) == "active"
    assert q.update(None, mkpod("q", gates=["g"])) == "unschedulable"


def test_update_of_unschedulable_pod_asks_hints():
    calls = []

    def hint(pod, old, new):
        calls.append(new.spec.priority)
        return 1

    q, clock = make_queue({"A": [ClusterEventWithHint(EVENT_UNSCHEDULED_POD_UPDATE, hint)]})
    pod = mkpod("p")
    q.add(pod)
    pop_fail(q, "A")
    clock.advance(5)
    assert q.update(pod, with_spec(pod, priority=4)) == "active"
    assert calls == [4]


# --------------------------------------------------------------------------- delete
@pytest.mark.parametrize("where", ["active", "backoff", "unschedulable", "gated"])
def test_delete_from_each_sub_queue(where):
    q, _ = make_queue({"A": []})
    pod = mkpod("p", gates=["g"] if where == "gated" else (), nominated="n1")
    q.add(pod)
    if where == "backoff":
        pop_fail(q)
    elif where == "unschedulable":
        pop_fail(q, "A")
    assert q.where(pod.uid) == ("unschedulable" if where == "gated" else where)
    q.add_nominated_pod(pod, "n1")
    assert q.delete(pod) is True
    assert len(q) == 0 and q.where(pod.uid) is None
    assert q.nominated_pods_for_node("n1") == []
    assert q.pop() is None and q.flush_backoff_completed() == 0
    assert q.delete(pod) is False


# --------------------------------------------------------------------------- activate
def test_activate_moves_pool_and_backoff_pods_to_active():
    q, _ = make_queue({"A": []})
    for name in ("in-pool", "in-backoff", "in-active", "gated"):
        q.add(mkpod(name, gates=["g"] if name == "gated" else ()))
    pool = pop_fail(q, "A")
    backoff = pop_fail(q)
    assert (q.where(pool.uid), q.where(backoff.uid)) == ("unschedulable", "backoff")
    pods = [pool.pod, backoff.pod, mkpod("in-active"), mkpod("gated", gates=["g"])]
    assert q.activate(pods) == 2
    assert q.counts()["active"] == 3 and q.gated_count() == 1
    assert q.move_request_cycle == q.scheduling_cycle  # the gated pod was not activated


def test_add_unschedulable_if_already_queued_is_refused_but_done():
    q, _ = make_queue()
    pod = mkpod("p")
    q.add(pod)
    qpi = q.pop()
    q.add(pod)  # a duplicate add while in flight
    assert fail(q, qpi, "A") is None
    assert q.in_flight_count() == 0
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0


def test_lazy_deletion_and_compaction_keep_heaps_exact():
    """Random adds, priority updates and deletes (enough to trigger heap rebuilds) against
    a sorted model of activeQ; then the same through backoffQ via activate."""
    import random

    rng = random.Random(7)
    q, clock = make_queue()
    live: dict[str, tuple[int, float, int]] = {}  # uid -> sort key
    pods = {}
    for step in range(3000):
        clock.advance(0.01)
        op = rng.random()
        if op < 0.4 or not live:
            name = f"p{step}"
            pod = mkpod(name, prio=rng.randrange(5))
            q.add(pod)
            pods[pod.uid] = pod
            live[pod.uid] = (-pod.priority, clock.now(), step)
        elif op < 0.8:
            uid = rng.choice(list(live))
            new = with_spec(pods[uid], priority=rng.randrange(5))
            q.update(pods[uid], new)
            pods[uid] = new
            _, ts, seq = live[uid]
            live[uid] = (-new.priority, ts, seq)
        else:
            uid = rng.choice(list(live))
            q.delete(pods.pop(uid))
            del live[uid]
    assert len(q._active_heap) <= 2 * len(live) + 65  # compacted, not just growing
    want = [pods[u].name for u in sorted(live, key=live.get)]
    assert pop_names(q) == want
