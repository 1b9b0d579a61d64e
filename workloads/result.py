"""What running one workload produced: the contract between the runner (workloads/) and the
writers and reports (bench/, reports/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ENGINES", "ENGINE_CORE", "ENGINE_KUBE", "STATUSES", "DataItem", "Decision",
           "Placement", "WorkloadResult"]

STATUS_OK = "ok"
STATUS_THRESHOLD_MISSED = "threshold-missed"
STATUS_FAILED = "failed"
STATUS_UNSUPPORTED = "unsupported"
STATUS_TIMEOUT = "timeout"
# every status a workload can end with (results.parquet's ``status`` column)
STATUSES = (STATUS_OK, STATUS_THRESHOLD_MISSED, STATUS_FAILED, STATUS_TIMEOUT,
            STATUS_UNSUPPORTED)

# which scheduler ran the workload (results.parquet's ``engine`` column)
ENGINE_CORE = "schedperf-core"  # scheduler_core, in this process
ENGINE_KUBE = "kube-scheduler"  # the real scheduler loop in the reference process
ENGINES = (ENGINE_CORE, ENGINE_KUBE)


@dataclass(frozen=True)
class DataItem:
    """One perf-dash DataItem: ``data`` buckets (Average, Perc50, ...), unit and labels
    (``Name``, ``Metric`` and the metric's own labels)."""

    data: dict[str, float]
    unit: str
    labels: dict[str, str]


@dataclass(frozen=True, slots=True)
class Placement:
    namespace: str
    pod: str
    node: str | None  # None if not scheduled
    attempts: int
    reason: str | None  # None if scheduled


@dataclass(frozen=True, slots=True)
class Decision:
    """One (scheduling attempt, node, plugin, extension point) actually evaluated."""

    namespace: str
    pod: str
    attempt: int
    node: str | None
    extension_point: str
    plugin: str
    code: str
    reason: str | None
    score: int | None
    normalized_score: int | None
    weighted_score: int | None
    selected: bool


@dataclass
class WorkloadResult:
    test_case: str
    workload: str
    topic: str
    params: dict[str, Any]
    labels: tuple[str, ...]
    status: str = STATUS_OK
    reason: str | None = None  # why failed / unsupported / timed out / threshold text
    data_items: list[DataItem] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    decisions: list[Decision] | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    ignored_feature_gates: tuple[str, ...] = ()
    seed: int = 0
    clock: str = "virtual"
    wall_seconds: float = 0.0  # whole workload, setup included
    measured_seconds: float = 0.0  # inside collection windows
    cpu_seconds: float = 0.0  # process user+sys over the measured windows
    peak_rss_bytes: int = 0
    harness_seconds: float = 0.0  # time in the harness (ops, collectors), not in the scheduler
    scheduled_pods: int = 0
    attempts: int = 0
    unschedulable_pods: int = 0
    ignored_pods: int = 0  # unknown schedulerName
    extra: dict[str, float] = field(default_factory=dict)
    # what the run went on without and says so (an ignorable extender's failures)
    warnings: list[str] = field(default_factory=list)
    # failure message -> pods left unscheduled with it when the workload ended
    unschedulable_reasons: dict[str, int] = field(default_factory=dict)
    # per collection window (its Name label): (seconds since the window opened, pods bound in
    # scope, scheduling attempts) at every throughput sample, for upstream-style .dat files
    progress_samples: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)
    virtual_seconds: float = 0.0  # virtual time the run took (0 with the real clock)
    engine: str = ENGINE_CORE  # one of ENGINES
    # the kube-scheduler engine: GOMAXPROCS of its Go process, the Kubernetes version and the
    # SHA-256 of the reference binary (None for scheduler_core)
    engine_gomaxprocs: int | None = None
    kubernetes_version: str | None = None
    reference_sha256: str | None = None

    @property
    def name(self) -> str:
        return f"{self.test_case}/{self.workload}"
