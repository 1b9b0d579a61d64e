"""Split a workload selection into ``n`` shards of about equal expected run time.

    parse_shard("2/4") -> (2, 4)                 1-based shard index, shard count
    expected_cost(test_case, workload) -> float  relative run-time estimate (not seconds)
    shard(workloads, i, n) -> [(tc, w), ...]     the workloads of shard i of n
    plan(workloads, n) -> [[(tc, w), ...], ...]  all n shards at once

``schedperf run --shard i/n`` runs shard ``i`` of the selection; ``n`` CI jobs with
``--shard 1/n`` ... ``--shard n/n`` together run every selected workload exactly once, and
``schedperf merge`` puts their output folders back together (docs/ci.md).

**Cost model.** A workload's cost is ``pods * (1 + log10(1 + nodes)) * factor + nodes *
NODE_COST``, where nodes and pods are what its ops create (``bench.selection.sizes``): every
pod is one scheduling cycle whose filter/score work is vectorised over the node table, so it
grows slowly with the node count; creating a node is cheap. ``factor`` multiplies the
:data:`TOPIC_FACTORS` of the test case's topic and the :data:`FEATURE_FACTORS` of the
features its templates use, each feature counted once (found by searching the text of every
template file its ops name for ``podAffinity:``/``podAntiAffinity:``,
``topologySpreadConstraints:``, ``priority:``/``priorityClassName:``). The factors were fitted
by eye to about 120 wall times of the built-in catalog on a 2-core development machine:
preemption (dry runs over victims) roughly doubles the time per pod and the requeue-heavy
event_handling cases cost about 1.5 times as much. About two estimates in three are within a
factor of 2 of the measured wall time (five in six within 3); that is enough for balancing
many workloads, and the shards' real wall times show how far off it was (docs/ci.md). A test
case schedperf cannot run (``unsupported_reason``) costs
:data:`UNSUPPORTED_COST` (it is reported at once), and one whose ops cannot be resolved
:data:`UNKNOWN_COST` (it fails at once too).

**Assignment.** Greedy longest-processing-time first: workloads sorted by decreasing cost
(ties by topic, full name, then position in the selection), each given to the shard with the
smallest total so far (ties to the lowest index). LPT's makespan is at most 4/3 of the best
possible. The result depends only on the selection, never on the machine, time or hash seed,
so every CI job computes the same partition; within a shard the selection's order is kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import fields
from functools import lru_cache
from pathlib import Path

from bench.selection import sizes
from workloads.config import ConfigFileError, TestCase, Workload, resolve
from workloads.config.ops import Op

__all__ = [
    "FEATURE_FACTORS",
    "NODE_COST",
    "TOPIC_FACTORS",
    "UNKNOWN_COST",
    "UNSUPPORTED_COST",
    "ShardError",
    "expected_cost",
    "parse_shard",
    "plan",
    "shard",
    "shard_costs",
    "workload_features",
]

Pair = tuple[TestCase, Workload]

NODE_COST = 0.05
UNSUPPORTED_COST = 1.0
UNKNOWN_COST = 1.0
TOPIC_FACTORS: dict[str, float] = {
    "default_preemption": 2.0,
    "event_handling": 1.5,
}
FEATURE_FACTORS: dict[str, float] = {
    "preemption": 2.0,
    "inter_pod_affinity": 1.25,
    "topology_spread": 1.25,
}
# topics that already imply a feature: its factor is not applied twice
_TOPIC_FEATURE = {"default_preemption": "preemption"}
_FEATURE_PATTERNS: dict[str, re.Pattern[str]] = {
    "preemption": re.compile(r"\bpriority(ClassName)?\s*:", re.IGNORECASE),
    "inter_pod_affinity": re.compile(r"\bpod(Anti)?Affinity\s*:"),
    "topology_spread": re.compile(r"\btopologySpreadConstraints\s*:"),
}
_SHARD_RE = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``i/n`` with ``1 <= i <= n``."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``: shard 2 of 4, 1-based. Raises :class:`ShardError`."""
    match = _SHARD_RE.fullmatch(text)
    if match is None:
        raise ShardError(f"{text!r} is not a shard: expected I/N with whole numbers, "
                         "e.g. 2/4 (shard 2 of 4)")
    i, n = int(match.group(1)), int(match.group(2))
    if n < 1:
        raise ShardError(f"{text!r}: the shard count N must be at least 1")
    if not 1 <= i <= n:
        raise ShardError(f"{text!r}: the shard index I must be between 1 and {n} "
                         "(shards are numbered from 1)")
    return i, n


@lru_cache(maxsize=256)
def _template_features(path: Path) -> frozenset[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(name for name, pattern in _FEATURE_PATTERNS.items()
                     if pattern.search(text))


def workload_features(test_case: TestCase, workload: Workload) -> frozenset[str]:
    """Cost-relevant features of the workload's pod templates (names of FEATURE_FACTORS).

    Raises ConfigFileError when the workload's ops cannot be resolved."""
    found: set[str] = set()
    for op in resolve(test_case, workload):
        for path in _template_paths(op):
            found |= _template_features(path)
    return frozenset(found)


def _template_paths(op: Op) -> list[Path]:
    """Every template file an op names (pod templates, createAny/churn templatePaths, ...)."""
    paths: list[Path] = []
    for f in fields(op):
        value = getattr(op, f.name)
        if isinstance(value, Path):
            paths.append(value)
        elif isinstance(value, tuple | list):
            paths.extend(v for v in value if isinstance(v, Path))
        elif isinstance(value, Op):
            paths.extend(_template_paths(value))
    return paths


def expected_cost(test_case: TestCase, workload: Workload) -> float:
    """Relative expected run time of one workload (module docstring: the cost model)."""

    if test_case.unsupported_reason is not None:
        return UNSUPPORTED_COST
    try:
        nodes, pods = sizes(test_case, workload)
        features = workload_features(test_case, workload)
    except ConfigFileError:
        return UNKNOWN_COST
    factor = TOPIC_FACTORS.get(test_case.topic, 1.0)
    implied = _TOPIC_FEATURE.get(test_case.topic)
    for feature in sorted(features):
        if feature != implied:
            factor *= FEATURE_FACTORS[feature]
    cost = pods * (1.0 + math.log10(1 + nodes)) * factor + nodes * NODE_COST
    return max(cost, UNKNOWN_COST)


def _assign(workloads: Sequence[Pair], n: int) -> tuple[list[int], list[float]]:
    """Shard number (0-based) of every workload, and each shard's total cost."""
    costs = [expected_cost(tc, w) for tc, w in workloads]
    order = sorted(range(len(workloads)),
                   key=lambda k: (-costs[k], workloads[k][0].topic, workloads[k][1].full_name,
                                  k))
    totals = [0.0] * n
    owner = [0] * len(workloads)
    for k in order:
        target = min(range(n), key=lambda s: (totals[s], s))
        owner[k] = target
        totals[target] += costs[k]
    return owner, totals


def plan(workloads: Sequence[Pair], n: int) -> list[list[Pair]]:
    """All ``n`` shards at once (index 0 is shard 1), each in the selection's order."""
    if n < 1:
        raise ShardError(f"shard count {n}: expected at least 1")
    owner, _ = _assign(workloads, n)
    shards: list[list[Pair]] = [[] for _ in range(n)]
    for pair, s in zip(workloads, owner, strict=True):
        shards[s].append(pair)
    return shards


def shard(workloads: Sequence[Pair], i: int, n: int) -> list[Pair]:
    """The workloads of shard ``i`` of ``n`` (1-based), in the selection's order.

    Shards 1..n partition ``workloads``: each workload is in exactly one of them. A shard can
    be empty when there are fewer workloads than shards."""
    if n < 1 or not 1 <= i <= n:
        raise ShardError(f"shard {i}/{n}: expected 1 <= I <= N")
    return plan(workloads, n)[i - 1]


def shard_costs(workloads: Sequence[Pair], n: int) -> list[float]:
    """The total expected cost of each of the ``n`` shards (index 0 is shard 1)."""
    if n < 1:
        raise ShardError(f"shard count {n}: expected at least 1")
    return _assign(workloads, n)[1]
