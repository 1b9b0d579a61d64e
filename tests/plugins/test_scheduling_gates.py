"""SchedulingGates: PreEnqueue status and hint."""

from __future__ import annotations

from scheduler_core.framework.interface import ActionType, Code, QueueingHint
from scheduler_core.plugins.scheduling_gates import SchedulingGates
from tests.builders import make_pod

PLUGIN = SchedulingGates()


def test_pre_enqueue():
    assert PLUGIN.pre_enqueue(make_pod().obj()) is None
    status = PLUGIN.pre_enqueue(make_pod().gates("g1", "g2").obj())
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("waiting for scheduling gates: [g1 g2]",)


def test_hint_only_for_the_pod_itself_once_ungated():
    (e,) = PLUGIN.events_to_register()
    assert e.event.resource == "UnscheduledPod"
    assert e.event.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    pod = make_pod("p").uid("u").gates("g").obj()
    assert e.hint(pod, pod, make_pod("p").uid("u").obj()) == QueueingHint.QUEUE
    assert e.hint(pod, pod, make_pod("p").uid("u").gates("h").obj()) == QueueingHint.QUEUE_SKIP
    assert e.hint(pod, None, make_pod("q").uid("v").obj()) == QueueingHint.QUEUE_SKIP
