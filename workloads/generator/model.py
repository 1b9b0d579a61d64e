"""What the generator builds: its constants, the model of the nodes and pod groups it
chooses, and the outputs (:class:`Generated`, :class:`ScenarioInfo`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = [
    "CONFIG_FILE",
    "FEATURES",
    "LABELS",
    "TEMPLATE_DIR",
    "TOPIC",
    "Generated",
    "Group",
    "Node",
    "NodeGroup",
    "ScenarioInfo",
    "Spread",
    "cpu_text",
    "dump",
    "scenario_name",
]

TOPIC = "generated"
CONFIG_FILE = "performance-config.yaml"
LABELS = ("integration-test", "generated")
TEMPLATE_DIR = "templates"

ZONE_KEY = "topology.kubernetes.io/zone"
RACK_KEY = "topology.example.com/rack"
HOSTNAME_KEY = "kubernetes.io/hostname"
POOL_KEY = "node.example.com/pool"
CLASS_KEY = "node.example.com/class"
DEDICATED_KEY = "node.example.com/dedicated"
TAINT_KEY = "example.com/dedicated"
TAINT_VALUE = "infra"
GROUP_KEY = "gen.example.com/group"
ROLE_KEY = "gen.example.com/role"
GATE = "example.com/hold"
GPU = "example.com/gpu"
IMAGES = ("registry.example.com/gen/app-a:1.0", "registry.example.com/gen/app-b:2.1")
PAUSE = "registry.k8s.io/pause:3.10.1"
SECOND_PROFILE = "gen-secondary"
PRIORITY_PREFIX = "gen-priority-"  # classes -0 (low, fill), -1 (mid), -2 (high, preemptors)

# kind -> (cpu millicores, memory MiB, pods) per Index mod len
NODE_KINDS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "small": ((2000, 8192, 40),),
    "standard": ((4000, 16384, 110),),
    "large": ((16000, 65536, 110),),
    "mixed": ((8000, 32768, 110), (4000, 16384, 110), (2000, 8192, 64)),
}
MAX_PODS = 400  # workload pods per scenario, keeps a scenario well under a second
MIN_GROUP_CAP = 8  # a group confined to fewer slots drops the constraint that confines it
MAX_UNGATED = 60  # pods in a gated group that updateAny ungates
NEVER_FITS_CPU = "100"  # cores: more than any generated node

# every feature tag some scenario records (tests check each shows up across seeds)
FEATURES = (
    "zone-labels:template", "zone-labels:strategy", "racks", "taints:NoSchedule",
    "taints:NoExecute", "taints:PreferNoSchedule", "cordoned-nodes", "heterogeneous-nodes",
    "extended-resource", "node-images", "requests", "best-effort-pods", "init-containers",
    "sidecar", "overhead", "tolerations", "nodeSelector", "nodeAffinity:required",
    "nodeAffinity:preferred", "podAffinity:required", "podAffinity:preferred",
    "podAntiAffinity:required", "podAntiAffinity:preferred", "namespaceSelector",
    "matchLabelKeys", "hostPort", "spread:DoNotSchedule", "spread:ScheduleAnyway",
    "minDomains", "spread:nodeTaintsPolicy", "spread:nodeAffinityPolicy", "priorities",
    "globalDefault", "preemptionPolicy:Never", "preemption", "churn:create", "churn:recreate",
    "deletePods", "deletePods:rate", "scheduling-gates", "ungate:updateAny",
    "never-schedulable", "pod-groups:gang", "profiles:1", "profiles:2", "scoring:LeastAllocated",
    "scoring:MostAllocated", "scoring:RequestedToCapacityRatio", "percentageOfNodesToScore",
    "barrier:Scheduled", "barrier:all-namespaces", "barrier:Attempted", "skipWaitToCompletion",
    "collectMetrics", "startCollectingMetrics", "metricsCollectorConfig",
    "queueingHints:off", "sleep",
)


def scenario_name(seed: int, index: int) -> str:
    return f"Generated_{seed}_{index}"


@dataclass(frozen=True)
class ScenarioInfo:
    """What one scenario contains: its test case name, feature tags and the recorded
    choices (the comment lines above the test case)."""

    name: str
    seed: int
    index: int
    tags: frozenset[str]
    record: tuple[str, ...]
    nodes: int
    pods: int


@dataclass(frozen=True)
class Generated:
    """The output of :func:`generate`: ``files`` maps paths relative to the topic folder
    (``performance-config.yaml``, ``templates/...``) to their text, sorted by path."""

    seed: int
    count: int
    topic: str
    files: dict[str, str]
    scenarios: tuple[ScenarioInfo, ...]


@dataclass
class NodeGroup:
    name: str
    kind: str
    count: int = 0
    zone_strategy: bool = False  # zone label from labelNodePrepareStrategy, else template
    taint_tenths: int = 0  # Index mod 10 < taint_tenths: tainted (and labelled dedicated)
    taint_effect: str = "NoSchedule"
    cordon_every: int = 0  # Index mod cordon_every == cordon_every-1: spec.unschedulable
    gpus: int = 0  # extended resource via nodeAllocatableStrategy
    images: bool = False  # even Index: status.images
    fill: bool = False  # packed by low-priority fill pods (preemption)


@dataclass(frozen=True)
class Node:
    group: str
    kind: str
    zone: int
    rack: int
    host: int  # a unique number standing for the hostname
    cpu: int
    mem: int
    pods: int
    gpus: int
    tainted: bool
    effect: str
    cordoned: bool
    fill: bool


@dataclass
class Spread:
    key: str
    max_skew: int
    hard: bool
    min_domains: int | None = None
    affinity_policy: str | None = None  # Honor (default) | Ignore
    taints_policy: str | None = None  # Ignore (default) | Honor
    match_label_keys: bool = False


@dataclass
class Group:
    name: str
    namespace: str
    cpu: int = 0  # per-pod total of containers, millicores
    mem: int = 0  # MiB
    containers: int = 1
    init: str = ""  # "" | "init" | "sidecar"
    overhead: bool = False
    gpu: bool = False
    image: str = PAUSE
    toleration: str = "none"  # none | equal | exists | wrong-value | all
    selection: str = "none"  # none | selector-zone | selector-pool | in | notin | or | dedicated
    sel_zones: tuple[int, ...] = ()
    sel_pool: str = ""
    sel_racks: tuple[int, ...] = ()
    preferred_node: str = ""  # "" | zone | class
    required: str = ""  # "" | affinity | anti | hostport | spread
    required_key: str = ""
    spreads: list[Spread] = field(default_factory=list)
    soft_affinity: list[tuple[str, str, str, int]] = field(default_factory=list)
    ns_selector: bool = False
    match_label_keys: bool = False
    priority: str = ""
    scheduler: str = ""
    grace_zero: bool = False
    gated: bool = False
    ungate: bool = False
    port: int = 0
    count: int = 0
    cap: int = 10**9  # largest safe count
    relaxed: list[str] = field(default_factory=list)  # choices size_groups had to drop
    mode: str = "sync"  # sync | async
    gang: int = 0  # pods per PodGroup (gang policy, minCount all of them); 0: no pod groups

    @property
    def eff_cpu(self) -> int:
        extra = (self.cpu if self.init else 0) + (10 if self.overhead else 0)
        return self.cpu + extra  # upper bound of the effective request

    @property
    def eff_mem(self) -> int:
        return self.mem * (2 if self.init else 1) + (32 if self.overhead else 0)


def cpu_text(m: int) -> str:
    return f"{m // 1000}" if m % 1000 == 0 else f"{m}m"


def dump(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=1000)
