"""Scheduler extenders (HTTP webhooks) as kube-scheduler v1.34 calls them.

:class:`Extenders` holds a scheduler's extenders in upstream's order (the configured order,
ignorable ones moved to the tail) and does what schedule_one.go does with them:

* ``filter`` (findNodesThatPassExtenders): after the Filter plugins, each interested
  extender in turn narrows the feasible nodes; the nodes it fails get its message as their
  status (Unschedulable, or UnschedulableAndUnresolvable); an error ends the cycle with that
  error unless the extender is ignorable, whose failure is skipped (and counted).
* ``prioritize`` (prioritizeNodes): every interested prioritizer's score times its weight
  times 10 (MaxNodeScore / MaxExtenderPriority) is added to the plugins' totals; an error
  gives no score (upstream ignores prioritize errors, ignorable or not), counted.
* ``binder_for`` (extendersBinding): the binding extender interested in the pod binds it
  instead of the Bind plugins.

Each call's wall time is recorded per extender and verb (``HTTPExtender.stats``) and, in a
cycle whose plugins are timed, reported to the metrics recorder like a plugin's, under the
extender's name (its URL prefix) at Filter, Score or Bind.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.api.to_manifest import node_manifest, pod_manifest
from scheduler_core.extender.config import ExtenderConfig
from scheduler_core.extender.http_extender import (
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    ExtenderStats,
    FilterAnswer,
    HTTPExtender,
)

__all__ = ["EXTENDER_NAME", "ExtenderError", "ExtenderStats", "Extenders", "FilterAnswer",
           "HTTPExtender", "scaled_score"]

# framework.ExtenderName: the "plugin" a pod rejected by an extender waits on
EXTENDER_NAME = "Extender"
_MAX_NODE_SCORE = 100


def scaled_score(score: int, weight: int) -> int:
    """An extender's 0-10 score on the plugins' 0-100 scale, weighted (integer division of
    the constants, as upstream: 100 // 10 == 10)."""
    return score * weight * (_MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)


class Extenders:
    """The extenders of one scheduler (an empty one does nothing and costs nothing)."""

    def __init__(self, configs: Sequence[ExtenderConfig] = (), *,
                 transport: Any = None) -> None:
        ordered = [c for c in configs if not c.ignorable] + [c for c in configs if c.ignorable]
        self.all: list[HTTPExtender] = [HTTPExtender(c, transport=transport) for c in ordered]
        self.has_filters = any(e.is_filter for e in self.all)
        self.has_prioritizers = any(e.is_prioritizer for e in self.all)
        self._node_cache: dict[str, tuple[Node, dict[str, Any]]] = {}

    def __bool__(self) -> bool:
        return bool(self.all)

    def close(self) -> None:
        for e in self.all:
            e.close()

    # ------------------------------------------------------------------ manifests
    def node_manifests(self, nodes: Sequence[Node]) -> list[dict[str, Any]]:
        """The nodes' manifests, each rebuilt only when its Node object changed."""
        cache = self._node_cache
        out = []
        for node in nodes:
            hit = cache.get(node.name)
            if hit is None or hit[0] is not node:
                hit = (node, node_manifest(node))
                cache[node.name] = hit
            out.append(hit[1])
        return out

    # ------------------------------------------------------------------ verbs
    def filter(self, pod: Pod, nodes: list[Node], recorder: Any = None
               ) -> tuple[list[Node], dict[str, Any], bool]:
        """findNodesThatPassExtenders over ``nodes`` (feasible, in order). Returns the nodes
        left, the failed ones (name -> (message, unresolvable)) and whether any extender
        narrowed the list. Raises :class:`ExtenderError` for a non-ignorable failure."""
        failed: dict[str, Any] = {}
        narrowed = False
        manifest: dict[str, Any] | None = None
        for ext in self.all:
            if not nodes:
                break
            if not ext.is_filter or not ext.is_interested(pod):
                continue
            if manifest is None:
                manifest = pod_manifest(pod)
            by_name = {n.name: n for n in nodes}
            current = nodes
            t0 = perf_counter()
            try:
                answer = ext.filter(manifest, list(by_name),
                                    lambda current=current: self.node_manifests(current))
            except ExtenderError:
                _timed(recorder, ext, "Filter", "Error", t0)
                if ext.ignorable:
                    ext.stats.ignore(ext.config.filter_verb)
                    continue
                raise
            _timed(recorder, ext, "Filter", "Success", t0)
            for name, msg in answer.failed_unresolvable.items():
                failed[name] = (msg, True)
            for name, msg in answer.failed.items():
                if name not in answer.failed_unresolvable:
                    failed[name] = (msg, False)
            kept = [by_name[name] for name in answer.passed]
            narrowed = narrowed or len(kept) != len(nodes)
            nodes = kept
        return nodes, failed, narrowed

    def prioritize(self, pod: Pod, nodes: list[Node], recorder: Any = None) -> dict[str, int]:
        """Host -> the extenders' weighted, scaled scores summed (prioritize errors give no
        score and are counted as ignored)."""
        totals: dict[str, int] = {}
        manifest: dict[str, Any] | None = None
        names = [n.name for n in nodes]
        for ext in self.all:
            if not ext.is_prioritizer or not ext.is_interested(pod):
                continue
            if manifest is None:
                manifest = pod_manifest(pod)
            t0 = perf_counter()
            try:
                scores = ext.prioritize(manifest, names, lambda: self.node_manifests(nodes))
            except ExtenderError:
                _timed(recorder, ext, "Score", "Error", t0)
                ext.stats.ignore(ext.config.prioritize_verb)
                continue
            _timed(recorder, ext, "Score", "Success", t0)
            weight = ext.config.weight
            for host, score in scores.items():
                totals[host] = totals.get(host, 0) + scaled_score(score, weight)
        return totals

    def binder_for(self, pod: Pod) -> HTTPExtender | None:
        for ext in self.all:
            if ext.is_binder and ext.is_interested(pod):
                return ext
        return None

    def bind(self, ext: HTTPExtender, pod: Pod, node_name: str, recorder: Any = None) -> None:
        t0 = perf_counter()
        try:
            ext.bind(pod, node_name)
        except ExtenderError:
            _timed(recorder, ext, "Bind", "Error", t0)
            raise
        _timed(recorder, ext, "Bind", "Success", t0)

    def stats(self) -> dict[str, ExtenderStats]:
        return {e.name: e.stats for e in self.all}


def _timed(recorder: Any, ext: HTTPExtender, point: str, status: str, t0: float) -> None:
    """Report an extender call to the metrics recorder as a plugin's (None: not timed)."""
    if recorder is not None:
        recorder.plugin(ext.name, point, status, perf_counter() - t0)
