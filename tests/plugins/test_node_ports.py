"""NodePorts: PreFilter Skip, host-port conflict rules, hints."""

from __future__ import annotations

import pytest

from scheduler_core.framework.interface import SKIP, Code, CycleState, QueueingHint
from scheduler_core.plugins.node_ports import ERR_REASON, NodePorts
from tests.builders import make_node, make_pod, run_filter, table_of

PLUGIN = NodePorts()


def test_pre_filter_skips_pods_without_host_ports():
    pod = make_pod().container(ports=[{"containerPort": 80}]).obj()
    assert PLUGIN.pre_filter(CycleState(), pod, table_of([])) == (None, SKIP)


CASES = [
    # (id, used (port, ip, protocol), wanted (port, ip, protocol), conflict)
    ("same-port-default-ip", (80, "", ""), (80, "", ""), True),
    ("different-port", (80, "", ""), (8080, "", ""), False),
    ("different-protocol", (80, "", "TCP"), (80, "", "UDP"), False),
    ("wildcard-wanted-vs-specific-used", (80, "10.0.0.1", ""), (80, "0.0.0.0", ""), True),
    ("specific-wanted-vs-wildcard-used", (80, "", ""), (80, "10.0.0.1", ""), True),
    ("same-specific-ip", (80, "10.0.0.1", ""), (80, "10.0.0.1", ""), True),
    ("different-specific-ips", (80, "10.0.0.1", ""), (80, "10.0.0.2", ""), False),
    ("udp-same", (53, "", "UDP"), (53, "", "UDP"), True),
]


@pytest.mark.parametrize(("used", "wanted", "conflict"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_conflicts(used, wanted, conflict):
    table = table_of([make_node("busy").obj(), make_node("free").obj()],
                     {"busy": [make_pod("old").host_port(*used).obj()]})
    got = run_filter(PLUGIN, make_pod().host_port(*wanted).obj(), table)
    assert got["free"] is None
    if conflict:
        assert got["busy"].code == Code.UNSCHEDULABLE
        assert got["busy"].reasons == (ERR_REASON,)
    else:
        assert got["busy"] is None


def test_any_of_several_ports_conflicting_rejects():
    table = table_of([make_node("busy").obj()], {"busy": [make_pod("old").host_port(9000).obj()]})
    pod = make_pod().host_port(8000).host_port(9000).obj()
    assert run_filter(PLUGIN, pod, table)["busy"].reasons == (ERR_REASON,)


def test_ports_of_sidecars_count_but_not_of_plain_init_containers():
    port = [{"containerPort": 1, "hostPort": 7000}]
    table = table_of([make_node("busy").obj()], {"busy": [make_pod("old").host_port(7000).obj()]})
    plain = make_pod().init_req(cpu="1", ports=port).obj()
    assert PLUGIN.pre_filter(CycleState(), plain, table) == (None, SKIP)
    sidecar = make_pod().init_req(cpu="1", sidecar=True, ports=port).obj()
    assert run_filter(PLUGIN, sidecar, table)["busy"].reasons == (ERR_REASON,)


def _hints():
    return {e.event.resource: e for e in PLUGIN.events_to_register()}


@pytest.mark.parametrize(("deleted", "expected"), [
    (make_pod("x").node("n").host_port(80), QueueingHint.QUEUE),
    (make_pod("x").nominated("n").host_port(80), QueueingHint.QUEUE),
    (make_pod("x").host_port(80), QueueingHint.QUEUE_SKIP),
    (make_pod("x").node("n"), QueueingHint.QUEUE_SKIP),
    (make_pod("x").node("n").host_port(81), QueueingHint.QUEUE_SKIP),
    (make_pod("x").node("n").host_port(80, "10.0.0.2"), QueueingHint.QUEUE_SKIP),
], ids=["assigned-same-port", "nominated-same-port", "unscheduled", "no-ports", "other-port",
        "other-ip"])
def test_hint_pod_deleted(deleted, expected):
    pod = make_pod().host_port(80, "10.0.0.1").obj()
    hint = _hints()["Pod"].hint
    assert hint(pod, deleted.obj(), None) == expected


def test_node_add_has_no_hint():
    e = _hints()["Node"]
    assert e.hint is None
