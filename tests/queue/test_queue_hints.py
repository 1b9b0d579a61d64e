"""QueueingHints (docs/scheduling-model.md, "Requeueing and queueing hints"): only rejector
plugins are asked; Skip / Queue / Pending; in-flight events replayed when a pod comes back
rejected."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import ActionType, ClusterEvent, ClusterEventWithHint
from scheduler_core.queue import EVENT_UNSCHEDULABLE_TIMEOUT, REGISTER_ALL_EVENTS
from tests.queue.queue_helpers import (
    NODE_ADD,
    NODE_DELETE,
    NODE_LABEL,
    QUEUE,
    SKIP,
    Hints,
    fail,
    make_queue,
    mkpod,
    pop_fail,
    relabel,
)


def reg(event: ClusterEvent, fn=None) -> list[ClusterEventWithHint]:
    return [ClusterEventWithHint(event, fn)]


def test_only_rejector_plugins_are_asked():
    h = Hints()
    q, _ = make_queue({p: reg(NODE_ADD, h.fn(p, SKIP)) for p in ("A", "B", "C")})
    q.add(mkpod("p1"))
    q.add(mkpod("p2"))
    pop_fail(q, "A")
    pop_fail(q, "B", "C")
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, "node") == 0
    assert sorted(h.calls) == [("A", "p1", "'node'"), ("B", "p2", "'node'"),
                               ("C", "p2", "'node'")]


@pytest.mark.parametrize(
    "unschedulable, pending, answers, advance, want",
    [
        (["A"], [], {"A": SKIP}, 0.0, "unschedulable"),
        (["A"], [], {"A": QUEUE}, 0.0, "backoff"),
        (["A"], [], {"A": QUEUE}, 5.0, "active"),
        ([], ["A"], {"A": QUEUE}, 0.0, "active"),
        ([], ["A"], {"A": SKIP}, 0.0, "unschedulable"),
        (["A", "B"], [], {"A": SKIP, "B": QUEUE}, 0.0, "backoff"),
        (["B"], ["A"], {"A": SKIP, "B": QUEUE}, 0.0, "backoff"),
        (["B"], ["A"], {"A": QUEUE, "B": SKIP}, 0.0, "active"),
    ],
    ids=["skip-stays", "queue-still-backing-off", "queue-backoff-over", "pending-queue",
         "pending-skip", "one-of-two-queues", "pending-skips-unsched-queues",
         "pending-queues-immediately"],
)
def test_hint_answer_decides_destination(unschedulable, pending, answers, advance, want):
    h = Hints()
    q, clock = make_queue({p: reg(NODE_ADD, h.fn(p, a)) for p, a in answers.items()})
    q.add(mkpod("p"))
    qpi = pop_fail(q, *unschedulable, pending=pending)
    assert q.where(qpi.uid) == "unschedulable"
    clock.advance(advance)
    moved = q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(qpi.uid) == want
    assert moved == (0 if want == "unschedulable" else 1)


def test_event_not_registered_by_the_rejector_does_not_move_or_ask():
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", QUEUE)),
                       "B": reg(NODE_DELETE, h.fn("B", QUEUE))})
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    q.move_all_to_active_or_backoff(NODE_DELETE)
    assert h.calls == [] and q.where(qpi.uid) == "unschedulable"


def test_action_bitmask_and_wildcard_resource_registration():
    h = Hints()
    q, clock = make_queue({"A": reg(ClusterEvent("Node", ActionType.UPDATE), h.fn("A", QUEUE)),
                           "B": reg(ClusterEvent("*", ActionType.DELETE), h.fn("B", QUEUE))})
    q.add(mkpod("a"))
    q.add(mkpod("b"))
    a = pop_fail(q, "A")
    b = pop_fail(q, "B")
    clock.advance(5)
    q.move_all_to_active_or_backoff(NODE_ADD)  # neither registered for Add
    assert (q.where(a.uid), q.where(b.uid)) == ("unschedulable", "unschedulable")
    q.move_all_to_active_or_backoff(NODE_LABEL)  # Update covers UpdateNodeLabel
    q.move_all_to_active_or_backoff(ClusterEvent("PersistentVolume", ActionType.DELETE))
    assert (q.where(a.uid), q.where(b.uid)) == ("active", "active")


def test_hint_error_counts_as_queue():
    def boom(pod, old, new):
        raise RuntimeError("hint bug")

    q, clock = make_queue({"A": reg(NODE_ADD, boom)})
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    clock.advance(5)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(qpi.uid) == "active"


@pytest.mark.parametrize(
    "hints, want",
    [
        ({}, "active"),  # A absent from the map: registered for every event, no hint
        ({"A": []}, "unschedulable"),  # A registered for nothing
        ({"A": reg(NODE_ADD)}, "active"),  # registration without a hint function: Queue
        ({"A": list(REGISTER_ALL_EVENTS)}, "active"),
    ],
    ids=["unregistered-plugin", "registered-for-nothing", "no-hint-fn", "all-events"],
)
def test_registration_defaults(hints, want):
    q, clock = make_queue(hints)
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    clock.advance(5)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where(qpi.uid) == want


def test_wildcard_event_moves_every_non_gated_pod_without_asking():
    h = Hints()
    q, clock = make_queue({"A": reg(NODE_ADD, h.fn("A", SKIP))})
    q.add(mkpod("p"))
    q.add(mkpod("g", gates=["x"]))
    qpi = pop_fail(q, "A")
    clock.advance(5)
    assert q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT) == 1
    assert q.where(qpi.uid) == "active" and h.calls == []
    assert q.gated_count() == 1


def test_pre_check_filters_pods():
    q, clock = make_queue({"A": reg(NODE_ADD)})
    for name in ("keep", "move"):
        q.add(mkpod(name))
        pop_fail(q, "A")
    clock.advance(5)
    q.move_all_to_active_or_backoff(NODE_ADD, pre_check=lambda pod: pod.name == "move")
    assert [p.name for p in q.pending_pods()] == ["move", "keep"]


def test_event_of_no_interest_is_a_no_op():
    q, _ = make_queue({"A": reg(NODE_ADD)})
    q.add(mkpod("p"))
    pop_fail(q, "A")
    q.move_all_to_active_or_backoff(NODE_DELETE)
    assert q.move_request_cycle == -1
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.move_request_cycle == q.scheduling_cycle == 1


# --------------------------------------------------------------------------- in flight
def test_event_while_in_flight_is_replayed_on_failure():
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", QUEUE))})
    q.add(mkpod("p"))
    qpi = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD, None, "n1")
    assert q.in_flight_events() == [NODE_ADD]
    assert fail(q, qpi, "A") == "backoff"
    assert h.calls == [("A", "p", "'n1'")]
    assert q.in_flight_events() == [] and q.in_flight_count() == 0


def test_event_before_pop_is_not_replayed():
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", QUEUE))})
    q.add(mkpod("p"))
    q.move_all_to_active_or_backoff(NODE_ADD)  # nobody in flight: not kept
    assert q.in_flight_events() == []
    qpi = q.pop()
    assert fail(q, qpi, "A") == "unschedulable"
    assert h.calls == []


def test_pending_plugin_queue_during_flight_requeues_immediately():
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", QUEUE))})
    q.add(mkpod("p"))
    qpi = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert fail(q, qpi, pending=["A"]) == "active"


def test_error_failure_goes_after_backoff_whatever_happened():
    q, _ = make_queue({"A": reg(NODE_ADD, lambda *a: SKIP)})
    q.add(mkpod("p"))
    qpi = q.pop()
    assert fail(q, qpi) == "backoff"


def test_each_pod_sees_only_events_after_its_own_pop():
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", QUEUE)),
                       "B": reg(NODE_DELETE, h.fn("B", QUEUE))})
    q.add(mkpod("p1"))
    q.add(mkpod("p2"))
    p1 = q.pop()
    q.move_all_to_active_or_backoff(NODE_ADD, None, "e1")
    p2 = q.pop()
    q.move_all_to_active_or_backoff(NODE_DELETE, "e2", None)
    assert q.in_flight_events() == [NODE_ADD, NODE_DELETE]
    q.done(p1.uid)  # p1 bound: e1 is needed by nobody any more
    assert q.in_flight_events() == [NODE_DELETE]
    assert fail(q, p2, "A") == "unschedulable"  # A's event (e1) came before p2's pop
    assert h.calls == []
    assert q.in_flight_events() == []


def test_update_of_in_flight_pod_is_kept_for_replay():
    h = Hints()
    label_update = ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_LABEL)
    q, _ = make_queue({"A": reg(label_update, h.fn("A", QUEUE))})
    pod = mkpod("p")
    q.add(pod)
    qpi = q.pop()
    new = relabel(pod, app="web")
    assert q.update(pod, new) == "in_flight"
    assert q.active_count() == 0  # not re-added while in flight
    assert fail(q, qpi, "A") == "backoff"
    assert len(h.calls) == 1


def test_activate_of_in_flight_pod_forces_requeue_of_that_pod_only():
    q, _ = make_queue({"A": reg(NODE_ADD, lambda *a: SKIP)})
    q.add(mkpod("p1"))
    q.add(mkpod("p2"))
    p1, p2 = q.pop(), q.pop()
    assert q.activate([p1.pod]) == 0
    assert fail(q, p1, "A") == "backoff"  # ForceActivate for p1
    assert fail(q, p2, "A") == "unschedulable"  # not for p2


def test_move_all_touches_only_rejector_hints_at_scale():
    h = Hints()
    q, _ = make_queue({"Cheap": reg(NODE_ADD, h.fn("Cheap", SKIP)),
                       "Other": reg(NODE_ADD, h.fn("Other", SKIP)),
                       "Elsewhere": reg(NODE_DELETE, h.fn("Elsewhere", QUEUE))})
    for i in range(3000):
        q.add(mkpod(f"p{i}"))
    for i in range(3000):
        pop_fail(q, "Cheap" if i % 3 == 0 else "Elsewhere")
    assert h.calls == []
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0
    assert h.plugins_called() == ["Cheap"] * 1000
    assert q.unschedulable_count() == 3000
