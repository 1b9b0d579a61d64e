"""schedule_pod's ScheduleResult: the host, how many nodes were evaluated and found feasible (as
upstream's ScheduleResult), and failures returned as values, never raised."""

from __future__ import annotations

from scheduler_core.framework.interface import Code, CycleState, Status
from tests.builders import make_node, make_pod


def _nodes(n: int, tainted: int) -> list:
    """``n`` nodes; the first ``tainted`` of them (in list order) repel plain pods."""
    out = []
    for i in range(n):
        b = make_node(f"n{i:03d}").alloc(cpu="4", memory="32Gi", pods=110) \
            .label("kubernetes.io/hostname", f"n{i:03d}")
        if i < tainted:
            b.taint("dedicated", "infra")
        out.append(b.obj())
    return out


def _schedule_pod(sched, pod):
    fwk = sched.profiles["default-scheduler"]
    return sched.schedule_pod(fwk, CycleState(), pod, None)


def test_counts_the_nodes_evaluated_until_enough_fit(make_scheduler):
    # 150 nodes: the search stops at 100 feasible ones; 30 rejected ones come first
    cluster, sched = make_scheduler(_nodes(150, tainted=30))
    pod = make_pod("p").req(cpu="100m").obj()
    cluster.add_pod(pod)
    result = _schedule_pod(sched, pod)
    assert (result.status, result.diagnosis) == (None, None)
    assert (result.evaluated_nodes, result.feasible_nodes) == (130, 100)
    assert int(result.suggested_host[1:]) >= 30
    assert sched.next_start_node_index == 130


def test_the_nominated_node_alone_is_evaluated_when_it_fits(make_scheduler):
    cluster, sched = make_scheduler(_nodes(150, tainted=30))
    pod = make_pod("p").req(cpu="100m").obj()
    pod.nominated_node_name = "n140"
    cluster.add_pod(pod)
    result = _schedule_pod(sched, pod)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == \
        ("n140", 1, 1)
    assert sched.next_start_node_index == 0


def test_no_fit_returns_the_diagnosis_and_the_cycle_makes_the_status(make_scheduler):
    cluster, sched = make_scheduler(_nodes(4, tainted=4))
    pod = make_pod("p").req(cpu="100m").obj()
    cluster.add_pod(pod)
    result = _schedule_pod(sched, pod)
    assert (result.suggested_host, result.status) == ("", None)
    assert result.diagnosis is not None and len(result.diagnosis.slots) == 4
    sched.run_until_idle()
    assert sched.failures["default/p"].startswith(
        "0/4 nodes are available: 4 node(s) had untolerated taint(s).")


def test_a_pre_filter_error_is_returned_not_raised(make_scheduler, monkeypatch):
    cluster, sched = make_scheduler(_nodes(3, tainted=0))
    fwk = sched.profiles["default-scheduler"]
    error = Status(Code.ERROR, ("boom",), "Broken")
    monkeypatch.setattr(fwk, "run_pre_filter", lambda state, pod, table: (None, error, []))
    pod = make_pod("p").req(cpu="100m").obj()
    cluster.add_pod(pod)
    result = _schedule_pod(sched, pod)
    assert (result.suggested_host, result.status, result.diagnosis) == ("", error, None)
    assert sched.schedule_one()
    assert sched.failures["default/p"] == "boom"
    assert not cluster.pods["default/p"].node_name
