"""scheduler_perf workload-template operations: one frozen dataclass per ``opcode``.

Field names are the upstream Go field names in snake_case (``countParam`` -> ``count_param``);
YAML keys match them case-insensitively. Durations are seconds (floats), template/manifest paths
are absolute :class:`~pathlib.Path` objects resolved against the config file's folder, and
mappings are :class:`~workloads.config.decode.FrozenDict`.

As parsed, ops may still hold ``$param`` references (``count_param="$initNodes"`` with
``count=0``); :func:`workloads.config.resolve.resolve` returns copies with the values filled in.

Ops this harness cannot run (DRA, pod groups) live in :mod:`workloads.config.ops_unsupported`;
the opcode registry and the op decoder are in :mod:`workloads.config.opcodes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from workloads.config.decode import EMPTY, Fields, FrozenDict

__all__ = [
    "CHURN_MODES",
    "COLLECTORS",
    "STAGE_REQUIREMENTS",
    "Barrier",
    "Churn",
    "CreateAny",
    "CreateNamespaces",
    "CreateNodes",
    "CreatePodSets",
    "CreatePods",
    "DeletePods",
    "LabelNodePrepareStrategy",
    "NodeAllocatableStrategy",
    "Op",
    "Sleep",
    "StartCollectingMetrics",
    "StopCollectingMetrics",
    "UniqueNodeLabelStrategy",
    "UpdateAny",
]

CHURN_MODES = ("recreate", "create")
STAGE_REQUIREMENTS = ("Scheduled", "Attempted")
COLLECTORS = ("Throughput", "Metrics", "Memory", "SchedulingDuration", "PodGroupLatency")


@dataclass(frozen=True, kw_only=True)
class Op:
    """Base of every op. ``line``/``yaml_path``/``field_lines`` locate it in the file."""

    opcode: ClassVar[str] = ""
    unsupported_reason: ClassVar[str | None] = None

    line: int | None = field(default=None, compare=False, repr=False)
    yaml_path: str = field(default="", compare=False, repr=False)
    field_lines: FrozenDict[str, int] = field(default=EMPTY, compare=False, repr=False)

    @property
    def collects_metrics(self) -> bool:
        """Upstream ``collectsMetrics()``: this op produces DataItems."""
        return False

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError


def check_count(f: Fields, name: str, count: int, param: str) -> None:
    """Upstream isValidCount(allowParameterization=true): a literal count is >= 0."""
    if not param and count < 0:
        f.error(f.key_of(name), f"must not be negative, got {count}")


# --------------------------------------------------------------------------- node strategies


@dataclass(frozen=True)
class NodeAllocatableStrategy:
    """testutils.NodeAllocatableStrategy: extra allocatable, CSINode limits, migrated plugins."""

    node_allocatable: FrozenDict[str, str] = EMPTY
    csi_node_allocatable: FrozenDict[str, int | None] = EMPTY
    migrated_plugins: tuple[str, ...] = ()

    @classmethod
    def read(cls, f: Fields) -> NodeAllocatableStrategy:
        node_allocatable = f.str_map("nodeAllocatable")
        csi: dict[str, int | None] = {}
        drivers = f.mapping("csiNodeAllocatable")
        for driver in drivers or {}:
            value = drivers[driver]
            path = f"{f.key_of('csiNodeAllocatable')}.{driver}"
            if value is None:
                csi[driver] = None
                continue
            if not isinstance(value, dict):
                f.error(path, "expected a mapping like {count: 39}",
                        drivers.value_lines.get(driver))
                continue
            sub = Fields(f.scope, value, f.path(path))
            count = sub.opt_integer("count")
            if count is not None and count < 0:
                sub.error(sub.key_of("count"), f"must not be negative, got {count}")
            sub.finish()
            csi[driver] = count
        strategy = cls(node_allocatable, FrozenDict(csi), f.str_list("migratedPlugins"))
        f.finish()
        return strategy


@dataclass(frozen=True)
class LabelNodePrepareStrategy:
    """testutils.LabelNodePrepareStrategy: ``label_key`` set to ``label_values`` round-robin."""

    label_key: str
    label_values: tuple[str, ...]

    @classmethod
    def read(cls, f: Fields) -> LabelNodePrepareStrategy:
        strategy = cls(f.string("labelKey"), f.str_list("labelValues"))
        if not strategy.label_key:
            f.error(f.key_of("labelKey"), "must be set")
        if not strategy.label_values:
            f.error(f.key_of("labelValues"), "must list at least one value")
        f.finish()
        return strategy


@dataclass(frozen=True)
class UniqueNodeLabelStrategy:
    """testutils.UniqueNodeLabelStrategy: ``label_key`` gets a unique value per node."""

    label_key: str

    @classmethod
    def read(cls, f: Fields) -> UniqueNodeLabelStrategy:
        strategy = cls(f.string("labelKey"))
        if not strategy.label_key:
            f.error(f.key_of("labelKey"), "must be set")
        f.finish()
        return strategy


def _strategy(f: Fields, name: str, kind: Any) -> Any:
    sub = f.sub(name)
    return None if sub is None else kind.read(sub)


# --------------------------------------------------------------------------- ops


@dataclass(frozen=True, kw_only=True)
class CreateNodes(Op):
    """Create ``count`` nodes from ``node_template_path`` (or the built-in node)."""

    opcode: ClassVar[str] = "createNodes"

    count: int = 0
    count_param: str = ""
    node_template_path: Path | None = None
    node_allocatable_strategy: NodeAllocatableStrategy | None = None
    label_node_prepare_strategy: LabelNodePrepareStrategy | None = None
    unique_node_label_strategy: UniqueNodeLabelStrategy | None = None
    template_params: FrozenDict[str, Any] = EMPTY

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"count": f.integer("count"), "count_param": f.param("countParam"),
              "node_template_path": f.file("nodeTemplatePath"),
              "node_allocatable_strategy": _strategy(f, "nodeAllocatableStrategy",
                                                     NodeAllocatableStrategy),
              "label_node_prepare_strategy": _strategy(f, "labelNodePrepareStrategy",
                                                       LabelNodePrepareStrategy),
              "unique_node_label_strategy": _strategy(f, "uniqueNodeLabelStrategy",
                                                      UniqueNodeLabelStrategy),
              "template_params": f.any_map("templateParams")}
        check_count(f, "count", kw["count"], kw["count_param"])
        return kw


@dataclass(frozen=True, kw_only=True)
class CreateNamespaces(Op):
    """Create namespaces ``<prefix>-0`` .. ``<prefix>-<count-1>``."""

    opcode: ClassVar[str] = "createNamespaces"

    prefix: str = ""
    count: int = 0
    count_param: str = ""
    namespace_template_path: Path | None = None

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"prefix": f.string("prefix"), "count": f.integer("count"),
              "count_param": f.param("countParam"),
              "namespace_template_path": f.file("namespaceTemplatePath")}
        check_count(f, "count", kw["count"], kw["count_param"])
        return kw


@dataclass(frozen=True, kw_only=True)
class CreatePods(Op):
    """Create ``count`` pods (times ``count_multiplier_param``) and by default wait for them.

    ``namespace`` None means ``namespace-<opIndex>`` and ``pod_template_path`` None means the
    test case's default pod template (else the built-in pod); :func:`resolve` fills both in.
    ``duration`` is in seconds.
    """

    opcode: ClassVar[str] = "createPods"

    count: int = 0
    count_param: str = ""
    count_multiplier_param: str = ""
    steady_state: bool = False
    steady_state_param: str = ""
    duration: float = 0.0
    duration_param: str = ""
    collect_metrics: bool = False
    namespace: str | None = None
    pod_template_path: Path | None = None
    skip_wait_to_completion: bool = False
    persistent_volume_template_path: Path | None = None
    persistent_volume_claim_template_path: Path | None = None
    template_params: FrozenDict[str, Any] = EMPTY
    signature_batch_size: int = 0
    signature_batch_size_param: str = ""

    @property
    def collects_metrics(self) -> bool:
        return self.collect_metrics

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {
            "count": f.integer("count"), "count_param": f.param("countParam"),
            "count_multiplier_param": f.param("countMultiplierParam"),
            "steady_state": f.boolean("steadyState"),
            "steady_state_param": f.param("steadyStateParam"),
            "duration": f.duration("duration"), "duration_param": f.param("durationParam"),
            "collect_metrics": f.boolean("collectMetrics"),
            "namespace": f.opt_string("namespace"),
            "pod_template_path": f.file("podTemplatePath"),
            "skip_wait_to_completion": f.boolean("skipWaitToCompletion"),
            "persistent_volume_template_path": f.file("persistentVolumeTemplatePath"),
            "persistent_volume_claim_template_path": f.file("persistentVolumeClaimTemplatePath"),
            "template_params": f.any_map("templateParams"),
            "signature_batch_size": f.integer("signatureBatchSize"),
            "signature_batch_size_param": f.param("signatureBatchSizeParam"),
        }
        check_count(f, "count", kw["count"], kw["count_param"])
        check_count(f, "signatureBatchSize", kw["signature_batch_size"],
                     kw["signature_batch_size_param"])
        if kw["collect_metrics"] and kw["skip_wait_to_completion"]:
            f.error(None, "collectMetrics and skipWaitToCompletion cannot be true at the same "
                    "time")
        if kw["skip_wait_to_completion"] and kw["steady_state"]:
            f.error(None, "skipWaitToCompletion and steadyState cannot be true at the same time")
        if kw["duration"] < 0:
            f.error(f.key_of("duration"), "must not be negative")
        elif (kw["steady_state"] and kw["duration"] == 0 and not kw["steady_state_param"]
              and not kw["duration_param"]):
            f.error(f.key_of("duration"), "when creating pods in a steady state, the test "
                    "duration must be > 0")
        return kw


@dataclass(frozen=True, kw_only=True)
class CreatePodSets(Op):
    """``count`` copies of ``create_pods_op``, in namespaces ``<namespace_prefix>-<i>``."""

    opcode: ClassVar[str] = "createPodSets"

    count: int = 0
    count_param: str = ""
    namespace_prefix: str = ""
    create_pods_op: CreatePods

    @property
    def collects_metrics(self) -> bool:
        return self.create_pods_op.collect_metrics

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw: dict[str, Any] = {"count": f.integer("count"), "count_param": f.param("countParam"),
                              "namespace_prefix": f.string("namespacePrefix")}
        check_count(f, "count", kw["count"], kw["count_param"])
        sub = f.sub("createPodsOp")
        if sub is None:
            f.error(f.key_of("createPodsOp"), "must be set")
            kw["create_pods_op"] = CreatePods()
            return kw
        opcode = sub.string("opcode")
        if opcode not in ("", CreatePods.opcode):
            sub.error(sub.key_of("opcode"), f'must be "createPods", got "{opcode}"')
        inner = CreatePods.decode(sub)
        sub.finish()
        kw["create_pods_op"] = CreatePods(line=sub.line, yaml_path=sub.yaml_path,
                                          field_lines=FrozenDict(sub.lines), **inner)
        return kw


@dataclass(frozen=True, kw_only=True)
class DeletePods(Op):
    """Delete pods in ``namespace`` matching ``label_selector``; 0 per second = all at once."""

    opcode: ClassVar[str] = "deletePods"

    namespace: str = ""
    label_selector: FrozenDict[str, str] = EMPTY
    skip_wait_to_completion: bool = False
    delete_pods_per_second: int = 0

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"namespace": f.string("namespace"), "label_selector": f.str_map("labelSelector"),
              "skip_wait_to_completion": f.boolean("skipWaitToCompletion"),
              "delete_pods_per_second": f.integer("deletePodsPerSecond")}
        if kw["delete_pods_per_second"] < 0:
            f.error(f.key_of("deletePodsPerSecond"),
                    f"must not be negative, got {kw['delete_pods_per_second']}")
        return kw


@dataclass(frozen=True, kw_only=True)
class Churn(Op):
    """Background create/recreate of objects from ``template_paths`` every interval.

    ``interval_milliseconds`` 0 means 500 and ``namespace`` None means ``namespace-<opIndex>``;
    :func:`resolve` fills both in.
    """

    opcode: ClassVar[str] = "churn"

    mode: str = ""
    number: int = 0
    interval_milliseconds: int = 0
    namespace: str | None = None
    template_paths: tuple[Path, ...] = ()

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"mode": f.string("mode"), "number": f.integer("number"),
              "interval_milliseconds": f.integer("intervalMilliseconds"),
              "namespace": f.opt_string("namespace"),
              "template_paths": f.file_list("templatePaths")}
        if kw["mode"] not in CHURN_MODES:
            f.error(f.key_of("mode"), f'invalid mode "{kw["mode"]}", must be one of '
                    f"{', '.join(CHURN_MODES)}")
        if kw["number"] < 0:
            f.error(f.key_of("number"), f"must not be negative, got {kw['number']}")
        elif kw["mode"] == "recreate" and kw["number"] == 0:
            f.error(f.key_of("number"), "number cannot be 0 when mode is recreate")
        if kw["interval_milliseconds"] < 0:
            f.error(f.key_of("intervalMilliseconds"),
                    f"must not be negative, got {kw['interval_milliseconds']}")
        if not f.node.get(f.key_of("templatePaths")):
            f.error(f.key_of("templatePaths"),
                    "at least one template spec file needs to be specified")
        return kw


@dataclass(frozen=True, kw_only=True)
class Barrier(Op):
    """Wait until pods in ``namespaces`` (all if empty) are Scheduled / Attempted."""

    opcode: ClassVar[str] = "barrier"

    namespaces: tuple[str, ...] = ()
    label_selector: FrozenDict[str, str] = EMPTY
    stage_requirement: str = ""

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"namespaces": f.str_list("namespaces"),
              "label_selector": f.str_map("labelSelector"),
              "stage_requirement": f.string("stageRequirement")}
        if kw["stage_requirement"] not in ("", *STAGE_REQUIREMENTS):
            f.error(f.key_of("stageRequirement"), f'invalid StageRequirement '
                    f'"{kw["stage_requirement"]}", must be Scheduled or Attempted')
        return kw


@dataclass(frozen=True, kw_only=True)
class Sleep(Op):
    """Sleep ``duration`` seconds."""

    opcode: ClassVar[str] = "sleep"

    duration: float = 0.0
    duration_param: str = ""

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        return {"duration": f.duration("duration"), "duration_param": f.param("durationParam")}


@dataclass(frozen=True, kw_only=True)
class StartCollectingMetrics(Op):
    """Start collectors over ``namespaces``; ``name`` is appended to the result Name."""

    opcode: ClassVar[str] = "startCollectingMetrics"

    name: str = ""
    namespaces: tuple[str, ...] = ()
    label_selector: FrozenDict[str, str] = EMPTY
    collectors: tuple[str, ...] = ()

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"name": f.string("name"), "namespaces": f.str_list("namespaces"),
              "label_selector": f.str_map("labelSelector"),
              "collectors": f.str_list("collectors")}
        if not kw["namespaces"]:
            f.error(f.key_of("namespaces"), "namespaces cannot be empty")
        for name in kw["collectors"]:
            if name not in COLLECTORS:
                f.error(f.key_of("collectors"),
                        f'unknown collector "{name}", must be one of {", ".join(COLLECTORS)}')
        return kw


@dataclass(frozen=True, kw_only=True)
class StopCollectingMetrics(Op):
    """Stop the collectors started by startCollectingMetrics and apply the threshold."""

    opcode: ClassVar[str] = "stopCollectingMetrics"

    @property
    def collects_metrics(self) -> bool:
        return True

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, kw_only=True)
class CreateAny(Op):
    """Create ``count`` objects (None means 1) rendered from ``template_path``."""

    opcode: ClassVar[str] = "createAny"

    template_path: Path | None = None
    namespace: str = ""
    count: int | None = None
    count_param: str = ""
    template_params: FrozenDict[str, Any] = EMPTY

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"template_path": f.file("templatePath"), "namespace": f.string("namespace"),
              "count": f.opt_integer("count"), "count_param": f.param("countParam"),
              "template_params": f.any_map("templateParams")}
        require(f, "templatePath", "TemplatePath must be set")
        check_count(f, "count", kw["count"] or 0, kw["count_param"])
        return kw


@dataclass(frozen=True, kw_only=True)
class UpdateAny(Op):
    """Update (+UpdateStatus) ``count`` objects (None means 1) rendered from ``template_path``."""

    opcode: ClassVar[str] = "updateAny"

    template_path: Path | None = None
    namespace: str = ""
    count: int | None = None
    count_param: str = ""
    update_per_second: int = 0
    subresources: tuple[str, ...] = ()

    @classmethod
    def decode(cls, f: Fields) -> dict[str, Any]:
        kw = {"template_path": f.file("templatePath"), "namespace": f.string("namespace"),
              "count": f.opt_integer("count"), "count_param": f.param("countParam"),
              "update_per_second": f.integer("updatePerSecond"),
              "subresources": f.str_list("subresources")}
        require(f, "templatePath", "TemplatePath must be set")
        check_count(f, "count", kw["count"] or 0, kw["count_param"])
        if kw["update_per_second"] < 0:
            f.error(f.key_of("updatePerSecond"),
                    f"must not be negative, got {kw['update_per_second']}")
        return kw


def require(f: Fields, name: str, problem: str) -> None:
    """Report ``problem`` if field ``name`` is absent or empty."""
    if not f.node.get(f.key_of(name)):
        f.error(f.key_of(name), problem)
