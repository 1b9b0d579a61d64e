"""What a finished run reports: every pod's placement (or why it has none) and the result's
counts, timings and metrics."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from scheduler_core.api.pod import Pod
from workloads.result import Placement, WorkloadResult
from workloads.runner.metrics import fill_labels

if TYPE_CHECKING:
    from workloads.runner.run import Run

__all__ = ["fill_result", "placements"]


def placements(run: Run) -> list[Placement]:
    """One Placement per pod created without a node, in creation order."""
    sched = run.scheduler
    rec = run.recorder
    pods = run.cluster.pods
    gone = run.pods.gone
    out = []
    for key in run.pods.placement_keys:
        pod = pods.get(key)
        deleted = pod is None
        if pod is None:
            pod = gone[key]
        node = pod.node_name or None
        if node is not None:
            attempts = rec.scheduled_attempts.get(key, rec.failed_attempts.get(key, 0))
            # bound, then deleted (a preemption victim, deletePods, churn): say so
            why = ("deleted after it was bound (a preemption victim, or deleted by an op)"
                   if deleted else None)
            out.append(Placement(pod.namespace, pod.name, node, attempts, why))
            continue
        qpi = None if deleted else sched.queue.get(pod.uid)
        attempts = qpi.attempts if qpi is not None else rec.failed_attempts.get(key, 0)
        out.append(Placement(pod.namespace, pod.name, None, attempts,
                             _reason(run, pod, deleted)))
    return out


def _reason(run: Run, pod: Pod, deleted: bool) -> str:
    sched = run.scheduler
    key = pod.key
    ignored = sched.ignored.get(key)
    if ignored is not None:
        return (f'no scheduler profile for schedulerName "{ignored.scheduler_name}": the '
                "pod stays pending")
    failure = sched.failures.get(key)
    if deleted:
        return "deleted before it was scheduled" + (f" (last failure: {failure})"
                                                    if failure else "")
    if pod.deletion_timestamp is not None:
        return "terminating (deletionTimestamp set): not scheduled"
    if failure:
        return failure
    if pod.spec.scheduling_gates:
        fwk = sched.profiles.get(pod.scheduler_name)
        gated = fwk.run_pre_enqueue(pod) if fwk is not None else None
        if gated is not None:
            return gated[1].message or f"gated by {gated[0]}"
    return "not attempted before the workload ended"


def fill_result(run: Run, base: WorkloadResult) -> WorkloadResult:
    """``base`` with everything the run measured and placed."""
    sched = run.scheduler
    windows = run.windows
    fill_labels(windows.data_items)
    base.data_items = windows.data_items
    base.placements = placements(run)
    base.decisions = run.decisions.rows if run.decisions is not None else None
    base.ignored_feature_gates = run.gates.ignored
    base.measured_seconds = windows.measured_seconds
    base.cpu_seconds = windows.cpu_seconds
    base.harness_seconds = windows.harness_seconds
    base.peak_rss_bytes = windows.final_peak_rss()
    base.scheduled_pods = run.cluster.bind_count
    base.attempts = sched.attempts_total
    base.ignored_pods = len(sched.ignored)
    reasons: Counter[str] = Counter()
    for key, message in sched.failures.items():
        pod = run.cluster.pods.get(key)
        if pod is not None and not pod.node_name and pod.deletion_timestamp is None:
            reasons[message] += 1
    base.unschedulable_pods = sum(reasons.values())
    base.unschedulable_reasons = dict(reasons.most_common())
    base.progress_samples = windows.progress_samples
    base.virtual_seconds = (run.timeline.now() - run.virtual_start if run.timeline.virtual
                            else 0.0)
    scheduled = base.scheduled_pods
    base.extra = {
        "scheduler_seconds": run.scheduler_seconds,
        "window_scheduler_seconds": windows.scheduler_seconds,
        "window_pod_creation_seconds": windows.create_seconds,
        "attempts_per_scheduled_pod": base.attempts / scheduled if scheduled else 0.0,
        "nodes": float(run.cluster.table.num_nodes),
        "pods": float(len(run.cluster.pods)),
    }
    return base
