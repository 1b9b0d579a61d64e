"""Ops that wait, delete or run in the background: barrier, sleep, deletePods, churn,
startCollectingMetrics and stopCollectingMetrics.

Rate-limited work follows Go's ``time.NewTicker``: the first tick is one period after the op
starts, then one every period. Background work (churn, ``deletePods`` with
``skipWaitToCompletion``) keeps running until the workload ends. Every op gets the run as an
:class:`~workloads.ops.context.OpContext`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduler_core.api.pod import Pod
from scheduler_core.errors import SchedulerCoreError
from workloads.config.ops import (
    Barrier,
    Churn,
    DeletePods,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
)
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.manifests import CLUSTER_SCOPED, unsupported_kind_reason
from workloads.ops.templates import TemplateFile

if TYPE_CHECKING:
    from workloads.ops.context import OpContext

__all__ = [
    "prepare_churn",
    "run_barrier",
    "run_churn",
    "run_delete_pods",
    "run_sleep",
    "run_start_collecting",
    "run_stop_collecting",
]

def _matches(pod: Pod, selector: Any) -> bool:
    if not selector:
        return True
    labels = pod.labels
    return all(labels.get(k) == v for k, v in selector.items())


# --------------------------------------------------------------------------- barrier


def _is_attempted(pod: Pod, failures: Mapping[str, str]) -> bool:
    """Has a PodScheduled condition: bound, failed at least once, or created with scheduling
    gates (kube-apiserver sets PodScheduled=False/SchedulingGated at creation)."""
    return bool(pod.node_name or pod.key in failures or pod.spec.scheduling_gates)


def run_barrier(ctx: OpContext, index: int, op: Barrier) -> None:
    pods = ctx.pods
    for ns in op.namespaces:
        if not pods.knows(ns):
            raise WorkloadError(f"unknown namespace {ns}")
    attempted = op.stage_requirement == "Attempted"
    selector = op.label_selector
    want = pods.expected(op.namespaces)

    def count(ns: str) -> int:
        in_ns = pods.in_namespace(ns).values()
        if attempted:
            failures = ctx.failures
            return sum(1 for p in in_ns if _matches(p, selector) and _is_attempted(p, failures))
        return sum(1 for p in in_ns if p.node_name and _matches(p, selector))

    if not attempted and not selector:
        bound = pods.bound

        def done() -> bool:
            return all(bound.get(ns, 0) >= n for ns, n in want.items())
    else:
        done = ctx.throttled(lambda: all(count(ns) >= n for ns, n in want.items()))

    def describe() -> str:
        for ns, n in want.items():
            got = count(ns)
            if got < n:
                stage = "attempted" if attempted else "scheduled"
                failures = ctx.failures
                pod = next((p for p in pods.in_namespace(ns).values()
                            if _matches(p, selector) and not (
                                _is_attempted(p, failures) if attempted else p.node_name)),
                           None)
                which = f"at least pod {pod.key} is not {stage}: " if pod is not None else ""
                return (f"error waiting for pods in namespace \"{ns}\": {which}want {n} pods "
                        f"{stage}, got {got}")
        return "barrier not reached"

    ctx.run_until(done, what="", describe=describe, limited=True)
    if not attempted:
        pods.release(op.namespaces)


# --------------------------------------------------------------------------- sleep


def run_sleep(ctx: OpContext, index: int, op: Sleep) -> None:
    ctx.run_until(None, until=ctx.now() + op.duration, what="sleep")


# --------------------------------------------------------------------------- deletePods


def run_delete_pods(ctx: OpContext, index: int, op: DeletePods) -> None:
    selector = op.label_selector
    victims = [(p.namespace, p.name) for p in ctx.pods.in_namespace(op.namespace).values()
               if _matches(p, selector)]

    def delete(i: int) -> None:
        ns, name = victims[i]
        try:
            found = ctx.api.delete_pod(ns, name)
        except SchedulerCoreError as exc:
            found, detail = False, str(exc)
        else:
            detail = f'pods "{name}" not found'
        if not found:
            ctx.report_error(f"op {index}: unable to delete pod {name}: {detail}")

    if op.delete_pods_per_second == 0:
        for i in range(len(victims)):
            delete(i)
        return
    ctx.run_rate_limited(len(victims), op.delete_pods_per_second, delete,
                         wait=not op.skip_wait_to_completion,
                         what=f"deletePods in namespace {op.namespace}")


# --------------------------------------------------------------------------- churn


def prepare_churn(ctx: OpContext, index: int, op: Churn) -> list[TemplateFile]:
    out = []
    for path in op.template_paths:
        tf = TemplateFile(path)
        reason = unsupported_kind_reason(tf.kind())
        if reason:
            raise UnsupportedWorkload(f"{tf.source}: {reason}")
        out.append(tf)
    return out


def run_churn(ctx: OpContext, index: int, op: Churn) -> None:
    """Every interval: ``create`` one object per template (until ``number``, 0 = forever), or
    ``recreate`` (a ring of ``number`` slots per template: delete what a slot holds, else
    create). Creation errors are ignored, as upstream's churn ignores them."""
    templates: list[TemplateFile] = ctx.prepared(index)
    ns = op.namespace
    assert ns is not None
    ctx.api.ensure_namespace(ns)
    interval = op.interval_milliseconds / 1000
    api = ctx.api

    def create(tf: TemplateFile) -> Any:
        manifest = tf.manifest(0, 1)
        kind = manifest.get("kind") if isinstance(manifest, dict) else None
        obj = api.parse(manifest, source=tf.source,
                        namespace="" if kind in CLUSTER_SCOPED else ns, index=0)
        try:
            api.create(obj)
        except SchedulerCoreError:
            return None
        return obj

    start = ctx.now()
    count = 0
    limit = op.number or None
    slots: list[list[Any]] = [[None] * max(op.number, 1) for _ in templates]

    def tick() -> float | None:
        nonlocal count
        if op.mode == "create":
            for tf in templates:
                create(tf)
        else:
            k = count % op.number
            for j, tf in enumerate(templates):
                held = slots[j][k]
                if held is not None:
                    try:
                        api.delete(held)
                    except SchedulerCoreError as exc:
                        ctx.report_error(f"op {index}: unable to delete {held.name}: {exc}")
                    slots[j][k] = None
                else:
                    slots[j][k] = create(tf)
        count += 1
        if limit is not None and op.mode == "create" and count >= limit:
            return None
        return start + interval * (count + 1)

    ctx.call_at(start + interval, tick)


# --------------------------------------------------------------------------- metrics


def run_start_collecting(ctx: OpContext, index: int, op: StartCollectingMetrics) -> None:
    ctx.open_window(index, op.name, op.namespaces, op.label_selector, op.collectors)


def run_stop_collecting(ctx: OpContext, index: int, op: StopCollectingMetrics) -> None:
    if not ctx.window_open:
        raise WorkloadError("missing startCollectingMetrics operation before stopping")
    ctx.close_window(index)
