"""PodDisruptionBudgets for DefaultPreemption: budgets and the violating / non-violating split.

There is no disruption controller in schedperf, so ``status.disruptionsAllowed`` is derived
here, the way kube's disruption controller would compute it, from the pods each budget selects
in its namespace:

* ``expected`` = every selected pod (bound or pending: the controller counts the workload's
  replicas, which include pods not yet scheduled);
* ``healthy`` = selected pods that are bound (a bound pod counts as running and ready in this
  fake cluster), not being deleted, and not listed in ``status.disruptedPods``;
* ``desired`` = ``minAvailable`` (an integer, or a percentage of ``expected`` rounded up), or
  ``expected - maxUnavailable`` (a percentage of ``expected`` rounded up; at least 0);
* ``allowed`` = ``healthy - desired``, and 0 when that is negative, when ``expected`` is 0 or
  when neither field is set (the controller then leaves ``expected`` at 0).

The split itself is upstream's ``filterPodsWithPDBViolation``
(docs/scheduling-model.md, "Preemption victims").

:class:`BudgetTracker` keeps ``expected`` and ``healthy`` per budget up to date from the
cluster's watch events (a pod event touches only the budgets of its namespace), so a preemption
attempt does not rescan every pod of the cluster for every budget; budget changes rebuild the
counts from scratch. Assumed pods (which have a node but no event yet) are added on demand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.objects import PodDisruptionBudget
from scheduler_core.api.pod import Pod

__all__ = ["Budget", "BudgetTracker", "budgets", "scaled_value", "split_by_pdb"]


@dataclass(frozen=True, slots=True)
class Budget:
    """A PDB that can match pods (non-empty selector) and its disruptions allowed."""

    pdb: PodDisruptionBudget
    allowed: int


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as is, "N%" of ``total``."""
    if isinstance(value, int):
        return value
    pct = int(value.rstrip("%"))
    return -(-pct * total // 100) if round_up else pct * total // 100


def _selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """A nil or empty selector matches nothing (as preemption treats it)."""
    sel = pdb.selector
    return sel is not None and not sel.empty and pod.namespace == pdb.namespace and \
        sel.matches(pod.labels)


def _healthy(pdb: PodDisruptionBudget, pod: Any) -> bool:
    return bool(pod.node_name) and pod.deletion_timestamp is None and \
        pod.name not in pdb.disrupted_pods


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> int:
    """What the disruption controller would publish as ``status.disruptionsAllowed``."""
    expected = healthy = 0
    for p in pods:
        if not _selects(pdb, p):
            continue
        expected += 1
        if _healthy(pdb, p):
            healthy += 1
    return allowed_from_counts(pdb, expected, healthy)


def allowed_from_counts(pdb: PodDisruptionBudget, expected: int, healthy: int) -> int:
    """``disruptionsAllowed`` from the budget's selected (expected) and healthy pod counts."""
    if pdb.max_unavailable is not None:
        desired = max(0, expected - scaled_value(pdb.max_unavailable, expected, round_up=True))
    elif pdb.min_available is not None:
        desired = scaled_value(pdb.min_available, expected, round_up=True)
    else:
        return 0  # the controller leaves the expected count at 0: nothing may be disrupted
    allowed = healthy - desired
    return 0 if expected <= 0 or allowed <= 0 else allowed


def budgets(pdbs: Sequence[PodDisruptionBudget], pods: Iterable[Pod]) -> list[Budget]:
    """The budgets that can match a pod, with their disruptions allowed (one pass over pods
    per namespace that has such a budget)."""
    usable = [b for b in pdbs if b.selector is not None and not b.selector.empty]
    if not usable:
        return []
    namespaces = {b.namespace for b in usable}
    by_ns: dict[str, list[Pod]] = {ns: [] for ns in namespaces}
    for p in pods:
        bucket = by_ns.get(p.namespace)
        if bucket is not None:
            bucket.append(p)
    return [Budget(b, disruptions_allowed(b, by_ns[b.namespace])) for b in usable]


class BudgetTracker:
    """``budgets(cluster.list_pdbs(), cluster.pods.values())``, kept up to date by events."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self._valid = False
        self._usable: list[PodDisruptionBudget] = []
        self._by_ns: dict[str, list[int]] = {}  # namespace -> indexes into _usable
        self._expected: list[int] = []
        self._healthy: list[int] = []
        cluster.subscribe(self._on_event)

    def _rebuild(self) -> None:
        self._usable = [b for b in self.cluster.list_pdbs()
                        if b.selector is not None and not b.selector.empty]
        self._by_ns = {}
        for i, b in enumerate(self._usable):
            self._by_ns.setdefault(b.namespace, []).append(i)
        self._expected = [0] * len(self._usable)
        self._healthy = [0] * len(self._usable)
        if self._usable:
            assumed = self.cluster.assumed
            for p in self.cluster.pods.values():
                if p.namespace in self._by_ns:
                    # an assumed pod counts as its watch events last showed it: unbound
                    self._count(p, 1, unbound=p.key in assumed)
        self._valid = True

    def _count(self, pod: Any, sign: int, *, unbound: bool = False) -> None:
        for i in self._by_ns.get(pod.namespace, ()):
            pdb = self._usable[i]
            if _selects(pdb, pod):
                self._expected[i] += sign
                if not unbound and _healthy(pdb, pod):
                    self._healthy[i] += sign

    def _on_event(self, ev: Any) -> None:
        if not self._valid:
            return
        if ev.kind == "PodDisruptionBudget":
            self._valid = False
        elif ev.kind == "Pod" and self._usable:
            if ev.old is not None:
                self._count(ev.old, -1)
            if ev.new is not None:
                self._count(ev.new, 1)

    def budgets(self) -> list[Budget]:
        if not self._valid:
            self._rebuild()
        if not self._usable:
            return []
        healthy = list(self._healthy)
        for key in self.cluster.assumed:  # a node but no bind event yet
            pod = self.cluster.pods.get(key)
            if pod is None:
                continue
            for i in self._by_ns.get(pod.namespace, ()):
                pdb = self._usable[i]
                if _selects(pdb, pod) and _healthy(pdb, pod):
                    healthy[i] += 1
        return [Budget(b, allowed_from_counts(b, self._expected[i], healthy[i]))
                for i, b in enumerate(self._usable)]


def split_by_pdb(pods: Sequence[Pod], budgets_: Sequence[Budget]
                 ) -> tuple[list[Pod], list[Pod]]:
    """``filterPodsWithPDBViolation``: (violating, non-violating), each in input order.

    Every budget starts from its allowed disruptions; each pod, in order, takes one from every
    budget that selects it (unless the pod is already in the budget's ``disruptedPods``), and
    is violating when any of them drops below zero. A pod without labels matches none.
    """
    if not budgets_:
        return [], list(pods)
    allowed = [b.allowed for b in budgets_]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for p in pods:
        bad = False
        if p.labels:
            for i, b in enumerate(budgets_):
                pdb = b.pdb
                if pdb.namespace != p.namespace or not _selects(pdb, p):
                    continue
                if p.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    bad = True
        (violating if bad else non_violating).append(p)
    return violating, non_violating
