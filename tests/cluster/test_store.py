"""The fake cluster: events in order, binding, assume/forget, priority admission, orphans."""

from __future__ import annotations

import pytest

from scheduler_core.api.objects import Namespace, PriorityClass
from scheduler_core.cluster.events import EventType
from scheduler_core.cluster.store import Cluster
from scheduler_core.errors import AlreadyExistsError, ClusterError, NotFoundError
from tests.builders import make_node, make_pod


def node(name: str, cpu: str = "4"):
    return make_node(name).alloc(cpu=cpu, memory="8Gi", pods=10).obj()


def test_events_are_delivered_in_order():
    c = Cluster()
    seen = []
    c.subscribe(lambda ev: seen.append((ev.kind, ev.type, getattr(ev.obj, "name", None))))
    c.add_node(node("n1"))
    c.add_pod(make_pod("p").req(cpu="1").obj())
    c.assume(c.pods["default/p"], "n1")
    c.bind(c.pods["default/p"], "n1")
    c.delete_pod("default", "p")
    c.delete_node("n1")
    assert seen == [("Node", EventType.ADDED, "n1"), ("Pod", EventType.ADDED, "p"),
                    ("Pod", EventType.MODIFIED, "p"), ("Pod", EventType.DELETED, "p"),
                    ("Node", EventType.DELETED, "n1")]


def test_assume_forget_and_bind_account_resources():
    c = Cluster()
    c.add_node(node("n1"))
    pod = make_pod("p").req(cpu="1500m").obj()
    c.add_pod(pod)
    slot = c.table.slot_of["n1"]
    c.assume(pod, "n1")
    assert c.table.requested["cpu"][slot] == 1500 and c.table.pod_count[slot] == 1
    c.forget(pod)
    assert c.table.requested["cpu"][slot] == 0 and pod.node_name == ""
    c.assume(pod, "n1")
    c.bind(pod, "n1")
    assert pod.key not in c.assumed and c.table.pod_count[slot] == 1
    with pytest.raises(ClusterError):
        c.forget(pod)


def test_pod_created_with_node_name_is_bound():
    c = Cluster()
    c.add_node(node("n1"))
    c.add_pod(make_pod("p").req(cpu="1").node("n1").obj())
    assert c.table.pod_count[c.table.slot_of["n1"]] == 1


def test_pods_bound_to_a_missing_node_wait_for_it():
    c = Cluster()
    c.add_pod(make_pod("early").req(cpu="1").node("late-node").obj())
    c.add_node(node("late-node"))
    assert c.table.requested["cpu"][c.table.slot_of["late-node"]] == 1000
    c.delete_node("late-node")
    c.add_node(node("late-node"))  # the pod is still bound to it
    assert c.table.pod_count[c.table.slot_of["late-node"]] == 1


def test_priority_admission():
    c = Cluster()
    c.add_priority_class(PriorityClass("high", 1000))
    c.add_priority_class(PriorityClass("default", 5, global_default=True))
    high = make_pod("a").obj()
    high.spec = type(high.spec)(priority_class_name="high", containers=high.spec.containers)
    c.add_pod(high)
    c.add_pod(make_pod("b").obj())
    assert (c.pods["default/a"].priority, c.pods["default/b"].priority) == (1000, 5)
    missing = make_pod("c").obj()
    missing.spec = type(missing.spec)(priority_class_name="nope",
                                      containers=missing.spec.containers)
    with pytest.raises(ClusterError, match="no PriorityClass with name nope was found"):
        c.add_pod(missing)


def test_duplicates_and_missing_objects_are_errors():
    c = Cluster()
    c.add_node(node("n1"))
    with pytest.raises(AlreadyExistsError):
        c.add_node(node("n1"))
    with pytest.raises(NotFoundError):
        c.delete_pod("default", "nope")
    with pytest.raises(NotFoundError):
        c.update_node(node("ghost"))
    c.add_namespace(Namespace("team-a", {"env": "prod"}))
    with pytest.raises(AlreadyExistsError):
        c.add_namespace(Namespace("team-a"))
    assert c.namespace_labels("team-a") == {"env": "prod"}


def test_node_update_moves_zone_and_list_order():
    c = Cluster()
    for i, zone in enumerate("aabb"):
        c.add_node(make_node(f"n{i}").alloc(cpu="1", memory="1Gi", pods=10)
                   .label("topology.kubernetes.io/zone", zone).obj())
    # nodeTree order: zones interleaved round-robin
    assert c.table.names_of(c.table.order()) == ["n0", "n2", "n1", "n3"]
    moved = make_node("n0").alloc(cpu="1", memory="1Gi", pods=10) \
        .label("topology.kubernetes.io/zone", "b").obj()
    c.update_node(moved)
    assert c.table.names_of(c.table.order()) == ["n1", "n2", "n3", "n0"]


def test_slots_are_reused_after_node_delete():
    c = Cluster()
    for i in range(3):
        c.add_node(node(f"n{i}"))
    c.delete_node("n1")
    c.add_node(node("n9", cpu="2"))
    assert c.table.slot_of["n9"] == 1 and c.table.high == 3
    assert c.table.allocatable["cpu"][1] == 2000
    assert c.table.names_of(c.table.order()) == ["n0", "n2", "n9"]


def test_add_puts_each_kind_in_its_store_and_refuses_what_it_does_not_model():
    c = Cluster()
    c.add(Namespace("team", {"t": "a"}))
    c.add(PriorityClass("high", 1000))
    c.add(make_node("n1").obj())
    assert c.namespace_labels("team") == {"t": "a"}
    assert "high" in c.priority_classes and c.table.num_nodes == 1
    with pytest.raises(ClusterError, match="does not model str objects"):
        c.add("not an object")  # type: ignore[arg-type]
