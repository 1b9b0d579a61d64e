"""SelectVictimsOnNode for DefaultPreemption, per node and batched.

Both take the lower-priority pods off a node, check the preemptor, give pods back one at a
time from the most important down (PDB-violating pods first) and, in a ``finally``, put every
pod they took back. A dry run leaves the table as it found it.

``select_victims_on_node`` is upstream's function for one node, on the live table: pods leave
and come back with ``table.remove_pod``/``add_pod`` (the index listeners follow, and the
node's pod order is restored), with a cloned CycleState, the PreFilter ``add_pod``/
``remove_pod`` extensions and both passes of the nominated-pods filter.

``select_victims_batch`` runs the same algorithm over many nodes at once, one vectorised
filter call per round (two where pods are nominated) instead of one per node and step. It is
exact when ``node_local`` holds (``plugins.node_local``): every active Filter plugin reads only
its own node's columns, and pods only through the accounting columns, and no PreFilter
extension is active. So pods are taken off and given back as loads on those columns only
(``nodetable.accounting``): a few vector operations per round, no per-pod table events. The
nominated pass is batched the same way: nominated pods' loads are added to their nodes for
pass 1 and taken off for pass 2.

See docs/scheduling-model.md, "Preemption victims".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import CycleState, Handle, Status
from scheduler_core.nodetable.accounting import PodLoads, SlotPods
from scheduler_core.nodetable.pod_index import PriorityLoads, priority_loads
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins.default_preemption_pdb import Budget, split_by_pdb
from scheduler_core.plugins.node_local import node_local, resource_filter

__all__ = [
    "NO_VICTIMS",
    "PRIORITY_OFFSET",
    "Summary",
    "Victims",
    "importance_key",
    "node_local",
    "select_victims_batch",
    "select_victims_on_node",
    "summary_of",
]

NO_VICTIMS = "No preemption victims found for incoming pod"
PRIORITY_OFFSET = 2**31  # MaxInt32 + 1: keeps every term of the priority sum non-negative
# integer-arithmetic reprieve bounds: at most this many pods per node, requests below the limit, so
# that sums stay far from int64 overflow (NodeResourcesFit.margins has the same limit)
_MAX_PODS = 1024
_LOAD_LIMIT = 2**52

Outcome = tuple["Victims | None", "Status | None"]


class Summary(NamedTuple):
    """What ``pickOneNodeForPreemption`` reads of a node's victims besides the PDB count."""

    first_priority: int  # the priority of the first (most important) victim
    priority_sum: int  # sum of (priority + 2**31) over the victims
    top_started: float  # earliest start of the highest-priority victims that have one (or inf)
    top_unstarted: bool  # one of those has no start time (it counts as "now")

    def earliest_top_start(self, now: float) -> float:
        """``GetEarliestPodStartTime``."""
        return min(self.top_started, now) if self.top_unstarted else self.top_started


@dataclass(slots=True)
class Victims:
    """The pods to evict on one node, most important first, and how many break a PDB.
    ``summary``, when the batched search computed it, equals ``summary_of`` of the pods."""

    pods: list[Pod]
    num_pdb_violations: int
    summary: Summary | None = None


def summary_of(victims: Victims) -> Summary:
    """The victims' ``Summary`` (computed from the pods unless already known)."""
    if victims.summary is not None:
        return victims.summary
    pods = victims.pods
    top = max(p.priority for p in pods)
    tops = [p for p in pods if p.priority == top]
    started = [p.start_time for p in tops if p.start_time is not None]
    return Summary(pods[0].priority, sum(p.priority + PRIORITY_OFFSET for p in pods),
                   min(started) if started else math.inf,
                   len(started) < len(tops))


def importance_key(now: float) -> Any:
    """Sort key for kube's ``MoreImportantPod``: higher priority first, then the pod that
    started earlier (a pod without a start time counts as starting ``now``)."""

    def key(p: Pod) -> tuple[int, float]:
        return -p.priority, (now if p.start_time is None else p.start_time)

    return key


def _reprieve_order(potential: list[Pod], budgets: Sequence[Budget], now: float
                    ) -> tuple[list[tuple[Pod, bool]], bool]:
    """Pods in the order they are given back: PDB-violating ones first, each group from the
    most important down. The flag says whether both groups are non-empty."""
    ranked = sorted(potential, key=importance_key(now))
    violating, non_violating = split_by_pdb(ranked, budgets)
    order = [(p, True) for p in violating] + [(p, False) for p in non_violating]
    return order, bool(violating) and bool(non_violating)


def _victims(chosen: list[tuple[Pod, bool]], resort: bool, now: float) -> Victims:
    pods = [p for p, _ in chosen]
    if resort:
        pods.sort(key=importance_key(now))
    return Victims(pods, sum(1 for _, violating in chosen if violating))


def _restore(table: NodeTable, slot: int, gone: dict[str, Pod], order: list[str]) -> None:
    """Put the pods taken off ``slot`` back and restore the node's pod order."""
    for p in gone.values():
        table.add_pod(p, slot)
    gone.clear()
    pods = table.pods[slot]
    if list(pods) != order:
        items = [(uid, pods[uid]) for uid in order]
        pods.clear()
        pods.update(items)


def select_victims_on_node(handle: Handle, fwk: Any, state: CycleState, pod: Pod, slot: int,
                           budgets: Sequence[Budget], now: float) -> Outcome:
    """Upstream's SelectVictimsOnNode on one node. Returns (victims, None) when the pod fits
    after evicting them, else (None, the status that explains why not)."""
    table: NodeTable = handle.table
    on_node = table.pods[slot]
    potential = [p for p in on_node.values() if p.priority < pod.priority]
    if not potential:
        return None, Status.unresolvable(NO_VICTIMS)
    order = list(on_node)
    st = state.clone()
    gone: dict[str, Pod] = {}
    try:
        for p in potential:
            table.remove_pod(p, slot)
            gone[p.uid] = p
            fwk.run_add_pod_extensions(st, pod, p, slot, remove=True)
        status = handle.run_filter_with_nominated(fwk, st, pod, slot)
        if status is not None:
            return None, status
        queue, resort = _reprieve_order(potential, budgets, now)
        chosen: list[tuple[Pod, bool]] = []
        for p, violating in queue:
            table.add_pod(p, slot)
            del gone[p.uid]
            fwk.run_add_pod_extensions(st, pod, p, slot)
            if handle.run_filter_with_nominated(fwk, st, pod, slot) is not None:
                table.remove_pod(p, slot)
                gone[p.uid] = p
                fwk.run_add_pod_extensions(st, pod, p, slot, remove=True)
                chosen.append((p, violating))
        return _victims(chosen, resort, now), None
    finally:
        _restore(table, slot, gone, order)


def _fits(fwk: Any, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray | None]:
    mask, first_fail = fwk.run_filter(state, pod, table, idx, len(idx))
    if mask is None:
        return np.ones(len(idx), dtype=bool), None
    return mask, first_fail


def _explain(fwk: Any, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray,
             mask: np.ndarray, first_fail: np.ndarray | None, rows: Sequence[int],
             into: dict[int, Status]) -> None:
    """Statuses of the nodes that failed (``~mask``), keyed by ``rows[position]``."""
    bad = np.flatnonzero(~mask)
    if not len(bad):
        return
    assert first_fail is not None
    which, statuses = fwk.explain_filter(state, pod, table, idx[bad], first_fail[bad])
    for b, k in zip(bad.tolist(), which.tolist(), strict=True):
        into[rows[b]] = statuses[k]


def _fits_with_nominated(fwk: Any, state: CycleState, pod: Pod, table: NodeTable,
                         idx: np.ndarray, nominated: SlotPods,
                         why: dict[int, Status] | None = None, limit: int | None = None
                         ) -> np.ndarray:
    """Both passes of RunFilterPluginsWithNominatedPods over ``idx`` at once: a node fits
    only if it fits with its nominated pods (``nominated``: the pods of priority >= the
    pod's, per slot) and without them. ``why`` gets, per failing position, the first failing
    pass's status (pass 1 before pass 2, as upstream); with ``limit``, only for the positions
    up to the ``limit``-th fitting one."""
    n = len(idx)
    mask = np.ones(n, dtype=bool)
    rows = nominated.on(idx)
    m1 = ff1 = None
    if len(rows):
        sub = idx[rows]
        with nominated.placed(table, sub):
            m1, ff1 = _fits(fwk, state, pod, table, sub)
        mask[rows] = m1
    m2, ff2 = _fits(fwk, state, pod, table, idx)
    fits = mask & m2
    if why is None:
        return fits
    cut = n
    if limit is not None:
        ok = np.flatnonzero(fits)
        if len(ok) > limit:
            cut = int(ok[limit - 1]) + 1
    if m1 is not None and not m1.all():
        keep = rows < cut
        if not m1[keep].all():  # explained as pass 1 saw them: the nominated pods placed
            sub = idx[rows[keep]]
            with nominated.placed(table, sub):
                _explain(fwk, state, pod, table, sub, m1[keep],
                         None if ff1 is None else ff1[keep], rows[keep].tolist(), why)
    _explain(fwk, state, pod, table, idx[:cut], (m2 | ~mask)[:cut],
             None if ff2 is None else ff2[:cut], range(cut), why)
    return fits


def select_victims_batch(fwk: Any, state: CycleState, pod: Pod, table: NodeTable,
                         slots: np.ndarray, budgets: Sequence[Budget], now: float,
                         nominated: Mapping[int, list[Pod]] | SlotPods,
                         limit: int | None = None, max_nodes: int | None = None
                         ) -> list[Outcome]:
    """``select_victims_on_node`` for every slot in ``slots`` at once (valid when
    ``node_local`` holds). ``nominated`` maps a slot to the pods nominated there that the
    nominated pass adds (priority >= the pod's, not the pod itself; slots outside ``slots``
    are ignored), or is a ``SlotPods`` of them. One outcome per slot;
    with ``limit``, only for the slots up to the ``limit``-th one where the pod fits once its
    lower-priority pods are gone (a prefix of ``slots``: the caller goes on from there).
    ``max_nodes`` caps the nodes evaluated when each costs per-pod work (the filter path; the
    margins path evaluates every node but does per-pod work only on the ``limit`` first
    fitting ones).

    Pods are taken off as loads on the accounting columns only, which is all node-local
    filters read. The reprieve is greedy per node, in reprieve order; all nodes take their
    n-th step together. When NodeResourcesFit is the only filter that reads the node's pods
    (``resource_filter``), the first check takes the lower-priority loads off with the
    ``PriorityLoads`` index (no per-pod work on nodes where the pod cannot fit) and a step is
    integer arithmetic on the node's margins; otherwise each step's pods are put back and one
    filter call per pass checks every node."""
    placed = nominated if isinstance(nominated, SlotPods) else \
        SlotPods.by_slot(nominated, table.capacity)
    fitter = resource_filter(fwk, state)
    if fitter is not None:
        index = priority_loads(table)
        if index is not None:
            out = _batch_by_margins(fitter, index, fwk, state, pod, table, slots, budgets, now,
                                    placed, limit)
            if out is not None:
                return out
    if max_nodes is not None:
        slots = slots[:max(max_nodes, 1)]
    return _batch_by_filter(fwk, state, pod, table, slots, budgets, now, placed, limit)


def _batch_by_margins(fitter: Any, index: PriorityLoads, fwk: Any, state: CycleState, pod: Pod,
                      table: NodeTable, slots: np.ndarray, budgets: Sequence[Budget],
                      now: float, placed: SlotPods, limit: int | None) -> list[Outcome] | None:
    """``select_victims_batch`` when ``resource_filter`` holds. None when the numbers are too
    large for exact integer arithmetic (the caller then uses ``_batch_by_filter``)."""
    out: list[Outcome] = [(None, None)] * len(slots)
    count, taken = index.below(pod.priority, slots)
    none = (None, Status.unresolvable(NO_VICTIMS))
    for i in np.flatnonzero(count == 0).tolist():
        out[i] = none
    rows = np.flatnonzero(count)  # positions with lower-priority pods
    if not len(rows):
        return out
    where = slots[rows]
    changes = [(table.ensure_resource(r), v[rows]) for r, v in taken.items()]
    changes.append((table.pod_count, count[rows]))
    for col, v in changes:
        col[where] -= v
    try:
        why: dict[int, Status] = {}
        mask = _fits_with_nominated(fwk, state, pod, table, where, placed, why, limit)
        for j, status in why.items():
            out[int(rows[j])] = (None, status)
        fit = np.flatnonzero(mask)  # positions in rows
        if limit is not None and len(fit) > limit:
            fit = fit[:limit]
            out = out[:int(rows[fit[-1]]) + 1]
        if not len(fit):
            return out
        margins = _node_margins(fitter, state, pod, table, placed, where[fit])
    finally:
        for col, v in changes:
            col[where] += v
    if margins is None:
        return None
    prio = pod.priority
    on_node = table.pods
    flat: list[Pod] = []
    sizes: list[int] = []
    for s in where[fit].tolist():
        pot = [p for p in on_node[s].values() if p.priority < prio]
        sizes.append(len(pot))
        flat.extend(pot)
    sizes_a = np.asarray(sizes, dtype=np.int64)
    assert np.array_equal(sizes_a, count[rows[fit]]), "PriorityLoads out of step with the pods"
    loads = PodLoads(flat)
    arith = _load_margins(loads, sizes, margins)
    if arith is None:
        return None
    member = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes_a)
    ranked = _reprieve_orders(flat, member, sizes_a, budgets, now)
    victim = _reprieve_by_margins(loads, ranked.order, ranked.start, sizes_a, *arith)
    _collect(out, rows[fit].tolist(), flat, ranked, sizes_a, victim, now)
    return out


def _batch_by_filter(fwk: Any, state: CycleState, pod: Pod, table: NodeTable,
                     slots: np.ndarray, budgets: Sequence[Budget], now: float,
                     placed: SlotPods, limit: int | None) -> list[Outcome]:
    """``select_victims_batch`` with every potential victim's load taken off and given back
    on the accounting columns."""
    out: list[Outcome] = [(None, None)] * len(slots)
    prio = pod.priority
    flat: list[Pod] = []  # every potential victim of the batch, node by node (load rows)
    rows: list[int] = []  # batch positions with potential victims
    counts: list[int] = []
    on_node = table.pods
    for i, s in enumerate(slots.tolist()):
        pot = [p for p in on_node[s].values() if p.priority < prio]
        if pot:
            rows.append(i)
            counts.append(len(pot))
            flat.extend(pot)
        else:
            out[i] = (None, Status.unresolvable(NO_VICTIMS))
    if not rows:
        return out
    rows_a = np.asarray(rows, dtype=np.int64)
    counts_a = np.asarray(counts, dtype=np.int64)
    member = np.repeat(np.arange(len(rows), dtype=np.int64), counts_a)  # load row -> rows index
    owner = slots[rows_a][member]  # load row -> slot
    loads = PodLoads(flat)
    off = np.ones(len(flat), dtype=bool)  # load rows currently taken off the table
    loads.apply(table, np.arange(len(flat), dtype=np.int64), owner, -1)
    try:
        why: dict[int, Status] = {}
        mask = _fits_with_nominated(fwk, state, pod, table, slots[rows_a], placed, why, limit)
        for j, status in why.items():
            out[rows[j]] = (None, status)
        fit = np.flatnonzero(mask)  # positions in rows
        if limit is not None and len(fit) > limit:
            fit = fit[:limit]
            out = out[:rows[int(fit[-1])] + 1]
        if not len(fit):
            return out
        # the fitting nodes' load rows, node by node
        sel = np.flatnonzero(np.isin(member, fit))
        sub_member = np.searchsorted(fit, member[sel])
        sizes = counts_a[fit]
        sub = [flat[x] for x in sel.tolist()]
        ranked = _reprieve_orders(sub, sub_member, sizes, budgets, now)
        order, start = sel[ranked.order], ranked.start
        arith = None
        if resource_filter(fwk, state) is not None:
            fitter = resource_filter(fwk, state)
            margins = _node_margins(fitter, state, pod, table, placed, slots[rows_a[fit]])
            if margins is not None:
                arith = _load_margins(loads, sizes.tolist(), margins)
        if arith is not None:
            victim = _reprieve_by_margins(loads, order, start, sizes, *arith)
        else:
            _reprieve_by_filter(fwk, state, pod, table, loads, placed, order, start, sizes,
                                owner, off)
            victim = off
        _collect(out, rows_a[fit].tolist(), sub, ranked, sizes, victim[sel], now)
        return out
    finally:
        gone = np.flatnonzero(off)
        loads.apply(table, gone, owner[gone], 1)


class _Ranked(NamedTuple):
    """Many nodes' potential victims (positions in a flat list, node by node) in reprieve
    order, with what the outcome needs per position."""

    order: np.ndarray  # positions grouped by node and, within a node, in reprieve order
    start: np.ndarray  # where each node's group starts in ``order``
    viol: np.ndarray  # per position: violates a PDB
    prio: np.ndarray  # per position: priority
    started: np.ndarray  # per position: start time (inf: none)
    unstarted: np.ndarray  # per position: no start time


def _reprieve_orders(flat: list[Pod], member: np.ndarray, sizes: np.ndarray,
                     budgets: Sequence[Budget], now: float) -> _Ranked:
    """``_reprieve_order`` for many nodes at once. ``flat`` holds their pods node by node
    (``member``: the node of each, ``sizes``: how many each has)."""
    n = len(flat)
    prio = np.fromiter((p.priority for p in flat), dtype=np.int64, count=n)
    started = np.fromiter((math.inf if (t := p.start_time) is None else t for p in flat),
                          dtype=np.float64, count=n)
    unstarted = np.fromiter((p.start_time is None for p in flat), dtype=bool, count=n)
    # importance: higher priority, then earlier start (none: "now"); stable, so ties keep
    # the node's pod order, as sorted() does
    rank = np.lexsort((np.where(unstarted, now, started), -prio, member))
    viol = np.zeros(n, dtype=bool)
    start = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=start[1:])
    if budgets:
        rank_l = rank.tolist()
        for at, m in zip(start.tolist(), sizes.tolist(), strict=True):
            seg = rank_l[at:at + m]
            bad, _ = split_by_pdb([flat[x] for x in seg], budgets)
            if bad:
                ids = {id(p) for p in bad}
                for x in seg:
                    if id(flat[x]) in ids:
                        viol[x] = True
        rank = rank[np.lexsort((~viol[rank], member[rank]))]  # violating first, stable
    return _Ranked(rank, start, viol, prio, started, unstarted)


def _collect(out: list[Outcome], positions: list[int], flat: list[Pod], ranked: _Ranked,
             sizes: np.ndarray, victim: np.ndarray, now: float) -> None:
    """Each node's victims (``victim`` set, per position in ``flat``) in reprieve order,
    re-sorted by importance when the node has both PDB-violating and other potential
    victims, with their ``Summary`` (computed for all nodes at once)."""
    order, start = ranked.order, ranked.start
    is_victim = victim[order]
    chosen = order[is_victim]  # victims, node by node, in reprieve order
    before = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(is_victim, out=before[1:])
    first = before[start]  # where each node's victims start in ``chosen``
    counts = before[start + sizes] - first

    def per_node(values: np.ndarray) -> np.ndarray:  # sum over each node's victims
        acc = np.zeros(len(values) + 1, dtype=values.dtype)
        np.cumsum(values, out=acc[1:])
        return acc[first + counts] - acc[first]

    violations = per_node(ranked.viol[chosen].astype(np.int64)).tolist()
    prio = ranked.prio[chosen]
    sums = per_node(prio + PRIORITY_OFFSET).tolist()
    some = np.flatnonzero(counts)
    firsts = np.zeros(len(start), dtype=np.int64)
    tops_started = np.full(len(start), math.inf)
    tops_unstarted = np.zeros(len(start), dtype=bool)
    if len(some):
        at = first[some]
        firsts[some] = prio[at]
        top = np.maximum.reduceat(prio, at)
        is_top = prio == np.repeat(top, counts[some])
        tops_started[some] = np.minimum.reduceat(
            np.where(is_top, ranked.started[chosen], math.inf), at)
        tops_unstarted[some] = np.logical_or.reduceat(is_top & ranked.unstarted[chosen], at)
    # both PDB groups on a node: its first potential victim violates, its last does not
    last = order[start + sizes - 1]
    resort = (ranked.viol[order[start]] & ~ranked.viol[last]).tolist()
    pods_all = [flat[x] for x in chosen.tolist()]
    rows = zip(positions, first.tolist(), counts.tolist(), violations, sums, firsts.tolist(),
               tops_started.tolist(), tops_unstarted.tolist(), resort, strict=True)
    for pos, at_, m, v, total, head, ts, un, again in rows:
        pods = pods_all[at_:at_ + m]
        if not pods:
            out[pos] = (Victims(pods, 0), None)
        elif again:
            pods.sort(key=importance_key(now))
            out[pos] = (Victims(pods, v), None)
        else:
            out[pos] = (Victims(pods, v, Summary(head, total, ts, un)), None)


def _reprieve_by_filter(fwk: Any, state: CycleState, pod: Pod, table: NodeTable,
                        loads: PodLoads, placed: SlotPods, order: np.ndarray,
                        start: np.ndarray, sizes: np.ndarray, owner: np.ndarray,
                        off: np.ndarray) -> None:
    """The greedy reprieve with the filters (every potential victim is off the table): step
    n gives back each node's n-th pod in reprieve order and takes it off again unless the
    pod still fits. ``off`` (per load row) ends up marking the victims."""
    step = 0
    act = np.arange(len(start), dtype=np.int64)
    while True:
        act = act[sizes[act] > step]
        if not len(act):
            break
        back = order[start[act] + step]
        where = owner[back]
        loads.apply(table, back, where, 1, unique=True)
        off[back] = False
        ok = _fits_with_nominated(fwk, state, pod, table, where, placed)
        if not ok.all():
            bad = back[~ok]
            loads.apply(table, bad, owner[bad], -1, unique=True)
            off[bad] = True
        step += 1


NodeMargins = tuple[np.ndarray, list[tuple[str, np.ndarray]]]


def _node_margins(fitter: Any, state: CycleState, pod: Pod, table: NodeTable,
                  placed: SlotPods, where: np.ndarray) -> NodeMargins | None:
    """NodeResourcesFit's margins on the nodes ``where`` as the table stands, the smaller of
    both nominated passes (pass 1 with the nominated pods' loads). None when too large for
    exact arithmetic."""
    got = fitter.margins(state, pod, table, where)
    if got is None:
        return None
    pods, res = got
    rows = placed.on(where)
    if len(rows):
        with placed.placed(table, where[rows]):
            got1 = fitter.margins(state, pod, table, where[rows])
        if got1 is None:
            return None
        pods[rows] = np.minimum(pods[rows], got1[0])
        for (_, m), (_, m1) in zip(res, got1[1], strict=True):
            m[rows] = np.minimum(m[rows], m1)
    return pods, res


LoadMargins = tuple[np.ndarray, list[tuple[int, np.ndarray]]]


def _load_margins(loads: PodLoads, sizes: list[int], margins: NodeMargins
                  ) -> LoadMargins | None:
    """The margins with, for each checked resource, the column of ``loads`` that uses it
    (-1: no pod requests it). None past the exact-arithmetic bounds."""
    if (sizes and max(sizes) > _MAX_PODS) or \
            (loads.matrix.size and int(loads.matrix.max()) >= _LOAD_LIMIT):
        return None
    col = {name: j for j, name in enumerate(loads.resources)}
    pods, res = margins
    return pods, [(col.get(name, -1), m) for name, m in res]


def _reprieve_by_margins(loads: PodLoads, order: np.ndarray, start: np.ndarray,
                         sizes: np.ndarray, pods: np.ndarray,
                         res: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """The greedy reprieve as integer arithmetic: a pod is given back when the node's margins
    still cover the pods given back so far plus this one. Returns per load row whether it
    stays a victim."""
    victim = np.ones(len(loads), dtype=bool)
    used_pods = np.zeros(len(start), dtype=np.int64)
    used = [np.zeros(len(start), dtype=np.int64) for _ in res]
    step = 0
    act = np.arange(len(start), dtype=np.int64)
    while True:
        act = act[sizes[act] > step]
        if not len(act):
            break
        back = order[start[act] + step]
        ok = used_pods[act] + 1 <= pods[act]
        adds = []
        for (j, m), u in zip(res, used, strict=True):
            v = loads.matrix[back, j] if j >= 0 else None
            adds.append(v)
            ok &= (u[act] if v is None else u[act] + v) <= m[act]
        kept = act[ok]
        used_pods[kept] += 1
        for v, u in zip(adds, used, strict=True):
            if v is not None:
                u[kept] += v[ok]
        victim[back[ok]] = False
        step += 1
    return victim
