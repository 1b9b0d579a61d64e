"""Compare the core's evaluation of a pod with the reference's, step by step.

``compare_evaluations`` walks both :class:`~workloads.reference.model.Evaluation` values and
returns one :class:`Difference` per thing that differs: the PreFilter status, each PreFilter
plugin's answer, the merged node set and the skipped plugins; the feasible set and, per node,
the first failing Filter plugin with its code and reasons; PreScore, and per plugin and node
the normalised score, the weights, the weighted totals and the set of best nodes; the outcome
and the FitError text. ``compare_decision`` checks what the core then did in its real
scheduling cycle against the same evaluation (the node it picked, the preemption victims and
nominee, the failure message).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workloads.reference.model import Evaluation, Filter, PreFilter, ProfileInfo, Score, Status

__all__ = ["Decision", "Difference", "compare_decision", "compare_evaluations",
           "compare_profiles"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One thing the two schedulers disagree on. ``stage``: PreFilter, Filter, PreScore,
    Score, PostFilter or Outcome; ``node`` and ``plugin`` are "" when not about one;
    ``field``: what differs (code, reasons, score, feasible, best, victims, ...)."""

    stage: str
    plugin: str
    node: str
    field: str
    core: str
    reference: str


@dataclass(frozen=True, slots=True)
class Decision:
    """What the core's scheduling cycle did with the pod: ``node`` it was bound to (or held
    at Permit on), "" if none; ``examined_all``: its filter search examined every node (no
    numFeasibleNodesToFind cut, no nominated-node fast path), so its pick must be among the
    reference's best; ``message`` of the failure; ``nominated``: its nomination afterwards;
    ``victims``: "namespace/name" of the pods it preempted."""

    node: str
    examined_all: bool
    message: str
    post_filter_ran: bool
    nominated: str
    victims: tuple[str, ...]


def _text(values: Iterable[str] | None) -> str:
    if values is None:
        return "(all)"
    return ", ".join(sorted(values)) or "(none)"


def _status_text(s: Status) -> str:
    return f"{s.code} {s.plugin}: {'; '.join(s.reasons)}".rstrip(": ")


def _statuses(stage: str, plugin: str, node: str, core: Status, ref: Status
              ) -> list[Difference]:
    out = []
    if core.code != ref.code:
        out.append(Difference(stage, plugin or core.plugin or ref.plugin, node, "code",
                              core.code, ref.code))
    if core.plugin != ref.plugin:
        out.append(Difference(stage, plugin or ref.plugin or core.plugin, node, "plugin",
                              core.plugin, ref.plugin))
    if core.reasons != ref.reasons:
        out.append(Difference(stage, plugin or core.plugin or ref.plugin, node, "reasons",
                              "; ".join(core.reasons), "; ".join(ref.reasons)))
    return out


def _skipped(stage: str, core: frozenset[str], ref: frozenset[str],
             shared: frozenset[str] | None) -> list[Difference]:
    """Plugins skipped on one side only, among the plugins both profiles run at ``stage``
    (a plugin only one profile has is reported once per workload by compare_profiles)."""
    differ = core ^ ref
    if shared is not None:
        differ &= shared
    return [Difference(stage, plugin, "", "skipped", str(plugin in core).lower(),
                       str(plugin in ref).lower()) for plugin in sorted(differ)]


def _pre_filter(core: PreFilter, ref: PreFilter, shared: frozenset[str] | None
                ) -> list[Difference]:
    out = _statuses("PreFilter", "", "", core.status, ref.status)
    mine = {p.plugin: p for p in core.plugins}
    for rp in ref.plugins:
        cp = mine.get(rp.plugin)
        if cp is None:
            continue  # a plugin only one profile has shows up in the merged results
        if cp.code != rp.code:
            out.append(Difference("PreFilter", rp.plugin, "", "code", cp.code, rp.code))
        elif cp.reasons != rp.reasons:
            out.append(Difference("PreFilter", rp.plugin, "", "reasons",
                                  "; ".join(cp.reasons), "; ".join(rp.reasons)))
        if cp.node_names != rp.node_names:
            out.append(Difference("PreFilter", rp.plugin, "", "nodeNames",
                                  _text(cp.node_names), _text(rp.node_names)))
    if core.node_names != ref.node_names:
        out.append(Difference("PreFilter", "", "", "nodeNames", _text(core.node_names),
                              _text(ref.node_names)))
    out.extend(_skipped("PreFilter", core.skipped, ref.skipped, shared))
    return out


def _filter(core: Filter | None, ref: Filter | None) -> list[Difference]:
    if core is None or ref is None:
        if (core is None) != (ref is None):
            return [Difference("Filter", "", "", "ran", str(core is not None).lower(),
                               str(ref is not None).lower())]
        return []
    out = []
    if set(core.feasible) != set(ref.feasible):
        for node in sorted(set(core.feasible) ^ set(ref.feasible)):
            c = core.rejected.get(node)
            r = ref.rejected.get(node)
            rejected_by = (c or r)
            out.append(Difference("Filter", rejected_by.plugin if rejected_by else "", node,
                                  "feasible", "feasible" if c is None else _status_text(c),
                                  "feasible" if r is None else _status_text(r)))
    for node, r in ref.rejected.items():
        c = core.rejected.get(node)
        if c is not None:
            out.extend(_statuses("Filter", "", node, c, r))
    return out


def _score(core: Score | None, ref: Score | None, shared: frozenset[str] | None
           ) -> list[Difference]:
    if core is None or ref is None:
        if (core is None) != (ref is None):
            return [Difference("Score", "", "", "ran", str(core is not None).lower(),
                               str(ref is not None).lower())]
        return []
    out = _statuses("PreScore", "", "", core.status, ref.status)
    out.extend(_skipped("PreScore", core.skipped, ref.skipped, shared))
    for rp in ref.plugins:
        cp = core.plugin(rp.plugin)
        if cp is None:
            continue
        if cp.weight != rp.weight:
            out.append(Difference("Score", rp.plugin, "", "weight", str(cp.weight),
                                  str(rp.weight)))
        for node, value in rp.scores.items():
            mine = cp.scores.get(node)
            if mine is not None and mine != value:
                out.append(Difference("Score", rp.plugin, node, "score", str(mine),
                                      str(value)))
    for node, value in ref.totals.items():
        mine = core.totals.get(node)
        if mine is not None and mine != value:
            out.append(Difference("Score", "", node, "total", str(mine), str(value)))
    if core.best != ref.best:
        out.append(Difference("Score", "", "", "best", _text(core.best), _text(ref.best)))
    return out


def compare_evaluations(core: Evaluation, ref: Evaluation,
                        shared: dict[str, frozenset[str]] | None = None) -> list[Difference]:
    """Every difference between two evaluations of the same pod (module docstring);
    ``shared``: extension point -> the plugins both profiles run there."""
    shared = shared or {}
    out: list[Difference] = []
    if core.profile != ref.profile:
        out.append(Difference("Outcome", "", "", "profile", core.profile, ref.profile))
    if set(core.nodes) != set(ref.nodes):
        out.append(Difference("Outcome", "", "", "nodes", _text(core.nodes), _text(ref.nodes)))
        return out  # the mirror lost track: nothing else is comparable
    out.extend(_pre_filter(core.pre_filter, ref.pre_filter, shared.get("PreFilter")))
    out.extend(_filter(core.filter, ref.filter))
    out.extend(_score(core.score, ref.score, shared.get("PreScore")))
    if core.outcome != ref.outcome:
        out.append(Difference("Outcome", "", "", "outcome", core.outcome, ref.outcome))
    return out


def compare_decision(decision: Decision, ref: Evaluation) -> list[Difference]:
    """The core's real cycle against the reference's evaluation of the same snapshot."""
    out: list[Difference] = []
    if ref.outcome == "Scheduled":
        if not decision.node:
            out.append(Difference("Outcome", "", "", "decision", "not placed",
                                  "placed on one of " + _text(ref.score.best if ref.score
                                                              else ())))
        elif ref.filter is not None and decision.node not in ref.filter.feasible:
            out.append(Difference("Outcome", "", decision.node, "pick", decision.node,
                                  "not feasible"))
        elif decision.examined_all and ref.score is not None and \
                decision.node not in ref.score.best:
            out.append(Difference("Outcome", "", decision.node, "pick", decision.node,
                                  _text(ref.score.best)))
        return out
    if decision.node:
        out.append(Difference("Outcome", "", decision.node, "decision",
                              f"placed on {decision.node}", ref.outcome))
        return out
    if ref.outcome == "Unschedulable" and decision.message != ref.message:
        out.append(Difference("Outcome", "", "", "message", decision.message, ref.message))
    pf = ref.post_filter
    if pf is None or not decision.post_filter_ran:
        return out
    victims = tuple(sorted(f"{v.namespace}/{v.name}" for v in pf.victims))
    if decision.victims != victims:
        out.append(Difference("PostFilter", "DefaultPreemption", "", "victims",
                              _text(decision.victims), _text(victims)))
    if pf.nominated_node is not None and decision.nominated != pf.nominated_node:
        out.append(Difference("PostFilter", "DefaultPreemption", "", "nominatedNode",
                              decision.nominated or "(none)", pf.nominated_node or "(none)"))
    return out


def compare_profiles(core_points: dict[str, list[str]], core_weights: dict[str, int],
                     ref: ProfileInfo) -> list[Difference]:
    """The plugins each extension point runs and the score weights, per plugin (stage
    Profile; ``field``: the extension point, or ``weight``; values ``enabled``/``absent``).
    Two lists with the same plugins in another order give one row without a plugin."""
    out = []
    for point in sorted(set(core_points) | set(ref.plugins)):
        mine = list(core_points.get(point, ()))
        theirs = list(ref.plugins.get(point, ()))
        for plugin in sorted(set(mine) ^ set(theirs)):
            out.append(Difference("Profile", plugin, "", point,
                                  "enabled" if plugin in mine else "absent",
                                  "enabled" if plugin in theirs else "absent"))
        if set(mine) == set(theirs) and mine != theirs:
            out.append(Difference("Profile", "", "", point, ", ".join(mine), ", ".join(theirs)))
    both = set(core_points.get("Score", ())) & set(ref.plugins.get("Score", ()))
    for plugin in sorted(both):
        mine_w, theirs_w = core_weights.get(plugin, 1), ref.score_weights.get(plugin, 1)
        if mine_w != theirs_w:
            out.append(Difference("Profile", plugin, "", "weight", str(mine_w), str(theirs_w)))
    return out
