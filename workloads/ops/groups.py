"""createPodGroups and createCompositePodGroups. Preparing either reads its template and
renders and parses its objects strictly (first and last index of each level), so that a typo
is bad input. createPodGroups then runs when the GenericWorkload gate is on (else the workload
is unsupported: :mod:`workloads.config.ops_groups`); createCompositePodGroups is always
unsupported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler_core.api import CompositePodGroup, PodGroup
from scheduler_core.errors import ClusterError
from workloads.config.ops_groups import POD_GROUP_REASON, CreateCompositePodGroups, CreatePodGroups
from workloads.ops.errors import UnsupportedWorkload, WorkloadError
from workloads.ops.manifests import check_namespace, metadata_of, parse_typed
from workloads.ops.templates import TemplateFile

if TYPE_CHECKING:
    from workloads.ops.context import OpContext

__all__ = [
    "prepare_create_composite_pod_groups",
    "prepare_create_pod_groups",
    "run_create_pod_groups",
    "unmodelled_group_fields",
]


def _indices(count: int) -> list[int]:
    return [0] if count <= 1 else [0, count - 1]


def _check_object(kind: type, want: str, manifest: Any, where: str, namespace: str) -> Any:
    if not isinstance(manifest, dict):
        raise WorkloadError(f"{where}: expected a {want} manifest (a mapping)")
    got = manifest.get("kind")
    if got != want:
        raise WorkloadError(f'{where}: expected kind "{want}", got "{got}"')
    check_namespace(manifest, namespace, where)
    return parse_typed(kind.from_manifest, {**manifest, "metadata": {
        **metadata_of(manifest), "namespace": namespace}}, where)


def unmodelled_group_fields(pg: PodGroup, topology_aware: bool = False) -> str | None:
    """Why the core cannot schedule this PodGroup as upstream would (None: it can): fields of
    group preemption, multi-level groups and shared claims, and a topology constraint unless
    the TopologyAwareWorkloadScheduling gate is on (``topology_aware``)."""
    fields = [(name, why) for name, why, used in (
        ("spec.priority", "group priority and preemption", pg.priority is not None),
        ("spec.disruptionMode", "group priority and preemption", bool(pg.disruption_mode)),
        ("spec.schedulingConstraints.topology", "topology-aware placement without the "
         "TopologyAwareWorkloadScheduling gate", bool(pg.topology_keys) and not topology_aware),
        ("spec.parentCompositePodGroupName", "multi-level groups", bool(pg.parent)),
        ("spec.resourceClaims", "shared claims", bool(pg.resource_claims))) if used]
    if not fields:
        return None
    whys = list(dict.fromkeys(why for _, why in fields))
    return (f"PodGroup {pg.name}: {', '.join(name for name, _ in fields)}: "
            f"{', '.join(whys)} {'is' if len(whys) == 1 else 'are'} not modelled by "
            "scheduler_core's pod-group cycle")


def prepare_create_pod_groups(ctx: OpContext, index: int, op: CreatePodGroups) -> TemplateFile:
    assert op.template_path is not None  # decode requires it
    tf = TemplateFile(op.template_path, op.template_params)
    reasons = []
    for i in _indices(op.count):
        where = f"{tf.source} (Index {i})"
        pg = _check_object(PodGroup, "PodGroup", tf.manifest(i, op.count), where, op.namespace)
        reason = unmodelled_group_fields(pg, ctx.api.topology_aware)
        if reason:
            reasons.append(f"{where}: {reason}")
    if not ctx.api.pod_groups:
        raise UnsupportedWorkload(POD_GROUP_REASON)
    if reasons:
        raise UnsupportedWorkload(reasons[0])
    return tf


def run_create_pod_groups(ctx: OpContext, index: int, op: CreatePodGroups) -> None:
    """Create ``count`` PodGroups in ``namespace``. Upstream's op then waits until the
    scheduler's informer has them; the store delivers its events synchronously, so they are
    there when the call returns."""
    tf: TemplateFile = ctx.prepared(index)
    for i in range(op.count):
        where = f"{tf.source} (Index {i})"
        pg = _check_object(PodGroup, "PodGroup", tf.manifest(i, op.count), where, op.namespace)
        reason = unmodelled_group_fields(pg, ctx.api.topology_aware)
        if reason:
            raise UnsupportedWorkload(f"{where}: {reason}")
        try:
            ctx.cluster.add_pod_group(pg)
        except ClusterError as exc:
            raise WorkloadError(f"{where}: {exc}") from None


def prepare_create_composite_pod_groups(ctx: OpContext, index: int,
                                        op: CreateCompositePodGroups) -> None:
    assert op.template_path is not None
    tf = TemplateFile(op.template_path, op.template_params)
    for level, count in enumerate(op.level_sizes(), start=1):
        for i in _indices(count):
            if op.tree:
                per_parent = max(op.children_composite_pod_groups_per_cpg, 1)
                data = {"Level": level, "ParentLevel": level - 1,
                        "ParentIndex": i // per_parent if level > 1 else 0,
                        "ChildrenCount": op.children_count(level)}
                manifest = tf.manifest(i, count, extra=data)
                where = f"{tf.source} (Level {level}, Index {i})"
            else:
                manifest = tf.manifest(i, count)
                where = f"{tf.source} (Index {i})"
            _check_object(CompositePodGroup, "CompositePodGroup", manifest, where,
                          op.namespace)
    raise UnsupportedWorkload(op.unsupported_reason or "")
