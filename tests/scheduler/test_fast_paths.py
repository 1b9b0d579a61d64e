"""Fast paths of the scheduling cycle (commit c7dce9b): contiguous feasible runs scored through
slices (``_as_run``), the Framework's all-pass filter result, and the queue's cached "is any
plugin interested in this event" answer. Each fast path must give exactly the decisions the
plain path gives."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import scheduler_core.cycle.schedule_pod as schedule_pod_mod
from scheduler_core.cycle.schedule_pod import _as_run
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
)
from scheduler_core.framework.runtime import Framework
from scheduler_core.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.plugins.node_unschedulable import NodeUnschedulable
from scheduler_core.plugins.taint_toleration import TaintToleration
from scheduler_core.queue import hints as queue_hints
from tests.builders import make_node, make_pod, table_of
from tests.queue.queue_helpers import NODE_ADD, NODE_LABEL, QUEUE, SKIP, make_queue, mkpod

GiB = 1024**3
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


# --------------------------------------------------------------------------- 1. _as_run
IDENTITY = SimpleNamespace(order_is_identity=True)
PERMUTED = SimpleNamespace(order_is_identity=False)


@pytest.mark.parametrize(("table", "feasible", "want"), [
    (IDENTITY, [3, 4, 5, 6], slice(3, 7)),
    (IDENTITY, [0, 1], slice(0, 2)),
    (IDENTITY, list(range(10, 310)), slice(10, 310)),
    (IDENTITY, [7], None),                   # one node: nothing to gain
    (IDENTITY, [8, 9, 0, 1], None),          # wrapped around the table order
    (IDENTITY, [9, 0], None),                # wrapped, adjacent modulo the table size
    (IDENTITY, [5, 6, 7, 0, 1, 2, 3, 4], None),  # wrapped over every node
    (IDENTITY, [3, 4, 6], None),             # a gap
    (IDENTITY, [3, 5, 6, 7], None),          # a gap at the front
    (IDENTITY, [6, 5, 4], None),             # descending
    (IDENTITY, [5, 3, 4], None),             # unsorted
    (PERMUTED, [3, 4, 5, 6], None),          # slots are not in list order
], ids=["run", "run-from-0", "long-run", "single", "wrapped", "wrapped-adjacent",
        "wrapped-all", "gap", "gap-at-front", "descending", "unsorted", "order-not-identity"])
def test_as_run_turns_only_ascending_contiguous_runs_into_slices(table, feasible, want):
    arr = np.asarray(feasible, dtype=np.int64)
    got = _as_run(table, arr, len(arr))
    if want is None:
        assert got is arr
    else:
        assert got == want
        assert np.array_equal(np.arange(1000)[got], arr)  # the slice addresses the same slots


def _mixed_node_manifests(names: list[str], seed: int, rejecting: bool = True) -> list[dict]:
    """Nodes of mixed sizes; some with a PreferNoSchedule taint or an image; unless not
    ``rejecting``, some with a NoSchedule taint and a few cordoned."""
    rng = np.random.default_rng(seed)
    out = []
    for name in names:
        b = (make_node(name)
             .alloc(cpu=str(int(rng.choice([2, 4, 8, 16]))),
                    memory=f"{int(rng.choice([4, 8, 16, 32]))}Gi", pods=int(rng.choice([8, 110])))
             .label(HOST, name))
        r = rng.random()
        if r < 0.15:
            b.taint("spot", "true", "PreferNoSchedule")
        elif r < 0.22 and rejecting:
            b.taint("dedicated", "infra", "NoSchedule")
        if rng.random() < 0.3:
            b.image(int(rng.integers(50, 900)) * 1024 * 1024, "app:v1")
        if rng.random() < 0.04 and rejecting:
            b.unschedulable()
        out.append(b.manifest())
    return out


def _mixed_pods(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    pods = []
    for i in range(n):
        b = make_pod(f"p{i:03d}")
        kind = rng.random()
        if kind < 0.1:
            b.container(image="app:v1")  # best effort
        else:
            b.req(cpu=f"{int(rng.integers(1, 20)) * 100}m",
                  memory=f"{int(rng.integers(1, 12)) * 256}Mi")
            if kind < 0.35:
                b.container(image="app:v1")
        if rng.random() < 0.2:
            b.toleration("spot", "true", "PreferNoSchedule", operator="Equal")
        if rng.random() < 0.05:
            b.toleration("dedicated", "infra", "NoSchedule", operator="Equal")
        pods.append(b.obj())
    return pods


def _node_objs(manifests: list[dict]):
    from scheduler_core.api.node import Node
    return [Node.from_manifest(m) for m in manifests]


def _run(make_scheduler, manifests, pods, *, seed=3, config=None, setup=None):
    cluster, sched = make_scheduler(_node_objs(manifests), config=config, seed=seed)
    if setup is not None:
        setup(cluster)
    for p in pods:
        cluster.add_pod(p)
    sched.run_until_idle()
    return cluster, sched


def _placements(cluster) -> dict[str, str]:
    return {k: p.node_name for k, p in sorted(cluster.pods.items())}


SCENARIOS = [
    # (nodes, pods, zones, rejecting nodes): > 100 nodes makes the search stop early and wrap
    pytest.param(50, 200, 1, True, id="50-nodes-200-pods"),
    pytest.param(50, 200, 1, False, id="50-nodes-200-pods-no-rejecting-nodes"),
    pytest.param(220, 300, 1, False, id="220-nodes-300-pods-wrapping"),
    pytest.param(60, 200, 3, True, id="60-nodes-3-zones-interleaved"),
]


@pytest.mark.parametrize(("n_nodes", "n_pods", "zones", "rejecting"), SCENARIOS)
def test_placements_identical_with_and_without_the_slice_fast_path(
        make_scheduler, monkeypatch, n_nodes, n_pods, zones, rejecting):
    manifests = _mixed_node_manifests([f"n{i:03d}" for i in range(n_nodes)], seed=n_nodes,
                                      rejecting=rejecting)
    for i, m in enumerate(manifests):
        if zones > 1:  # zones in blocks: the list order interleaves them, slots do not
            m["metadata"]["labels"][ZONE] = f"z{i * zones // n_nodes}"
    calls = {"slice": 0, "array": 0}

    def checked(table, feasible, n):
        got = _as_run(table, feasible, n)
        if isinstance(got, slice):
            # the precondition _as_run relies on: a slice means exactly these slots, in order
            assert np.array_equal(np.arange(got.start, got.stop), feasible)
            calls["slice"] += 1
        else:
            calls["array"] += 1
        return got

    monkeypatch.setattr(schedule_pod_mod, "_as_run", checked)
    fast, fast_sched = _run(make_scheduler, manifests, _mixed_pods(n_pods, seed=1))
    monkeypatch.setattr(schedule_pod_mod, "_as_run", lambda table, feasible, n: feasible)
    slow, slow_sched = _run(make_scheduler, manifests, _mixed_pods(n_pods, seed=1))
    assert fast.table.order_is_identity == (zones == 1)

    assert _placements(fast) == _placements(slow)
    assert fast_sched.pending_reasons() == slow_sched.pending_reasons()
    assert sum(1 for p in fast.pods.values() if p.node_name) > n_pods // 2
    if zones == 1:  # identity list order: both paths must have been taken
        assert calls["slice"] > 0 and calls["array"] > 0
    else:  # zones interleave the list order: never a slice
        assert calls["slice"] == 0 and calls["array"] > 0


@pytest.mark.parametrize("seed", [0, 5, 11], ids=lambda s: f"seed{s}")
def test_cluster_with_reused_slots_places_pods_like_one_built_in_order(make_scheduler, seed):
    """Deleting nodes and adding others reuses freed slots, so slots are no longer in list
    order; the placements (by node name) must be those of a cluster built directly in that
    list order, where every slot is in order and the slice path is available."""
    survivors = [f"n{i:02d}" for i in range(50) if i % 7 != 3]
    gone = [f"n{i:02d}" for i in range(50) if i % 7 == 3]
    late = [f"late{i}" for i in range(len(gone))]
    sizes = dict(zip(survivors + late,
                     _mixed_node_manifests(survivors + late, seed=seed), strict=True))
    gone_m = {m["metadata"]["name"]: m for m in _mixed_node_manifests(gone, seed=seed + 100)}

    def holes_setup(cluster):
        for name in late:
            cluster.add_node(_node_objs([sizes[name]])[0])

    all_in_order = [sizes[n] if n in sizes else gone_m[n] for n in sorted(survivors + gone)]
    holes, holes_sched = make_scheduler(_node_objs(all_in_order), seed=seed)
    for name in gone:
        holes.delete_node(name)
    holes_setup(holes)
    for p in _mixed_pods(200, seed=seed):
        holes.add_pod(p)
    holes_sched.run_until_idle()

    ordered, ordered_sched = _run(make_scheduler, [sizes[n] for n in survivors + late],
                                  _mixed_pods(200, seed=seed), seed=seed)

    assert list(holes.table.names_of(holes.table.order())) == survivors + late
    assert not holes.table.order_is_identity
    assert ordered.table.order_is_identity
    assert _placements(holes) == _placements(ordered)
    assert holes_sched.pending_reasons() == ordered_sched.pending_reasons()


# --------------------------------------------------------------------------- 2. run_filter
def _framework(*plugins) -> Framework:
    pre = [p for p in plugins if hasattr(p, "pre_filter")]
    return Framework("default-scheduler", {"PreFilter": pre, "Filter": list(plugins)}, {})


def _filter_table():
    return table_of([
        make_node("big").alloc(cpu="8", memory="16Gi", pods=110).obj(),
        make_node("small").alloc(cpu="1", memory="16Gi", pods=110).obj(),
        make_node("tainted").alloc(cpu="8", memory="16Gi", pods=110)
        .taint("dedicated", "infra", "NoSchedule").obj(),
        make_node("cordoned").alloc(cpu="8", memory="16Gi", pods=110).unschedulable().obj(),
        make_node("tiny-tainted").alloc(cpu="1", memory="16Gi", pods=110)
        .taint("dedicated", "infra", "NoSchedule").obj(),
    ])


FILTERS = (NodeUnschedulable, TaintToleration, NodeResourcesFit)  # filter_plugins order

FILTER_CASES = [
    # (pod, idx (None: every slot as a slice; list: those slots as an array), want
    #  {node: reasons or None})
    ("all-pass-slice", make_pod().req(cpu="500m"), [0],
     {"big": None}),
    ("all-pass-array", make_pod().req(cpu="500m").toleration("dedicated", "infra", "NoSchedule",
                                                              operator="Equal"), [2, 0, 1],
     {"tainted": None, "big": None, "small": None}),
    ("every-rejection", make_pod().req(cpu="2"), None,
     {"big": None, "small": ("Insufficient cpu",),
      "tainted": ("node(s) had untolerated taint(s)",),
      "cordoned": ("node(s) were unschedulable",),
      "tiny-tainted": ("node(s) had untolerated taint(s)",)}),
    ("first-rejecting-plugin-wins", make_pod().req(cpu="2").toleration(
        "node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"), [4, 3, 1],
     {"tiny-tainted": ("node(s) had untolerated taint(s)",),
      "cordoned": None, "small": ("Insufficient cpu",)}),
    ("only-resources-reject", make_pod().req(cpu="2"), [0, 1],
     {"big": None, "small": ("Insufficient cpu",)}),
]


@pytest.mark.parametrize(("pod_b", "slots", "want"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_run_filter_all_pass_and_first_fail_with_upstream_reasons(pod_b, slots, want):
    table = _filter_table()
    fwk = _framework(*(cls() for cls in FILTERS))
    pod = pod_b.obj()
    state = CycleState()
    _, status, _ = fwk.run_pre_filter(state, pod, table)
    assert status is None
    if slots is None:
        idx: object = slice(0, table.high)
        at = np.arange(table.high, dtype=np.int64)
    else:
        idx = at = np.asarray(slots, dtype=np.int64)
    names = table.names_of(at)
    assert set(names) == set(want)

    mask, first_fail = fwk.run_filter(state, pod, table, idx, len(at))

    if all(v is None for v in want.values()):
        # several plugins returned (all-True) masks: their combination, nothing rejected
        assert mask is not None and mask.all() and (first_fail == -1).all()
        return
    assert mask is not None and first_fail is not None
    assert dict(zip(names, mask.tolist(), strict=True)) == {n: r is None for n, r in want.items()}
    rejected = np.flatnonzero(~mask)
    assert (first_fail[mask] == -1).all()
    which, statuses = fwk.explain_filter(state, pod, table, at[rejected], first_fail[rejected])
    got = {names[j]: statuses[int(w)].reasons for j, w in zip(rejected.tolist(),
                                                               which.tolist(), strict=True)}
    assert got == {n: r for n, r in want.items() if r is not None}
    for j, w in zip(rejected.tolist(), which.tolist(), strict=True):
        # first_fail names the plugin whose status explains the node
        assert fwk.filter_names[int(first_fail[j])] == statuses[int(w)].plugin


@pytest.mark.parametrize(("pod_b", "slots"), [
    (make_pod().req(cpu="500m"), None),
    (make_pod().req(cpu="1"), [3, 1]),
    (make_pod(), [2]),
], ids=["slice", "array", "best-effort-one-node"])
def test_run_filter_all_pass_is_none_when_only_resources_filter_answers(pod_b, slots):
    """No taints, no cordoned node: only NodeResourcesFit returns a mask, all True, and
    run_filter answers with the all-pass result (no mask, no first-fail column)."""
    table = table_of([make_node(f"n{i}").alloc(cpu="2", memory="4Gi", pods=10).obj()
                      for i in range(4)])
    fwk = _framework(*(cls() for cls in FILTERS))
    pod = pod_b.obj()
    state = CycleState()
    assert fwk.run_pre_filter(state, pod, table)[1] is None
    idx = slice(0, table.high) if slots is None else np.asarray(slots, dtype=np.int64)
    n = table.high if slots is None else len(slots)
    assert fwk.run_filter(state, pod, table, idx, n) == (None, None)


class _FixedMask:
    """A filter plugin returning one stored array (as a plugin returning a cached or shared
    column would) and explaining every rejection with one reason."""

    def __init__(self, name: str, mask: list[bool]) -> None:
        self.name = name
        self.mask = np.asarray(mask, dtype=bool)
        self.mask.flags.writeable = False  # run_filter must never write into it

    def filter(self, state, pod, table, idx):
        return self.mask

    def explain(self, state, pod, table, idx):
        from scheduler_core.framework.interface import Status
        return np.zeros(len(idx), dtype=np.int64), [Status.unschedulable(f"{self.name} says no")]


@pytest.mark.parametrize(("masks", "want_mask", "want_first"), [
    ([[True, True, True]], None, None),
    ([[True, True, True], None], None, None),
    ([None, [True, True, True]], None, None),
    ([[True, False, True]], [True, False, True], [-1, 0, -1]),
    ([None, [True, False, True]], [True, False, True], [-1, 1, -1]),
    ([[True, True, True], [True, True, True]], [True, True, True], [-1, -1, -1]),
    ([[True, True, True], [False, True, True]], [False, True, True], [1, -1, -1]),
    ([[True, False, True], [False, False, True]], [False, False, True], [1, 0, -1]),
    ([[True, False, True], [True, True, True], [True, True, False]], [True, False, False],
     [-1, 0, 2]),
], ids=["one-all-true", "all-true-then-none", "none-then-all-true", "one-rejects",
        "none-then-rejects", "two-all-true", "all-true-then-rejects", "both-reject",
        "three-plugins"])
def test_run_filter_combines_masks_without_touching_plugin_arrays(masks, want_mask, want_first):
    class _Pass:
        def __init__(self, name):
            self.name = name

        def filter(self, state, pod, table, idx):
            return None

    plugins = [_Pass(f"p{i}") if m is None else _FixedMask(f"p{i}", m)
               for i, m in enumerate(masks)]
    before = [None if m is None else list(m) for m in masks]
    fwk = _framework(*plugins)
    mask, first_fail = fwk.run_filter(CycleState(), make_pod().obj(), None, slice(0, 3), 3)
    if want_mask is None:
        assert mask is None and first_fail is None
    else:
        assert mask.tolist() == want_mask
        assert first_fail.tolist() == want_first
        assert all(mask is not getattr(p, "mask", None) for p in plugins)
    assert [None if isinstance(p, _Pass) else p.mask.tolist() for p in plugins] == before


def test_fit_error_message_keeps_upstream_reasons(make_scheduler):
    nodes = _node_objs([
        make_node("big").alloc(cpu="8", memory="16Gi", pods=110).manifest(),
        make_node("small").alloc(cpu="1", memory="16Gi", pods=110).manifest(),
        make_node("tainted").alloc(cpu="8", memory="16Gi", pods=110)
        .taint("dedicated", "infra", "NoSchedule").manifest(),
        make_node("cordoned").alloc(cpu="8", memory="16Gi", pods=110).unschedulable()
        .manifest(),
    ])
    cluster, sched = make_scheduler(nodes)
    cluster.add_pod(make_pod("fits").req(cpu="6").obj())
    cluster.add_pod(make_pod("stuck").req(cpu="6").obj())
    sched.run_until_idle()
    assert cluster.pods["default/fits"].node_name == "big"
    assert sched.failures["default/stuck"].startswith(
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: ")


# --------------------------------------------------------------------------- 6. queue
PV_ADD = ClusterEvent("PersistentVolume", ActionType.ADD)
WILDCARD = ClusterEvent("*", ActionType.ALL)


def _queue_with_rejected(hints_enabled: bool, answer):
    """A queue whose plugin A registers Node/Add and Node label updates, with pods p0..p3 in
    the unschedulable pool, rejected by A."""
    regs = {"A": [ClusterEventWithHint(NODE_ADD, lambda pod, old, new: answer(pod)),
                  ClusterEventWithHint(NODE_LABEL, None)]}
    q, clock = make_queue(regs, queueing_hints_enabled=hints_enabled)
    for i in range(4):
        q.add(mkpod(f"p{i}"))
    for _ in range(4):
        qpi = q.pop()
        qpi.unschedulable_plugins = {"A"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    return q, clock


def _where(q) -> dict[str, str]:
    out = {}
    for qpi in q._pool.values():
        out[qpi.pod.name] = "unschedulable"
    for _, _, qpi in q._backoff.values():
        out[qpi.pod.name] = "backoff"
    for _, _, qpi in q._active.values():
        out[qpi.pod.name] = "active"
    return out


def _even(pod):
    return QUEUE if int(pod.name[1:]) % 2 == 0 else SKIP


@pytest.mark.parametrize(("event", "interested", "moved_with_hints"), [
    (NODE_ADD, True, 2),       # the hint queues the even pods only
    (NODE_LABEL, True, 4),     # registered without a hint: always Queue
    (ClusterEvent("Node", ActionType.UPDATE_NODE_LABEL | ActionType.ADD), True, 4),
    (ClusterEvent("Node", ActionType.DELETE), False, 0),
    (PV_ADD, False, 0),
    (WILDCARD, True, 4),
], ids=["registered-add", "registered-label", "combined-actions", "unregistered-action",
        "unregistered-resource", "wildcard"])
@pytest.mark.parametrize("hints_enabled", [True, False], ids=["hints-on", "hints-off"])
def test_cached_event_interest_gives_the_fresh_decision(event, interested, moved_with_hints,
                                                        hints_enabled):
    warm, _ = _queue_with_rejected(hints_enabled, _even)
    fresh, _ = _queue_with_rejected(hints_enabled, _even)
    assert warm._hints.is_event_of_interest(event) is interested
    assert warm._hints.is_event_of_interest(event) is interested  # answered from the cache
    assert warm._hints._interest[id(event)] == (event, interested)
    copy = ClusterEvent(event.resource, event.action, event.label)  # equal, not the same
    assert copy is not event
    new = None if event.is_wildcard else "node"  # a wildcard carrying an object targets it

    moved_warm = warm.move_all_to_active_or_backoff(event, None, new)
    moved_fresh = fresh.move_all_to_active_or_backoff(copy, None, new)

    want = moved_with_hints if hints_enabled else (4 if interested else 0)
    assert moved_warm == moved_fresh == want
    assert _where(warm) == _where(fresh)
    # the same object once more: still the decision a fresh computation gives
    assert warm.move_all_to_active_or_backoff(event, None, new) == \
        fresh.move_all_to_active_or_backoff(copy, None, new)
    assert _where(warm) == _where(fresh)


@pytest.mark.parametrize(("hints_enabled", "want"), [
    (True, {"p0": "backoff", "p1": "unschedulable", "p2": "backoff", "p3": "unschedulable"}),
    (False, {"p0": "backoff", "p1": "backoff", "p2": "backoff", "p3": "backoff"}),
], ids=["hints-on-only-queue-answers-move", "hints-off-every-pod-moves"])
def test_same_event_object_twice_requeues_like_upstream(hints_enabled, want):
    q, _ = _queue_with_rejected(hints_enabled, _even)
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, "node") == sum(
        1 for v in want.values() if v != "unschedulable")
    assert _where(q) == want
    # the same object again: pods the hint skipped are asked again and skipped again
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, "node") == 0
    assert _where(q) == want


def test_interest_cache_does_not_hide_a_later_unregistered_rejector():
    """Once a pod is rejected by a plugin without registrations, every event is of interest,
    even one whose "not interesting" answer was cached before."""
    q, _ = make_queue({"A": [ClusterEventWithHint(NODE_ADD, None)]})
    assert q.move_all_to_active_or_backoff(PV_ADD) == 0
    assert q._hints._interest[id(PV_ADD)] == (PV_ADD, False)
    q.add(mkpod("p"))
    qpi = q.pop()
    qpi.unschedulable_plugins = {"Unregistered"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.move_all_to_active_or_backoff(PV_ADD) == 1


def test_interest_cache_is_bounded_and_stays_correct(monkeypatch):
    monkeypatch.setattr(queue_hints, "_INTEREST_CACHE_LIMIT", 8)
    q, _ = _queue_with_rejected(True, lambda pod: QUEUE)
    events = [ClusterEvent("Node", ActionType.DELETE, f"e{i}") for i in range(20)]
    for e in events:
        assert q._hints.is_event_of_interest(e) is False
        assert len(q._hints._interest) <= 8
    assert q._hints.is_event_of_interest(NODE_ADD) is True
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, "node") == 4
