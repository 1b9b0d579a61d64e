"""NodeResourcesFit. Extension points: PreFilter, Filter, PreScore, Score,
EnqueueExtensions (no NormalizeScore).

Args (``NodeResourcesFitArgs``):
    ignoredResources       extended resources the filter does not check (default none)
    ignoredResourceGroups  extended-resource prefixes (before "/") not checked (default none)
    scoringStrategy        type LeastAllocated (default) | MostAllocated |
                           RequestedToCapacityRatio; resources [{name, weight 1..100}]
                           (default cpu and memory, weight 1; weight 0 means 1);
                           requestedToCapacityRatio.shape [{utilization 0..100 strictly
                           increasing, score 0..10}] (required for RequestedToCapacityRatio)

The filter compares the pod's effective request with ``allocatable - requested`` (real
requests); scoring uses the non-zero requests for cpu and memory
(docs/scheduling-model.md, "Non-zero requests for scoring").

See docs/scheduling-model.md, "NodeResourcesFit".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod, PodSpec
from scheduler_core.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import (
    SpecCache,
    alloc_profile,
    check_keys,
    count,
    label_name_problem,
    require_int,
    require_list,
    require_mapping,
    require_str,
)
from scheduler_core.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceSpec,
    Scorer,
    allocatable_requested,
    least_allocated_scorer,
    most_allocated_scorer,
    parse_resources,
    pod_requests,
    requested_to_capacity_ratio_scorer,
)

__all__ = [
    "LEAST_ALLOCATED",
    "MARGIN_LIMIT",
    "MOST_ALLOCATED",
    "NAME",
    "REQUESTED_TO_CAPACITY_RATIO",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
]

NAME = names.NODE_RESOURCES_FIT
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_TOO_MANY_PODS = "Too many pods"
_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
MARGIN_LIMIT = 2**52  # margins() answers only below this (see there)


def _is_extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a qualified name outside kubernetes.io/."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


# --------------------------------------------------------------------------- args
@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()  # (utilization, score) for RequestedToCapacityRatio

    @classmethod
    def parse(cls, args: dict | None, path: str = "") -> NodeResourcesFitArgs:
        def at(*parts: str) -> str:
            return ".".join(p for p in (path, *parts) if p)

        data = require_mapping(args, path)
        check_keys(data, path, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"),
                   "NodeResourcesFitArgs")
        ignored = []
        for i, r in enumerate(require_list(data.get("ignoredResources"), at("ignoredResources"))):
            f = f"{at('ignoredResources')}[{i}]"
            problem = label_name_problem(require_str(r, f))
            if problem:
                raise ConfigError(problem, field=f)
            ignored.append(r)
        groups = []
        gpath = at("ignoredResourceGroups")
        for i, g in enumerate(require_list(data.get("ignoredResourceGroups"), gpath)):
            f = f"{gpath}[{i}]"
            if "/" in require_str(g, f):
                raise ConfigError("resource group name can't contain '/'", field=f)
            problem = label_name_problem(g)
            if problem:
                raise ConfigError(problem, field=f)
            groups.append(g)
        if data.get("scoringStrategy") is None:
            return cls(frozenset(ignored), frozenset(groups))
        spath = at("scoringStrategy")
        strategy = require_mapping(data["scoringStrategy"], spath)
        check_keys(strategy, spath, ("type", "resources", "requestedToCapacityRatio"))
        kind = strategy.get("type")
        if kind not in _STRATEGIES:
            raise ConfigError(f'Unsupported value: {kind!r}: supported values: '
                              f'"{LEAST_ALLOCATED}", "{MOST_ALLOCATED}", '
                              f'"{REQUESTED_TO_CAPACITY_RATIO}"', field=f"{spath}.type")
        resources = parse_resources(strategy.get("resources"), f"{spath}.resources")
        for i, r in enumerate(resources):
            if not 0 < r.weight <= 100:
                raise ConfigError(f"resource weight of {r.name} not in valid range (0, 100]",
                                  field=f"{spath}.resources[{i}].weight")
        shape: tuple[tuple[int, int], ...] = ()
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            shape = _parse_shape(rtcr, f"{spath}.requestedToCapacityRatio")
        elif kind == REQUESTED_TO_CAPACITY_RATIO:
            raise ConfigError(f"required when type is {REQUESTED_TO_CAPACITY_RATIO}",
                              field=f"{spath}.requestedToCapacityRatio")
        return cls(frozenset(ignored), frozenset(groups), kind, resources, shape)


def _parse_shape(value: Any, path: str) -> tuple[tuple[int, int], ...]:
    data = require_mapping(value, path)
    check_keys(data, path, ("shape",))
    spath = f"{path}.shape"
    points = []
    for i, item in enumerate(require_list(data.get("shape"), spath)):
        ipath = f"{spath}[{i}]"
        point = require_mapping(item, ipath)
        check_keys(point, ipath, ("utilization", "score"))
        points.append((require_int(point.get("utilization"), f"{ipath}.utilization"),
                       require_int(point.get("score"), f"{ipath}.score")))
    if not points:
        raise ConfigError("at least one point must be specified", field=spath)
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise ConfigError("values must be sorted in increasing order",
                              field=f"{spath}[{i}].utilization")
    for i, (u, s) in enumerate(points):
        if not 0 <= u <= 100:
            raise ConfigError(f"not in valid range [0, 100], got {u}",
                              field=f"{spath}[{i}].utilization")
        if not 0 <= s <= 10:
            raise ConfigError(f"not in valid range [0, 10], got {s}", field=f"{spath}[{i}].score")
    return tuple(points)


# --------------------------------------------------------------------------- filter state
@dataclass(frozen=True, slots=True)
class _FitRequest:
    """What the filter checks after the pod count: (resource, quantity > 0) in reason order.
    Empty when the pod requests nothing: then only the pod count is checked."""

    checks: tuple[tuple[str, int], ...]


def _fit_request(spec: PodSpec, ignored: frozenset[str], groups: frozenset[str]) -> _FitRequest:
    reqs = spec.requests
    checks = [(r, reqs[r]) for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if reqs.get(r, 0) > 0]
    for r, q in reqs.items():
        if r in _NATIVE or q == 0:
            continue
        if _is_extended(r) and (r in ignored or (groups and r.split("/")[0] in groups)):
            continue
        checks.append((r, q))
    return _FitRequest(tuple(checks))


def _failing(table: NodeTable, name: str, q: int, idx: Any) -> np.ndarray:
    """``q > allocatable - requested`` over idx (a node without the resource has 0)."""
    alloc = table.allocatable.get(name)
    if alloc is None:
        return np.ones(count(table, idx), dtype=bool)
    return np.subtract(alloc[idx], table.requested[name][idx]) < q


def _beyond_allocatable(table: NodeTable, name: str, q: int, idx: Any) -> np.ndarray:
    """``q > allocatable`` over idx: the request does not fit even the empty node."""
    alloc = table.allocatable.get(name)
    if alloc is None:
        return np.ones(count(table, idx), dtype=bool)
    return alloc[idx] < q


# --------------------------------------------------------------------------- plugin
class NodeResourcesFit:
    name: ClassVar[str] = NAME
    # upstream's Filter reads what its PreFilter stored: a profile that runs the Filter without
    # the PreFilter fails with this error (docs/fidelity.md, "Filter without its PreFilter")
    filter_needs_pre_filter: ClassVar[str] = (
        "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found")
    score_in_range: ClassVar[bool] = True  # final scores are in [0, 100] by construction
    # its Filter reads only the node's own columns, its pods only through the accounting
    # columns (plugins.node_local)
    node_local: ClassVar[bool] = True
    # its Score too, and it has no NormalizeScore (plugins.node_local.scores_node_local)
    score_node_local: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.args = NodeResourcesFitArgs.parse(args, args_path)
        self.resources = self.args.resources
        self._handle = handle
        # (spec ids, specs, summed requests) of the last ScorePlacement's proposed pods
        self._proposed_memo: tuple[tuple[int, ...], list[Any], list[int]] | None = None
        self._scorer: Scorer
        if self.args.strategy == MOST_ALLOCATED:
            self._scorer = most_allocated_scorer
        elif self.args.strategy == REQUESTED_TO_CAPACITY_RATIO:
            self._scorer = requested_to_capacity_ratio_scorer(self.args.shape)
        else:
            self._scorer = least_allocated_scorer
        # per PodSpec: the filter's checks and the scored requests
        args, resources = self.args, self.resources
        self._fit_of = SpecCache(lambda spec: _fit_request(
            spec, args.ignored_resources, args.ignored_resource_groups))
        self._score_requests = SpecCache(
            lambda spec: pod_requests(spec, resources, use_requested=False))

    def _request(self, state: CycleState, pod: Pod) -> _FitRequest:
        req = state.get(_PRE_FILTER_KEY)
        if req is None:
            req = self._fit_of(pod.spec)
        return req

    # ------------------------------------------------------------------ PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_PRE_FILTER_KEY, self._fit_of(pod.spec))
        return None, None

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        req = self._request(state, pod)
        allowed, _ = alloc_profile(table, PODS)  # homogeneous nodes: compare with a scalar
        ok = table.pod_count[idx] < (table.allocatable[PODS][idx] if allowed is None else allowed)
        for name, q in req.checks:  # q > allocatable - requested  <=>  requested > alloc - q
            alloc = table.allocatable.get(name)
            if alloc is None:
                ok[:] = False
                break
            uniform, _ = alloc_profile(table, name)
            if uniform is None:
                ok &= np.subtract(alloc[idx], table.requested[name][idx]) >= q
            else:
                ok &= table.requested[name][idx] <= uniform - q
        return ok

    def margins(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]] | None:
        """How much more each node at ``idx`` can take with ``pod`` still passing this filter:
        (pods, [(resource, request) per checked resource]). A node passes iff every margin is
        >= 0, and still passes once more pods are added iff their number and summed requests
        stay within the margins. None when a quantity involved reaches ``MARGIN_LIMIT``
        (2**52), so that callers adding up to 1024 pods' requests of less than that stay far
        from int64 overflow (where the filter's own arithmetic would wrap)."""
        req = self._request(state, pod)
        alloc_pods, count_ = table.allocatable[PODS][idx], table.pod_count[idx]
        if len(alloc_pods) and max(int(alloc_pods.max()), int(count_.max())) >= MARGIN_LIMIT:
            return None
        out = []
        for name, q in req.checks:
            alloc = table.allocatable.get(name)
            if alloc is None:  # no node has the resource: the filter fails everywhere
                out.append((name, np.full(len(alloc_pods), -1, dtype=np.int64)))
                continue
            a, r = alloc[idx], table.requested[name][idx]
            if q >= MARGIN_LIMIT or (len(a) and max(int(a.max()), int(r.max()),
                                                    -int(r.min())) >= MARGIN_LIMIT):
                return None
            out.append((name, a - r - q))
        return alloc_pods - count_ - 1, out

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        """Every failing check of a node, as one status with all reasons: Unschedulable, or
        UnschedulableAndUnresolvable (v1.34) when some failing request exceeds the node's whole
        allocatable of that resource (removing pods cannot help; "Too many pods" never counts)."""
        req = self._request(state, pod)
        n = len(req.checks)
        bits = (table.pod_count[idx] >= table.allocatable[PODS][idx]).astype(np.int64)
        for j, (name, q) in enumerate(req.checks):
            bits |= _failing(table, name, q, idx).astype(np.int64) << (j + 1)
            bits |= _beyond_allocatable(table, name, q, idx).astype(np.int64) << (n + 1)
        if len(req.checks) <= 12:  # few bit patterns: count them instead of sorting
            present = np.bincount(bits)
            uniq = np.flatnonzero(present)
            lookup = np.zeros(len(present), dtype=np.int64)
            lookup[uniq] = np.arange(len(uniq))
            inverse = lookup[bits]
        else:
            uniq, inverse = np.unique(bits, return_inverse=True)
        reasons = [_TOO_MANY_PODS] + [f"Insufficient {name}" for name, _ in req.checks]
        statuses = []
        for b in uniq.tolist():
            why = tuple(r for j, r in enumerate(reasons) if b >> j & 1)
            code = Code.SUCCESS if not why else \
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE if b >> (n + 1) & 1 else Code.UNSCHEDULABLE
            statuses.append(Status(code, why, NAME))
        return inverse.astype(np.int64).reshape(-1), statuses

    # ------------------------------------------------------------------ PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        state.write(_PRE_SCORE_KEY, self._score_requests(pod.spec))
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        reqs = state.get(_PRE_SCORE_KEY)
        if reqs is None:
            reqs = self._score_requests(pod.spec)
        parts = []
        for r, q in zip(self.resources, reqs, strict=True):
            part = allocatable_requested(table, r.name, q, idx, False, r.weight)
            if part is not None:
                parts.append(part)
        return self._scorer(parts, count(table, idx))

    # ------------------------------------------------------------------ PlacementScore
    def score_placement(self, pg: Any, placement: Any, proposed: list[Any]
                        ) -> tuple[int, Status | None]:
        """kube v1.37's Fit.ScorePlacement (TopologyAwareWorkloadScheduling): MostAllocated
        over the placement as one node: the non-zero requests of the proposed pods plus the
        placement's nodes' requested, against the nodes' summed allocatable, per configured
        resource (weighted mean, integer division)."""
        scores, status = self.score_placements(pg, [(placement, proposed)])
        return scores[0], status

    def score_placements(self, pg: Any, assignments: list[tuple[Any, list[Any]]]
                         ) -> tuple[list[int], Status | None]:
        """``score_placement`` of every ``(placement, proposed)`` at once: each placement's
        sums come from one reduction over all their slots."""
        n = len(assignments)
        table = self._handle.cluster.table if self._handle is not None else None
        if table is None or not n:
            return [0] * n, None
        lens = np.fromiter((len(pl.slots) for pl, _ in assignments), dtype=np.int64, count=n)
        every = np.concatenate([pl.slots for pl, _ in assignments])
        starts = np.zeros(n, dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        has = lens > 0
        starts = np.minimum(starts, max(len(every) - 1, 0))

        def per_placement(values: np.ndarray) -> np.ndarray:
            if not len(every):
                return np.zeros(n, dtype=np.int64)
            return np.where(has, np.add.reduceat(values, starts), 0)

        wants = np.asarray([self._proposed_requests(proposed) for _, proposed in assignments],
                           dtype=np.int64).reshape(n, len(self.resources))
        score = np.zeros(n, dtype=np.int64)
        weights = np.zeros(n, dtype=np.int64)
        for j, r in enumerate(self.resources):
            name = r.name
            want = wants[:, j]
            counted = np.ones(n, dtype=bool)
            if name == CPU:
                used_col = table.nonzero_cpu
            elif name == MEMORY:
                used_col = table.nonzero_memory
            elif name == EPHEMERAL_STORAGE or is_scalar_resource(name):
                used_col = table.requested.get(name)
                if name != EPHEMERAL_STORAGE:
                    counted = want != 0  # a scalar the group does not request: bypassed
            else:  # "pods": bypassed
                continue
            alloc_col = table.allocatable.get(name)
            if alloc_col is None:
                continue
            alloc = alloc_col[every]
            total_alloc = per_placement(alloc)
            used = (per_placement(np.where(alloc != 0, used_col[every], 0))
                    if used_col is not None else np.zeros(n, dtype=np.int64))
            counted &= total_alloc != 0  # a node without the resource counts for neither side
            requested = np.minimum(want + used, total_alloc)
            part = requested * 100 // np.where(counted, total_alloc, 1) * r.weight
            score += np.where(counted, part, 0)
            weights += np.where(counted, r.weight, 0)
        return np.where(weights > 0, score // np.maximum(weights, 1), 0).tolist(), None

    def _proposed_requests(self, proposed: list[Any]) -> list[int]:
        """The proposed pods' summed non-zero request per configured resource. The placements
        of one group cycle propose the same pods, so the last answer is kept, keyed by the
        pods' specs (immutable; held by the memo, so their ids stay theirs)."""
        specs = [p.spec for p, _ in proposed]
        key = tuple(map(id, specs))
        memo = self._proposed_memo
        if memo is not None and memo[0] == key:
            return memo[2]
        wants = [sum(pod_requests(spec, (r,), use_requested=False)[0] for spec in specs)
                 for r in self.resources]
        self._proposed_memo = (key, specs, wants)
        return wants

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # UpdatePodScaleDown: in-place pod resize (InPlacePodVerticalScaling, on by default
            # since v1.33) frees resources as a deletion does
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                _after_pod_event),
            # upstream's Pod registration also matches the pending pod's own updates: its own
            # scale-down may let it fit
            ClusterEventWithHint(
                ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_SCALE_DOWN),
                _after_pod_event),
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                _after_node_change),
        ]


def _after_pod_event(pod: Pod, old: Pod, new: Pod | None) -> QueueingHint:
    """The deletion of a pod that was assigned or nominated to a node may free resources
    (v1.34 also counts the nominated one, whose room other pods had to leave); so may the
    waiting pod's own scale-down, or an assigned pod's scale-down of a resource the waiting
    pod requests (upstream's ``isSchedulableAfterPodScaleDown``)."""
    if new is None:
        return QueueingHint.QUEUE if old.node_name or old.nominated_node_name \
            else QueueingHint.QUEUE_SKIP
    if new.uid == pod.uid:
        return QueueingHint.QUEUE
    if not new.node_name:
        return QueueingHint.QUEUE_SKIP
    before, after = old.spec.requests, new.spec.requests
    for name, q in pod.spec.requests.items():
        if q > 0 and after.get(name, 0) < before.get(name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _fits_empty_node(spec: PodSpec, node: Node) -> bool:
    """``Fits`` against the node with no pods (nothing ignored)."""
    alloc = node.allocatable
    if alloc.get(PODS, 0) < 1:
        return False
    for name, q in _fit_request(spec, frozenset(), frozenset()).checks:
        if q > alloc.get(name, 0):
            return False
    return True


def _requested_resource_increased(spec: PodSpec, old: Node, new: Node) -> bool:
    if new.allocatable.get(PODS, 0) > old.allocatable.get(PODS, 0):
        return True
    for name, q in _fit_request(spec, frozenset(), frozenset()).checks:
        if q > 0 and new.allocatable.get(name, 0) > old.allocatable.get(name, 0):
            return True
    return False


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    if not _fits_empty_node(pod.spec, new):
        return QueueingHint.QUEUE_SKIP
    if old is None or _requested_resource_increased(pod.spec, old, new):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
