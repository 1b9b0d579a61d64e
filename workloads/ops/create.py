"""Ops that create or update objects: createNodes, createNamespaces, createPods (also in a
steady state), createAny, updateAny.

Each op has a ``prepare_*`` step, run for every op before the first one executes (templates
are read and parsed, unmodelled kinds and volumes are found up front), and a ``run_*`` step.
Both get the run as an :class:`~workloads.ops.context.OpContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler_core.api.pod import Pod
from scheduler_core.errors import AlreadyExistsError, NotFoundError, SchedulerCoreError
from workloads.config.ops import CreateAny, CreateNamespaces, CreateNodes, CreatePods, UpdateAny
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.factories import NodeFactory, PodFactory
from workloads.ops.manifests import pod_flags, unsupported_kind_reason
from workloads.ops.templates import TemplateFile
from workloads.ops.volumes import VolumeFactory

if TYPE_CHECKING:
    from workloads.ops.context import OpContext

__all__ = [
    "prepare_create_any",
    "prepare_create_namespaces",
    "prepare_create_nodes",
    "prepare_create_pods",
    "prepare_update_any",
    "run_create_any",
    "run_create_namespaces",
    "run_create_nodes",
    "run_create_pods",
    "run_update_any",
]

NO_POD_SCHEDULED = ("no pod at all got scheduled, either because of a problem or because the "
                    "test interval was too small")


# --------------------------------------------------------------------------- createNodes


def prepare_create_nodes(ctx: OpContext, index: int, op: CreateNodes) -> NodeFactory:
    source = (TemplateFile(op.node_template_path, op.template_params)
              if op.node_template_path is not None else None)
    return NodeFactory(ctx.api, source, index, allocatable=op.node_allocatable_strategy,
                       label=op.label_node_prepare_strategy,
                       unique=op.unique_node_label_strategy)


def run_create_nodes(ctx: OpContext, index: int, op: CreateNodes) -> None:
    factory: NodeFactory = ctx.prepared(index)
    add = ctx.cluster.add_node
    count = op.count
    for i in range(count):
        try:
            node = factory.make(i, count)
            add(node)
            csi_node = factory.csi_node(node)
            if csi_node is not None:
                ctx.cluster.put_storage(csi_node)
        except SchedulerCoreError as exc:
            raise WorkloadError(f"creating node: {exc}") from None
        if (i & 1023) == 1023:
            ctx.check_timeout()


# --------------------------------------------------------------------------- createNamespaces


def prepare_create_namespaces(ctx: OpContext, index: int, op: CreateNamespaces) -> dict[str, str]:
    if op.namespace_template_path is None:
        return {}
    tf = TemplateFile(op.namespace_template_path)
    m = tf.manifest(0, 1)
    kind = m.get("kind") if isinstance(m, dict) else None
    if kind != "Namespace":
        raise WorkloadError(f'{tf.source}: parsing NamespaceTemplate: expected kind '
                            f'"Namespace", got "{kind}"')
    labels = (m.get("metadata") or {}).get("labels") or {}
    if not isinstance(labels, dict):
        raise WorkloadError(f"{tf.source}: metadata.labels: expected a mapping")
    return {str(k): str(v) for k, v in labels.items()}


def run_create_namespaces(ctx: OpContext, index: int, op: CreateNamespaces) -> None:
    labels: dict[str, str] = ctx.prepared(index)
    for i in range(op.count):
        ctx.register_namespace(f"{op.prefix}-{i}", labels)


# --------------------------------------------------------------------------- createPods


def prepare_create_pods(ctx: OpContext, index: int, op: CreatePods) -> PodFactory:
    assert op.namespace is not None  # resolve() fills it in
    volumes = None
    pv, pvc = op.persistent_volume_template_path, op.persistent_volume_claim_template_path
    if pv is not None or pvc is not None:
        if pv is None or pvc is None:  # upstream: a volume without a claim template panics
            raise WorkloadError("createPods: persistentVolumeTemplatePath and "
                                "persistentVolumeClaimTemplatePath must be set together")
        volumes = VolumeFactory(TemplateFile(pv), TemplateFile(pvc), op.namespace)
    source = (TemplateFile(op.pod_template_path, op.template_params)
              if op.pod_template_path is not None else None)
    return PodFactory(ctx.api, source, op.namespace, batch=op.signature_batch_size,
                      volumes=volumes)


def run_create_pods(ctx: OpContext, index: int, op: CreatePods) -> None:
    ns = op.namespace
    assert ns is not None
    ctx.register_namespace(ns)
    factory: PodFactory = ctx.prepared(index)
    if op.collect_metrics:
        ctx.open_window(index, ns, (ns,), {}, ())
    if op.steady_state:
        _steady_state(ctx, op, factory)
    else:
        # upstream creates every pod before it starts waiting (its 10-minute limit counts
        # from there); the scheduler runs meanwhile
        ctx.run_until(ctx.start_creating_pods(factory, op.count),
                      what=f"creating pods in namespace {ns}")
        if op.skip_wait_to_completion:
            ctx.pods.expect(ns, op.count)
        else:
            ctx.wait_scheduled(ns, op.count)
    if op.collect_metrics:
        ctx.close_window(index)


def _steady_state(ctx: OpContext, op: CreatePods, factory: PodFactory) -> None:
    """Upstream createPodsSteadily: ``count`` pods in flight for ``duration``; every pod seen
    scheduled is deleted (grace period 0) and replaced by a new one."""
    ns = op.namespace
    assert ns is not None
    now = ctx.now
    end = now() + op.duration
    pending: list[Pod] = []
    scheduled = 0

    def replace_scheduled() -> None:
        nonlocal scheduled
        batch, pending[:] = list(pending), []
        for pod in batch:
            scheduled += 1
            ctx.api.delete_pod(pod.namespace, pod.name, grace_zero=True)
            ctx.create_pods(factory, 1)

    def on_bind(pod: Pod) -> None:
        if pod.namespace == ns and now() < end:
            if not pending:
                ctx.call_at(now(), lambda: replace_scheduled())
            pending.append(pod)

    ctx.create_pods(factory, op.count)
    with ctx.pods.bind_hook(on_bind):
        ctx.run_until(None, until=end, what=f"steady state in namespace {ns}")
    if scheduled == 0 and not pending:
        raise WorkloadError(NO_POD_SCHEDULED)


# --------------------------------------------------------------------------- createAny / updateAny


def _template_kind_check(tf: TemplateFile, count: int) -> None:
    reason = unsupported_kind_reason(tf.kind(count))
    if reason:
        raise UnsupportedWorkload(f"{tf.source}: {reason}")


def prepare_create_any(ctx: OpContext, index: int, op: CreateAny) -> TemplateFile:
    assert op.template_path is not None
    tf = TemplateFile(op.template_path, op.template_params)
    _template_kind_check(tf, op.count or 1)
    return tf


def run_create_any(ctx: OpContext, index: int, op: CreateAny) -> None:
    tf: TemplateFile = ctx.prepared(index)
    if op.namespace:
        ctx.register_namespace(op.namespace)
    count = 1 if op.count is None else op.count
    for i in range(count):
        manifest = tf.manifest(i, count)
        obj = ctx.api.parse(manifest, source=tf.source, namespace=op.namespace, index=i)
        try:
            ctx.api.create(obj, pod_flags(manifest))
        except SchedulerCoreError as exc:
            raise WorkloadError(f"{tf.source}: create: {exc}") from None


def prepare_update_any(ctx: OpContext, index: int, op: UpdateAny) -> TemplateFile:
    assert op.template_path is not None
    tf = TemplateFile(op.template_path)
    _template_kind_check(tf, op.count or 1)
    return tf


def run_update_any(ctx: OpContext, index: int, op: UpdateAny) -> None:
    """Update (+UpdateStatus) ``count`` objects, all at once or ``updatePerSecond``; the op
    blocks until done while the scheduler keeps running (upstream's ticker loop)."""
    tf: TemplateFile = ctx.prepared(index)
    if op.namespace:
        ctx.register_namespace(op.namespace)
    count = 1 if op.count is None else op.count

    def update(i: int) -> None:
        manifest = tf.manifest(i, count)
        obj = ctx.api.parse(manifest, source=tf.source, namespace=op.namespace, index=i)
        try:
            ctx.api.update(obj, op.subresources)
        except NotFoundError as exc:
            where = f' in namespace "{op.namespace}"' if op.namespace else ""
            raise WorkloadError(f"Failed to update object: failed to update object{where}: "
                                f"{exc}") from None
        except AlreadyExistsError as exc:  # pragma: no cover - updates never add
            raise WorkloadError(str(exc)) from None
        except SchedulerCoreError as exc:
            raise WorkloadError(f"Failed to update object: {exc}") from None

    if op.update_per_second == 0:
        for i in range(count):
            update(i)
        return
    ctx.run_rate_limited(count, op.update_per_second, update, wait=True,
                         what=f"updateAny {tf.source}")
