"""Pods. The spec is parsed once into an immutable, shareable ``PodSpec``; ``Pod`` holds the
per-object metadata and status, so pods from one template are cheap to stamp out
(``Pod.clone``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scheduler_core.api._fields import Fields, object_key
from scheduler_core.api.affinity import Affinity, TopologySpreadConstraint
from scheduler_core.api.resources import canonical_map, effective_requests, non_zero_requests
from scheduler_core.api.selectors import Toleration
from scheduler_core.api.storage import VolumeSource
from scheduler_core.errors import ManifestError

__all__ = ["DEFAULT_SCHEDULER_NAME", "Container", "HostPort", "Pod", "PodSpec",
           "retain_spec_sources"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Whether parse_pod_spec keeps the manifest's ``spec`` mapping in ``PodSpec.source`` (off:
# a run keeps no manifest alive). The fidelity check turns it on to send the very spec the
# core parsed to the reference scheduler
# (docs/fidelity.md, "The lockstep check against kube-scheduler").
_RETAIN_SOURCES = [False]


def retain_spec_sources(on: bool) -> bool:
    """Keep (or stop keeping) each parsed spec's manifest in ``PodSpec.source``; returns the
    previous setting."""
    before = _RETAIN_SOURCES[0]
    _RETAIN_SOURCES[0] = on
    return before

_METADATA_MODELLED = ("name", "generateName", "namespace", "labels", "uid", "ownerReferences",
                      "deletionTimestamp", "annotations")
_METADATA_IGNORED = ("creationTimestamp", "finalizers", "resourceVersion", "generation",
                     "managedFields", "deletionGracePeriodSeconds", "selfLink")
_SPEC_MODELLED = ("containers", "initContainers", "nodeName", "nodeSelector", "affinity",
                  "tolerations", "schedulerName", "priority", "priorityClassName",
                  "preemptionPolicy", "overhead", "topologySpreadConstraints", "schedulingGates",
                  "volumes", "schedulingGroup")
_SPEC_IGNORED = ("restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds",
                 "dnsPolicy", "serviceAccountName", "serviceAccount",
                 "automountServiceAccountToken", "hostNetwork", "hostPID", "hostIPC",
                 "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
                 "subdomain", "hostAliases", "dnsConfig", "readinessGates", "runtimeClassName",
                 "enableServiceLinks", "os", "hostUsers", "resourceClaims", "resources",
                 "ephemeralContainers", "setHostnameAsFQDN", "workloadRef")
_CONTAINER_MODELLED = ("name", "image", "resources", "ports", "restartPolicy")
_CONTAINER_IGNORED = ("command", "args", "workingDir", "env", "envFrom", "volumeMounts",
                      "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
                      "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
                      "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
                      "resizePolicy", "restartPolicyRules")
_STATUS_MODELLED = ("nominatedNodeName", "startTime", "conditions")
_STATUS_IGNORED = ("phase", "message", "reason", "hostIP", "hostIPs", "podIP",
                   "podIPs", "initContainerStatuses", "containerStatuses",
                   "ephemeralContainerStatuses", "qosClass", "resize", "resourceClaimStatuses",
                   "observedGeneration")
_PROTOCOLS = ("TCP", "UDP", "SCTP")
# generic ephemeral volumes need the ephemeral volume controller to create their claims
_VOLUME_SOURCES_UNMODELLED = ("ephemeral",)
# inline sources the volume plugins look at (VolumeRestrictions' disk conflicts,
# NodeVolumeLimits' migrated in-tree volumes)
_INLINE_SOURCES = ("awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "cinder", "rbd",
                   "iscsi", "csi")


@dataclass(frozen=True, slots=True)
class PodVolume:
    """A volume of the pod the volume plugins read: a claim, an inline in-tree disk or an
    inline CSI volume."""

    name: str
    claim: str = ""  # persistentVolumeClaim.claimName
    source: VolumeSource | None = None  # an inline in-tree disk


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str  # "0.0.0.0" when unset
    protocol: str  # "TCP" when unset
    port: int


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    requests: dict[str, int]
    host_ports: tuple[HostPort, ...] = ()
    sidecar: bool = False  # init container with restartPolicy: Always


@dataclass(frozen=True, slots=True, eq=False)
class PodSpec:
    """Everything a scheduling decision reads from a pod that a template fixes."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    node_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = ""
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: dict[str, int] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity = field(default_factory=Affinity)
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    volumes: tuple[PodVolume, ...] = ()  # claims and inline disks only
    unsupported_volumes: tuple[str, ...] = ()  # volume kinds the core does not model
    # spec.schedulingGroup.podGroupName: the PodGroup the pod belongs to ("" for none)
    pod_group: str = ""
    # the manifest's spec mapping, kept only under retain_spec_sources(True)
    source: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    # derived, computed once in __post_init__
    requests: dict[str, int] = field(default_factory=dict, init=False)
    non_zero_cpu: int = field(default=0, init=False)
    non_zero_memory: int = field(default=0, init=False)
    host_ports: tuple[HostPort, ...] = field(default=(), init=False)
    images: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        regular = [c.requests for c in self.containers]
        inits = [(c.requests, c.sidecar) for c in self.init_containers]
        object.__setattr__(self, "requests", effective_requests(regular, inits, self.overhead))
        cpu, mem = non_zero_requests(regular, inits, self.overhead)
        object.__setattr__(self, "non_zero_cpu", cpu)
        object.__setattr__(self, "non_zero_memory", mem)
        # schedutil.GetHostPorts: sidecars (they run for the pod's lifetime), then containers;
        # a plain init container has exited before the pod runs and holds no port
        ports = tuple(p for c in self.init_containers if c.sidecar for p in c.host_ports) + tuple(
            p for c in self.containers for p in c.host_ports)
        object.__setattr__(self, "host_ports", ports)
        images = tuple(_normalize_image(c.image) for c in self.init_containers + self.containers
                       if c.image)
        object.__setattr__(self, "images", images)

    @property
    def has_requests(self) -> bool:
        return any(v for v in self.requests.values())


def _normalize_image(name: str) -> str:
    """ImageLocality's normalisation: append ``:latest`` when no tag is present."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class Pod:
    """A pod: identity, labels and mutable status around a shared immutable ``PodSpec``."""

    __slots__ = ("annotations", "deletion_timestamp", "labels", "name", "namespace",
                 "node_name", "nominated_node_name", "owner_references", "preempted", "priority",
                 "spec", "start_time", "uid", "warnings")

    def __init__(
        self,
        name: str,
        namespace: str = "default",
        *,
        spec: PodSpec | None = None,
        labels: dict[str, str] | None = None,
        uid: str = "",
        owner_references: tuple[tuple[str, str], ...] = (),
        annotations: dict[str, str] | None = None,
        nominated_node_name: str = "",
        start_time: float | None = None,
        deletion_timestamp: float | None = None,
        warnings: tuple[str, ...] = (),
        preempted: bool = False,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.spec = spec if spec is not None else PodSpec()
        self.labels = labels if labels is not None else {}
        self.uid = uid or f"{namespace}/{name}"
        self.owner_references = owner_references
        self.annotations = annotations if annotations is not None else {}
        self.node_name = self.spec.node_name
        self.nominated_node_name = nominated_node_name
        self.priority = self.spec.priority if self.spec.priority is not None else 0
        self.start_time = start_time
        self.deletion_timestamp = deletion_timestamp
        # status condition DisruptionTarget=True, reason PreemptionByScheduler: the pod is
        # being evicted by a scheduler's preemption
        self.preempted = preempted
        self.warnings = warnings

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def group_key(self) -> str:
        """"namespace/podGroupName" of the PodGroup the pod names ("" for none)."""
        group = self.spec.pod_group
        return f"{self.namespace}/{group}" if group else ""

    @property
    def scheduler_name(self) -> str:
        return self.spec.scheduler_name

    def clone(self, name: str | None = None, namespace: str | None = None, *,
              labels: dict[str, str] | None = None) -> Pod:
        """A new pod sharing this one's spec (and, unless given, a copy of its labels)."""
        ns = namespace or self.namespace
        nm = name or self.name
        pod = Pod(nm, ns, spec=self.spec,
                  labels=dict(self.labels) if labels is None else labels,
                  owner_references=self.owner_references, annotations=self.annotations,
                  nominated_node_name=self.nominated_node_name, start_time=self.start_time,
                  deletion_timestamp=self.deletion_timestamp, warnings=self.warnings,
                  preempted=self.preempted)
        pod.priority = self.priority
        pod.node_name = self.node_name
        return pod

    def __repr__(self) -> str:
        return f"Pod({self.key}, node={self.node_name or '-'})"

    # -- parsing -----------------------------------------------------------------------------
    @classmethod
    def from_manifest(cls, data: Any, *, source: str | None = None,
                      default_namespace: str = "default") -> Pod:
        """Build a pod from a manifest dict; errors are ``ManifestError`` naming the field."""
        try:
            return _parse_pod(data, default_namespace)
        except ManifestError as exc:
            raise exc.located(source=source) from None


def _parse_pod(data: Any, default_namespace: str) -> Pod:
    if not isinstance(data, dict):
        raise ManifestError("expected a mapping for a Pod manifest", obj="pod")
    obj = "pod " + object_key(data, default_namespace)
    root = Fields(data, "", obj)
    root.check_keys(("apiVersion", "kind", "metadata", "spec", "status"))
    kind = root.str("kind", "Pod")
    if kind != "Pod":
        raise root.error("kind", f'expected "Pod", got "{kind}"')
    meta = root.sub("metadata")
    meta.check_keys(_METADATA_MODELLED, _METADATA_IGNORED)
    name = meta.str("name") or meta.str("generateName")
    if not name:
        raise meta.error("name", "required field is missing (name or generateName)")
    namespace = meta.str("namespace") or default_namespace
    labels = meta.str_map("labels")
    annotations = meta.str_map("annotations")
    owners = []
    for _, o in meta.items("ownerReferences"):
        o.check_keys(("kind", "name", "uid", "apiVersion"), ("controller", "blockOwnerDeletion"))
        owners.append((o.str("kind", required=True), o.str("name", required=True)))
    spec = parse_pod_spec(root.sub("spec"))
    status = root.sub("status")
    status.check_keys(_STATUS_MODELLED, _STATUS_IGNORED)
    return Pod(
        name, namespace, spec=spec, labels=labels, uid=meta.str("uid"),
        owner_references=tuple(owners), annotations=annotations,
        nominated_node_name=status.str("nominatedNodeName"),
        start_time=_timestamp(status, "startTime"),
        deletion_timestamp=0.0 if meta.has("deletionTimestamp") else None,
        warnings=tuple(root.warnings),
        preempted=_preempted(status),
    )


def _preempted(status: Fields) -> bool:
    """Whether ``status.conditions`` says the scheduler's preemption is evicting the pod
    (DisruptionTarget, status True, reason PreemptionByScheduler); the first DisruptionTarget
    condition decides, as upstream's podTerminatingByPreemption reads it."""
    for _, c in status.items("conditions"):
        c.check_keys(("type", "status", "reason"),
                     ("message", "lastTransitionTime", "lastProbeTime", "observedGeneration"))
        if c.str("type", required=True) == "DisruptionTarget":
            return c.str("status") == "True" and c.str("reason") == "PreemptionByScheduler"
    return False


def _pod_group(spec: Fields) -> str:
    """``spec.schedulingGroup.podGroupName`` (required when schedulingGroup is set)."""
    if not spec.has("schedulingGroup"):
        return ""
    group = spec.sub("schedulingGroup")
    group.check_keys(("podGroupName",))
    name = group.str("podGroupName", required=True)
    if not name:
        raise group.error("podGroupName", "must be non-empty")
    return name


def _timestamp(f: Fields, key: str) -> float | None:
    """An RFC 3339 time (``2024-05-01T10:00:00Z``) as seconds since the epoch."""
    raw = f.raw(key)
    if raw is None:
        return None
    if isinstance(raw, datetime):  # YAML parses unquoted timestamps itself
        value = raw if raw.tzinfo else raw.replace(tzinfo=UTC)
        return value.timestamp()
    text = f.str(key)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise f.error(key, f'expected an RFC 3339 time like "2024-05-01T10:00:00Z", '
                      f'got "{text}"') from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def parse_pod_spec(spec: Fields) -> PodSpec:
    spec.check_keys(_SPEC_MODELLED, _SPEC_IGNORED)
    if not spec.list("containers"):
        raise spec.error("containers", "required field is missing (at least one container)")
    containers = tuple(_container(c, init=False) for _, c in spec.items("containers"))
    inits = tuple(_container(c, init=True) for _, c in spec.items("initContainers"))
    priority = spec.int("priority")
    policy = spec.str("preemptionPolicy")
    if policy and policy not in ("PreemptLowerPriority", "Never"):
        raise spec.error("preemptionPolicy", f'unsupported value "{policy}" (expected '
                         "PreemptLowerPriority or Never)")
    affinity = Affinity.from_fields(spec.sub("affinity")) if spec.has("affinity") else Affinity()
    tolerations = tuple(Toleration.from_fields(t) for _, t in spec.items("tolerations"))
    spread = tuple(TopologySpreadConstraint.from_fields(t)
                   for _, t in spec.items("topologySpreadConstraints"))
    seen = set()
    for i, c in enumerate(spread):
        k = (c.topology_key, c.when_unsatisfiable)
        if k in seen:
            raise ManifestError(f'duplicate constraint for topologyKey "{c.topology_key}" and '
                                f"whenUnsatisfiable {c.when_unsatisfiable}",
                                field=f"{spec.field('topologySpreadConstraints')}[{i}]",
                                obj=spec.obj)
        seen.add(k)
    gates = []
    for _, g in spec.items("schedulingGates"):
        g.check_keys(("name",))
        gates.append(g.str("name", required=True))
    unsupported = []
    volumes = []
    for _, v in spec.items("volumes"):
        for source in _VOLUME_SOURCES_UNMODELLED:
            if v.has(source):
                unsupported.append(source)
        volume = _pod_volume(v)
        if volume is not None:
            volumes.append(volume)
    return PodSpec(
        scheduler_name=spec.str("schedulerName") or DEFAULT_SCHEDULER_NAME,
        node_name=spec.str("nodeName"),
        priority=priority,
        priority_class_name=spec.str("priorityClassName"),
        preemption_policy=policy,
        containers=containers,
        init_containers=inits,
        overhead=canonical_map(spec.quantity_map("overhead")),
        node_selector=spec.str_map("nodeSelector"),
        affinity=affinity,
        tolerations=tolerations,
        topology_spread_constraints=spread,
        scheduling_gates=tuple(gates),
        volumes=tuple(volumes),
        unsupported_volumes=tuple(sorted(set(unsupported))),
        pod_group=_pod_group(spec),
        source=spec.data if _RETAIN_SOURCES[0] else None,
    )


def _pod_volume(v: Fields) -> PodVolume | None:
    name = v.str("name", required=True)
    if v.has("persistentVolumeClaim"):
        claim = v.sub("persistentVolumeClaim")
        claim.check_keys(("claimName",), ("readOnly",))
        claim_name = claim.str("claimName", required=True)
        if not claim_name:
            raise claim.error("claimName", "must be non-empty")
        return PodVolume(name, claim=claim_name)
    for key in _INLINE_SOURCES:
        if v.has(key):
            return PodVolume(name, source=VolumeSource.read(v, key))
    return None


def _container(c: Fields, *, init: bool) -> Container:
    c.check_keys(_CONTAINER_MODELLED, _CONTAINER_IGNORED)
    res = c.sub("resources")
    res.check_keys(("requests", "limits"), ("claims",))
    # SetDefaults_Pod: a resource with a limit but no request gets the limit as its request
    requests = canonical_map(res.quantity_map("limits"))
    requests.update(canonical_map(res.quantity_map("requests")))
    ports = []
    for _, p in c.items("ports"):
        p.check_keys(("containerPort", "hostPort", "hostIP", "protocol", "name"))
        host_port = p.int("hostPort", 0, minimum=0) or 0
        if host_port > 65535:
            raise p.error("hostPort", f"must be between 1 and 65535, got {host_port}")
        protocol = p.str("protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            raise p.error("protocol", f'unsupported value "{protocol}" (expected one of: '
                          f'{", ".join(_PROTOCOLS)})')
        if host_port > 0:
            ports.append(HostPort(p.str("hostIP") or "0.0.0.0", protocol, host_port))
    restart = c.str("restartPolicy")
    if restart and (not init or restart != "Always"):
        raise c.error("restartPolicy", "only Always is allowed, and only on init containers")
    return Container(name=c.str("name"), image=c.str("image"), requests=requests,
                     host_ports=tuple(ports), sidecar=restart == "Always")

