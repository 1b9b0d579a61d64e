"""TaintToleration. Extension points: Filter, PreScore, Score (+NormalizeScore),
EnqueueExtensions.

Nodes share few distinct taint sets, so every decision is taken once per taint set (memoised
on the table) and gathered through ``table.taint_set_id``.

See docs/scheduling-model.md, "TaintToleration".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import Toleration, tolerates_any
from scheduler_core.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.matching import BLOCKING_EFFECTS, taint_lookup, untolerated_taint
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import (
    SpecCache,
    count,
    default_normalize,
    is_zeros,
    no_args,
    zeros,
)

__all__ = ["NAME", "UNTOLERATED", "TaintToleration"]

NAME = names.TAINT_TOLERATION
_PRE_SCORE_KEY = "PreScore" + NAME
_PREFER = "PreferNoSchedule"


# v1.34 names no taint in the reason (v1.33 printed the first untolerated one's key and value)
UNTOLERATED = "node(s) had untolerated taint(s)"


def _prefer_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    return tuple(t for t in tolerations if t.effect in ("", _PREFER))


def _intolerable_counts(table: NodeTable, tolerations: tuple[Toleration, ...]) -> np.ndarray:
    """Per taint-set id: how many PreferNoSchedule taints ``tolerations`` do not tolerate."""
    key = (NAME, "prefer-count", tolerations)
    hit = table.memo.get(key)
    if hit is not None and len(hit) == len(table.taint_sets):
        return hit
    out = np.fromiter(
        (sum(1 for t in taints if t.effect == _PREFER and not tolerates_any(tolerations, t))
         for taints in table.taint_sets),
        dtype=np.int64, count=len(table.taint_sets))
    if len(table.memo) > 4096:
        table.memo.clear()
    table.memo[key] = out
    return out


class TaintToleration:
    name: ClassVar[str] = NAME
    # upstream's Score reads what its PreScore stored: a profile that runs the Score without
    # the PreScore fails with this error (docs/fidelity.md, "Filter without its PreFilter")
    score_needs_pre_score: ClassVar[str] = (
        "failed to read \"PreScoreTaintToleration\" from cycleState: not found")
    score_in_range: ClassVar[bool] = True  # final scores are in [0, 100] by construction
    # its Filter reads only the node's own columns, never the pods on it (plugins.node_local)
    node_local: ClassVar[bool] = True
    # its Score reads the node's own columns and its NormalizeScore only the scores
    # (plugins.node_local.scores_node_local)
    score_node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        # per PodSpec: its PreferNoSchedule tolerations
        self._prefer = SpecCache(lambda spec: _prefer_tolerations(spec.tolerations))

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        if len(table.taint_sets) == 1:  # only the empty set: no node has a taint
            return None
        ok = taint_lookup(table, pod.spec.tolerations, BLOCKING_EFFECTS)
        if ok.all():
            return None
        return ok[table.taint_set_id[idx]]

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        tids, inverse = np.unique(table.taint_set_id[idx], return_inverse=True)
        tolerations = pod.spec.tolerations
        statuses = [_status(untolerated_taint(table.taint_sets[int(tid)], tolerations,
                                              BLOCKING_EFFECTS)) for tid in tids]
        return inverse.astype(np.int64).reshape(-1), statuses

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        state.write(_PRE_SCORE_KEY, self._prefer(pod.spec))
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        tolerations = state.get(_PRE_SCORE_KEY)
        if tolerations is None:
            tolerations = self._prefer(pod.spec)
        if len(table.taint_sets) == 1:  # no node has a taint: 0 everywhere (read-only)
            return zeros(count(table, idx))
        return _intolerable_counts(table, tolerations)[table.taint_set_id[idx]]

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        if is_zeros(scores):  # what default_normalize(reverse) makes of all zeros
            out = np.empty(len(scores), dtype=np.int64)
            out.fill(MAX_NODE_SCORE)
            return out
        if not scores.flags.writeable:
            scores = scores.copy()
        return default_normalize(scores, reverse=True)

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                _after_node_change),
            ClusterEventWithHint(ClusterEvent("UnscheduledPod", ActionType.UPDATE_POD_TOLERATION),
                                 _after_pod_toleration_change),
        ]


def _status(taint: Any) -> Status:
    if taint is None:  # the node passes: callers only ask about rejected nodes
        return Status(Code.SUCCESS, (), NAME)
    return Status.unresolvable(UNTOLERATED, plugin=NAME)


def _after_node_change(pod: Pod, old: Node | None, new: Node) -> QueueingHint:
    tolerations = pod.spec.tolerations
    was_untolerated = old is None or untolerated_taint(
        old.taints, tolerations, BLOCKING_EFFECTS) is not None
    is_untolerated = untolerated_taint(new.taints, tolerations, BLOCKING_EFFECTS) is not None
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod) -> QueueingHint:
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.QUEUE_SKIP
