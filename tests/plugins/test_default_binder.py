"""DefaultBinder: binds through the handle."""

from __future__ import annotations

from scheduler_core.framework.interface import CycleState, Status
from scheduler_core.plugins.default_binder import DefaultBinder
from tests.builders import make_pod


class FakeHandle:
    def __init__(self, result: object = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.result = result

    def bind(self, pod, node_name):
        self.calls.append((pod.name, node_name))
        return self.result


def test_bind_calls_handle():
    handle = FakeHandle()
    assert DefaultBinder(None, handle).bind(CycleState(), make_pod("p").obj(), "n1") is None
    assert handle.calls == [("p", "n1")]


def test_bind_passes_on_a_status_from_the_handle():
    failure = Status.error("binding rejected")
    assert DefaultBinder(None, FakeHandle(failure)).bind(CycleState(), make_pod().obj(),
                                                         "n") is failure
