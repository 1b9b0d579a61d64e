"""NodeAffinity. Extension points: PreFilter, Filter, PreScore, Score
(+NormalizeScore), EnqueueExtensions.

Args (``NodeAffinityArgs``): ``addedAffinity`` with
``requiredDuringSchedulingIgnoredDuringExecution`` (a node selector every pod must also match)
and ``preferredDuringSchedulingIgnoredDuringExecution`` (weighted terms added to every pod's
score).

Label matching runs once per distinct label value (``nodetable.matching``). For a large
candidate set the mask over all slots is memoised on the table until a node changes; a small
candidate set (e.g. a daemonset pod narrowed to one node by ``matchFields``) is matched directly,
so such pods never scan every node.

See docs/scheduling-model.md, "NodeAffinity".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler_core.api._fields import Fields
from scheduler_core.api.affinity import WeightedNodeTerm
from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod, PodSpec
from scheduler_core.api.selectors import NodeSelector
from scheduler_core.errors import ConfigError, ManifestError
from scheduler_core.framework.interface import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    Handle,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler_core.nodetable.matching import (
    match_node_selector,
    match_node_selector_map,
    match_term,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import (
    check_keys,
    count,
    default_normalize,
    memo_by_version,
    require_list,
    require_mapping,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "NodeAffinity",
    "NodeAffinityArgs",
]

NAME = names.NODE_AFFINITY
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_SMALL = 8  # candidate sets below high/_SMALL are matched directly, not through the memo


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_required: NodeSelector | None = None  # default: none
    added_preferred: tuple[WeightedNodeTerm, ...] = ()  # weight-0 terms dropped

    @classmethod
    def parse(cls, args: dict | None, path: str = "") -> NodeAffinityArgs:
        data = require_mapping(args, path)
        check_keys(data, path, ("addedAffinity",), "NodeAffinityArgs")
        apath = f"{path}.addedAffinity" if path else "addedAffinity"
        added = require_mapping(data.get("addedAffinity"), apath)
        for key in added:
            if key not in (_REQUIRED, _PREFERRED):
                raise ConfigError(f"unknown field (expected one of: {_PREFERRED}, {_REQUIRED})",
                                  field=f"{apath}.{key}")
        try:
            required = None
            if added.get(_REQUIRED) is not None:
                required = NodeSelector.from_fields(Fields(added[_REQUIRED],
                                                           f"{apath}.{_REQUIRED}", ""))
            preferred = []
            require_list(added.get(_PREFERRED), f"{apath}.{_PREFERRED}")
            for _, term in Fields(added, apath, "").items(_PREFERRED):
                if term.raw("weight") == 0:  # upstream ignores weight-0 terms
                    continue
                preferred.append(WeightedNodeTerm.from_fields(term))
        except ManifestError as exc:
            raise ConfigError(exc.problem, field=exc.field) from None
        return cls(required, tuple(preferred))


def _required_mask(table: NodeTable, spec: PodSpec, idx: Any) -> np.ndarray | None:
    """RequiredNodeAffinity: spec.nodeSelector AND required node affinity (None: no rule)."""
    mask = None
    if spec.node_selector:
        mask = match_node_selector_map(table, spec.node_selector, idx)
    required = spec.affinity.required_node
    if required is not None:
        m = match_node_selector(table, required, idx)
        mask = m if mask is None else mask & m
    return mask


def _terms_score(table: NodeTable, terms: tuple[WeightedNodeTerm, ...], idx: Any) -> np.ndarray:
    total = np.zeros(count(table, idx), dtype=np.int64)
    for wt in terms:
        if wt.weight and not wt.term.empty:
            total += match_term(table, wt.term, idx) * np.int64(wt.weight)
    return total


def _gathered(table: NodeTable, key: Any, compute: Callable[[Any], Any], idx: Any) -> Any:
    """``compute(idx)``, through a memoised all-slots result unless ``idx`` is small."""
    if isinstance(idx, np.ndarray) and len(idx) * _SMALL < table.high:
        return compute(idx)
    full = memo_by_version(table, key, lambda: compute(slice(0, table.high)))
    if full is None:
        return None
    return full[idx].copy() if isinstance(idx, slice) else full[idx]  # never hand out the memo


def _pod_required_key(spec: PodSpec) -> tuple:
    return (NAME, "required", tuple(sorted(spec.node_selector.items())),
            spec.affinity.required_node)


class NodeAffinity:
    name: ClassVar[str] = NAME
    score_in_range: ClassVar[bool] = True  # final scores are in [0, 100] by construction
    # its Filter reads only the node's own columns, never the pods on it (plugins.node_local)
    node_local: ClassVar[bool] = True
    # its Score reads the node's own columns and its NormalizeScore only the scores
    # (plugins.node_local.scores_node_local)
    score_node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        self.args = NodeAffinityArgs.parse(args, args_path)
        self.added_required = self.args.added_required
        self.added_preferred = self.args.added_preferred

    # ------------------------------------------------------------------ PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.spec
        required = spec.affinity.required_node
        if required is None and self.added_required is None and not spec.node_selector:
            return None, SKIP
        if required is None or not required.terms:
            return None, None
        node_names: set[str] = set()
        for term in required.terms:
            term_names = term.name_set()  # intersection of matchFields metadata.name In
            if term_names is None:  # a term without a name constraint admits every node
                return None, None
            node_names |= term_names
        if not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT, plugin=NAME)
        return PreFilterResult(frozenset(node_names)), None

    def _added_mask(self, table: NodeTable, idx: Any) -> np.ndarray | None:
        added = self.added_required
        if added is None:
            return None
        return _gathered(table, (NAME, "added", added),
                         lambda ix: match_node_selector(table, added, ix), idx)

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        spec = pod.spec
        mask = self._added_mask(table, idx)
        if spec.node_selector or spec.affinity.required_node is not None:
            m = _gathered(table, _pod_required_key(spec),
                          lambda ix: _required_mask(table, spec, ix), idx)
            mask = m if mask is None else mask & m
        return mask

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
                ) -> tuple[np.ndarray, list[Status]]:
        """Index 0: fails the scheduler-enforced affinity; 1: fails the pod's own."""
        statuses = [Status.unresolvable(ERR_REASON_ENFORCED, plugin=NAME),
                    Status.unresolvable(ERR_REASON_POD, plugin=NAME)]
        added = self._added_mask(table, idx)
        if added is None:
            return np.ones(count(table, idx), dtype=np.int64), statuses
        return added.astype(np.int64), statuses

    # ------------------------------------------------------------------ PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        if not pod.spec.affinity.preferred_node and not self.added_preferred:
            return SKIP
        return None

    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray:
        terms = self.added_preferred + pod.spec.affinity.preferred_node
        if not terms:
            return np.zeros(count(table, idx), dtype=np.int64)
        out = _gathered(table, (NAME, "preferred", terms),
                        lambda ix: _terms_score(table, terms, ix), idx)
        return out

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize(scores, reverse=False)

    # ------------------------------------------------------------------ events
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            self._after_node_change)]

    def _after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        if self.added_required is not None and not self.added_required.matches(new.name,
                                                                               new.labels):
            return QueueingHint.QUEUE_SKIP
        if not _required_matches(pod.spec, new):
            return QueueingHint.QUEUE_SKIP
        if old is None or not _required_matches(pod.spec, old):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _required_matches(spec: PodSpec, node: Node) -> bool:
    labels = node.labels
    for key, value in spec.node_selector.items():
        if labels.get(key) != value:
            return False
    required = spec.affinity.required_node
    return required is None or required.matches(node.name, labels)
