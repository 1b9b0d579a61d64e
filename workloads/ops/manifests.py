"""Rendered object manifests: safe YAML parsing, metadata, deletion flags, and typed objects
with the harness's errors (a kind or volume scheduler_core does not model is "unsupported")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from scheduler_core.api import UNMODELLED_KINDS, Pod, UnsupportedKindError
from scheduler_core.errors import SchedulerCoreError
from scheduler_core.inputfile import MAX_EXPANDED_VALUES, expanded_size
from workloads.config.ops_groups import COMPOSITE_POD_GROUP_REASON, POD_GROUP_REASON
from workloads.ops.errors import UnsupportedWorkload, WorkloadError

__all__ = [
    "CLUSTER_SCOPED",
    "HOSTNAME_LABEL",
    "PodFlags",
    "check_namespace",
    "check_scope",
    "load_yaml_text",
    "manifest_pod_group",
    "metadata_of",
    "parse_typed",
    "pod_flags",
    "pod_group_reason",
    "unsupported_kind_reason",
    "volume_reason",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HOSTNAME_LABEL = "kubernetes.io/hostname"
CLUSTER_SCOPED = ("Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                  "CSINode", "CSIDriver")
PodFlags = tuple[bool, bool]  # (deleted at once even when bound, has finalizers)


def load_yaml_text(text: str, source: str) -> Any:
    try:
        data = yaml.load(text, Loader=_Loader)  # a safe loader (CSafeLoader)
        if expanded_size(data) is None:
            raise WorkloadError(f"{source}: its aliases expand to more than "
                                f"{MAX_EXPANDED_VALUES} values (an alias bomb?)")
        return data
    except RecursionError:
        raise WorkloadError(f"{source}: invalid YAML: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a constructor's: a date like 2026-13-45
        raise WorkloadError(f"{source}: invalid YAML value: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise WorkloadError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None


_GROUP_REASONS = {"PodGroup": POD_GROUP_REASON, "CompositePodGroup": COMPOSITE_POD_GROUP_REASON}


def unsupported_kind_reason(kind: Any) -> str | None:
    if kind in UNMODELLED_KINDS:
        return f"kind {kind} is not modelled by scheduler_core"
    if isinstance(kind, str) and kind in _GROUP_REASONS:
        return f"kind {kind}: {_GROUP_REASONS[kind]}"
    return None


def pod_group_reason(pod: Pod, source: str = "") -> str:
    """Why a pod naming a PodGroup (``spec.schedulingGroup``) cannot run."""
    where = f"{source}: " if source else ""
    return (f"{where}pod spec.schedulingGroup.podGroupName ({pod.spec.pod_group}): "
            f"{POD_GROUP_REASON}")


def manifest_pod_group(m: Any) -> str | None:
    """``spec.schedulingGroup.podGroupName`` of an unparsed pod manifest, if set."""
    spec = m.get("spec") if isinstance(m, dict) else None
    group = spec.get("schedulingGroup") if isinstance(spec, dict) else None
    if group is None:
        return None
    name = group.get("podGroupName") if isinstance(group, dict) else None
    return str(name) if name else "?"


def metadata_of(m: Any) -> dict[str, Any]:
    """The manifest's ``metadata`` mapping ({} when missing or not a mapping)."""
    meta = m.get("metadata") if isinstance(m, dict) else None
    return meta if isinstance(meta, dict) else {}


def pod_flags(m: Any) -> PodFlags:
    spec = m.get("spec") if isinstance(m, dict) else None
    grace = spec.get("terminationGracePeriodSeconds") if isinstance(spec, dict) else None
    return grace == 0, bool(metadata_of(m).get("finalizers"))


def parse_typed(parse: Callable[..., Any], m: Any, source: str, **kw: Any) -> Any:
    try:
        return parse(m, source=source, **kw)
    except UnsupportedKindError as exc:
        raise UnsupportedWorkload(str(exc)) from None
    except SchedulerCoreError as exc:
        raise WorkloadError(str(exc)) from None


def volume_reason(pod: Pod, source: str = "") -> str:
    where = f"{source}: " if source else ""
    kinds = ", ".join(pod.spec.unsupported_volumes)
    return (f"{where}pod volumes of kind {kinds} need the ephemeral volume controller to "
            "create their claims, which is not modelled by scheduler_core")


def check_scope(kind: str, namespace: str | None, source: str) -> None:
    """WorkloadError when the op's ``namespace`` does not suit ``kind``'s scope (set for a
    cluster-scoped kind, missing for a namespaced one), as upstream's createAny says it."""
    scoped = kind in CLUSTER_SCOPED
    if scoped and namespace:
        raise WorkloadError(f'namespace "{namespace}" set for "{source}", but "{kind}" has '
                            'scope "root"')
    if not scoped and not namespace:
        raise WorkloadError(f'namespace not set for "{source}", but "{kind}" has scope '
                            '"namespace"')


def check_namespace(manifest: Any, namespace: str, where: str) -> None:
    """WorkloadError when the rendered object names a namespace other than the op's (an
    object without one takes the op's), as upstream's create ops say it."""
    ns = metadata_of(manifest).get("namespace")
    if ns and ns != namespace:
        raise WorkloadError(f"{where}: the namespace of the provided object ({ns}) does not "
                            f"match the namespace sent on the request ({namespace})")
