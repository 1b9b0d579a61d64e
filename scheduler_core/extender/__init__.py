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
* ``process_preemption`` (the preemption Evaluator's callExtenders): each interested
  extender with a preempt verb in turn keeps some of the candidate nodes and names their
  victims; an error fails preemption unless the extender is ignorable.

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
    HTTPExtender,
)

__all__ = ["EXTENDER_NAME", "ExtenderError", "ExtenderStats", "Extenders", "HTTPExtender",
           "scaled_score", "wire_pod"]

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
        self.has_preempters = any(e.is_preempter for e in self.all)
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
                manifest = wire_pod(pod)
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
                manifest = wire_pod(pod)
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

    def process_preemption(self, pod: Pod, victims: dict[str, tuple[list[Pod], int]],
                           pods_on: Any, recorder: Any = None
                           ) -> dict[str, tuple[list[Pod], int]]:
        """callExtenders: candidate node -> (victims, PDB violations) as the extenders leave
        it (in the last extender's order). ``pods_on(node)`` lists a node's pods, for turning
        the UIDs an extender answers back into pods. Raises ExtenderError (a non-ignorable
        failure, a victim not on its node, a node left without victims)."""
        manifest: dict[str, Any] | None = None
        for ext in self.all:
            if not victims:
                break
            if not ext.is_preempter or not ext.is_interested(pod):
                continue
            if manifest is None:
                manifest = wire_pod(pod)
            sent = {node: ([wire_pod(v) for v in pods], n)
                    for node, (pods, n) in victims.items()}
            t0 = perf_counter()
            try:
                answer = ext.preempt(manifest, sent)
                kept = _victims_of(ext, answer, pods_on)
            except ExtenderError:
                _timed(recorder, ext, "PostFilter", "Error", t0)
                if ext.ignorable:
                    ext.stats.ignore(ext.config.preempt_verb)
                    continue
                raise
            _timed(recorder, ext, "PostFilter", "Success", t0)
            for node, (pods, _) in list(kept.items()):
                if not pods:
                    if not ext.ignorable:
                        raise ExtenderError(f'expected at least one victim pod on node "{node}"')
                    del kept[node]
            victims = kept
        return victims

    def bind(self, ext: HTTPExtender, pod: Pod, node_name: str, recorder: Any = None) -> None:
        t0 = perf_counter()
        try:
            ext.bind(pod, node_name)
        except ExtenderError:
            _timed(recorder, ext, "Bind", "Error", t0)
            raise
        _timed(recorder, ext, "Bind", "Success", t0)


def wire_pod(pod: Pod) -> dict[str, Any]:
    """The pod as an extender receives it: its manifest, with its UID."""
    m = pod_manifest(pod)
    m["metadata"]["uid"] = pod.uid
    return m


def _victims_of(ext: HTTPExtender, answer: dict[str, tuple[list[str], int]], pods_on: Any
                ) -> dict[str, tuple[list[Pod], int]]:
    """convertToVictims: the answer's UIDs as the pods on their nodes."""
    out: dict[str, tuple[list[Pod], int]] = {}
    for node, (uids, n) in answer.items():
        by_uid = {p.uid: p for p in pods_on(node)}
        pods = []
        for uid in uids:
            if uid not in by_uid:
                raise ExtenderError(f"extender: {ext.name} claims to preempt pod (UID: "
                                    f"&{{{uid}}}) on node: {node}, but the pod is not found "
                                    "on that node")
            pods.append(by_uid[uid])
        out[node] = (pods, n)
    return out


def _timed(recorder: Any, ext: HTTPExtender, point: str, status: str, t0: float) -> None:
    """Report an extender call to the metrics recorder as a plugin's (None: not timed)."""
    if recorder is not None:
        recorder.plugin(ext.name, point, status, perf_counter() - t0)
