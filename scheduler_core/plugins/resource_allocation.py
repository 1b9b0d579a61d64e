"""The resource-allocation scoring framework shared by NodeResourcesFit and
NodeResourcesBalancedAllocation, vectorised over nodes.

Per configured resource a scorer sees ``(allocatable, requested)`` columns, where ``requested``
already includes the incoming pod. A resource whose allocatable is 0 on a node is skipped for
that node by every scorer; a scalar resource the pod does not request is skipped everywhere.
All arithmetic is int64 as in Go: ``//`` is applied to non-negative operands only.

See docs/scheduling-model.md, "NodeResourcesFit", and
docs/scheduling-model.md, "NodeResourcesBalancedAllocation".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_core.api.pod import PodSpec
from scheduler_core.api.quantity import INT64_MAX
from scheduler_core.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource
from scheduler_core.errors import ConfigError
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins.helper import (
    alloc_profile,
    require_int,
    require_list,
    require_mapping,
    require_str,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "MAX_UTILIZATION",
    "Part",
    "ResourceSpec",
    "Scorer",
    "allocatable_requested",
    "balanced_scorer",
    "broken_linear",
    "least_allocated_scorer",
    "most_allocated_scorer",
    "parse_resources",
    "pod_requests",
    "requested_to_capacity_ratio_scorer",
]

MAX_UTILIZATION = 100
_MAX_SCORE = 100


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))

# Per resource that is not bypassed: (allocatable over idx, or the int every node shares;
# the nodes' requested over idx, without the pod (may be a read-only view); the pod's request;
# weight; presence mask, None when every node has a non-zero allocatable). A scorer's
# "requested" is ``used + request`` (``_requested``).
Part = tuple[Any, np.ndarray, int, int, "np.ndarray | None"]
Scorer = Callable[[list[Part], int], np.ndarray]


def parse_resources(value: Any, path: str) -> tuple[ResourceSpec, ...]:
    """A ``[{name, weight}]`` list; empty means the default (cpu and memory, weight 1); a
    missing or 0 weight defaults to 1 (range checks are the caller's)."""
    out = []
    for i, item in enumerate(require_list(value, path)):
        ipath = f"{path}[{i}]"
        data = require_mapping(item, ipath)
        for key in data:
            if key not in ("name", "weight"):
                raise ConfigError("unknown field (expected one of: name, weight)",
                                  field=f"{ipath}.{key}")
        name = require_str(data.get("name"), f"{ipath}.name")
        if not name:
            raise ConfigError("must be non-empty", field=f"{ipath}.name")
        weight = require_int(data.get("weight"), f"{ipath}.weight")
        out.append(ResourceSpec(name, weight or 1))
    return tuple(out) or DEFAULT_RESOURCES


def pod_requests(spec: PodSpec, resources: Sequence[ResourceSpec], use_requested: bool
                 ) -> tuple[int, ...]:
    """The pod's request per configured resource; without ``use_requested`` cpu and memory
    carry the non-zero defaults (100m / 200Mi per container that sets no request)."""
    out = []
    for r in resources:
        if not use_requested and r.name == CPU:
            out.append(spec.non_zero_cpu)
        elif not use_requested and r.name == MEMORY:
            out.append(spec.non_zero_memory)
        else:
            out.append(spec.requests.get(r.name, 0))
    return tuple(out)


def allocatable_requested(
    table: NodeTable, name: str, pod_request: int, idx: Any, use_requested: bool, weight: int = 1
) -> Part | None:
    """The scorer input for one resource over ``idx``; None when the resource is bypassed on
    every node (a scalar the pod does not request, or one no node has)."""
    if pod_request == 0 and is_scalar_resource(name):
        return None
    if name == CPU:
        used = table.requested[CPU] if use_requested else table.nonzero_cpu
    elif name == MEMORY:
        used = table.requested[MEMORY] if use_requested else table.nonzero_memory
    elif name == EPHEMERAL_STORAGE or is_scalar_resource(name):
        used = table.requested.get(name)
        if used is None:
            return None
    else:  # "pods" is not scored
        return None
    uniform, positive = alloc_profile(table, name)
    if uniform is not None:
        return None if uniform == 0 else (uniform, used[idx], pod_request, weight, None)
    alloc = table.allocatable[name][idx]
    return alloc, used[idx], pod_request, weight, None if positive else alloc != 0


def _requested(used: np.ndarray, pod_request: int) -> np.ndarray:
    """Requested including the pod (a read-only view of a column when the pod adds 0)."""
    return used + pod_request if pod_request else used


def _divisor(alloc: Any, present: np.ndarray | None) -> Any:
    """``alloc`` as a divisor: absent (0) entries become 1; their quotient is masked anyway."""
    return alloc if present is None else np.maximum(alloc, 1)


def _weighted_mean(scored: list[tuple[np.ndarray, np.ndarray | None, int]], n: int
                   ) -> np.ndarray:
    """Σ score_i·w_i // Σ w_i over the resources present on each node (0 when none are).
    Absent resources must already score 0."""
    if not scored:
        return np.zeros(n, dtype=np.int64)
    node_score: np.ndarray | None = None
    weight_sum: Any = 0
    for score, present, w in scored:
        if w != 1:
            score *= w
        if node_score is None:
            node_score = score
        else:
            node_score += score
        weight_sum = weight_sum + (w if present is None else present * np.int64(w))
    assert node_score is not None
    if isinstance(weight_sum, int):
        if weight_sum != 1:
            node_score //= weight_sum
        return node_score
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def least_allocated_scorer(parts: list[Part], n: int) -> np.ndarray:
    """``(cap - req) * 100 // cap``, 0 when ``req > cap``."""
    scored = []
    for alloc, used, q, w, present in parts:
        if type(alloc) is int and q <= INT64_MAX:
            # every node's alloc: alloc - (used + q) == (alloc - q) - used (int64 sums wrap
            # alike in either order; a q beyond int64 raises OverflowError as before)
            free = np.subtract(alloc - q, used)
        else:
            free = np.subtract(alloc, _requested(used, q))
        np.maximum(free, 0, out=free)  # req > cap scores 0 (so does an absent resource)
        free *= _MAX_SCORE
        free //= _divisor(alloc, present)
        scored.append((free, present, w))
    return _weighted_mean(scored, n)


def most_allocated_scorer(parts: list[Part], n: int) -> np.ndarray:
    """``min(req, cap) * 100 // cap``."""
    scored = []
    for alloc, used, q, w, present in parts:
        taken = np.minimum(_requested(used, q), alloc)  # an absent resource (cap 0) scores 0
        taken *= _MAX_SCORE
        taken //= _divisor(alloc, present)
        scored.append((taken, present, w))
    return _weighted_mean(scored, n)


def _trunc_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero); ``b > 0``."""
    q = abs(a) // b
    return q if a >= 0 else -q


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over ``(utilization, score)`` points (score already
    scaled to 0..100)."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = shape[i - 1]
                return ps + _trunc_div((s - ps) * (p - pu), u - pu)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio_scorer(shape: Sequence[tuple[int, int]]) -> Scorer:
    """``shape`` as configured (score 0..10); scores are scaled by 10. Per resource
    ``r = f(100)`` if ``req > cap`` else ``f(req * 100 // cap)``; only ``r > 0`` counts; the
    result is ``round(Σ r·w / Σ w)`` (math.Round, halves away from zero)."""
    scaled = [(u, s * (_MAX_SCORE // 10)) for u, s in shape]
    f = broken_linear(scaled)
    lut = np.array([f(p) for p in range(MAX_UTILIZATION + 1)], dtype=np.int64)

    def scorer(parts: list[Part], n: int) -> np.ndarray:
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for alloc, used, q, w, present in parts:
            util = _requested(used, q) * MAX_UTILIZATION
            util //= _divisor(alloc, present)
            np.minimum(util, MAX_UTILIZATION, out=util)  # req > cap reads f(100)
            r = lut[util]
            if present is not None:
                r[~present] = 0
            node_score += r * w if w != 1 else r
            weight_sum += (r > 0) * np.int64(w)  # only resources scoring > 0 count
        # round(ns / ws) for non-negative integers, exactly as math.Round on the float ratio
        return np.where(weight_sum > 0,
                        (2 * node_score + weight_sum) // np.maximum(2 * weight_sum, 1), 0)

    return scorer


def balanced_scorer(parts: list[Part], n: int) -> np.ndarray:
    """``int((1 - std) * 100)`` of the per-resource fractions ``min(req / cap, 1)``; with two
    fractions ``std = |f0 - f1| / 2``, with more the population standard deviation, else 0.
    Float operations follow the Go code's order, so results match bit for bit."""
    fractions = []
    presents = []
    for alloc, used, q, _, present in parts:
        req = _requested(used, q)
        if present is None:
            frac = req / alloc
        else:
            frac = np.divide(req, alloc, out=np.zeros(n, dtype=np.float64), where=present)
        np.minimum(frac, 1.0, out=frac)
        fractions.append(frac)
        presents.append(present)
    if all(p is None for p in presents):
        if len(fractions) < 2:
            return np.full(n, _MAX_SCORE, dtype=np.int64)
        if len(fractions) == 2:
            std = fractions[0] - fractions[1]
            std /= 2
            np.abs(std, out=std)
        else:
            std = _std(fractions, None, n)
        return _to_score(std)
    masks = [np.ones(n, dtype=bool) if p is None else p for p in presents]
    counts = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for frac, present in zip(fractions, masks, strict=True):
        np.copyto(first, frac, where=present & (counts == 0))
        np.copyto(second, frac, where=present & (counts == 1))
        counts += present
    std = np.zeros(n, dtype=np.float64)
    two = counts == 2
    std[two] = np.abs((first[two] - second[two]) / 2)
    many = counts > 2
    if many.any():
        std[many] = _std(fractions, masks, n)[many]
    return _to_score(std)


def _to_score(std: np.ndarray) -> np.ndarray:
    """``int64((1 - std) * 100)``: truncation of a value in [0, 100]."""
    np.subtract(1, std, out=std)
    std *= _MAX_SCORE
    return std.astype(np.int64)


def _std(fractions: list[np.ndarray], presents: list[np.ndarray] | None, n: int) -> np.ndarray:
    """sqrt(Σ (f - mean)² / len) over the present fractions, summed in resource order."""
    total = np.zeros(n, dtype=np.float64)
    counts = np.zeros(n, dtype=np.int64)
    for i, frac in enumerate(fractions):
        if presents is None:
            total += frac
            counts += 1
        else:
            total += np.where(presents[i], frac, 0.0)
            counts += presents[i]
    safe = np.maximum(counts, 1)
    mean = total / safe
    acc = np.zeros(n, dtype=np.float64)
    for i, frac in enumerate(fractions):
        d = frac - mean
        sq = d * d
        acc += sq if presents is None else np.where(presents[i], sq, 0.0)
    return np.sqrt(acc / safe)
