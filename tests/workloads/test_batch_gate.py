"""The BatchGate example plugin: Reserve/Unreserve bookkeeping, Permit Wait until a batch is
complete, allowing every waiting member, timeouts in simulated time, strict args; and the
uncommon catalog's SchedulingBatchPermitGate workload."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import ActionType, Code, CycleState, QueueingHint
from tests.builders import make_node, make_pod
from workloads.config import load_configs
from workloads.example_plugins.batch_gate import (
    BATCH_LABEL,
    DEFAULT_PERMIT_TIMEOUT,
    NAME,
    SIZE_LABEL,
    BatchGate,
)
from workloads.runner import run_workload

CATALOG = Path(__file__).resolve().parents[2] / "workloads" / "configs" / "uncommon"


def _config(timeout: float = 10.0) -> dict:
    return {
        "pluginRegistry": {NAME: "workloads.example_plugins.batch_gate:BatchGate"},
        "profiles": [{
            "plugins": {"multiPoint": {"enabled": [{"name": NAME}]}},
            "pluginConfig": [{"name": NAME, "args": {"permitTimeoutSeconds": timeout}}],
        }],
    }


def _nodes(n: int = 4):
    return [make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods=110).obj() for i in range(n)]


def _member(name: str, batch: str = "b", size: str = "3"):
    return make_pod(name).label(BATCH_LABEL, batch).label(SIZE_LABEL, size).req(cpu="100m").obj()


def _gate(sched) -> BatchGate:
    return next(p for p in sched.profiles["default-scheduler"].points["Permit"] if p.name == NAME)


def _attempts(result) -> float:
    (item,) = [d for d in result.data_items if d.labels.get("Metric") == "schedperf_pods"]
    return item.data["Attempts"]


def test_members_wait_until_the_batch_is_complete_then_all_bind(make_scheduler):
    cluster, sched = make_scheduler(_nodes(), config=_config())
    gate = _gate(sched)
    for name in ("m0", "m1"):
        cluster.add_pod(_member(name))
    sched.run_until_idle(advance_clock=False)
    assert sorted(wp.pod.name for wp in sched.waiting.values()) == ["m0", "m1"]
    assert gate.reserved("default", "b") == ["m0", "m1"]
    assert all(wp.pending_plugins == [NAME] for wp in sched.waiting.values())
    assert cluster.bind_count == 0 and len(cluster.assumed) == 2
    cluster.add_pod(_member("m2"))
    sched.run_until_idle(advance_clock=False)
    assert not sched.waiting
    assert cluster.bind_count == 3 and not cluster.assumed
    assert all(cluster.pods[f"default/m{i}"].node_name for i in range(3))
    assert sched.clock.now() == 0.0  # nobody waited out a timeout
    assert gate.reserved("default", "b") == []  # PostBind forgot every member


def test_pods_without_the_label_pass(make_scheduler):
    cluster, sched = make_scheduler(_nodes(1), config=_config())
    cluster.add_pod(make_pod("plain").req(cpu="100m").obj())
    sched.run_until_idle()
    assert cluster.pods["default/plain"].node_name == "n0"
    assert not sched.waiting


def test_timeout_rejects_and_unreserves_then_a_complete_batch_binds(make_scheduler):
    cluster, sched = make_scheduler(_nodes(), config=_config(timeout=7.5))
    gate = _gate(sched)
    cluster.add_pod(_member("m0"))
    cluster.add_pod(_member("m1"))
    sched.run_until_idle(advance_clock=False)
    assert len(sched.waiting) == 2
    sched.clock.set(7.5)  # the Permit deadline, in simulated time
    sched.run_until_idle(advance_clock=False)
    assert not sched.waiting
    assert gate.reserved("default", "b") == []  # unreserved
    assert cluster.table.pod_count.sum() == 0  # forgotten: resources released
    reasons = {sched.failures["default/m0"], sched.failures["default/m1"]}
    assert "rejected due to timeout after waiting 7.5s at plugin BatchGate" in reasons
    for name in ("m0", "m1"):
        assert sched.queue.where(cluster.pods[f"default/{name}"].uid) == "unschedulable"
    # a third member arrives while they sit in the pool (nothing there wakes them: no
    # PodsToActivate in scheduler_core), and waits itself
    cluster.add_pod(_member("m2"))
    sched.run_until_idle(advance_clock=False)
    assert [wp.pod.name for wp in sched.waiting.values()] == ["m2"]
    assert gate.reserved("default", "b") == ["m2"]
    # the pool's 5-minute leftover flush retries m0 and m1, which complete the batch
    sched.clock.set(7.5 + 300.5)
    assert sched.queue.flush_unschedulable_leftover() == 2
    sched.run_until_idle(advance_clock=False)
    assert cluster.bind_count == 3 and not cluster.assumed
    assert not sched.pending_reasons()


def test_unreserve_rejects_waiting_siblings():
    waiting: dict[str, object] = {}

    class FakeWaiting:
        def __init__(self, pod):
            self.pod, self.rejected = pod, None

        def allow(self, plugin):  # pragma: no cover - not called here
            raise AssertionError("allow")

        def reject(self, plugin, message):
            self.rejected = (plugin, message)

    class FakeHandle:
        def get_waiting_pod(self, uid):
            return waiting.get(uid)

    gate = BatchGate(None, FakeHandle())
    a, b = _member("a"), _member("b")
    state = CycleState()
    assert gate.reserve(state, a, "n0") is None
    assert gate.reserve(state, b, "n1") is None
    status, timeout = gate.permit(state, b, "n1")
    assert status.code == Code.WAIT and timeout == DEFAULT_PERMIT_TIMEOUT
    assert status.message == "batch b: 2 of 3 members reserved"
    waiting[b.uid] = FakeWaiting(b)
    gate.unreserve(state, a, "n0")
    assert waiting[b.uid].rejected == (NAME, "batch b lost member a")
    assert gate.reserved("default", "b") == ["b"]
    assert gate.pre_bind(state, a, "n0").code == Code.ERROR  # no longer reserved
    assert gate.pre_bind(state, b, "n1") is None


def test_complete_batch_allows_every_waiting_member():
    allowed: list[tuple[str, str]] = []

    class FakeWaiting:
        def __init__(self, name):
            self.name = name

        def allow(self, plugin):
            allowed.append((self.name, plugin))

    class FakeHandle:
        def get_waiting_pod(self, uid):
            return FakeWaiting(uid)

    gate = BatchGate(None, FakeHandle())
    pods = [_member(f"m{i}", size="2") for i in range(2)]
    state = CycleState()
    for p in pods:
        assert gate.reserve(state, p, "n0") is None
    assert gate.permit(state, pods[1], "n0") == (None, 0.0)
    assert allowed == [(pods[0].uid, NAME)]


@pytest.mark.parametrize(("size", "problem"), [
    ("0", "must be a positive integer"), ("x", "must be a positive integer"),
    ("-2", "must be a positive integer"), ("", "must be a positive integer"),
])
def test_invalid_batch_size_is_unresolvable(size, problem):
    gate = BatchGate()
    status = gate.reserve(CycleState(), _member("m", size=size), "n0")
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and problem in status.message
    assert status.plugin == NAME


def test_size_disagreeing_with_the_batch_is_unresolvable():
    gate = BatchGate()
    assert gate.reserve(CycleState(), _member("a", size="3"), "n0") is None
    status = gate.reserve(CycleState(), _member("b", size="4"), "n0")
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == f"batch b has size 3, pod's {SIZE_LABEL} says 4"


def test_a_pod_added_to_the_same_batch_queues():
    (registration,) = BatchGate().events_to_register()
    assert registration.event.resource == "Pod" and registration.event.action == ActionType.ADD
    hint = registration.hint
    waiting = _member("w", batch="x")
    assert hint(waiting, None, _member("other", batch="x")) == QueueingHint.QUEUE
    assert hint(waiting, None, _member("other", batch="y")) == QueueingHint.QUEUE_SKIP
    assert hint(make_pod("plain").obj(), None, _member("o")) == QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(("args", "message"), [
    ({"permitTimeoutSeconds": 0}, "permitTimeoutSeconds: expected seconds > 0 and <= 900"),
    ({"permitTimeoutSeconds": 901}, "permitTimeoutSeconds: expected seconds > 0 and <= 900"),
    ({"permitTimeoutSeconds": float("nan")}, "expected seconds > 0"),
    ({"permitTimeoutSeconds": "10s"}, "permitTimeoutSeconds: expected a number of seconds"),
    ({"permitTimeoutSeconds": True}, "expected a number of seconds, got True"),
    ({"timeout": 5}, "args.timeout: unknown field (expected one of: permitTimeoutSeconds)"),
    ([1], "args: expected a mapping, got a list"),
])
def test_bad_args_are_clear_errors(args, message):
    with pytest.raises(ConfigError, match=r"^profiles") as err:
        BatchGate(args, None, args_path="profiles[0].pluginConfig[0].args")
    assert message in str(err.value)


def test_args_accepted():
    assert BatchGate().permit_timeout == DEFAULT_PERMIT_TIMEOUT
    assert BatchGate({"permitTimeoutSeconds": 2.5}).permit_timeout == 2.5


# --------------------------------------------------------------------------- the workload


def _workload_result():
    tc = next(t for t in load_configs(CATALOG) if t.name == "SchedulingBatchPermitGate")
    w = next(w for w in tc.workloads if w.name == "20Nodes")
    assert "compare" in w.labels
    return run_workload(tc, w)


@pytest.fixture(scope="module")
def workload_result():
    return _workload_result()


def test_catalog_workload_binds_every_batch(workload_result):
    r = workload_result
    assert r.status == "ok", r.reason
    placed = {(p.namespace, p.pod): p for p in r.placements}
    assert len(placed) == 44 and all(p.node for p in placed.values())
    late = sorted(p.pod for p in placed.values() if p.namespace == "late")
    assert late == [f"late-batch-pod-{i}" for i in range(4)]
    # each of the four "late" members was rejected by the Permit timeout once and retried
    # (the other 40 pods bound at their first attempt): 4 attempts more than pods
    assert _attempts(r) == len(placed) + 4
    assert placed[("late", "late-batch-pod-3")].attempts == 2


def test_catalog_workload_reports_attempts_of_pods_bound_after_a_wait(workload_result):
    """A pod bound after a Permit wait counts as scheduled (its attempts and duration)."""
    placed = {(p.namespace, p.pod): p for p in workload_result.placements}
    assert all(placed[("late", f"late-batch-pod-{i}")].attempts == 2 for i in range(3))


def test_catalog_workload_is_deterministic(workload_result):
    again = _workload_result()
    assert [(p.namespace, p.pod, p.node) for p in again.placements] == \
        [(p.namespace, p.pod, p.node) for p in workload_result.placements]
