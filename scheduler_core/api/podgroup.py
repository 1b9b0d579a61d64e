"""Workload-aware scheduling objects: PodGroup and CompositePodGroup (``scheduling.k8s.io``).

Parsed and validated with the same strictness as the other kinds (unknown fields are errors,
wrong types named with their field path), as upstream's newest scheduler_perf configs write
them. The core does not schedule groups yet (no gang semantics): a run that creates these
objects, or pods that name a group in ``spec.schedulingGroup``, is reported unsupported by
the workload layer. Nothing here changes a scheduling decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.api._fields import Fields
from scheduler_core.api.objects import _locate, _root
from scheduler_core.errors import ManifestError

__all__ = [
    "COMPOSITE_POD_GROUP_API_VERSIONS",
    "POD_GROUP_API_VERSIONS",
    "CompositePodGroup",
    "GroupPolicy",
    "PodGroup",
    "WorkloadRef",
]

POD_GROUP_API_VERSIONS = ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3")
COMPOSITE_POD_GROUP_API_VERSIONS = ("scheduling.k8s.io/v1alpha3",)
DISRUPTION_MODES = ("single", "all")


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    """``spec.schedulingPolicy``: ``basic: {}`` (``gang`` False) or ``gang`` with its minimum
    (``minCount`` pods of a PodGroup, ``minGroupCount`` children of a CompositePodGroup)."""

    gang: bool = False
    min_count: int = 0


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    workload_name: str
    template_name: str


@dataclass(frozen=True, slots=True)
class GroupClaim:
    """One entry of a PodGroup's ``spec.resourceClaims`` (DRA claims shared by the group)."""

    name: str
    resource_claim_name: str = ""
    resource_claim_template_name: str = ""


@dataclass(frozen=True, slots=True)
class PodGroup:
    name: str
    namespace: str
    policy: GroupPolicy
    topology_keys: tuple[str, ...] = ()
    parent: str = ""  # spec.parentCompositePodGroupName
    workload_ref: WorkloadRef | None = None
    priority: int | None = None
    disruption_mode: str = ""  # "", "single" or "all"
    resource_claims: tuple[GroupClaim, ...] = ()
    api_version: str = POD_GROUP_API_VERSIONS[0]

    @property
    def key(self) -> str:
        """"namespace/name", as its pods' ``Pod.group_key``."""
        return f"{self.namespace}/{self.name}"

    def _parse(cls, data: Any) -> PodGroup:
        root, _meta, name, namespace = _root(data, "PodGroup", namespaced=True)
        root.check_keys(("apiVersion", "kind", "metadata", "spec"), ("status",))
        api = _api_version(root, POD_GROUP_API_VERSIONS)
        spec = root.sub("spec")
        spec.check_keys(("schedulingPolicy", "schedulingConstraints",
                         "parentCompositePodGroupName", "workloadRef", "priority",
                         "disruptionMode", "resourceClaims"))
        return cls(name, namespace, _policy(spec, "minCount"), _topology(spec),
                   spec.str("parentCompositePodGroupName"), _workload_ref(spec),
                   spec.int("priority"), _disruption_mode(spec), _claims(spec), api)

    from_manifest = _locate(_parse)


@dataclass(frozen=True, slots=True)
class CompositePodGroup:
    name: str
    namespace: str
    policy: GroupPolicy
    topology_keys: tuple[str, ...] = ()
    parent: str = ""
    workload_ref: WorkloadRef | None = None
    priority: int | None = None
    api_version: str = COMPOSITE_POD_GROUP_API_VERSIONS[0]

    def _parse(cls, data: Any) -> CompositePodGroup:
        root, _meta, name, namespace = _root(data, "CompositePodGroup", namespaced=True)
        root.check_keys(("apiVersion", "kind", "metadata", "spec"), ("status",))
        api = _api_version(root, COMPOSITE_POD_GROUP_API_VERSIONS)
        spec = root.sub("spec")
        spec.check_keys(("schedulingPolicy", "schedulingConstraints",
                         "parentCompositePodGroupName", "workloadRef", "priority"))
        return cls(name, namespace, _policy(spec, "minGroupCount"), _topology(spec),
                   spec.str("parentCompositePodGroupName"), _workload_ref(spec),
                   spec.int("priority"), api)

    from_manifest = _locate(_parse)


def _api_version(root: Fields, allowed: tuple[str, ...]) -> str:
    api = root.str("apiVersion", required=True)
    if api not in allowed:
        raise root.error("apiVersion", f'unsupported apiVersion "{api}" (expected one of: '
                         f'{", ".join(allowed)})')
    return api


def _one_of(f: Fields, keys: tuple[str, ...]) -> str:
    """The one key of ``keys`` set in ``f`` (upstream's union types: exactly one member)."""
    f.check_keys(keys)
    present = [k for k in keys if k in f.data]
    if len(present) != 1:
        got = "none" if not present else " and ".join(present)
        raise ManifestError(f"exactly one of {', '.join(keys)} must be set, got {got}",
                            field=f.path, obj=f.obj)
    sub = f.sub(present[0])  # a mapping ({} allowed) or an error naming the field
    del sub
    return present[0]


def _policy(spec: Fields, min_key: str) -> GroupPolicy:
    if not spec.has("schedulingPolicy"):
        raise spec.error("schedulingPolicy", "required field is missing (basic or gang)")
    policy = spec.sub("schedulingPolicy")
    if _one_of(policy, ("basic", "gang")) == "basic":
        policy.sub("basic").check_keys(())
        return GroupPolicy()
    gang = policy.sub("gang")
    gang.check_keys((min_key,))
    minimum = gang.int(min_key, minimum=1)
    if minimum is None:
        raise gang.error(min_key, "required field is missing")
    return GroupPolicy(gang=True, min_count=minimum)


def _topology(spec: Fields) -> tuple[str, ...]:
    constraints = spec.sub("schedulingConstraints")
    constraints.check_keys(("topology",))
    keys = []
    for _, t in constraints.items("topology"):
        t.check_keys(("key",))
        key = t.str("key", required=True)
        if not key:
            raise t.error("key", "must be non-empty")
        keys.append(key)
    return tuple(keys)


def _workload_ref(spec: Fields) -> WorkloadRef | None:
    if not spec.has("workloadRef"):
        return None
    ref = spec.sub("workloadRef")
    ref.check_keys(("workloadName", "templateName"))
    return WorkloadRef(ref.str("workloadName", required=True),
                       ref.str("templateName", required=True))


def _disruption_mode(spec: Fields) -> str:
    if not spec.has("disruptionMode"):
        return ""
    mode = spec.sub("disruptionMode")
    chosen = _one_of(mode, DISRUPTION_MODES)
    mode.sub(chosen).check_keys(())
    return chosen


def _claims(spec: Fields) -> tuple[GroupClaim, ...]:
    claims = []
    for _, c in spec.items("resourceClaims"):
        c.check_keys(("name", "resourceClaimName", "resourceClaimTemplateName"))
        name = c.str("name", required=True)
        claim, template = c.str("resourceClaimName"), c.str("resourceClaimTemplateName")
        if bool(claim) == bool(template):
            raise ManifestError("exactly one of resourceClaimName, resourceClaimTemplateName "
                                "must be set", field=c.path, obj=c.obj)
        claims.append(GroupClaim(name, claim, template))
    return tuple(claims)
