"""Random scheduler_perf scenarios that combine scheduling features at small scale.

    generate(seed, count) -> Generated   # pure: same seed and count -> byte-identical files

Scenario ``i`` of seed ``s`` is the test case ``Generated_<s>_<i>``; it depends only on
``(s, i)`` (its own ``random.Random``), so scenario 3 of ``--count 10`` equals scenario 3 of
``--count 4``. The files are relative to one topic folder (``generated/``):
``performance-config.yaml`` (one test case per scenario, each with a workloadTemplate and one
``integration-test``/``generated`` workload) and ``templates/generated-<s>-<i>-*.yaml`` (nodes,
pods, PriorityClasses, a namespace, churn objects, a KubeSchedulerConfiguration). A comment
above each test case records every feature choice, so a failing scenario can be read and
regenerated from its seed.

Every scenario is meant to finish with status ``ok``: each pod that some op waits for can be
placed. The generator models the nodes it creates (labels, taints, cordons, allocatable) and
sizes the pod groups conservatively:

* a node's *slots* = how many of the largest pod request it holds (0 for cordoned nodes and
  for the nodes filled by preemption victims); a group's usable nodes pass its node selection,
  tolerations and extended-resource needs and have a slot;
* all workload pods together fit in half of the slots of the smallest set any group can be
  confined to (its usable nodes; for required pod (anti-)affinity or a zone/rack
  DoNotSchedule spread, its smallest topology domain), so that set never fills up;
* per-group caps for the "at most k per domain" constraints: required anti-affinity and host
  ports (one per node or zone), DoNotSchedule spreading whose global minimum may stay 0
  (hostname, a domain without usable nodes, minDomains above the domain count), extended
  resources (shared by the groups requesting them); for per-node limits the nodes that the
  other pods could fill are subtracted;
* each group has at most one required placement constraint (required pod affinity, required
  anti-affinity, a host port or a DoNotSchedule spread; none with an extended resource), any
  number of soft ones; a choice that confines a group to too few slots is relaxed (required
  to preferred, then the extended resource, node selection, missing tolerations) and the
  comment says so;
* preemption only happens where it is planned: low-priority "fill" pods pack one node pool
  exactly, then high-priority preemptors (at most one per two pool nodes) evict some; no
  other group counts on the pool's capacity.

Pods that are never meant to schedule (scheduling-gated, or larger than every node) live in
their own namespaces, are waited for with ``barrier stageRequirement: Attempted`` and are left
out of every Scheduled barrier.
"""

from __future__ import annotations

import math
import random
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
    "ScenarioInfo",
    "generate",
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
    "never-schedulable", "profiles:1", "profiles:2", "scoring:LeastAllocated",
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


def generate(seed: int, count: int) -> Generated:
    """``count`` scenarios for ``seed``; raises ValueError for a negative seed or count < 1."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    header = (
        f"# Generated by `schedperf generate --seed {seed} --count {count}`: random feature\n"
        f"# combinations at small scale (workloads/generator.py). Scenario i is test case\n"
        f"# Generated_{seed}_<i>; the comment above each test case lists its feature choices.\n"
        "# Do not edit by hand: regenerate. Run: schedperf run --config <out> --label generated\n"
    )
    chunks = [header]
    files: dict[str, str] = {}
    infos = []
    for i in range(count):
        sc = _Scenario(seed, i)
        chunks.append(sc.config_text)
        files.update(sc.templates)
        infos.append(sc.info)
    files[CONFIG_FILE] = "\n".join(chunks)
    return Generated(seed, count, TOPIC, dict(sorted(files.items())), tuple(infos))


# --------------------------------------------------------------------------- the model


@dataclass
class _NodeGroup:
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
class _Node:
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
class _Spread:
    key: str
    max_skew: int
    hard: bool
    min_domains: int | None = None
    affinity_policy: str | None = None  # Honor (default) | Ignore
    taints_policy: str | None = None  # Ignore (default) | Honor
    match_label_keys: bool = False


@dataclass
class _Group:
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
    spreads: list[_Spread] = field(default_factory=list)
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
    relaxed: list[str] = field(default_factory=list)  # choices _budget had to drop
    mode: str = "sync"  # sync | async

    @property
    def eff_cpu(self) -> int:
        extra = (self.cpu if self.init else 0) + (10 if self.overhead else 0)
        return self.cpu + extra  # upper bound of the effective request

    @property
    def eff_mem(self) -> int:
        return self.mem * (2 if self.init else 1) + (32 if self.overhead else 0)


def _cpu(m: int) -> str:
    return f"{m // 1000}" if m % 1000 == 0 else f"{m}m"


def _dump(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=1000)


# --------------------------------------------------------------------------- one scenario


class _Scenario:
    """Builds one scenario from its own random stream; results in ``config_text``,
    ``templates`` and ``info``."""

    def __init__(self, seed: int, index: int) -> None:
        self.rng = random.Random(f"schedperf-generate/{seed}/{index}")
        self.seed, self.index = seed, index
        self.name = scenario_name(seed, index)
        self.prefix = f"generated-{seed}-{index}"
        self.tags: set[str] = set()
        self.record: list[str] = []
        self.templates: dict[str, str] = {}
        self.params: dict[str, int] = {}
        self.ops: list[dict[str, Any]] = []
        self._cluster()
        self._priorities_and_profiles()
        self._groups()
        self._budget()
        self._ops()
        self._finish()

    # ---------------------------------------------------------------- helpers
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def tag(self, *tags: str) -> None:
        self.tags.update(tags)

    def template(self, suffix: str, text: str) -> str:
        path = f"{TEMPLATE_DIR}/{self.prefix}-{suffix}.yaml"
        self.templates[path] = text
        return path

    # ---------------------------------------------------------------- nodes
    def _cluster(self) -> None:
        r = self.rng
        self.zones = r.choice((1, 2, 2, 3, 3, 4))
        self.racks = r.choice((1, 2, 3))
        if self.racks > 1:
            self.tag("racks")
        total = r.randint(20, 200)
        n_groups = r.choice((1, 2, 2, 3))
        kinds = ["standard", "mixed", "small", "large"]
        groups = []
        for k in range(n_groups):
            kind = r.choice(kinds[:2]) if k == 0 else r.choice(kinds)
            groups.append(_NodeGroup(name="abc"[k], kind=kind))
        sizes = self._split(total, n_groups, minimum=max(5, self.zones))
        for g, n in zip(groups, sizes, strict=True):
            g.count = n
            g.zone_strategy = self.chance(0.4)
            g.images = self.chance(0.3)
        if len({g.kind for g in groups}) > 1 or any(g.kind == "mixed" for g in groups):
            self.tag("heterogeneous-nodes")
        if self.chance(0.55):
            g = r.choice(groups)
            g.taint_tenths = r.randint(1, 5)
            g.taint_effect = r.choice(("NoSchedule", "NoSchedule", "NoExecute",
                                       "PreferNoSchedule"))
            self.tag(f"taints:{g.taint_effect}")
        if self.chance(0.3):
            g = r.choice(groups)
            g.cordon_every = r.randint(4, 10)
            self.tag("cordoned-nodes")
        if self.chance(0.3):
            g = r.choice(groups)
            g.gpus = r.choice((2, 4, 8))
            g.zone_strategy = False  # nodeAllocatableStrategy wins over the label strategy
            self.tag("extended-resource")
        for g in groups:
            self.tag("zone-labels:strategy" if g.zone_strategy else "zone-labels:template")
            if g.images:
                self.tag("node-images")
        self.node_groups = groups
        self.nodes = self._model_nodes()

    def _split(self, total: int, parts: int, minimum: int) -> list[int]:
        weights = [self.rng.uniform(0.5, 2.0) for _ in range(parts)]
        free = total - minimum * parts
        sizes = [minimum + int(free * w / sum(weights)) for w in weights]
        sizes[0] += total - sum(sizes)
        return sizes

    def _model_nodes(self) -> list[_Node]:
        out = []
        host = 0
        for g in self.node_groups:
            shapes = NODE_KINDS[g.kind]
            for i in range(g.count):
                cpu, mem, pods = shapes[i % len(shapes)]
                out.append(_Node(
                    group=g.name, kind=g.kind, zone=i % self.zones,
                    rack=i % (self.zones * self.racks), host=host, cpu=cpu, mem=mem, pods=pods,
                    gpus=g.gpus, tainted=i % 10 < g.taint_tenths, effect=g.taint_effect,
                    cordoned=bool(g.cordon_every) and i % g.cordon_every == g.cordon_every - 1,
                    fill=g.fill))
                host += 1
        return out

    def _node_template(self, g: _NodeGroup) -> str:
        rz = self.zones * self.racks
        shapes = NODE_KINDS[g.kind]
        lines = ["apiVersion: v1", "kind: Node", "metadata:", f"  generateName: node-{g.name}-",
                 "  labels:", f"    {POOL_KEY}: {g.name}", f"    {CLASS_KEY}: {g.kind}",
                 f"    {RACK_KEY}: rack-{{{{ mod .Index {rz} }}}}"]
        if not g.zone_strategy:
            lines.append(f"    {ZONE_KEY}: zone-{{{{ mod .Index {self.zones} }}}}")
        tainted = f"{{{{- if lt (mod .Index 10) {g.taint_tenths} }}}}"
        if g.taint_tenths:
            lines += [tainted, f'    {DEDICATED_KEY}: "true"', "{{- end }}"]
        lines.append("spec:")
        if g.cordon_every:
            c = g.cordon_every
            lines.append(f"  unschedulable: {{{{ if eq (mod .Index {c}) {c - 1} }}}}true"
                         "{{ else }}false{{ end }}")
        else:
            lines.append("  unschedulable: false")
        if g.taint_tenths:
            lines += [tainted, "  taints:", f"  - key: {TAINT_KEY}", f"    value: {TAINT_VALUE}",
                      f"    effect: {g.taint_effect}", "{{- end }}"]

        def by_index(values: list[str]) -> str:
            if len(set(values)) == 1:
                return f'"{values[0]}"'
            n = len(values)
            parts = [f"{{{{ if eq (mod .Index {n}) 0 }}}}{values[0]}"]
            parts += [f"{{{{ else if eq (mod .Index {n}) {k} }}}}{v}"
                      for k, v in enumerate(values[1:-1], 1)]
            parts.append(f"{{{{ else }}}}{values[-1]}{{{{ end }}}}")
            return '"' + "".join(parts) + '"'

        lines += ["status:", "  capacity:",
                  f"    cpu: {by_index([_cpu(s[0]) for s in shapes])}",
                  f"    memory: {by_index([f'{s[1]}Mi' for s in shapes])}",
                  f"    pods: {by_index([str(s[2]) for s in shapes])}",
                  "  conditions:", "  - type: Ready", '    status: "True"', "  phase: Running"]
        if g.images:
            lines += ["{{- if eq (mod .Index 2) 0 }}", "  images:"]
            for k, image in enumerate(IMAGES):
                lines += ["  - names:", f"    - {image}", f"    sizeBytes: {(k + 1) * 314572800}"]
            lines.append("{{- end }}")
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- priorities, profiles
    def _priorities_and_profiles(self) -> None:
        r = self.rng
        self.priorities = self.chance(0.5)
        self.global_default = self.priorities and self.chance(0.5)
        self.mid_never = self.priorities and self.chance(0.3)
        self.preemption = self.priorities and self.chance(0.6)
        if self.priorities:
            self.tag("priorities")
            notes = []
            if self.global_default:
                self.tag("globalDefault")
                notes.append(f"{PRIORITY_PREFIX}1 globalDefault")
            if self.mid_never:
                self.tag("preemptionPolicy:Never")
                notes.append(f"{PRIORITY_PREFIX}1 preemptionPolicy Never")
            self.record.append("priorities: PriorityClasses " + ", ".join(
                f"{PRIORITY_PREFIX}{k}={1000 * (k + 1)}" for k in range(3))
                + (f" ({'; '.join(notes)})" if notes else ""))
        if self.preemption:
            pools = [g for g in self.node_groups if g.kind != "mixed" and not g.gpus
                     and g.count - (g.count // g.cordon_every if g.cordon_every else 0) >= 2]
            others = [g for g in self.node_groups if g not in pools]
            if pools and (others or len(pools) > 1):
                pool = r.choice(pools)
                pool.fill = True
                self.nodes = self._model_nodes()
            else:
                self.preemption = False
        n_profiles = r.choice((0, 1, 2, 2))
        self.n_profiles = n_profiles
        self.schedulers = ["default-scheduler"] + ([SECOND_PROFILE] if n_profiles == 2 else [])
        self.profile_config: dict[str, Any] | None = None
        if n_profiles:
            self.tag(f"profiles:{n_profiles}")
            self.profile_config = self._scheduler_config(n_profiles)

    def _scheduler_config(self, n: int) -> dict[str, Any]:
        r = self.rng
        cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                               "kind": "KubeSchedulerConfiguration"}
        if self.chance(0.3):
            cfg["percentageOfNodesToScore"] = r.choice((5, 30, 70))
            self.tag("percentageOfNodesToScore")
        if self.chance(0.4):
            cfg["podInitialBackoffSeconds"] = 1
            cfg["podMaxBackoffSeconds"] = r.choice((1, 2, 5))
        profiles = []
        notes = []
        for k in range(n):
            name = self.schedulers[k]
            strategy = r.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
            self.tag(f"scoring:{strategy}")
            ss: dict[str, Any] = {"type": strategy, "resources": [
                {"name": "cpu", "weight": r.randint(1, 3)},
                {"name": "memory", "weight": r.randint(1, 3)}]}
            if strategy == "RequestedToCapacityRatio":
                ss["requestedToCapacityRatio"] = {"shape": r.choice((
                    [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                    [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
                    [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10},
                     {"utilization": 100, "score": 2}]))}
            prof: dict[str, Any] = {"schedulerName": name}
            plugins: dict[str, Any] = {}
            weights = [{"name": p, "weight": r.randint(1, 5)}
                       for p in ("TaintToleration", "NodeAffinity", "PodTopologySpread",
                                 "InterPodAffinity") if self.chance(0.3)]
            if weights:
                plugins["multiPoint"] = {"enabled": weights}
            disabled = [p for p in ("NodeResourcesBalancedAllocation", "ImageLocality")
                        if self.chance(0.25)]
            if disabled:
                plugins["score"] = {"disabled": [{"name": p} for p in disabled]}
            if plugins:
                prof["plugins"] = plugins
            prof["pluginConfig"] = [{"name": "NodeResourcesFit",
                                     "args": {"scoringStrategy": ss}}]
            profiles.append(prof)
            pairs = ", ".join(f"{w['name']}={w['weight']}" for w in weights)
            notes.append(f"{name}: {strategy}" + (f", weights {pairs}" if weights else "")
                         + (f", score disabled {'/'.join(disabled)}" if disabled else ""))
        cfg["profiles"] = profiles
        extra = ", ".join(f"{k}={cfg[k]}" for k in ("percentageOfNodesToScore",
                                                     "podInitialBackoffSeconds",
                                                     "podMaxBackoffSeconds") if k in cfg)
        self.record.append(f"profiles ({n}): " + "; ".join(notes)
                           + (f" [{extra}]" if extra else ""))
        return cfg

    # ---------------------------------------------------------------- pod groups
    def _groups(self) -> None:
        r = self.rng
        n = r.randint(2, 5)
        self.groups = [self._group(k) for k in range(n)]
        if self.chance(0.35):
            g = r.choice(self.groups)
            g.gated = True
            g.ungate = self.chance(0.6)
            g.mode = "async"
            self.tag("scheduling-gates")
            if g.ungate:
                self.tag("ungate:updateAny")
        self.never_fits = r.randint(1, 4) if self.chance(0.3) else 0
        if self.never_fits:
            self.tag("never-schedulable")

    def _group(self, k: int) -> _Group:
        r = self.rng
        name = f"p{k}"
        g = _Group(name=name, namespace=f"group-{name}")
        if not self.chance(0.15):
            g.cpu = r.choice((10, 50, 100, 100, 200, 250, 400))
            g.mem = r.choice((0, 32, 64, 128, 256, 512))
        g.containers = 2 if g.cpu and self.chance(0.2) else 1
        if g.cpu and self.chance(0.2):
            g.init = r.choice(("init", "sidecar"))
        g.overhead = self.chance(0.1)
        if any(ng.gpus for ng in self.node_groups) and self.chance(0.4):
            g.gpu = True
        if any(ng.images for ng in self.node_groups) and self.chance(0.6):
            g.image = r.choice(IMAGES)
        tainted = [ng for ng in self.node_groups if ng.taint_tenths]
        if self.chance(0.5 if tainted else 0.15):
            g.toleration = r.choice(("equal", "exists", "all", "wrong-value"))
        sel = r.choice(("none", "none", "selector-zone", "selector-pool", "in", "notin", "or",
                        "dedicated"))
        if sel == "dedicated" and not (tainted and g.toleration in ("equal", "exists", "all")):
            sel = "in"
        if sel in ("selector-zone", "in", "notin") and self.zones == 1:
            sel = "selector-pool"
        g.selection = sel
        g.sel_zones = tuple(sorted(r.sample(range(self.zones), r.randint(
            1, max(1, self.zones - 1))))) if self.zones > 1 else (0,)
        g.sel_pool = r.choice(self.node_groups).name
        racks = self.zones * self.racks
        g.sel_racks = tuple(sorted(r.sample(range(racks), max(1, racks // 2))))
        if self.chance(0.3):
            g.preferred_node = r.choice(("zone", "class"))
        g.required = r.choice(("", "", "affinity", "anti", "hostport", "spread", "spread"))
        keys = [HOSTNAME_KEY, ZONE_KEY] + ([RACK_KEY] if self.racks > 1 else [])
        g.required_key = r.choice(keys)
        if g.required == "hostport":
            g.port = 8000 + k
            g.required_key = HOSTNAME_KEY
        if g.required == "affinity" and g.required_key == HOSTNAME_KEY:
            g.required_key = ZONE_KEY
        if g.required == "spread":
            g.spreads.append(self._spread(g.required_key, hard=True))
        soft_keys = r.sample(keys, r.choice((0, 0, 1, 2)))  # (key, when) pairs must be unique
        g.spreads += [self._spread(key, hard=False) for key in soft_keys]
        for _ in range(r.choice((0, 0, 1, 2))):
            kind = r.choice(("affinity", "anti"))
            target = r.choice([f"p{j}" for j in range(k + 1)])
            g.soft_affinity.append((kind, r.choice(keys), target, r.randint(1, 100)))
        g.ns_selector = self.chance(0.2)
        g.match_label_keys = self.chance(0.2)
        if self.priorities and self.chance(0.6):
            g.priority = f"{PRIORITY_PREFIX}{r.randint(0, 2)}"
        if len(self.schedulers) > 1 and self.chance(0.5):
            g.scheduler = SECOND_PROFILE
        g.grace_zero = self.chance(0.5)
        g.mode = r.choice(("sync", "async"))
        return g

    def _spread(self, key: str, hard: bool) -> _Spread:
        r = self.rng
        s = _Spread(key=key, max_skew=r.choice((1, 1, 2, 3, 5)), hard=hard)
        if hard and self.chance(0.4):
            s.min_domains = r.randint(1, {ZONE_KEY: self.zones + 1,
                                          RACK_KEY: self.zones * self.racks + 1}.get(key, 8))
        if self.chance(0.25):
            s.affinity_policy = r.choice(("Honor", "Ignore"))
        if self.chance(0.25):
            s.taints_policy = r.choice(("Honor", "Ignore"))
        s.match_label_keys = self.chance(0.15)
        return s

    # ---------------------------------------------------------------- feasibility
    def _selected(self, g: _Group, n: _Node) -> bool:
        sel = g.selection
        if sel == "selector-zone":
            return n.zone == g.sel_zones[0]
        if sel == "selector-pool":
            return n.group == g.sel_pool
        if sel == "in":
            return n.zone in g.sel_zones
        if sel == "notin":
            return n.zone != g.sel_zones[0]
        if sel == "or":
            return n.group == g.sel_pool or n.rack in g.sel_racks
        if sel == "dedicated":
            return n.tainted
        return True

    def _tolerated(self, g: _Group, n: _Node) -> bool:
        if not n.tainted or n.effect == "PreferNoSchedule":
            return True
        return g.toleration in ("equal", "exists", "all")

    def _budget(self) -> None:
        """Downgrade constraints until every group has room, then size the groups."""
        groups = [g for g in self.groups if not g.gated or g.ungate]
        max_cpu = max((g.eff_cpu for g in groups), default=0)
        max_mem = max((g.eff_mem for g in groups), default=0)
        self.slots: dict[int, int] = {}
        for n in self.nodes:
            s = n.pods - 4  # room for churn pods
            if max_cpu:
                s = min(s, n.cpu // max_cpu)
            if max_mem:
                s = min(s, n.mem // max_mem)
            self.slots[n.host] = 0 if (n.cordoned or n.fill) else max(0, s)
        for g in groups:  # extended-resource pods never also carry a required constraint
            if g.gpu and (g.required or any(s.hard for s in g.spreads)):
                self._downgrade(g)
        for _ in range(6 * len(groups)):
            limits = {g.name: self._confine(g) for g in groups}
            tightest = min(limits, key=lambda name: limits[name])
            if limits[tightest] // 2 >= max(MIN_GROUP_CAP, 3 * len(groups)):
                break
            self._downgrade(next(g for g in groups if g.name == tightest))
        t_max = max(len(groups), min([MAX_PODS] + [self._confine(g) // 2 for g in groups]))
        self.churn = self._churn_plan(room=t_max - len(groups))
        total = self.rng.randint(max(len(groups) + self.churn_pods, t_max // 3), t_max)
        for g in groups:
            g.cap = max(1, self._group_cap(g, total))
            if g.gated:  # named pods, rendered and parsed one by one twice (create, update)
                g.cap = min(g.cap, MAX_UNGATED)
        budget = total - self.churn_pods
        for g in groups:
            g.count = 1
        left = budget - len(groups)
        for _ in range(left):
            open_groups = [g for g in groups if g.count < g.cap]
            if not open_groups:
                break
            self.rng.choice(open_groups).count += 1
        for g in self.groups:
            if g.gated and not g.ungate:
                g.count = self.rng.randint(1, 20)

    def _usable(self, g: _Group) -> list[_Node]:
        return [n for n in self.nodes if self.slots[n.host] > 0 and self._selected(g, n)
                and self._tolerated(g, n) and (n.gpus > 0 or not g.gpu)]

    def _domain(self, key: str, n: _Node) -> int:
        return {ZONE_KEY: n.zone, RACK_KEY: n.rack}.get(key, n.host)

    def _cap(self, nodes: list[_Node]) -> int:
        return sum(self.slots[n.host] for n in nodes)

    def _confine(self, g: _Group) -> int:
        """Slots of the smallest node set the group's pods may all end up in."""
        usable = self._usable(g)
        if not usable:
            return 0
        if g.gpu:
            return self._cap(usable)
        key = ""
        if g.required in ("affinity", "anti") and g.required_key != HOSTNAME_KEY:
            key = g.required_key
        hard = [s for s in g.spreads if s.hard and s.key != HOSTNAME_KEY]
        if hard:
            key = hard[0].key
        if not key:
            return self._cap(usable)
        domains: dict[int, list[_Node]] = {}
        for n in usable:
            domains.setdefault(self._domain(key, n), []).append(n)
        return min(self._cap(d) for d in domains.values())

    def _group_cap(self, g: _Group, total: int) -> int:
        """The largest safe pod count of ``g`` when ``total`` pods are placed in all."""
        usable = self._usable(g)
        s_min = min((self.slots[n.host] for n in usable), default=1)
        full = math.ceil(total / s_min)  # nodes the pods may fill up
        cap = 10**9
        if g.gpu:  # gpu groups share the extended resource and have no required constraint
            sharing = sum(1 for x in self.groups if x.gpu and (x.ungate or not x.gated))
            cap = min(sum(n.gpus for n in usable), len(usable) - full) // (2 * sharing)
        if g.required in ("anti", "hostport"):
            if g.required_key == HOSTNAME_KEY:
                cap = min(cap, (len(usable) - full) // 2)
            else:
                cap = min(cap, len({self._domain(g.required_key, n) for n in usable}))
        for s in g.spreads:
            if not s.hard:
                continue
            if s.key == HOSTNAME_KEY:
                cap = min(cap, s.max_skew * (len(usable) - full) // 2)
                continue
            counted = {self._domain(s.key, n) for n in self.nodes
                       if (s.affinity_policy == "Ignore" or self._selected(g, n))
                       and (s.taints_policy != "Honor" or self._tolerated(g, n))}
            live = {self._domain(s.key, n) for n in usable}
            if live < counted or (s.min_domains or 1) > len(counted):
                cap = min(cap, s.max_skew * len(live))
        return cap

    def _downgrade(self, g: _Group) -> None:
        """Relax the group's most confining choice: required constraint, selection, gpu."""
        if g.required or any(s.hard for s in g.spreads):
            if g.gpu:
                g.gpu = False
                g.relaxed.append(GPU)
                return
            g.relaxed.append(f"required {g.required} on {g.required_key}")
            if g.required in ("affinity", "anti"):
                g.soft_affinity.append((g.required, g.required_key, g.name, 50))
            g.required, g.port = "", 0
            soft_keys = {s.key for s in g.spreads if not s.hard}
            g.spreads = [s for s in g.spreads if not s.hard or s.key not in soft_keys]
            for s in g.spreads:
                s.hard, s.min_domains = False, None
        elif g.gpu:
            g.gpu = False
            g.relaxed.append(GPU)
        elif g.selection != "none":
            g.relaxed.append(f"node selection {g.selection}")
            g.selection = "none"
        elif g.toleration in ("none", "wrong-value"):
            g.relaxed.append(f"toleration {g.toleration} (now all)")
            g.toleration = "all"

    # ---------------------------------------------------------------- churn
    def _churn_plan(self, room: int) -> dict[str, Any] | None:
        """Background churn; at most ``room`` churn pods exist at any time."""
        r = self.rng
        self.churn_pods = 0
        if not self.chance(0.4):
            return None
        mode = r.choice(("create", "recreate"))
        kinds = sorted(r.sample(("node", "pod", "service"), r.randint(1, 3)))
        number = r.randint(1, 10)
        if "pod" in kinds and room < number:
            kinds = [k for k in kinds if k != "pod"] or ["service"]
        if "pod" in kinds:
            self.churn_pods = number
        self.tag(f"churn:{mode}")
        return {"mode": mode, "kinds": kinds, "number": number,
                "interval": r.choice((100, 200, 500, 1000))}

    def _churn_templates(self, kinds: list[str]) -> list[str]:
        paths = []
        for kind in kinds:
            if kind == "node":
                obj: dict[str, Any] = {
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"generateName": "node-churn-"},
                    "status": {"capacity": {"pods": "0"},
                               "conditions": [{"type": "Ready", "status": "True"}],
                               "phase": "Running"}}
            elif kind == "pod":
                obj = {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"generateName": "pod-churn-"},
                       "spec": {"terminationGracePeriodSeconds": 0,
                                "containers": [{"name": "pause", "image": PAUSE}]}}
            else:
                target = self.rng.choice([g.name for g in self.groups] + ["none"])
                obj = {"apiVersion": "v1", "kind": "Service",
                       "metadata": {"generateName": "service-churn-"},
                       "spec": {"selector": {GROUP_KEY: target},
                                "ports": [{"protocol": "TCP", "port": 8080,
                                           "targetPort": 8080}]}}
            paths.append(self.template(f"churn-{kind}", _dump(obj)))
        return paths

    # ---------------------------------------------------------------- pod manifests
    def _term(self, key: str, target: str, g: _Group) -> dict[str, Any]:
        term: dict[str, Any] = {"labelSelector": {"matchLabels": {GROUP_KEY: target}},
                                "topologyKey": key}
        if g.ns_selector:
            term["namespaceSelector"] = {}
            self.tag("namespaceSelector")
        if g.match_label_keys and target == g.name:
            term["matchLabelKeys"] = [GROUP_KEY]
            self.tag("matchLabelKeys")
        return term

    def _pod(self, g: _Group, *, named: bool = False, gates: bool = False) -> dict[str, Any]:
        meta: dict[str, Any] = ({"name": f"{g.name}-{{{{ .Index }}}}"} if named
                                else {"generateName": f"{g.name}-"})
        meta["labels"] = {GROUP_KEY: g.name, ROLE_KEY: "workload"}
        spec: dict[str, Any] = {}
        if g.scheduler:
            spec["schedulerName"] = g.scheduler
        if g.priority:
            spec["priorityClassName"] = g.priority
        if g.grace_zero:
            spec["terminationGracePeriodSeconds"] = 0
        if gates:
            spec["schedulingGates"] = [{"name": GATE}]
        zone_names = [f"zone-{z}" for z in g.sel_zones]
        if g.selection == "selector-zone":
            spec["nodeSelector"] = {ZONE_KEY: zone_names[0]}
            self.tag("nodeSelector")
        elif g.selection == "selector-pool":
            spec["nodeSelector"] = {POOL_KEY: g.sel_pool}
            self.tag("nodeSelector")
        affinity: dict[str, Any] = {}
        terms = None
        if g.selection == "in":
            terms = [{"matchExpressions": [{"key": ZONE_KEY, "operator": "In",
                                            "values": zone_names}]}]
        elif g.selection == "notin":
            terms = [{"matchExpressions": [{"key": ZONE_KEY, "operator": "NotIn",
                                            "values": zone_names[:1]}]}]
        elif g.selection == "or":
            terms = [{"matchExpressions": [{"key": POOL_KEY, "operator": "In",
                                            "values": [g.sel_pool]}]},
                     {"matchExpressions": [{"key": RACK_KEY, "operator": "In",
                                            "values": [f"rack-{k}" for k in g.sel_racks]}]}]
        elif g.selection == "dedicated":
            terms = [{"matchExpressions": [{"key": DEDICATED_KEY, "operator": "Exists"}]}]
        node_aff: dict[str, Any] = {}
        if terms:
            node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": terms}
            self.tag("nodeAffinity:required")
        if g.preferred_node:
            expr = ({"key": ZONE_KEY, "operator": "In", "values": ["zone-0"]}
                    if g.preferred_node == "zone"
                    else {"key": CLASS_KEY, "operator": "In", "values": ["large", "standard"]})
            node_aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": 10, "preference": {"matchExpressions": [expr]}}]
            self.tag("nodeAffinity:preferred")
        if node_aff:
            affinity["nodeAffinity"] = node_aff
        for kind, api_key in (("affinity", "podAffinity"), ("anti", "podAntiAffinity")):
            block: dict[str, Any] = {}
            label = "podAffinity" if kind == "affinity" else "podAntiAffinity"
            if g.required == kind:
                block["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self._term(g.required_key, g.name, g)]
                self.tag(f"{label}:required")
            soft = [{"weight": w, "podAffinityTerm": self._term(key, target, g)}
                    for k, key, target, w in g.soft_affinity if k == kind]
            if soft:
                block["preferredDuringSchedulingIgnoredDuringExecution"] = soft
                self.tag(f"{label}:preferred")
            if block:
                affinity[api_key] = block
        if affinity:
            spec["affinity"] = affinity
        tol = {"equal": {"key": TAINT_KEY, "operator": "Equal", "value": TAINT_VALUE},
               "exists": {"key": TAINT_KEY, "operator": "Exists"},
               "all": {"operator": "Exists"},
               "wrong-value": {"key": TAINT_KEY, "operator": "Equal", "value": "other"},
               }.get(g.toleration)
        if tol is not None:
            spec["tolerations"] = [tol]
            self.tag("tolerations")
        if g.spreads:
            spec["topologySpreadConstraints"] = [self._spread_manifest(s, g) for s in g.spreads]
        if g.overhead:
            spec["overhead"] = {"cpu": "10m", "memory": "32Mi"}
            self.tag("overhead")
        self.tag("requests" if g.cpu or g.mem else "best-effort-pods")
        requests: dict[str, str] = {}
        if g.cpu:
            requests["cpu"] = _cpu(g.cpu // g.containers)
        if g.mem:
            requests["memory"] = f"{g.mem // g.containers}Mi"
        if g.init:
            init: dict[str, Any] = {"name": "init", "image": PAUSE,
                                    "resources": {"requests": dict(requests)}}
            if g.init == "sidecar":
                init["restartPolicy"] = "Always"
            self.tag("init-containers" if g.init == "init" else "sidecar")
            spec["initContainers"] = [init]
        containers = []
        for c in range(g.containers):
            container: dict[str, Any] = {"name": f"app-{c}", "image": g.image}
            res = dict(requests)
            if g.gpu and c == 0:
                res[GPU] = "1"
            if res:
                container["resources"] = {"requests": res}
            if g.port and c == 0:
                container["ports"] = [{"containerPort": 8080, "hostPort": g.port}]
                self.tag("hostPort")
            containers.append(container)
        spec["containers"] = containers
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _spread_manifest(self, s: _Spread, g: _Group) -> dict[str, Any]:
        m: dict[str, Any] = {"maxSkew": s.max_skew, "topologyKey": s.key,
                             "whenUnsatisfiable": "DoNotSchedule" if s.hard else "ScheduleAnyway",
                             "labelSelector": {"matchLabels": {GROUP_KEY: g.name}}}
        self.tag("spread:DoNotSchedule" if s.hard else "spread:ScheduleAnyway")
        if s.hard and s.min_domains is not None:
            m["minDomains"] = s.min_domains
            self.tag("minDomains")
        if s.affinity_policy:
            m["nodeAffinityPolicy"] = s.affinity_policy
            self.tag("spread:nodeAffinityPolicy")
        if s.taints_policy:
            m["nodeTaintsPolicy"] = s.taints_policy
            self.tag("spread:nodeTaintsPolicy")
        if s.match_label_keys:
            m["matchLabelKeys"] = [GROUP_KEY]
            self.tag("matchLabelKeys")
        return m

    def _describe(self, g: _Group) -> str:
        parts = [f"{g.count} pods in {g.namespace}",
                 {"sync": "waited for", "async": "skipWaitToCompletion"}[g.mode]]
        parts.append(f"requests {_cpu(g.cpu) if g.cpu else '-'} cpu/"
                     f"{g.mem or '-'}Mi x{g.containers} container(s)"
                     + (f" + {g.init}" if g.init else "") + (" + overhead" if g.overhead else "")
                     + (f" + 1 {GPU}" if g.gpu else ""))
        if g.toleration != "none":
            parts.append(f"toleration {g.toleration}")
        if g.selection != "none":
            parts.append(f"node selection {g.selection} (zones {list(g.sel_zones)}, pool "
                         f"{g.sel_pool}, racks {list(g.sel_racks)})")
        if g.preferred_node:
            parts.append(f"preferred node affinity on {g.preferred_node}")
        if g.required in ("affinity", "anti"):
            kind = "affinity" if g.required == "affinity" else "anti-affinity"
            parts.append(f"required pod {kind} on {g.required_key}")
        if g.port:
            parts.append(f"hostPort {g.port}")
        for s in g.spreads:
            parts.append(f"spread {s.key} maxSkew {s.max_skew} "
                         f"{'DoNotSchedule' if s.hard else 'ScheduleAnyway'}"
                         + (f" minDomains {s.min_domains}" if s.min_domains else "")
                         + (f" nodeAffinityPolicy {s.affinity_policy}" if s.affinity_policy
                            else "")
                         + (f" nodeTaintsPolicy {s.taints_policy}" if s.taints_policy else "")
                         + (" matchLabelKeys" if s.match_label_keys else ""))
        for kind, key, target, w in g.soft_affinity:
            parts.append(f"preferred pod {'affinity' if kind == 'affinity' else 'anti-affinity'}"
                         f" to {target} on {key} weight {w}")
        if g.ns_selector:
            parts.append("namespaceSelector {}")
        for flag, text in ((g.priority, f"priorityClassName {g.priority}"),
                           (g.scheduler, f"schedulerName {g.scheduler}"),
                           (g.grace_zero, "terminationGracePeriodSeconds 0"),
                           (g.gated, "scheduling gate" + (", ungated by updateAny" if g.ungate
                                                          else ", never ungated")),
                           (g.image != PAUSE, f"image {g.image}")):
            if flag:
                parts.append(text)
        if g.relaxed:
            parts.append(f"relaxed to fit: {', '.join(g.relaxed)}")
        return f"group {g.name}: " + "; ".join(parts)

    # ---------------------------------------------------------------- ops
    def _ops(self) -> None:
        r = self.rng
        ops = self.ops
        if self.priorities:
            pc = ["apiVersion: scheduling.k8s.io/v1", "kind: PriorityClass", "metadata:",
                  f"  name: {PRIORITY_PREFIX}{{{{ .Index }}}}",
                  "value: {{ MultiplyInt (AddInt .Index 1) 1000 }}"]
            if self.global_default:
                pc.append("globalDefault: {{ eq .Index 1 }}")
            if self.mid_never:
                pc.append("preemptionPolicy: {{ if eq .Index 1 }}Never{{ else }}"
                          "PreemptLowerPriority{{ end }}")
            pc.append("description: generated by schedperf generate")
            ops.append({"opcode": "createAny", "templatePath": self.template(
                "priorityclass", "\n".join(pc) + "\n"), "count": 3})
        if any(g.ns_selector for g in self.groups):
            ns = {"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"labels": {"team": "generated"}}}
            ops.append({"opcode": "createNamespaces", "prefix": "team",
                        "count": len(self.groups),
                        "namespaceTemplatePath": self.template("namespace", _dump(ns))})
            for k, g in enumerate(self.groups):
                g.namespace = f"team-{k}"
        node_notes = []
        for ng in self.node_groups:
            param = f"nodes{ng.name.upper()}"
            self.params[param] = ng.count
            op: dict[str, Any] = {"opcode": "createNodes", "countParam": f"${param}",
                                  "nodeTemplatePath": self.template(f"node-{ng.name}",
                                                                    self._node_template(ng))}
            if ng.gpus:
                op["nodeAllocatableStrategy"] = {"nodeAllocatable": {GPU: str(ng.gpus)}}
            elif ng.zone_strategy:
                op["labelNodePrepareStrategy"] = {
                    "labelKey": ZONE_KEY, "labelValues": [f"zone-{z}" for z in range(self.zones)]}
            ops.append(op)
            node_notes.append(
                f"{ng.name}: {ng.count} {ng.kind}"
                + (" (zone by labelNodePrepareStrategy)" if ng.zone_strategy else "")
                + (f", {ng.taint_tenths}0% tainted {ng.taint_effect}" if ng.taint_tenths else "")
                + (f", 1 in {ng.cordon_every} cordoned" if ng.cordon_every else "")
                + (f", {ng.gpus} {GPU}" if ng.gpus else "")
                + (", images on even nodes" if ng.images else "")
                + (", preemption pool" if ng.fill else ""))
        self.record.insert(0, f"nodes: {len(self.nodes)} in {self.zones} zone(s) x "
                              f"{self.racks} rack(s) per zone; " + "; ".join(node_notes))
        churn_at = r.choice(("early", "late")) if self.churn else ""
        if churn_at == "early":
            self._churn_op()
        if self.preemption:
            self._preemption_ops()
        self._group_ops()
        if churn_at == "late":
            self._churn_op()
        if self.chance(0.25):
            ops.append({"opcode": "sleep", "duration": r.choice(("500ms", "1s", "2s"))})
            self.tag("sleep")

    def _churn_op(self) -> None:
        c = self.churn
        assert c is not None
        self.ops.append({"opcode": "churn", "mode": c["mode"], "number": c["number"],
                         "intervalMilliseconds": c["interval"], "namespace": "churn",
                         "templatePaths": self._churn_templates(c["kinds"])})
        self.record.append(f"churn: {c['mode']} {'/'.join(c['kinds'])} number {c['number']} "
                           f"every {c['interval']}ms")

    def _preemption_ops(self) -> None:
        r = self.rng
        pool = next(ng for ng in self.node_groups if ng.fill)
        nodes = [n for n in self.nodes if n.fill and not n.cordoned]
        cpu = NODE_KINDS[pool.kind][0][0]
        per_node = r.randint(2, 4)
        fill_cpu = cpu * 9 // 10 // per_node
        evict = r.randint(1, per_node - 1)
        preemptors = r.randint(1, max(1, len(nodes) // 2))
        self.tag("preemption")
        fill = self._simple_pod("fill", fill_cpu, f"{PRIORITY_PREFIX}0", pool.name)
        high = self._simple_pod("preemptor", fill_cpu * evict, f"{PRIORITY_PREFIX}2", pool.name)
        self.params["fillPods"] = per_node * len(nodes)
        self.params["preemptorPods"] = preemptors
        self.ops += [
            {"opcode": "createPods", "countParam": "$fillPods", "namespace": "fill",
             "podTemplatePath": self.template("pod-fill", _dump(fill))},
            {"opcode": "createPods", "countParam": "$preemptorPods", "namespace": "preemptors",
             "podTemplatePath": self.template("pod-preemptor", _dump(high))}]
        self.record.append(f"preemption: {per_node} fill pods x {_cpu(fill_cpu)} cpu "
                           f"({PRIORITY_PREFIX}0) on each of {len(nodes)} pool {pool.name} "
                           f"nodes, then {preemptors} preemptors x {_cpu(fill_cpu * evict)} "
                           f"({PRIORITY_PREFIX}2)")
        if self.chance(0.3):
            self._delete_op("fill", "fill")

    def _simple_pod(self, name: str, cpu: int, priority: str, pool: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": f"{name}-", "labels": {ROLE_KEY: name}},
                "spec": {"priorityClassName": priority, "terminationGracePeriodSeconds": 0,
                         "nodeSelector": {POOL_KEY: pool}, "tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "pause", "image": PAUSE, "resources": {
                             "requests": {"cpu": _cpu(cpu), "memory": "64Mi"}}}]}}

    def _delete_op(self, namespace: str, role: str, group: str = "") -> None:
        op: dict[str, Any] = {"opcode": "deletePods", "namespace": namespace,
                              "labelSelector": {GROUP_KEY: group} if group else {ROLE_KEY: role}}
        self.tag("deletePods")
        if self.chance(0.5):
            op["deletePodsPerSecond"] = self.rng.choice((10, 50, 200))
            op["skipWaitToCompletion"] = self.chance(0.5)
            self.tag("deletePods:rate")
        self.ops.append(op)

    def _group_ops(self) -> None:
        r = self.rng
        ops = self.ops
        order = list(self.groups)
        r.shuffle(order)
        use_window = self.chance(0.35)
        sync = [g for g in order if g.mode == "sync" and not g.gated]
        measured = None
        if not use_window:
            if not sync:
                candidates = [g for g in order if not g.gated]
                candidates[0].mode = "sync"
                sync = [candidates[0]]
            measured = r.choice(sync)
            self.tag("collectMetrics")
        for g in order:
            self.record.append(self._describe(g) + ("; collectMetrics" if g is measured else ""))
        window_ns = [g.namespace for g in order if not g.gated or g.ungate]
        if use_window:
            start: dict[str, Any] = {"opcode": "startCollectingMetrics", "name": "generated",
                                     "namespaces": window_ns}
            if self.chance(0.3):
                start["labelSelector"] = {ROLE_KEY: "workload"}
            if self.chance(0.3):
                start["collectors"] = sorted(r.sample(
                    ("Throughput", "Metrics", "Memory", "SchedulingDuration"), r.randint(1, 3)))
            ops.append(start)
            self.tag("startCollectingMetrics")
        pending: list[str] = []  # async namespaces not yet behind a Scheduled barrier
        stuck = False  # a namespace that never schedules is known to the harness
        done: list[_Group] = []
        never_at = r.randint(0, len(order)) if self.never_fits else -1
        for pos, g in enumerate(order):
            if pos == never_at:
                stuck = self._never_fits_ops() or stuck
            param = f"pods{g.name.upper()}"
            self.params[param] = g.count
            named = g.gated and g.ungate
            op: dict[str, Any] = {"opcode": "createPods", "countParam": f"${param}",
                                  "namespace": g.namespace,
                                  "podTemplatePath": self.template(
                                      f"pod-{g.name}", _dump(self._pod(g, named=named,
                                                                       gates=g.gated)))}
            if g is measured:
                op["collectMetrics"] = True
            if g.mode == "async":
                op["skipWaitToCompletion"] = True
                self.tag("skipWaitToCompletion")
            ops.append(op)
            if g.gated:
                ops.append({"opcode": "barrier", "namespaces": [g.namespace],
                            "stageRequirement": "Attempted"})
                self.tag("barrier:Attempted")
                if g.ungate:
                    update: dict[str, Any] = {
                        "opcode": "updateAny", "namespace": g.namespace, "countParam": f"${param}",
                        "templatePath": self.template(f"pod-{g.name}-ungated",
                                                      _dump(self._pod(g, named=True)))}
                    if self.chance(0.5):
                        update["updatePerSecond"] = r.choice((20, 100))
                    ops.append(update)
                    pending.append(g.namespace)
                else:
                    stuck = True
            elif g.mode == "async":
                pending.append(g.namespace)
            else:
                done.append(g)
            if pending and (pos == len(order) - 1 or self.chance(0.4)):
                self._barrier(pending, stuck)
                done += [x for x in order if x.namespace in pending]
                pending = []
            if done and self.chance(0.15):
                victim = r.choice(done)
                self._delete_op(victim.namespace, "", victim.name)
                done.remove(victim)
        if never_at == len(order):
            self._never_fits_ops()
        if use_window:
            ops.append({"opcode": "stopCollectingMetrics"})

    def _barrier(self, namespaces: list[str], stuck: bool) -> None:
        if not stuck and self.chance(0.4):
            self.ops.append({"opcode": "barrier"})
            self.tag("barrier:all-namespaces")
        else:
            op: dict[str, Any] = {"opcode": "barrier", "namespaces": list(namespaces)}
            if self.chance(0.3):
                op["stageRequirement"] = "Scheduled"
            self.ops.append(op)
        self.tag("barrier:Scheduled")

    def _never_fits_ops(self) -> bool:
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": "huge-", "labels": {ROLE_KEY: "never-fits"}},
               "spec": {"containers": [{"name": "pause", "image": PAUSE, "resources": {
                   "requests": {"cpu": NEVER_FITS_CPU, "memory": "1Gi"}}}]}}
        if self.priorities:
            pod["spec"]["priorityClassName"] = f"{PRIORITY_PREFIX}2"
        self.params["neverFitPods"] = self.never_fits
        self.ops += [{"opcode": "createPods", "countParam": "$neverFitPods",
                      "namespace": "never-fits", "skipWaitToCompletion": True,
                      "podTemplatePath": self.template("pod-never-fits", _dump(pod))},
                     {"opcode": "barrier", "namespaces": ["never-fits"],
                      "stageRequirement": "Attempted"}]
        self.record.append(f"never-schedulable: {self.never_fits} pods requesting "
                           f"{NEVER_FITS_CPU} cpu in never-fits"
                           + (f" ({PRIORITY_PREFIX}2)" if self.priorities else ""))
        self.tag("barrier:Attempted", "skipWaitToCompletion")
        return True

    # ---------------------------------------------------------------- the test case
    def _finish(self) -> None:
        r = self.rng
        tc: dict[str, Any] = {"name": self.name}
        if self.profile_config is not None:
            tc["schedulerConfigPath"] = self.template("scheduler-config",
                                                      _dump(self.profile_config))
        if self.chance(0.2):
            tc["metricsCollectorConfig"] = {"metrics": {
                "scheduler_scheduling_attempt_duration_seconds": [
                    {"label": "result", "values": ["scheduled", "unschedulable"]}],
                "scheduler_pod_scheduling_duration_seconds": None}}
            self.tag("metricsCollectorConfig")
        tc["workloadTemplate"] = self.ops
        pods = sum(v for k, v in self.params.items() if not k.startswith("nodes"))
        workload: dict[str, Any] = {"name": f"{len(self.nodes)}Nodes_{pods}Pods",
                                    "labels": list(LABELS)}
        if self.chance(0.2):
            workload["featureGates"] = {"SchedulerQueueingHints": False}
            self.tag("queueingHints:off")
            self.record.append("feature gates: SchedulerQueueingHints=false")
        workload["params"] = dict(self.params)
        tc["workloads"] = [workload]
        del r
        comment = [f"{self.name}: scenario {self.index} of `schedperf generate --seed "
                   f"{self.seed}` (regenerate with any --count > {self.index})"]
        comment += self.record
        comment.append("tags: " + " ".join(sorted(self.tags)))
        self.config_text = "".join(f"# {line}\n" for line in comment) + _dump([tc])
        self.info = ScenarioInfo(self.name, self.seed, self.index, frozenset(self.tags),
                                 tuple(comment), len(self.nodes), pods)
