"""The nominator, assigned-pod events (cross-topology pre-filter) and pod update events."""

from __future__ import annotations

import pytest

from scheduler_core.api.affinity import Affinity, PodAffinityTerm
from scheduler_core.api.pod import Container
from scheduler_core.api.selectors import LabelRequirement, LabelSelector, Toleration
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from scheduler_core.plugins import names
from scheduler_core.queue import pod_scheduling_properties_change
from tests.queue.queue_helpers import make_queue, mkpod, pop_fail, relabel, with_spec


# --------------------------------------------------------------------------- nominator
def test_nominator_add_delete_and_order():
    q, _ = make_queue()
    a, b, c = mkpod("a"), mkpod("b"), mkpod("c")
    q.add_nominated_pod(a, "n1")
    q.add_nominated_pod(b, "n1")
    q.add_nominated_pod(c, "n2")
    assert [p.name for p in q.nominated_pods_for_node("n1")] == ["a", "b"]
    assert q.nominated_node_names() == ["n1", "n2"] and q.has_nominated_pods()
    q.add_nominated_pod(a, "n2")  # re-nomination moves it
    assert [p.name for p in q.nominated_pods_for_node("n1")] == ["b"]
    assert [p.name for p in q.nominated_pods_for_node("n2")] == ["c", "a"]
    assert q.nominated_node_of(a.uid) == "n2"
    q.add_nominated_pod(b, "")  # override with "": cleared
    q.delete_nominated_pod(c)
    assert q.nominated_node_names() == ["n2"]
    assert q.nominated_pods_for_node("n1") == [] and q.nominated_node_of(b.uid) is None
    q.delete_nominated_pod(a)
    assert not q.has_nominated_pods()


def test_pod_added_with_status_nominated_node_is_nominated():
    q, _ = make_queue()
    q.add(mkpod("p", nominated="n3"))
    q.add(mkpod("plain"))
    assert [p.name for p in q.nominated_pods_for_node("n3")] == ["p"]
    assert q.nominated_node_of(mkpod("plain").uid) is None


def test_update_keeps_in_memory_nomination_and_returns_latest_pod():
    q, _ = make_queue()
    pod = mkpod("p")
    q.add(pod)
    q.add_nominated_pod(pod, "n1")  # preemption result, not yet in the pod status
    new = relabel(pod, v="2")
    q.update(pod, new)
    assert q.nominated_pods_for_node("n1") == [new]
    moved = relabel(new, v="3")
    moved.nominated_node_name = "n2"  # status now says n2
    q.update(new, moved)
    assert q.nominated_pods_for_node("n1") == [] and q.nominated_pods_for_node("n2") == [moved]


# --------------------------------------------------------------------------- assigned pods
def web_affinity(**term_kw) -> Affinity:
    sel = LabelSelector((LabelRequirement("app", "In", frozenset({"web"})),))
    return Affinity(required_pod_affinity=(PodAffinityTerm(sel, "zone", **term_kw),))


IPA_ADD = [ClusterEventWithHint(ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE))]


@pytest.mark.parametrize(
    "waiting, rejector, bound, want_moved",
    [
        (mkpod("w", affinity=web_affinity()), "InterPodAffinity",
         mkpod("b", labels={"app": "web"}), True),
        (mkpod("w", affinity=web_affinity()), "InterPodAffinity",
         mkpod("b", labels={"app": "db"}), False),
        (mkpod("w", affinity=web_affinity()), "InterPodAffinity",
         mkpod("b", ns="other", labels={"app": "web"}), False),
        (mkpod("w", affinity=web_affinity(namespaces=("other",))), "InterPodAffinity",
         mkpod("b", ns="other", labels={"app": "web"}), True),
        (mkpod("w", affinity=web_affinity(namespace_selector=LabelSelector())),
         "InterPodAffinity", mkpod("b", ns="any", labels={"app": "web"}), True),
        (mkpod("w", affinity=web_affinity(namespace_selector=LabelSelector(
            (LabelRequirement("team", "In", frozenset({"a"})),)))),
         "InterPodAffinity", mkpod("b", ns="team-a", labels={"app": "web"}), True),
        (mkpod("w"), names.POD_TOPOLOGY_SPREAD, mkpod("b"), True),
        (mkpod("w"), names.POD_TOPOLOGY_SPREAD, mkpod("b", ns="other"), False),
        (mkpod("w"), "InterPodAffinity", mkpod("b", labels={"app": "web"}), False),
    ],
    ids=["affinity-match", "label-mismatch", "other-namespace", "listed-namespace",
         "empty-namespace-selector", "namespace-selector-labels", "pts-same-namespace",
         "pts-other-namespace", "no-affinity-terms"],
)
def test_assigned_pod_added_pre_filters_cross_topology_pods_only_in_legacy_mode(
        waiting, rejector, bound, want_moved):
    """Without queueing hints the queue pre-filters the pool
    (getUnschedulablePodsWithCrossTopologyTerm); with them (v1.34's event handler calls
    MoveAllToActiveOrBackoffQueue) every pool pod goes to its rejectors' hints, here a
    registration without a hint function, so it always moves."""
    ns_labels = {"team-a": {"team": "a"}}
    bound.node_name = "n1"
    for hints_on, want in ((False, int(want_moved)), (True, 1)):
        q, clock = make_queue({"InterPodAffinity": IPA_ADD, names.POD_TOPOLOGY_SPREAD: IPA_ADD},
                              namespace_labels=lambda ns: ns_labels.get(ns, {}),
                              queueing_hints_enabled=hints_on)
        q.add(waiting)
        pop_fail(q, rejector)
        clock.advance(5)
        assert q.assigned_pod_added(bound) == want, hints_on


def test_assigned_pod_added_asks_every_rejectors_hint_with_queueing_hints():
    """A pod rejected by a plugin whose hint looks at the new pod moves only when the hint
    says Queue; a pod whose rejector did not register Pod/Add stays."""
    seen = []

    def web_only(pod, old, new):
        seen.append((pod.name, new.name))
        return QueueingHint.QUEUE if new.labels.get("app") == "web" else QueueingHint.QUEUE_SKIP

    q, clock = make_queue({
        "Custom": [ClusterEventWithHint(ClusterEvent("Pod", ActionType.ADD), web_only)],
        names.NODE_RESOURCES_FIT: [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE))],
    })
    custom, fit = mkpod("custom"), mkpod("fit")
    q.add(custom)  # no affinity terms: legacy mode would never look at it
    q.add(fit)
    pop_fail(q, "Custom")
    pop_fail(q, names.NODE_RESOURCES_FIT)
    clock.advance(5)
    db = mkpod("db", labels={"app": "db"})
    db.node_name = "n1"
    assert q.assigned_pod_added(db) == 0
    web = mkpod("web", labels={"app": "web"})
    web.node_name = "n1"
    assert q.assigned_pod_added(web) == 1
    assert seen == [("custom", "db"), ("custom", "web")]
    assert q.where(custom.uid) == "active" and q.where(fit.uid) == "unschedulable"


def test_assigned_pod_deleted_moves_all_registered():
    reg = [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE))]
    q, clock = make_queue({names.NODE_RESOURCES_FIT: reg, "Other": []})
    q.add(mkpod("fit"))
    q.add(mkpod("other"))
    pop_fail(q, names.NODE_RESOURCES_FIT)
    pop_fail(q, "Other")
    clock.advance(5)
    assert q.assigned_pod_deleted(mkpod("gone")) == 1
    assert [p.name for p in q.pending_pods()] == ["fit", "other"]


@pytest.mark.parametrize("new_cpu, want", [(100, 1), (500, 0)],
                         ids=["scale-down-moves-all", "label-change-cross-topology-only"])
def test_assigned_pod_updated(new_cpu, want):
    reg = [ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_SCALE_DOWN))]
    q, clock = make_queue({names.NODE_RESOURCES_FIT: reg})
    q.add(mkpod("w"))
    pop_fail(q, names.NODE_RESOURCES_FIT)
    clock.advance(5)
    old = mkpod("bound", cpu=500, labels={"a": "1"})
    old.node_name = "n1"
    new = with_spec(old, containers=(Container("c", "img", {"cpu": new_cpu}),))
    new.labels = {"a": "2"}
    new.node_name = "n1"
    assert q.assigned_pod_updated(old, new) == want


# --------------------------------------------------------------------------- update events
def _actions(new, old):
    return [(e.resource, e.action) for e in pod_scheduling_properties_change(new, old)]


A = ActionType


@pytest.mark.parametrize(
    "change, want",
    [
        (lambda p: relabel(p, x="1"), [A.UPDATE_POD_LABEL]),
        (lambda p: with_spec(p, containers=(Container("c", "i", {"cpu": 50}),)),
         [A.UPDATE_POD_SCALE_DOWN]),
        (lambda p: with_spec(p, containers=(Container("c", "i", {"cpu": 900}),)),
         [getattr(A, "UPDATE_POD_OTHER", A.UPDATE)]),
        (lambda p: with_spec(p, scheduling_gates=()), [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]),
        (lambda p: with_spec(p, tolerations=(Toleration("k", "Exists"),)),
         [A.UPDATE_POD_TOLERATION]),
        (lambda p: with_spec(relabel(p, y="2"), scheduling_gates=()),
         [A.UPDATE_POD_LABEL, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]),
    ],
    ids=["labels", "scale-down", "scale-up-is-other", "gates-eliminated", "toleration-added",
         "labels-and-gates"],
)
def test_pod_scheduling_properties_change(change, want):
    old = mkpod("p", cpu=100, gates=["g"], labels={"a": "1"})
    new = change(old)
    assert _actions(new, old) == [("UnscheduledPod", a) for a in want]
    new.node_name = "n1"
    assert [r for r, _ in _actions(new, old)] == ["Pod"] * len(want)


def test_gated_pods_with_matching_affinity_stay_parked_while_others_move():
    """Thousands of gated pods must not be scanned on every bind, and never moved by it."""
    q, clock = make_queue({"InterPodAffinity": IPA_ADD})
    gated = [mkpod(f"g{i}", gates=["wait"], affinity=web_affinity()) for i in range(50)]
    for pod in gated:
        assert q.add(pod) == "unschedulable"
    q.add(mkpod("w", affinity=web_affinity()))
    pop_fail(q, "InterPodAffinity")
    clock.advance(5)
    bound = mkpod("b", labels={"app": "web"})
    bound.node_name = "n1"
    assert q.assigned_pod_added(bound) == 1
    assert [q.where(p.uid) for p in gated] == ["unschedulable"] * 50
    assert q.gated_count() == 50
    released = with_spec(gated[0], scheduling_gates=())
    assert q.update(gated[0], released) == "active"
    assert q.gated_count() == 49


def test_deleting_a_nominated_pod_asks_pods_of_lower_or_equal_priority():
    """Upstream's deletePodFromSchedulingQueue: a deleted unscheduled pod that was nominated
    moves the pool as an assigned pod's deletion would, for pods not above its priority."""
    reg = [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE))]
    q, clock = make_queue({names.NODE_RESOURCES_FIT: reg})
    low, high = mkpod("low", 5), mkpod("high", 50)
    q.add(low)
    q.add(high)
    pop_fail(q, names.NODE_RESOURCES_FIT)  # high pops first
    pop_fail(q, names.NODE_RESOURCES_FIT)
    clock.advance(5)
    nominated = mkpod("nominated", 10, nominated="n1")
    q.add(nominated)
    assert q.delete(nominated)
    assert q.nominated_pod_deleted(nominated) == 1
    assert q.where(low.uid) == "active" and q.where(high.uid) == "unschedulable"
