"""SelectVictimsOnNode for DefaultPreemption (spec §7.2), per node and batched.

Both functions work on the live node table: they take the lower-priority pods off a node with
``table.remove_pod`` (the index listeners follow), check the preemptor, give pods back one at a
time from the most important down (PDB-violating pods first), and in a ``finally`` put every
pod they took back, restoring each node's pod order too. A dry run leaves the table as it
found it.

``select_victims_on_node`` is upstream's function for one node: a cloned CycleState, the
PreFilter ``add_pod``/``remove_pod`` extensions and both passes of the nominated-pods filter.

``select_victims_batch`` runs the same algorithm over many nodes at once, one vectorised
filter call per round (two where pods are nominated) instead of one per node and step. It is
exact when nodes cannot affect each other: every active Filter plugin reads only its own node's
columns and no PreFilter extension is active (so the per-node CycleState clones would stay
equal to the original). ``node_local`` checks both. The nominated pass is batched the same way:
nominated pods are added to their nodes for pass 1 and taken off for pass 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import CycleState, Status
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.default_preemption_pdb import Budget, split_by_pdb

__all__ = [
    "NO_VICTIMS",
    "Victims",
    "importance_key",
    "node_local",
    "select_victims_batch",
    "select_victims_on_node",
]

NO_VICTIMS = "No preemption victims found for incoming pod"

# in-tree Filter plugins whose verdict on a node depends only on that node's own columns
_NODE_LOCAL_FILTERS = frozenset({
    names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, names.NODE_AFFINITY,
    names.NODE_PORTS, names.NODE_RESOURCES_FIT, names.VOLUME_RESTRICTIONS,
    names.NODE_VOLUME_LIMITS, names.VOLUME_BINDING, names.VOLUME_ZONE,
})
_IN_TREE_PREFIX = "scheduler_core.plugins."

Outcome = tuple["Victims | None", "Status | None"]


@dataclass(slots=True)
class Victims:
    """The pods to evict on one node, most important first, and how many break a PDB."""

    pods: list[Pod]
    num_pdb_violations: int


def importance_key(now: float) -> Any:
    """Sort key for kube's ``MoreImportantPod``: higher priority first, then the pod that
    started earlier (a pod without a start time counts as starting ``now``)."""

    def key(p: Pod) -> tuple[int, float]:
        return -p.priority, (now if p.start_time is None else p.start_time)

    return key


def node_local(fwk: Any, state: CycleState) -> bool:
    """True when the batched victim search is exact for this pod and profile."""
    skip = state.skip_filter
    for p in fwk.pre_filter_plugins:
        if p.name not in skip and callable(getattr(p, "add_pod", None)):
            return False
    for p in fwk.filter_plugins:
        if p.name in skip:
            continue
        if p.name not in _NODE_LOCAL_FILTERS or \
                not type(p).__module__.startswith(_IN_TREE_PREFIX):
            return False
    return True


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


def select_victims_on_node(handle: Any, fwk: Any, state: CycleState, pod: Pod, slot: int,
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
             mask: np.ndarray, first_fail: np.ndarray | None, rows: list[int],
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
                         idx: np.ndarray, nominated: Mapping[int, list[Pod]],
                         why: dict[int, Status] | None = None) -> np.ndarray:
    """Both passes of RunFilterPluginsWithNominatedPods over ``idx`` at once: a node fits
    only if it fits with its nominated pods (``nominated``: slot -> pods of priority >= the
    pod's) and without them. ``why`` gets, per failing position, the first failing pass's
    status (pass 1 before pass 2, as upstream)."""
    n = len(idx)
    mask = np.ones(n, dtype=bool)
    rows = [j for j, s in enumerate(idx.tolist()) if s in nominated] if nominated else []
    if rows:
        added: list[tuple[Pod, int]] = []
        try:
            for j in rows:
                s = int(idx[j])
                for p in nominated[s]:
                    table.add_pod(p, s)
                    added.append((p, s))
            sub = idx[np.asarray(rows, dtype=np.int64)]
            m1, ff1 = _fits(fwk, state, pod, table, sub)
            if why is not None:
                _explain(fwk, state, pod, table, sub, m1, ff1, rows, why)
            mask[rows] = m1
        finally:
            for p, s in added:
                table.remove_pod(p, s)
    m2, ff2 = _fits(fwk, state, pod, table, idx)
    if why is not None:
        _explain(fwk, state, pod, table, idx, m2 | ~mask, ff2, list(range(n)), why)
    mask &= m2
    return mask


def select_victims_batch(fwk: Any, state: CycleState, pod: Pod, table: NodeTable,
                         slots: np.ndarray, budgets: Sequence[Budget], now: float,
                         nominated: Mapping[int, list[Pod]]) -> list[Outcome]:
    """``select_victims_on_node`` for every slot in ``slots`` at once (valid when
    ``node_local`` holds). ``nominated`` maps a slot to the pods nominated there that the
    nominated pass adds (priority >= the pod's, not the pod itself). One outcome per slot."""
    n = len(slots)
    prio = pod.priority
    out: list[Outcome] = [(None, None)] * n
    potentials: list[list[Pod]] = []
    took: dict[int, dict[str, Pod]] = {}
    orders: dict[int, list[str]] = {}
    try:
        for i, s in enumerate(slots.tolist()):
            on_node = table.pods[s]
            pot = [p for p in on_node.values() if p.priority < prio]
            potentials.append(pot)
            if not pot:
                out[i] = (None, Status.unresolvable(NO_VICTIMS))
                continue
            orders[s] = list(on_node)
            gone = took[s] = {}
            for p in pot:
                table.remove_pod(p, s)
                gone[p.uid] = p
        rows = [i for i in range(n) if potentials[i]]
        if not rows:
            return out
        why: dict[int, Status] = {}
        mask = _fits_with_nominated(fwk, state, pod, table,
                                    slots[np.asarray(rows, dtype=np.int64)], nominated, why)
        for j, status in why.items():
            out[rows[j]] = (None, status)
        fit_rows = [i for i, ok in zip(rows, mask.tolist(), strict=True) if ok]
        queues = {i: _reprieve_order(potentials[i], budgets, now) for i in fit_rows}
        chosen: dict[int, list[tuple[Pod, bool]]] = {i: [] for i in fit_rows}
        step = 0
        active = [i for i in fit_rows if len(queues[i][0]) > step]
        while active:
            for i in active:
                p = queues[i][0][step][0]
                s = int(slots[i])
                table.add_pod(p, s)
                del took[s][p.uid]
            ok = _fits_with_nominated(fwk, state, pod, table,
                                      slots[np.asarray(active, dtype=np.int64)], nominated)
            for j in np.flatnonzero(~ok).tolist():
                i = active[j]
                p, violating = queues[i][0][step]
                s = int(slots[i])
                table.remove_pod(p, s)
                took[s][p.uid] = p
                chosen[i].append((p, violating))
            step += 1
            active = [i for i in active if len(queues[i][0]) > step]
        for i in fit_rows:
            out[i] = (_victims(chosen[i], queues[i][1], now), None)
        return out
    finally:
        for s, gone in took.items():
            _restore(table, s, gone, orders[s])
