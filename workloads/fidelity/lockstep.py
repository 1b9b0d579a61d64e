"""The lockstep: one workload run through scheduler_core, the reference scheduler beside it.

:func:`run_lockstep` runs a workload exactly as ``schedperf run`` does, with two additions:
a :class:`~workloads.fidelity.mirror.Mirror` sends every change of the core's cluster to a
reference process (one per workload, configured with the test case's
KubeSchedulerConfiguration and the workload's feature gates), and a :class:`Lockstep` is the
scheduler's attempt observer. Before each scheduling attempt it brings the reference up to
date and has both sides evaluate the pod on the same state (``evaluate`` on the reference,
``evaluate_core`` on the core); after it, it checks the core's real decision (the node it
picked, the victims it preempted, its nomination, its message) against the reference's
evaluation. The core's decision is then mirrored like any other change, so the two never
drift.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scheduler_core.api.pod import Pod, retain_spec_sources
from scheduler_core.cycle.result import ScheduleResult
from scheduler_core.framework.interface import Code, Status
from scheduler_core.framework.runtime import Framework
from scheduler_core.inputfile import read_text
from workloads.config import TestCase, Workload
from workloads.fidelity.compare import (
    Decision,
    Difference,
    compare_decision,
    compare_evaluations,
    compare_profiles,
)
from workloads.fidelity.errors import FidelityError
from workloads.fidelity.mirror import Mirror
from workloads.reference.client import ReferenceClient
from workloads.reference.core import evaluate_core
from workloads.reference.errors import ReferenceRequestError, ReferenceSchedulerError
from workloads.reference.model import ConfigInfo, Evaluation
from workloads.result import STATUS_FAILED, STATUS_TIMEOUT, STATUS_UNSUPPORTED, WorkloadResult
from workloads.runner.execution import execute
from workloads.runner.options import RunOptions
from workloads.runner.run import Run

__all__ = ["QUEUE_ONLY_GATES", "Attempt", "Lockstep", "WorkloadFidelity", "run_lockstep"]

# Feature gates v1.34 locks to a value, that only decide when pods are retried (the queue), not
# what one attempt decides: a workload that sets one otherwise still runs on the core as it
# asks, and the reference, which cannot, judges each attempt the same way.
QUEUE_ONLY_GATES = {"SchedulerQueueingHints": True}


@dataclass(frozen=True, slots=True)
class Attempt:
    """One scheduling attempt compared: its number in the workload (from 1), the pod, both
    sides' outcome (Scheduled, Unschedulable, Error) and what differed."""

    number: int
    pod: str
    core_outcome: str
    reference_outcome: str
    differences: tuple[Difference, ...]
    # a pod-group member's evaluation inside a group cycle: the placement it was tried in
    # ("*" for every node); "" for a scheduling attempt of its own
    placement: str = ""


@dataclass
class WorkloadFidelity:
    """One workload's lockstep: the run's result, the attempts compared, and the reason it
    was not compared (``error``: the check failed; ``unsupported``: the reference cannot
    run it, e.g. an out-of-tree plugin)."""

    name: str
    result: WorkloadResult | None = None
    attempts: list[Attempt] = field(default_factory=list)
    profile_differences: list[Difference] = field(default_factory=list)
    error: str = ""
    unsupported: str = ""
    notes: list[str] = field(default_factory=list)
    kubernetes: str = ""
    attempts_run: int = 0  # every attempt of the run, compared or not


class Lockstep:
    """The scheduler's attempt observer (see the module docstring)."""

    def __init__(self, client: ReferenceClient, run: Run, config: ConfigInfo, *,
                 every: int = 1) -> None:
        self.client = client
        self.every = every  # compare every ``every``-th attempt (the others are only mirrored)
        self.seen = 0  # attempts so far, compared or not
        self._compare = False
        self.scheduler = run.scheduler
        self.mirror = Mirror(client, run.cluster, self._nominated_pods)
        self.attempts: list[Attempt] = []
        # per profile: the plugins both sides run at each extension point
        self.shared: dict[str, dict[str, frozenset[str]]] = {}
        self.profile_differences: list[Difference] = []
        theirs = {p.scheduler_name: p for p in config.profiles}
        for name, fwk in self.scheduler.profiles.items():
            points = {point: [p.name for p in plugins] for point, plugins in fwk.points.items()
                      if plugins}
            ref = theirs.get(name)
            if ref is None:
                self.profile_differences.append(Difference(
                    "Profile", name, "", "schedulerName", name, "(no such profile)"))
                continue
            self.profile_differences.extend(compare_profiles(points, dict(fwk.weights), ref))
            self.shared[name] = {point: frozenset(names) & frozenset(ref.plugins.get(point, ()))
                                 for point, names in points.items()}
        self._ref: Evaluation | None = None
        self._diffs: list[Difference] = []
        self._nominated_before = ""
        self._placement = ""
        self._assumed: dict[str, str] = {}  # pod key -> node, as assumed on the reference

    def _nominated_pods(self) -> dict[str, Pod]:
        q = self.scheduler.queue
        return {p.key: p for node in q.nominated_node_names()
                for p in q.nominated_pods_for_node(node)}

    def before_attempt(self, pod: Pod, fwk: Framework) -> None:
        self.seen += 1
        self._compare = (self.seen - 1) % self.every == 0
        self.mirror.deleted_pods.clear()
        if not self._compare:
            return
        self._evaluate(pod, fwk, {})
        self._nominated_before = pod.nominated_node_name

    def before_member(self, pod: Pod, fwk: Framework, placement: str,
                      nodes: list[str] | None) -> None:
        """A pod-group member about to be evaluated in a placement (``nodes``; None: every
        node), the members tried before it there assumed: both sides evaluate it there, as a
        member (no PostFilter)."""
        self.seen += 1
        self._compare = (self.seen - 1) % self.every == 0
        if not self._compare:
            return
        extra: dict[str, object] = {"member": True}
        if nodes is not None:
            extra["nodes"] = nodes
        self._evaluate(pod, fwk, extra, nodes)
        self._placement = placement or "*"

    def _evaluate(self, pod: Pod, fwk: Framework, extra: dict[str, object],
                  nodes: list[str] | None = None) -> None:
        """Bring the reference up to date (assumptions undone, changes, assumptions made) and
        have both sides evaluate ``pod``."""
        try:
            due = self._forgets_due()
            due.extend(self.mirror.requests_due())
            due.extend(self._assumes_due())
            due.append(("evaluate", {"namespace": pod.namespace, "name": pod.name, **extra}))
            ref = Evaluation.parse(self.client.pipeline(due)[-1])
        except ReferenceSchedulerError as exc:
            raise FidelityError(f"attempt {self.seen} (pod {pod.key}): the "
                                f"reference could not follow: {exc}") from None
        core = evaluate_core(self.scheduler, pod.namespace, pod.name, nodes=nodes)
        self._ref = ref
        self._diffs = compare_evaluations(core, ref, self.shared.get(fwk.profile_name))

    def _forgets_due(self) -> list[tuple[str, dict[str, object]]]:
        """The reference's cache forgets the pods the core no longer assumes where it
        assumed them: released, bound (the mirrored bind then adds them afresh, so each
        node's pods keep the core's order, which breaks ties between equal victims), or
        deleted."""
        cluster = self.scheduler.cluster
        out: list[tuple[str, dict[str, object]]] = []
        for key, node in list(self._assumed.items()):
            pod = cluster.pods.get(key)
            if pod is not None and key in cluster.assumed and pod.node_name == node:
                continue
            del self._assumed[key]
            ns, name = key.split("/", 1)
            out.append(("forget", {"namespace": ns, "name": name}))
        return out

    def _assumes_due(self) -> list[tuple[str, dict[str, object]]]:
        """The reference's cache assumes what the core's has assumed and it has not yet: a
        pod-group cycle's members, pods held at Permit."""
        cluster = self.scheduler.cluster
        out: list[tuple[str, dict[str, object]]] = []
        for key in cluster.assumed:
            pod = cluster.pods.get(key)
            if pod is None or key in self._assumed:
                continue
            out.append(("assume", {"namespace": pod.namespace, "name": pod.name,
                                   "node": pod.node_name}))
            self._assumed[key] = pod.node_name
        return out

    def _take_reference(self) -> tuple[Evaluation, int]:
        """The reference's evaluation of the attempt being finished (cleared), and how many
        nodes its Filter judged."""
        ref = self._ref
        assert ref is not None
        self._ref = None
        filtered = 0 if ref.filter is None else len(ref.filter.feasible) + len(
            ref.filter.rejected)
        return ref, filtered

    def after_member(self, pod: Pod, fwk: Framework, result: ScheduleResult, node: str,
                     status: Status | None) -> None:
        """The member's outcome in the placement against the reference's evaluation."""
        if not self._compare:
            return
        ref, filtered = self._take_reference()
        decision = Decision(
            node=node, examined_all=result.evaluated_nodes >= filtered,
            message="" if node or status is None else status.message,
            post_filter_ran=False, nominated=pod.nominated_node_name, victims=())
        core_outcome = "Scheduled" if node else (
            "Unschedulable" if status is not None and status.is_rejected else "Error")
        self.attempts.append(Attempt(self.seen, pod.key, core_outcome, ref.outcome,
                                     tuple(self._diffs + compare_decision(decision, ref)),
                                     self._placement))

    def after_attempt(self, pod: Pod, fwk: Framework, result: ScheduleResult,
                      status: Status | None) -> None:
        if not self._compare:
            return
        ref, filtered = self._take_reference()
        placed = status is None or status.code == Code.WAIT
        node = result.suggested_host if placed else ""
        fast_path = bool(self._nominated_before) and node == self._nominated_before and \
            result.evaluated_nodes == 1
        ran_post_filter = (not placed and status is not None and status.is_rejected
                           and result.diagnosis is not None and bool(fwk.post_filter_plugins)
                           and ref.outcome == "Unschedulable")
        decision = Decision(
            node=node,
            examined_all=not fast_path and result.evaluated_nodes >= filtered,
            message="" if placed else self.scheduler.failures.get(pod.key, ""),
            post_filter_ran=ran_post_filter,
            nominated=pod.nominated_node_name,
            victims=_victims(self.mirror.deleted_pods, fwk, pod))
        diffs = self._diffs + compare_decision(decision, ref)
        core_outcome = "Scheduled" if placed else (
            "Unschedulable" if status is not None and status.is_rejected else "Error")
        self.attempts.append(Attempt(self.seen, pod.key, core_outcome, ref.outcome,
                                     tuple(diffs)))


def _victims(deleted: list[Pod], fwk: Framework, pod: Pod) -> tuple[str, ...]:
    """"namespace/name" of the pods the attempt preempted: those deleted during it, and those
    an asynchronous preemption it started will evict off the cycle (still in place now)."""
    keys = {p.key for p in deleted}
    for plugin in fwk.post_filter_plugins:
        in_flight = getattr(plugin, "victims_in_flight", None)
        if in_flight is not None:
            keys.update(p.key for p in in_flight(pod.uid))
    return tuple(sorted(keys))


def _reference_config(tc: TestCase) -> str:
    path = tc.scheduler_config_path
    return read_text(path, what="a scheduler config") if path is not None else ""


def run_lockstep(tc: TestCase, workload: Workload, binary: Path, *, seed: int = 0,
                 timeout: float | None = None, every: int = 1) -> WorkloadFidelity:
    """Run one workload in lockstep with a reference process started from ``binary``."""
    name = f"{tc.name}/{workload.name}"
    out = WorkloadFidelity(name)
    try:
        client = ReferenceClient(binary)
    except ReferenceSchedulerError as exc:
        out.error = f"the reference did not start: {exc}"
        return out
    with client:
        out.kubernetes = client.version.kubernetes
        gates = dict(workload.feature_gates)
        for gate in QUEUE_ONLY_GATES:
            if gate in gates and gates[gate] != QUEUE_ONLY_GATES[gate]:
                del gates[gate]
                out.notes.append(
                    f"{gate}={str(workload.feature_gates[gate]).lower()}: v1.34 locks it to "
                    f"{str(QUEUE_ONLY_GATES[gate]).lower()}; the reference runs with that "
                    "(it changes only when pods are retried, and every attempt is compared "
                    "on the state it ran in; scheduler_perf and the kube-scheduler engine "
                    "emulate v1.33 instead)")
        try:
            config = client.config(_reference_config(tc), feature_gates=gates or None)
        except ReferenceRequestError as exc:
            out.unsupported = f"the reference refused the scheduler configuration: {exc}"
            return out
        holder: dict[str, Lockstep] = {}

        def attach(run: Run) -> None:
            holder["lockstep"] = lock = Lockstep(client, run, config, every=every)
            run.scheduler.observer = lock

        previous = retain_spec_sources(True)
        try:
            result, _ = execute(tc, workload, RunOptions(
                seed=seed, timeout=timeout, at_start=attach, wall_clock_metrics=False))
        finally:
            retain_spec_sources(previous)
        out.result = result
        lock = holder.get("lockstep")
        if lock is not None:
            out.attempts = lock.attempts
            out.profile_differences = lock.profile_differences
            out.attempts_run = lock.seen
        if result.status == STATUS_UNSUPPORTED:
            out.unsupported = result.reason or "unsupported"
        elif result.status == STATUS_FAILED:
            out.error = result.reason or "the workload failed"
        elif result.status == STATUS_TIMEOUT:  # the check did not reach the end
            out.error = (f"{result.reason or 'the workload timed out'}: only the "
                         f"{len(out.attempts)} attempts before it were compared")
    return out
