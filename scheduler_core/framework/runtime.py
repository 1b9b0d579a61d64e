"""The framework runtime: one instance per profile; runs its plugins at each extension point
with upstream semantics (order, Skip, status handling, weights, score range) and reports
durations to the metrics recorder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from time import perf_counter
from typing import Any

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterError,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from scheduler_core.framework.metrics import MetricsRecorder, NoopRecorder
from scheduler_core.framework.placement import Placement
from scheduler_core.nodetable.table import NodeTable

__all__ = ["EXTENSION_POINTS", "Framework", "ScoreBreakdown", "implements"]

# extension point -> the method a plugin implements for it
EXTENSION_POINTS: dict[str, str] = {
    "PreEnqueue": "pre_enqueue",
    "QueueSort": "sort_key",
    "PreFilter": "pre_filter",
    "Filter": "filter",
    "PostFilter": "post_filter",
    "PreScore": "pre_score",
    "Score": "score",
    "Reserve": "reserve",
    "Permit": "permit",
    "PreBind": "pre_bind",
    "Bind": "bind",
    "PostBind": "post_bind",
    # the pod-group cycle's placement points (TopologyAwareWorkloadScheduling)
    "PlacementGenerate": "generate_placements",
    "PlacementScore": "score_placement",
}
# Code members as module constants: attribute access on the enum class goes through EnumType's
# __getattr__ hook and costs several times a global lookup (these run on every cycle)
_SUCCESS, _ERROR, _UNSCHEDULABLE, _UNRESOLVABLE, _WAIT, _SKIP = (
    Code.SUCCESS, Code.ERROR, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT,
    Code.SKIP)
_SKIPPED = Status(_SKIP)
_ALL = np.logical_and.reduce  # ndarray.all() without the method's Python-level wrapper
_EVENT_POINTS = ("PreEnqueue", "PreFilter", "Filter", "Reserve", "Permit")
_WILDCARD = ClusterEventWithHint(ClusterEvent("*", ActionType.ALL))


def implements(plugin: Any, point: str) -> bool:
    return callable(getattr(plugin, EXTENSION_POINTS[point], None))


def _per_segment(norm: Callable[[CycleState, Pod, np.ndarray], np.ndarray],
                 segments: np.ndarray) -> Callable[[CycleState, Pod, np.ndarray], np.ndarray]:
    """``norm`` applied to each run of the scores on its own (``segments``: the runs' starts).
    Scores all equal need one call: the pod-group cycle passes ``segments`` only when every
    active Score plugin is node-local (``plugins.node_local.scores_node_local``), whose
    NormalizeScore reads only the values, so equal values come out equal in any run."""

    def normalize(state: CycleState, pod: Pod, raw: np.ndarray) -> np.ndarray:
        if len(segments) < 2 or not len(raw) or raw.min() == raw.max():
            return norm(state, pod, raw)
        bounds = [*segments.tolist(), len(raw)]
        return np.concatenate([norm(state, pod, raw[a:b].copy())
                               for a, b in pairwise(bounds)])

    return normalize


def _placement_scores(plugin: Any, pg: Any, assignments: list[tuple[Placement, list[Any]]]
                      ) -> tuple[list[int], Status | None]:
    """A PlacementScore plugin's score of each placement: through its ``score_placements``
    (all at once) when it has one, else ``score_placement`` one by one, stopping at the first
    failure."""
    batch = getattr(plugin, "score_placements", None)
    if batch is not None:
        scores, status = batch(pg, assignments)
        return list(scores), status
    out = []
    for placement, proposed in assignments:
        s, status = plugin.score_placement(pg, placement, proposed)
        if status is not None and status.code != _SUCCESS:
            return out, status
        out.append(s)
    return out, None


def _code_name(status: Status | None) -> str:
    return "Success" if status is None else status.code.upstream_name


@dataclass(slots=True)
class ScoreBreakdown:
    """Per score plugin: raw, normalised scores and weight (kept only when asked for)."""

    plugin: str
    raw: np.ndarray
    normalized: np.ndarray
    weight: int


@dataclass
class Framework:
    """A profile: its name, enabled plugins per extension point (in order) and score weights."""

    profile_name: str
    points: dict[str, list[Any]]
    weights: dict[str, int]
    percentage_of_nodes_to_score: int | None = None
    recorder: MetricsRecorder = field(default_factory=NoopRecorder)
    plugin_args: dict[str, Any] = field(default_factory=dict)
    # PlacementScore plugin -> weight (multiPoint's, overridden by placementScore's)
    placement_weights: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for point in EXTENSION_POINTS:
            self.points.setdefault(point, [])
        self.pre_enqueue_plugins = self.points["PreEnqueue"]
        self.pre_filter_plugins = self.points["PreFilter"]
        self.filter_plugins = self.points["Filter"]
        self.post_filter_plugins = self.points["PostFilter"]
        self.pre_score_plugins = self.points["PreScore"]
        self.score_plugins = self.points["Score"]
        self.filter_names = [p.name for p in self.filter_plugins]
        self._score_weights = [max(1, self.weights.get(p.name, 1)) for p in self.score_plugins]
        self._normalizers = [getattr(p, "normalize", None) for p in self.score_plugins]
        # in-tree plugins keep their scores in [0, 100] by construction (and are tested for it);
        # every other plugin's final scores are range-checked as upstream does
        self._range_checks = [not getattr(p, "score_in_range", False) for p in self.score_plugins]
        self._add_pod_ext = [p for p in self.pre_filter_plugins if hasattr(p, "add_pod")]
        # the first Filter plugin that needs its PreFilter's state and has no PreFilter in this
        # profile: (its index, the error every node reaching it gets), else None
        pre = {p.name for p in self.pre_filter_plugins}
        self._stateless_filter: tuple[int, Status] | None = next(
            ((i, Status(Code.ERROR, (f'running "{p.name}" filter plugin: '
                                     f"{p.filter_needs_pre_filter}",), p.name))
             for i, p in enumerate(self.filter_plugins)
             if getattr(p, "filter_needs_pre_filter", None) and p.name not in pre), None)
        # the same for Score plugins that need their PreScore's state: (name, error) each
        pre_score = {p.name for p in self.pre_score_plugins}
        self._stateless_scores = [
            (p.name, Status(Code.ERROR, (f'running Score plugins: plugin "{p.name}" failed '
                                         f"with: {p.score_needs_pre_score}",)))
            for p in self.score_plugins
            if getattr(p, "score_needs_pre_score", None) and p.name not in pre_score]
        # the pod-group cycle's PlacementFeasible plugins (GangScheduling), from any point
        self._placement_feasible = [p for p in self.all_plugins()
                                    if hasattr(p, "placement_feasible")]

    # ------------------------------------------------------------------ introspection
    @property
    def queue_sort(self) -> Any:
        plugins = self.points["QueueSort"]
        return plugins[0] if plugins else None

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def all_plugins(self) -> list[Any]:
        seen: dict[int, Any] = {}
        for plugins in self.points.values():
            for p in plugins:
                seen.setdefault(id(p), p)
        return list(seen.values())

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per plugin that can reject a pod: the cluster events (with hints) it reacts to.
        Plugins without ``events_to_register`` react to every event (no hint: Queue)."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        for point in _EVENT_POINTS:
            for p in self.points[point]:
                if p.name in out:
                    continue
                reg = getattr(p, "events_to_register", None)
                out[p.name] = list(reg()) if reg is not None else [_WILDCARD]
        return out

    # ------------------------------------------------------------------ timing helper
    def _timed(self, point: str, plugin: Any, fn: Callable[[], Any]) -> Any:
        start = perf_counter()
        result = fn()
        status = result[1] if isinstance(result, tuple) and len(result) == 2 else result
        self.recorder.plugin(plugin.name, point,
                             _code_name(status if isinstance(status, Status) else None),
                             perf_counter() - start)
        return result

    # ------------------------------------------------------------------ pod groups
    def placement_feasible(self, pg: Any, scheduled: int, remaining: int) -> Status | None:
        """kube's RunPlacementFeasiblePlugins: the first non-success status (None: every
        plugin is satisfied, or there is none)."""
        for p in self._placement_feasible:
            status = p.placement_feasible(pg, scheduled, remaining)
            if status is not None and status.code != _SUCCESS:
                return status.with_plugin(p.name)
        return None

    def run_placement_generate(self, pg: Any, parent: Placement
                               ) -> tuple[list[Placement], Status | None]:
        """kube v1.37.2's RunPlacementGeneratePlugins: with no PlacementGenerate plugin the
        parent placement alone; else the placements of the first plugin only (as upstream),
        an Unschedulable status when it generates none."""
        plugins = self.points["PlacementGenerate"]
        if not plugins:
            return [parent], None
        p = plugins[0]
        placements, status = p.generate_placements(pg, parent)
        if status is not None and status.code != _SUCCESS:
            return [], status.with_plugin(p.name)
        if not placements:
            return [], Status(Code.UNSCHEDULABLE, ("no feasible placements found",), p.name)
        return placements, None

    def run_placement_score(self, pg: Any, assignments: list[tuple[Placement, list[Any]]]
                            ) -> tuple[list[int], Status | None]:
        """kube's RunPlacementScorePlugins: per placement (with the pods proposed in it, as
        ``(pod, node name)`` pairs) each plugin's score, normalised when the plugin has
        ``normalize_placement_scores``, range-checked, weighted and summed."""
        totals = [0] * len(assignments)
        for p in self.points["PlacementScore"]:
            scores, status = _placement_scores(p, pg, assignments)
            if status is not None and status.code != _SUCCESS:
                return [], Status(Code.ERROR, (
                    f'running PlacementScore plugins: plugin "{p.name}" failed with: '
                    f"{status.message}",))
            normalize = getattr(p, "normalize_placement_scores", None)
            if normalize is not None:
                status = normalize(pg, scores)
                if status is not None and status.code != _SUCCESS:
                    return [], Status(Code.ERROR, (
                        "running NormalizePlacementScore on PlacementScore plugins: plugin "
                        f'"{p.name}" failed with: {status.message}',))
            weight = max(1, self.placement_weights.get(p.name, 1))
            for i, s in enumerate(scores):
                if not 0 <= s <= 100:
                    return [], Status(Code.ERROR, (
                        f'applying score defaultWeights on PlacementScore plugins: plugin '
                        f'"{p.name}" returns an invalid score {s}, it should in the range of '
                        "[0, 100] after normalizing",))
                totals[i] += s * weight
        return totals, None

    # ------------------------------------------------------------------ PreEnqueue
    def run_pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        for p in self.pre_enqueue_plugins:
            status = p.pre_enqueue(pod)
            if status is not None and not status.is_success:
                return p.name, status.with_plugin(p.name)
        return None

    # ------------------------------------------------------------------ PreFilter
    def run_pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns (merged result, status, plugins that narrowed the node set)."""
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        rejected: Status | None = None
        final: Status | None = None
        for p in self.pre_filter_plugins:
            if prec:
                start = perf_counter()
                r, s = p.pre_filter(state, pod, table)
                self.recorder.plugin(p.name, "PreFilter", _code_name(s), perf_counter() - start)
            else:
                r, s = p.pre_filter(state, pod, table)
            if s is not None and s.code != _SUCCESS:
                if s.code == _SKIP:
                    state.skip_filter.add(p.name)
                    continue
                if s.code == _UNRESOLVABLE:
                    final = s.with_plugin(p.name)
                    break
                if s.code == _UNSCHEDULABLE:
                    rejected = rejected or s.with_plugin(p.name)
                    continue
                final = Status(_ERROR, s.reasons, p.name)
                break
            if r is not None and not r.all_nodes:
                narrowing.append(p.name)
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    if len(narrowing) == 1:
                        msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        msg = (f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] "
                               "simultaneously")
                    final = Status(_UNRESOLVABLE, (msg,), narrowing[0])
                    break
        if final is None:
            final = rejected
        if rec:
            self.recorder.extension_point("PreFilter", _code_name(final), self.profile_name,
                                          perf_counter() - t0)
        return result, final, narrowing

    # ------------------------------------------------------------------ Filter
    def run_filter(
        self, state: CycleState, pod: Pod, table: NodeTable, idx: Any, n: int
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Filter ``n`` nodes at ``idx``. Returns (pass mask or None = all pass, per node the
        index into ``filter_plugins`` of the first plugin that rejected it, -1 if none)."""
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        mask: np.ndarray | None = None
        first_fail: np.ndarray | None = None
        first: tuple[int, np.ndarray] | None = None  # the only mask so far, not copied yet
        skip = state.skip_filter
        for i, p in enumerate(self.filter_plugins):
            if skip and p.name in skip:
                continue
            if prec:
                start = perf_counter()
                m = p.filter(state, pod, table, idx)
                self.recorder.plugin(p.name, "Filter", "Success", perf_counter() - start)
            else:
                m = p.filter(state, pod, table, idx)
            if m is None:
                continue
            if mask is None:
                if first is None:  # the common single-mask case needs no copy when all pass
                    first = (i, m)
                    continue
                mask, first_fail = self._first_fail(first, n)
            assert first_fail is not None
            newly = mask & ~m
            first_fail[newly] = i
            mask &= m
        if mask is None and first is not None and not _ALL(first[1]):
            mask, first_fail = self._first_fail(first, n)
        if rec:
            self.recorder.extension_point("Filter", "Success", self.profile_name,
                                          perf_counter() - t0)
        if self._stateless_filter is not None:
            self._fail_where_reached(mask, first_fail, n)
        return mask, first_fail

    def _fail_where_reached(self, mask: np.ndarray | None, first_fail: np.ndarray | None,
                            n: int) -> None:
        """FilterError when a node passed every Filter plugin before the one that needs its
        missing PreFilter state (so upstream's Filter reached it, and failed)."""
        assert self._stateless_filter is not None
        index, status = self._stateless_filter
        if not n:
            return
        if mask is None or first_fail is None:
            reached = True
        else:
            reached = bool(((first_fail < 0) | (first_fail >= index)).any())
        if reached:
            raise FilterError(status, index, mask, first_fail)

    @staticmethod
    def _first_fail(first: tuple[int, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
        """A private copy of the first plugin's mask, and the first-fail column it implies."""
        i, m = first
        mask = np.array(m, dtype=bool, copy=True)
        first_fail = np.full(n, -1, dtype=np.int16)
        first_fail[~mask] = i
        return mask, first_fail

    def explain_filter(
        self, state: CycleState, pod: Pod, table: NodeTable, slots: np.ndarray,
        first_fail: np.ndarray,
    ) -> tuple[np.ndarray, list[Status]]:
        """Statuses of rejected nodes: per slot an index into the returned status list."""
        statuses: list[Status] = []
        out = np.zeros(len(slots), dtype=np.int64)
        for i in np.unique(first_fail):
            if i < 0:
                continue
            p = self.filter_plugins[int(i)]
            where = np.flatnonzero(first_fail == i)
            rid, sts = p.explain(state, pod, table, slots[where])
            out[where] = np.asarray(rid, dtype=np.int64) + len(statuses)
            statuses.extend(s.with_plugin(p.name) for s in sts)
        return out, statuses

    def run_add_pod_extensions(self, state: CycleState, pod: Pod, other: Pod, slot: int,
                               *, remove: bool = False) -> None:
        for p in self._add_pod_ext:
            if p.name in state.skip_filter:
                continue
            if remove:
                p.remove_pod(state, pod, other, slot)
            else:
                p.add_pod(state, pod, other, slot)

    # ------------------------------------------------------------------ PostFilter
    def run_post_filter(
        self, state: CycleState, pod: Pod, diagnosis: Any
    ) -> tuple[PostFilterResult | None, Status]:
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""  # the first plugin that answered Unschedulable
        final = Status(_UNSCHEDULABLE)
        for p in self.post_filter_plugins:
            if prec:
                r, s = self._timed("PostFilter", p,
                                   lambda p=p: p.post_filter(state, pod, diagnosis))
            else:
                r, s = p.post_filter(state, pod, diagnosis)
            if s.code in (_SUCCESS, _ERROR, _UNRESOLVABLE):
                # the answer of this plugin alone: earlier reasons are dropped, and an error
                # carries no result
                final = s.with_plugin(p.name)
                result = None if s.code == _ERROR else r
                break
            reasons.extend(s.reasons)
            rejector = rejector or p.name
            if r is not None:
                result = r
        else:
            final = Status(_UNSCHEDULABLE, tuple(reasons), rejector)
        if rec:
            self.recorder.extension_point("PostFilter", _code_name(final), self.profile_name,
                                          perf_counter() - t0)
        return result, final

    # ------------------------------------------------------------------ PreScore / Score
    def run_pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                      ) -> Status | None:
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        final: Status | None = None
        for p in self.pre_score_plugins:
            if prec:
                start = perf_counter()
                s = p.pre_score(state, pod, table, idx)
                self.recorder.plugin(p.name, "PreScore", _code_name(s), perf_counter() - start)
            else:
                s = p.pre_score(state, pod, table, idx)
            if s is None or s.code == _SUCCESS:
                continue
            if s.code == _SKIP:
                state.skip_score.add(p.name)
                continue
            final = Status(_ERROR, s.reasons, p.name)
            break
        if rec:
            self.recorder.extension_point("PreScore", _code_name(final), self.profile_name,
                                          perf_counter() - t0)
        return final

    def run_score(
        self, state: CycleState, pod: Pod, table: NodeTable, idx: Any, n: int,
        *, breakdown: list[ScoreBreakdown] | None = None, segments: np.ndarray | None = None,
    ) -> tuple[np.ndarray, Status | None]:
        """Weighted total over ``n`` feasible nodes at ``idx`` (Score, NormalizeScore, weights).

        ``segments`` (the start of each run of ``idx``, ascending, from 0) scores several node
        lists at once, as the pod-group cycle does for disjoint placements: NormalizeScore then
        sees each run on its own, exactly as a separate call would."""
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        total: np.ndarray | None = None  # the first scored plugin's weighted scores start it
        skip = state.skip_score
        for name, error in self._stateless_scores:
            if n and not (skip and name in skip):
                return np.zeros(0, dtype=np.int64), error
        for p, weight, norm, check in zip(self.score_plugins, self._score_weights,
                                          self._normalizers, self._range_checks, strict=True):
            if skip and p.name in skip:
                continue
            if prec:
                start = perf_counter()
                raw = p.score(state, pod, table, idx)
                self.recorder.plugin(p.name, "Score", "Success", perf_counter() - start)
            else:
                raw = p.score(state, pod, table, idx)
            scores = raw
            if norm is not None:
                if segments is not None:
                    norm = _per_segment(norm, segments)
                if prec:
                    start = perf_counter()
                    scores = norm(state, pod, raw.copy() if breakdown is not None else raw)
                    self.recorder.plugin(p.name, "NormalizeScore", "Success",
                                         perf_counter() - start)
                else:
                    scores = norm(state, pod, raw.copy() if breakdown is not None else raw)
            if check and len(scores) and (scores.min() < MIN_NODE_SCORE
                                          or scores.max() > MAX_NODE_SCORE):
                bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
                status = Status.error(
                    f"plugin {p.name} returns an invalid score {bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing", plugin=p.name)
                return (np.zeros(n, dtype=np.int64) if total is None else total), status
            if breakdown is not None:
                breakdown.append(ScoreBreakdown(p.name, np.asarray(raw).copy(),
                                                np.asarray(scores).copy(), weight))
            if total is None:
                if len(scores) == n:
                    total = np.multiply(scores, weight, dtype=np.int64)  # a new array
                    continue
                total = np.zeros(n, dtype=np.int64)
            if weight != 1:
                total += scores * weight
            else:
                total += scores
        if total is None:
            total = np.zeros(n, dtype=np.int64)
        if rec:
            self.recorder.extension_point("Score", "Success", self.profile_name,
                                          perf_counter() - t0)
        return total, None

    # ------------------------------------------------------------------ Reserve .. PostBind
    def _run_simple(self, point: str, plugins: list[Any], call: Callable[[Any], Status | None],
                    state: CycleState) -> Status | None:
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        final: Status | None = None
        for p in plugins:
            s = self._timed(point, p, lambda p=p: call(p)) if prec else call(p)
            if s is not None and s.code != _SUCCESS:
                final = s.with_plugin(p.name)
                break
        if rec:
            self.recorder.extension_point(point, _code_name(final), self.profile_name,
                                          perf_counter() - t0)
        return final

    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        s = self._run_simple("Reserve", self.points["Reserve"],
                             lambda p: p.reserve(state, pod, node), state)
        if s is not None and not s.is_rejected:
            s = Status(_ERROR, s.reasons, s.plugin)
        return s

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in reversed(self.points["Reserve"]):
            p.unreserve(state, pod, node)

    def run_permit(self, state: CycleState, pod: Pod, node: str
                   ) -> tuple[Status | None, dict[str, float]]:
        """Returns (rejection or error status, {plugin: timeout} for plugins that said Wait)."""
        waits: dict[str, float] = {}
        for p in self.points["Permit"]:
            s, timeout = p.permit(state, pod, node)
            if s is None or s.code == _SUCCESS:
                continue
            if s.code == _WAIT:
                waits[p.name] = min(float(timeout), 15 * 60.0)
                continue
            if s.is_rejected:
                return s.with_plugin(p.name), {}
            return Status(_ERROR, s.reasons, p.name), {}
        return None, waits

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        return self._run_simple("PreBind", self.points["PreBind"],
                                lambda p: p.pre_bind(state, pod, node), state)

    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        prec = rec and state.record_plugin_metrics
        final: Status | None = _SKIPPED
        for p in self.points["Bind"]:
            s = self._timed("Bind", p, lambda p=p: p.bind(state, pod, node)) if prec else \
                p.bind(state, pod, node)
            if s is not None and s.code == _SKIP:
                continue
            final = None if s is None or s.is_success else Status(_ERROR, s.reasons, p.name)
            break
        if final is not None and final.code == _SKIP:
            final = Status.error("no bind plugin handled the pod")
        if rec:
            self.recorder.extension_point("Bind", _code_name(final), self.profile_name,
                                          perf_counter() - t0)
        return final

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in self.points["PostBind"]:
            p.post_bind(state, pod, node)
