"""scheduler_core's answer to the reference's ``evaluate``: the same steps of one scheduling
cycle for a pending pod, reported in the same typed form (``workloads.reference.model``), so the
two can be compared field by field.

``load_core(manifests, config)`` builds a core cluster and scheduler from the Kubernetes
manifests and KubeSchedulerConfiguration mapping that are sent to the reference.
``evaluate_core(scheduler, namespace, name)`` then runs, on the pod's profile: each PreFilter
plugin (each on a state of its own, stopping where the framework stops), the framework's
PreFilter, Filter on every node PreFilter left (no numFeasibleNodesToFind cut), PreScore and
Score on the feasible nodes (per plugin, normalized and unweighted, with weights and totals)
and the set of best nodes. Nothing is changed, except with ``post_filter=True``: when no node
fits, the core's PostFilter then runs for real (the core's preemption evicts its victims, or
with asynchronous preemption queues their eviction, and nominates at once), and the victims
are the pods it removed or will remove.

Filter runs with the nominated pass, as the scheduler's does (and the reference's).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np

from scheduler_core.api.manifest import parse_object
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.store import Cluster
from scheduler_core.cycle.diagnose import NominatedRejections
from scheduler_core.cycle.schedule_pod import slots_in_list_order
from scheduler_core.extender import Extenders
from scheduler_core.framework.config import SchedulerConfig, build_frameworks, parse_config
from scheduler_core.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis, FitError
from scheduler_core.framework.interface import CycleState, FilterError
from scheduler_core.framework.interface import Status as CoreStatus
from scheduler_core.queue.clock import FakeClock
from scheduler_core.scheduler import Scheduler
from workloads.reference.model import (
    Evaluation,
    Filter,
    PluginPreFilter,
    PluginScores,
    PostFilter,
    PreFilter,
    Score,
    Status,
    Victim,
)

__all__ = ["evaluate_core", "load_core"]


def load_core(manifests: Iterable[Mapping[str, Any]], config: Mapping[str, Any] | None = None,
              *, seed: int = 0) -> tuple[Cluster, Scheduler]:
    """A core cluster holding ``manifests`` (in order) and a scheduler over it."""
    clock = FakeClock()
    cluster = Cluster(clock=clock.now)
    for i, manifest in enumerate(manifests):
        cluster.add(parse_object(dict(manifest), source=f"objects[{i}]"))
    cfg = parse_config(dict(config)) if config is not None else SchedulerConfig()
    sched = Scheduler(cluster, lambda h: build_frameworks(cfg, h), clock=clock, seed=seed,
                      extenders=Extenders(cfg.extenders) if cfg.extenders else None)
    return cluster, sched


def _status(s: CoreStatus | None) -> Status:
    if s is None:
        return Status("Success")
    return Status(s.code.upstream_name, s.plugin, tuple(s.reasons))


def evaluate_core(sched: Scheduler, namespace: str, name: str, *,
                  post_filter: bool = False, nodes: Collection[str] | None = None
                  ) -> Evaluation:
    """The core's evaluation of the pending pod ``namespace/name`` (see the module doc);
    ``nodes``: only these (a placement of a pod-group cycle), in list order."""
    cluster = sched.cluster
    pod = cluster.get_pod(namespace, name)
    if pod.node_name:
        raise ValueError(f"pod {pod.key} is bound to {pod.node_name}: only a pending pod can "
                         "be evaluated")
    fwk = sched.profiles[pod.scheduler_name]
    table = cluster.table
    order = table.order() if nodes is None else slots_in_list_order(table, nodes)
    names = tuple(table.names_of(order))
    if not names:  # schedulePod stops before PreFilter (ErrNoNodesAvailable)
        empty = PreFilter((), Status("Success"), None, frozenset())
        return Evaluation(pod.namespace, pod.name, fwk.profile_name, (), empty, None, None,
                          None, "Unschedulable", NO_NODES_AVAILABLE)
    state = CycleState()
    plugins = _probe_pre_filter(fwk, pod, table)
    pre_res, status, narrowing = fwk.run_pre_filter(state, pod, table)
    narrowed = None if pre_res is None or pre_res.node_names is None else frozenset(
        pre_res.node_names)
    pre = PreFilter(plugins, _status(status), narrowed, frozenset(state.skip_filter))
    diagnosis = Diagnosis(table.num_nodes if nodes is None else len(order))
    base = dict(namespace=pod.namespace, name=pod.name, profile=fwk.profile_name, nodes=names,
                pre_filter=pre)
    if status is not None:
        if not status.is_rejected:
            return Evaluation(**base, filter=None, score=None, post_filter=None,
                              outcome="Error", message=status.message)
        diagnosis.reject_everywhere(status)
        return _unschedulable(sched, fwk, state, pod, diagnosis, base, None, post_filter)
    candidates = order
    if narrowed is not None:
        candidates = slots_in_list_order(table, narrowed)
        if nodes is not None:
            candidates = candidates[np.isin(candidates, order)]
        diagnosis.narrow(narrowing)
    try:
        flt, feasible = _filter(sched, fwk, state, pod, table, candidates, diagnosis)
    except FilterError as exc:  # a Filter plugin failed: the cycle's error
        return Evaluation(**base, filter=_filter_error(fwk, state, pod, table, candidates, exc),
                          score=None, post_filter=None, outcome="Error",
                          message=exc.status.message)
    if not len(feasible):
        return _unschedulable(sched, fwk, state, pod, diagnosis, base, flt, post_filter)
    score = _score(fwk, state, pod, table, feasible)
    if score.status.code == "Error":  # a PreScore or Score plugin failed: the cycle's error
        return Evaluation(**base, filter=flt, score=score, post_filter=None, outcome="Error",
                          message="; ".join(score.status.reasons))
    return Evaluation(**base, filter=flt, score=score, post_filter=None, outcome="Scheduled",
                      message="")


def _probe_pre_filter(fwk: Any, pod: Pod, table: Any) -> tuple[PluginPreFilter, ...]:
    """Each PreFilter plugin's own answer, on a state of its own, in order, stopping where
    the framework stops (an error, UnschedulableAndUnresolvable, an empty merged set)."""
    state = CycleState()
    out: list[PluginPreFilter] = []
    merged: frozenset[str] | None = None
    for p in fwk.pre_filter_plugins:
        result, s = p.pre_filter(state, pod, table)
        st = _status(s)
        names = None
        if st.is_success and result is not None and result.node_names is not None:
            names = frozenset(result.node_names)
        out.append(PluginPreFilter(p.name, st.code, st.reasons, names))
        if st.code in ("Skip", "Unschedulable"):
            continue
        if not st.is_success:
            break
        if names is not None:
            merged = names if merged is None else merged & names
            if not merged:
                break
    return tuple(out)


def _filter(sched: Scheduler, fwk: Any, state: CycleState, pod: Pod, table: Any,
            slots: np.ndarray, diagnosis: Diagnosis) -> tuple[Filter, np.ndarray]:
    """Filter on every node of ``slots``, with the nominated pass (nodes holding nominated
    pods of equal or higher priority pass only if they also pass with those pods added), as
    the scheduler's search and the reference's RunFilterPluginsWithNominatedPods do."""
    n = len(slots)
    mask, first_fail = fwk.run_filter(state, pod, table, slots, n) if n else (None, None)
    pass1 = None
    if n and sched.queue.has_nominated_pods():
        pass1 = NominatedRejections()
        mask, first_fail = sched._apply_nominated(fwk, state, pod, slots, mask, first_fail,
                                                  pass1)
    if mask is None:
        return Filter(tuple(table.names_of(slots)), {}), slots
    assert first_fail is not None
    failed = np.flatnonzero(~mask)
    if pass1 is not None and pass1.statuses:
        index, statuses = pass1.explain_others(fwk, state, pod, table, slots[failed],
                                               first_fail[failed])
    else:
        index, statuses = fwk.explain_filter(state, pod, table, slots[failed],
                                             first_fail[failed])
    diagnosis.record_rejections(slots[failed], np.asarray(index, dtype=np.int64),
                                list(statuses))
    rejected = {name: _status(statuses[int(i)])
                for name, i in zip(table.names_of(slots[failed]), index, strict=True)}
    feasible = slots[mask]
    return Filter(tuple(table.names_of(feasible)), rejected), feasible


def _filter_error(fwk: Any, state: CycleState, pod: Pod, table: Any, slots: np.ndarray,
                  exc: FilterError) -> Filter:
    """Every node that reached the failing Filter plugin gets its error (as the reference's
    Filter on every node reports), the others the status of the plugin that rejected them."""
    n = len(slots)
    first_fail = exc.first_fail if exc.first_fail is not None else np.full(n, -1)
    reached = (first_fail < 0) | (first_fail >= exc.index)
    rejected = dict.fromkeys(table.names_of(slots[reached]), _status(exc.status))
    early = np.flatnonzero(~reached)
    if len(early):
        index, statuses = fwk.explain_filter(state, pod, table, slots[early], first_fail[early])
        for name, i in zip(table.names_of(slots[early]), index, strict=True):
            rejected[name] = _status(statuses[int(i)])
    return Filter((), rejected)


def _score(fwk: Any, state: CycleState, pod: Pod, table: Any, feasible: np.ndarray) -> Score:
    names = table.names_of(feasible)
    n = len(feasible)
    if not fwk.has_score_plugins:
        totals = dict.fromkeys(names, 1)
        return Score((), Status("Success"), frozenset(), (), totals, frozenset(names), n > 1)
    status = fwk.run_pre_score(state, pod, table, feasible)
    pre_score = []
    for p in fwk.pre_score_plugins:
        if status is not None and status.plugin == p.name:
            pre_score.append(_status(status))
            break
        code = "Skip" if p.name in state.skip_score else "Success"
        pre_score.append(Status(code, p.name))
    skipped = frozenset(state.skip_score)
    if status is not None:
        return Score(tuple(pre_score), _status(status), skipped, (), {}, frozenset(), n > 1)
    breakdown: list[Any] = []
    total, status = fwk.run_score(state, pod, table, feasible, n, breakdown=breakdown)
    if status is not None:
        return Score(tuple(pre_score), _status(status), skipped, (), {}, frozenset(), n > 1)
    plugins = tuple(PluginScores(b.plugin, int(b.weight),
                                 {nm: int(v) for nm, v in zip(names, b.normalized, strict=True)})
                    for b in breakdown)
    totals = {nm: int(v) for nm, v in zip(names, total, strict=True)}
    top = max(totals.values())
    best = frozenset(nm for nm, v in totals.items() if v == top)
    return Score(tuple(pre_score), _status(status), skipped, plugins, totals, best, n > 1)


def _unschedulable(sched: Scheduler, fwk: Any, state: CycleState, pod: Pod,
                   diagnosis: Diagnosis, base: dict[str, Any], flt: Filter | None,
                   post_filter: bool) -> Evaluation:
    pf = None
    if post_filter and fwk.post_filter_plugins:
        before = {p.key: p for p in sched.cluster.pods.values()}
        result, status = fwk.run_post_filter(state, pod, diagnosis)
        after = sched.cluster.pods
        gone = [p for key, p in before.items() if key not in after]
        for plugin in fwk.post_filter_plugins:  # asynchronous preemption: evicted later
            in_flight = getattr(plugin, "victims_in_flight", None)
            if in_flight is not None:
                gone.extend(p for p in in_flight(pod.uid) if p.key not in {g.key for g in gone})
        victims = tuple(sorted((Victim(p.namespace, p.name, p.uid, p.node_name) for p in gone),
                               key=lambda v: (v.namespace, v.name)))
        nominated = None if result is None else result.nominated_node_name
        pf = PostFilter(_status(status), nominated, victims, ())
        diagnosis.post_filter_msg = status.message
    message = FitError(pod.key, diagnosis).message
    return Evaluation(**base, filter=flt, score=None, post_filter=pf, outcome="Unschedulable",
                      message=message)
