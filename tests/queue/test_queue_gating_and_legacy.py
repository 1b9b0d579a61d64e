"""Gated pods, PreEnqueue / SchedulingGates (docs/scheduling-model.md, "Scheduling gates"),
and the legacy mode without queueing hints, moveRequestCycle
(docs/scheduling-model.md, "Requeueing and queueing hints")."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import ClusterEventWithHint
from scheduler_core.plugins import names
from scheduler_core.queue import EVENT_UNSCHEDULABLE_TIMEOUT
from tests.queue.queue_helpers import (
    GATES_ELIMINATED,
    NODE_ADD,
    NODE_DELETE,
    QUEUE,
    SKIP,
    Hints,
    fail,
    make_queue,
    mkpod,
    pop_fail,
    relabel,
    with_spec,
)


def reg(event, fn=None):
    return [ClusterEventWithHint(event, fn)]


# --------------------------------------------------------------------------- gating
@pytest.mark.parametrize("hints_on", [True, False], ids=["hints", "legacy"])
def test_gated_pod_parks_until_its_gates_are_removed(hints_on):
    q, clock = make_queue(queueing_hints_enabled=hints_on)
    pod = mkpod("p", gates=["a", "b"])
    assert q.add(pod) == "unschedulable"
    qpi = q.get(pod.uid)
    assert qpi.gated and qpi.gating_plugin == names.SCHEDULING_GATES
    assert names.SCHEDULING_GATES in qpi.unschedulable_plugins
    assert qpi.initial_attempt_timestamp is None
    assert (q.pop(), q.gated_count()) == (None, 1)

    # cluster events, the wildcard and the 5-minute flush leave it alone
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    clock.set(1000.0)
    q.tick()
    assert q.where(pod.uid) == "unschedulable"
    assert q.next_event_time() is None

    one_gate = with_spec(pod, scheduling_gates=("b",))
    assert q.update(pod, one_gate) == "unschedulable"
    assert q.get(pod.uid).pod is one_gate

    no_gates = with_spec(one_gate, scheduling_gates=())
    assert q.update(one_gate, no_gates) == "active"
    released = q.pop()
    assert released.pod is no_gates and not released.gated
    assert released.initial_attempt_timestamp == 1000.0


def test_gates_hint_is_only_asked_for_gate_removal():
    h = Hints()
    q, _ = make_queue({names.SCHEDULING_GATES: reg(GATES_ELIMINATED,
                                                   h.fn(names.SCHEDULING_GATES, QUEUE))})
    pod = mkpod("p", gates=["a"])
    q.add(pod)
    q.update(pod, relabel(pod, x="1"))
    assert h.calls == [] and q.gated_count() == 1


def test_pre_enqueue_runs_again_when_leaving_backoff():
    gate = {"closed": False}

    def pre_enqueue(pod):
        return ("Custom", None) if gate["closed"] else None

    q, clock = make_queue(pre_enqueue=pre_enqueue)
    q.add(mkpod("p"))
    qpi = pop_fail(q)  # error -> backoff
    gate["closed"] = True
    clock.set(5.0)
    assert q.flush_backoff_completed() == 0
    assert q.where(qpi.uid) == "unschedulable" and qpi.gated and qpi.gating_plugin == "Custom"


# --------------------------------------------------------------------------- legacy mode
@pytest.mark.parametrize(
    "event_during_flight, rejectors, want",
    [
        (None, ["A"], "unschedulable"),
        (NODE_ADD, ["A"], "backoff"),
        (NODE_DELETE, ["A"], "unschedulable"),  # nobody registered Node/Delete: no move request
        (None, [], "backoff"),  # an error
    ],
    ids=["no-move-request", "move-request-during-cycle", "uninteresting-event", "error"],
)
def test_legacy_move_request_cycle(event_during_flight, rejectors, want):
    h = Hints()
    q, _ = make_queue({"A": reg(NODE_ADD, h.fn("A", SKIP))}, queueing_hints_enabled=False)
    q.add(mkpod("p"))
    qpi = q.pop()
    if event_during_flight is not None:
        q.move_all_to_active_or_backoff(event_during_flight)
    assert fail(q, qpi, *rejectors) == want
    assert h.calls == []  # legacy: hint functions are never called


def test_legacy_move_request_before_the_cycle_does_not_count():
    q, _ = make_queue({"A": reg(NODE_ADD)}, queueing_hints_enabled=False)
    q.add(mkpod("p"))
    q.move_all_to_active_or_backoff(NODE_ADD)  # cycle 0
    qpi = q.pop()  # cycle 1
    assert q.move_request_cycle == 0
    assert fail(q, qpi, "A") == "unschedulable"


def test_legacy_events_move_pods_by_registration_only():
    h = Hints()
    q, clock = make_queue({"A": reg(NODE_ADD, h.fn("A", SKIP))}, queueing_hints_enabled=False)
    q.add(mkpod("p"))
    qpi = pop_fail(q, "A")
    clock.advance(0.5)
    q.move_all_to_active_or_backoff(NODE_DELETE)
    assert q.where(qpi.uid) == "unschedulable"
    q.move_all_to_active_or_backoff(NODE_ADD)  # the Skip hint is ignored: Queue
    assert q.where(qpi.uid) == "backoff" and h.calls == []


def test_legacy_keeps_no_in_flight_state():
    q, _ = make_queue({"A": reg(NODE_ADD)}, queueing_hints_enabled=False)
    pod = mkpod("p")
    q.add(pod)
    qpi = q.pop()
    assert q.in_flight_count() == 0
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.in_flight_events() == []
    # upstream legacy Update puts a pod that is in no sub-queue back into activeQ
    assert q.update(pod, relabel(pod, a="b")) == "active"
    assert fail(q, qpi, "A") is None  # already queued: left alone


@pytest.mark.parametrize(
    "change, want",
    [
        (lambda p: relabel(p, app="x"), "active"),
        (lambda p: with_spec(p, priority=9), "active"),
        (lambda p: _status_only(p), "unschedulable"),
    ],
    ids=["labels", "spec", "status-only"],
)
def test_legacy_update_of_unschedulable_pod(change, want):
    q, clock = make_queue({"A": reg(NODE_ADD)}, queueing_hints_enabled=False)
    pod = mkpod("p")
    q.add(pod)
    pop_fail(q, "A")
    clock.advance(5)
    assert q.update(pod, change(pod)) == want


def test_legacy_update_while_backing_off_goes_to_backoff():
    q, _ = make_queue({"A": reg(NODE_ADD)}, queueing_hints_enabled=False)
    pod = mkpod("p")
    q.add(pod)
    pop_fail(q, "A")
    assert q.update(pod, relabel(pod, app="x")) == "backoff"


def test_legacy_activate_of_unknown_pod_sets_move_request():
    q, _ = make_queue(queueing_hints_enabled=False)
    q.add(mkpod("p"))
    q.pop()
    assert q.activate([mkpod("stranger")]) == 0
    assert q.move_request_cycle == 1


def _status_only(pod):
    new = pod.clone()
    new.uid = pod.uid
    new.nominated_node_name = "n9"
    return new
