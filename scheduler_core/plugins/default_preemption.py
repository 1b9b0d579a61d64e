"""DefaultPreemption. Extension points: PostFilter, PreEnqueue, EnqueueExtensions.

When no node fits, find lower-priority pods whose eviction would let the pod in, evict them
and nominate the pod to that node (kube's ``preemption.Evaluator.Preempt``):

1. eligibility: ``preemptionPolicy: Never`` never preempts; a pod whose nominated node (not
   UnschedulableAndUnresolvable this cycle) still has a lower-priority pod terminating waits;
2. potential nodes: those whose status this cycle is exactly Unschedulable, in list order;
3. a dry run over ``potential[(offset + i) % n]`` (random offset) until at least one candidate
   breaks no PodDisruptionBudget and ``numCandidates`` candidates are known;
4. pick one candidate (fewest PDB violations, lowest top victim priority, smallest priority
   sum, fewest victims, latest start of the top-priority victims, then the first);
5. evict its victims through the cluster store (a waiting pod is rejected instead), clear the
   nomination of lower-priority pods nominated to that node, and nominate the pod there.

With the SchedulerAsyncPreemption gate (``handle.async_preemption``; on by default, as in
v1.34) step 5 only nominates the pod: the evictions and the clearing are handed to the
scheduler as off-cycle work (``handle.submit_off_cycle``; when it runs: ``cycle.off_cycle``),
in upstream's order (clear the lower-priority nominations, evict every victim but the last,
forget the preemptor, evict the last). Until then the preemptor is in the preempting set and
PreEnqueue holds it back (UnschedulableAndUnresolvable); the plugin registers assigned-pod
deletions with a hint that always skips, so the victims' deletions requeue the preemptor only
through its other rejectors' hints, once PreEnqueue lets it through. Other pods are scheduled
meanwhile and see the victims in place and the preemptor nominated. With the gate off the
victims are evicted during PostFilter, as before.

Args (``DefaultPreemptionArgs``):
    minCandidateNodesPercentage  0..100, default 10
    minCandidateNodesAbsolute    >= 0, default 100 (not both 0)

The dry run mutates the live node table and always restores it (``default_preemption_victims``).
It walks the nodes in upstream's order with upstream's early stop. When every active Filter
plugin is node-local and no PreFilter extension is active (``plugins.node_local``), the nodes are
evaluated together: one vectorised first check over the remaining nodes, then victims on as
many fitting nodes as candidates are still missing (integer arithmetic on the nodes' free
resources when only NodeResourcesFit reads the pods, one filter call per reprieve round
otherwise); else one at a time with cloned CycleStates, exactly as upstream. Both give the
same candidates. The nominated pods the nominated pass adds come from the scheduler, gathered
once per cycle (``handle.nominated_placement``).

Differences from upstream, by design: candidates keep dry-run order, so the last tie-break
takes the first of them (upstream iterates a map); PDB ``disruptionsAllowed`` is computed here
(see ``default_preemption_pdb``); a victim is deleted at once when evicted (no graceful
termination), so the
"terminating victim" wait applies only to pods that already carry a deletionTimestamp (there
are no pod conditions, so the DisruptionTarget check is not made); a pod's preemptionPolicy
falls back to its PriorityClass's when the pod spec has none (admission's job upstream).

See docs/scheduling-model.md, "Preemption".
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.errors import ConfigError, NotFoundError
from scheduler_core.extender import ExtenderError
from scheduler_core.framework.diagnosis import Diagnosis, FitError
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PostFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.pod_index import priority_loads
from scheduler_core.plugins import names
from scheduler_core.plugins.default_preemption_pdb import Budget, BudgetTracker
from scheduler_core.plugins.default_preemption_victims import (
    NO_VICTIMS,
    Victims,
    node_local,
    select_victims_batch,
    select_victims_on_node,
    summary_of,
)
from scheduler_core.plugins.helper import check_keys, require_int, require_mapping

__all__ = [
    "NAME",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "num_candidates",
    "pick_one_node",
]

NAME = names.DEFAULT_PREEMPTION
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"


# --------------------------------------------------------------------------- args
@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10  # 0..100: share of potential nodes to dry-run
    min_candidate_nodes_absolute: int = 100  # >= 0: at least this many candidates

    @classmethod
    def parse(cls, args: dict | None, path: str = "") -> DefaultPreemptionArgs:
        def at(key: str) -> str:
            return f"{path}.{key}" if path else key

        data = require_mapping(args, path)
        check_keys(data, path, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"),
                   "DefaultPreemptionArgs")
        pct = require_int(data.get("minCandidateNodesPercentage"),
                          at("minCandidateNodesPercentage"), 10)
        absolute = require_int(data.get("minCandidateNodesAbsolute"),
                               at("minCandidateNodesAbsolute"), 100)
        if not 0 <= pct <= 100:
            raise ConfigError(f"not in valid range [0, 100], got {pct}",
                              field=at("minCandidateNodesPercentage"))
        if absolute < 0:
            raise ConfigError(f"not in valid range [0, inf), got {absolute}",
                              field=at("minCandidateNodesAbsolute"))
        if pct == 0 and absolute == 0:
            raise ConfigError("cannot be zero at the same time as minCandidateNodesAbsolute",
                              field=at("minCandidateNodesPercentage"))
        return cls(pct, absolute)


def num_candidates(num_potential: int, percentage: int, absolute: int) -> int:
    """``calculateNumCandidates``: a share of the potential nodes, at least ``absolute``, at
    most all of them."""
    n = num_potential * percentage // 100
    return min(max(n, absolute), num_potential)


# --------------------------------------------------------------------------- candidates
@dataclass(slots=True)
class Candidate:
    node: str
    slot: int
    victims: Victims


def pick_one_node(candidates: Sequence[Candidate], now: float) -> Candidate:
    """``pickOneNodeForPreemption`` with the default criteria, each a score where higher is
    better; a criterion only breaks the ties the previous ones left: fewest PDB violations,
    lowest priority of the first victim, smallest priority sum, fewest victims (the four as
    one lexicographic key), then the latest start of the highest-priority victims."""
    if len(candidates) == 1:
        return candidates[0]
    summaries = [summary_of(c.victims) for c in candidates]
    keys = [(-c.victims.num_pdb_violations, -s.first_priority, -s.priority_sum,
             -len(c.victims.pods)) for c, s in zip(candidates, summaries, strict=True)]
    best = max(keys)
    tied = [i for i, k in enumerate(keys) if k == best]
    if len(tied) > 1:
        starts = [summaries[i].earliest_top_start(now) for i in tied]
        latest = max(starts)
        tied = [i for i, v in zip(tied, starts, strict=True) if v == latest]
    return candidates[tied[0]]


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several deduplicated in
    brackets."""
    uniq = list(dict.fromkeys(messages))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


def _next_chunk(k: int, found: int, processed: int) -> int:
    """How many nodes to evaluate together next: enough, at the candidate density seen so
    far, to reach ``k`` candidates (with a margin); twice as many as so far when there is no
    density to go by (none found, or only PDB-violating ones while ``k`` are known). Only the
    work past the stopping point depends on it, never the result."""
    if found == 0 or found >= k:
        return 2 * processed
    return -(-(k - found) * processed * 5 // (found * 4)) + 8


@dataclass(slots=True)
class _DryRun:
    candidates: list[Candidate]
    failed: list[tuple[int, Status]]
    errors: list[str]


# --------------------------------------------------------------------------- plugin
class DefaultPreemption:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.args = DefaultPreemptionArgs.parse(args, args_path)
        self.handle = handle
        self._budgets: BudgetTracker | None = None  # created on the first preemption
        # asynchronous preemption: preemptor uid -> its victims, while the evictions are queued
        # (upstream's preempting set; the victims are what the fidelity check reports)
        self._preempting: dict[str, tuple[Pod, ...]] = {}

    # ------------------------------------------------------------------ async preemption
    @property
    def async_preemption(self) -> bool:
        """The SchedulerAsyncPreemption gate, as the handle reports it (a handle that cannot
        run off-cycle work, e.g. an evaluation sandbox, preempts synchronously)."""
        h = self.handle
        return bool(getattr(h, "async_preemption", False)) and \
            getattr(h, "submit_off_cycle", None) is not None

    def is_pod_running_preemption(self, uid: str) -> bool:
        """The pod's asynchronous preemption has not finished (upstream's
        ``IsPodRunningPreemption``)."""
        return uid in self._preempting

    def victims_in_flight(self, uid: str) -> tuple[Pod, ...]:
        """The victims the pod's unfinished asynchronous preemption will evict (empty when
        none is in flight)."""
        return self._preempting.get(uid, ())

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.uid in self._preempting:
            return Status.unresolvable(WAITING_FOR_PREEMPTION, plugin=NAME)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Gate on: an assigned pod's deletion, with a hint that always skips (the pod's other
        rejectors decide; the registration lets the queue consider a pod this plugin gated).
        Gate off: nothing (PreEnqueue never refuses a pod)."""
        if not self.async_preemption:
            return []
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.DELETE), _always_skip)]

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis
                    ) -> tuple[PostFilterResult | None, Status]:
        result, status = self.preempt(state, pod, diagnosis)
        if status.reasons:
            status = Status(status.code, ("preemption: " + status.message,), status.plugin)
        return result, status

    def preempt(self, state: CycleState, pod: Pod, diagnosis: Diagnosis
                ) -> tuple[PostFilterResult | None, Status]:
        """kube's ``Evaluator.Preempt`` (messages without the "preemption: " prefix)."""
        h = self.handle
        latest = h.cluster.pods.get(pod.key)
        if latest is None:
            return None, Status.error(f'pods "{pod.name}" not found')
        pod = latest
        why = self._not_eligible(pod, diagnosis)
        if why:
            return None, Status.unschedulable(why)
        fwk = h.framework_for(pod)
        potential = self.potential_nodes(diagnosis)
        if len(potential) == 0:
            return PostFilterResult(""), Status.unschedulable(self._fit_error(pod, []))
        offset = int(h.rng.integers(len(potential)))
        loads = priority_loads(h.table)
        if loads is not None and not loads.any_below(pod.priority):
            # no placed pod has a lower priority: every node fails the dry run the same way
            return PostFilterResult(""), Status.unschedulable(self._fit_error(
                pod, [], uniform=(potential, Status.unresolvable(NO_VICTIMS))))
        k = num_candidates(len(potential), self.args.min_candidate_nodes_percentage,
                           self.args.min_candidate_nodes_absolute)
        run = self.dry_run(fwk, state, pod, potential, offset, k)
        if not run.candidates:
            if run.errors:
                return None, Status.error(_aggregate(run.errors))
            return PostFilterResult(""), Status.unschedulable(self._fit_error(pod, run.failed))
        candidates = run.candidates
        extenders = getattr(h, "extenders", None)
        if extenders is not None and extenders.has_preempters:
            try:
                candidates = self._call_extenders(extenders, pod, candidates)
            except ExtenderError as exc:
                return None, Status.error(str(exc))
            if not candidates:
                return None, Status.unschedulable("no candidate node for preemption")
        now = h.clock.now()
        best = candidates[0] if len(candidates) == 1 else pick_one_node(candidates, now)
        if self.async_preemption:
            self._prepare_candidate_async(best, pod)
        else:
            self._prepare_candidate(best, pod)
        if getattr(h, "generic_workload", False):  # v1.37 (the gate exists from v1.37 on)
            return PostFilterResult(best.node), Status(Code.SUCCESS, (
                f"found a potential placement for pod on node {best.node}, preempting "
                f"{len(best.victims.pods)} victims",))
        return PostFilterResult(best.node), Status(Code.SUCCESS)

    # ------------------------------------------------------------------ steps
    def _call_extenders(self, extenders: Any, pod: Pod, candidates: list[Candidate]
                        ) -> list[Candidate]:
        """callExtenders: the candidates the extenders with a preempt verb keep, with the
        victims they name (in the extenders' answer order)."""
        h = self.handle
        victims = {c.node: (list(c.victims.pods), c.victims.num_pdb_violations)
                   for c in candidates}
        kept = extenders.process_preemption(pod, victims, h.cluster.pods_on_node)
        slot_of = h.table.slot_of
        return [Candidate(node, slot_of[node], Victims(pods, n))
                for node, (pods, n) in kept.items() if node in slot_of]

    def _preemption_policy(self, pod: Pod) -> str:
        policy = pod.spec.preemption_policy
        if not policy and pod.spec.priority_class_name:
            pc = self.handle.cluster.priority_classes.get(pod.spec.priority_class_name)
            policy = pc.preemption_policy if pc is not None else ""
        return policy

    def _not_eligible(self, pod: Pod, diagnosis: Diagnosis) -> str:
        """``PodEligibleToPreemptOthers``: the reason the pod may not preempt, or ""."""
        if self._preemption_policy(pod) == "Never":
            return NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if not nominated:
            return ""
        table = self.handle.table
        slot = table.slot_of.get(nominated)
        status = diagnosis.status_of(slot) if slot is not None else diagnosis.absent_status
        # a node without a recorded status counts as UnschedulableAndUnresolvable (upstream's
        # default for nodes absent from NodeToStatus)
        if status is None or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        if slot is not None:
            for p in table.pods[slot].values():
                # v1.34: only a pod being evicted by preemption (its DisruptionTarget
                # condition) holds the preemptor back, not any pod being deleted
                if p.priority < pod.priority and p.deletion_timestamp is not None and \
                        p.preempted:
                    return NOT_ELIGIBLE_TERMINATING
        return ""

    def potential_nodes(self, diagnosis: Diagnosis) -> np.ndarray:
        """Slots whose status this cycle is exactly Unschedulable, in node list order."""
        table = self.handle.table
        absent = diagnosis.absent_status
        codes = np.full(table.high, -1 if absent is None else int(absent.code), dtype=np.int8)
        if len(diagnosis.slots):
            codes[diagnosis.slots] = diagnosis.codes()
        order = table.order()
        return order[codes[order] == int(Code.UNSCHEDULABLE)]

    def dry_run(self, fwk: Any, state: CycleState, pod: Pod, potential: np.ndarray,
                offset: int, k: int) -> _DryRun:
        """``DryRunPreemption``: evaluate ``potential[(offset + i) % n]`` in order, stopping once
        a non-violating candidate exists and ``k`` candidates are known. Returns the
        non-violating candidates then the violating ones (at most ``k`` of each)."""
        h = self.handle
        table = h.table
        n = len(potential)
        rotated = np.concatenate((potential[offset:], potential[:offset]))
        if self._budgets is None:
            self._budgets = BudgetTracker(h.cluster)
        budget: list[Budget] = self._budgets.budgets()
        now = h.clock.now()
        batch = node_local(fwk, state)
        nominated = h.nominated_placement(pod) if batch else None
        good: list[Candidate] = []
        violating: list[Candidate] = []
        failed: list[tuple[int, Status]] = []
        errors: list[str] = []
        pos, chunk = 0, max(k, 1)
        while pos < n:
            part = rotated[pos:pos + chunk]
            outcomes: Any = None
            if batch:
                # victims only on as many fitting nodes as candidates are still missing: the
                # batch stops there and the next one goes on from the node after
                found = len(good) + len(violating)
                done = select_victims_batch(fwk, state, pod, table, rotated[pos:], budget, now,
                                            nominated, limit=max(k - found if found < k
                                                                 else k, 1),
                                            max_nodes=chunk)
                part = rotated[pos:pos + len(done)]
                outcomes = done
            pos += len(part)
            if outcomes is None:
                outcomes = (select_victims_on_node(h, fwk, state, pod, s, budget, now)
                            for s in part.tolist())
            for s, (victims, status) in zip(part.tolist(), outcomes, strict=True):
                if status is None and victims is not None and victims.pods:
                    c = Candidate(table.node(s).name, s, victims)
                    bucket = good if victims.num_pdb_violations == 0 else violating
                    if len(bucket) < k:
                        bucket.append(c)
                    if good and len(good) + len(violating) >= k:
                        return _DryRun(good + violating, failed, errors)
                    continue
                if status is None:
                    status = Status.error(
                        f'expected at least one victim pod on node "{table.node(s).name}"')
                if status.code == Code.ERROR:
                    errors.append(status.message)
                failed.append((s, status))
            chunk = _next_chunk(k, len(good) + len(violating), pos)
        return _DryRun(good + violating, failed, errors)

    def _fit_error(self, pod: Pod, failed: list[tuple[int, Status]], *,
                   uniform: tuple[np.ndarray, Status] | None = None) -> str:
        """The FitError text over the dry-run statuses (``failed``, or ``uniform``: these
        slots all with this status); every other node is "not helpful"."""
        d = Diagnosis(self.handle.table.num_nodes)
        if uniform is not None:
            d.slots = np.asarray(uniform[0], dtype=np.int64)
            d.status_index = np.zeros(len(d.slots), dtype=np.int64)
            d.statuses = [uniform[1]]
        elif failed:
            index: dict[Status, int] = {}
            d.slots = np.asarray([s for s, _ in failed], dtype=np.int64)
            d.status_index = np.asarray([index.setdefault(st, len(index)) for _, st in failed],
                                        dtype=np.int64)
            d.statuses = list(index)
        d.absent_status = Status.unresolvable(NOT_HELPFUL)
        return FitError(pod.key, d).message

    def _prepare_candidate(self, c: Candidate, pod: Pod) -> None:
        """Evict the victims (reject waiting ones) and clear lower-priority nominations."""
        for victim in c.victims.pods:
            self._evict(victim)
        self._clear_lower_nominations(c.node, pod)

    def _prepare_candidate_async(self, c: Candidate, pod: Pod) -> None:
        """Mark the pod as preempting and queue the evictions as off-cycle work (upstream's
        ``prepareCandidateAsync``; the order of the steps is upstream's goroutine's)."""
        uid = pod.uid
        victims = tuple(c.victims.pods)
        node = c.node
        self._preempting[uid] = victims

        def finish() -> None:
            self._clear_lower_nominations(node, pod)
            for victim in victims[:-1]:
                self._evict(victim)
            # forgotten before the last eviction, so that its deletion event finds the
            # preemptor no longer held by PreEnqueue
            self._preempting.pop(uid, None)
            if victims:
                self._evict(victims[-1])

        self.handle.submit_off_cycle(finish)  # type: ignore[attr-defined]

    def _evict(self, victim: Pod) -> None:
        """Reject a victim waiting at Permit, else delete it (one already terminating, gone,
        or replaced by another pod of the same name is left alone)."""
        if victim.deletion_timestamp is not None:
            return  # already going away
        h = self.handle
        waiting = h.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.reject(NAME, "preempted")
            return
        current = h.cluster.pods.get(victim.key)
        if current is None or current.uid != victim.uid or \
                current.deletion_timestamp is not None:
            return
        with contextlib.suppress(NotFoundError):
            h.cluster.delete_pod(victim.namespace, victim.name)

    def _clear_lower_nominations(self, node: str, pod: Pod) -> None:
        h = self.handle
        for other in h.nominated_pods_for_node(node):
            if other.priority < pod.priority:
                other.nominated_node_name = ""
                h.delete_nominated_pod(other)


def _always_skip(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """The hint of the victims' deletions: never this plugin's decision to requeue."""
    return QueueingHint.QUEUE_SKIP
