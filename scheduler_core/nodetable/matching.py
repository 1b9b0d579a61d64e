"""Vectorised matchers over the node table: node selector terms, nodeSelector maps, taints.

Each function returns a boolean mask over ``idx`` (a slice or an int array of slots). Work is
per distinct label value or taint set, never per node in Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler_core.api.selectors import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
    parse_int64,
)
from scheduler_core.nodetable.table import NodeTable

__all__ = [
    "match_node_selector",
    "match_node_selector_map",
    "match_requirement",
    "match_term",
    "taint_lookup",
    "untolerated_taint",
]

_BLOCKING = ("NoSchedule", "NoExecute")


def _ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=bool)


def _n(table: NodeTable, idx: Any) -> int:
    if isinstance(idx, slice):
        return len(range(*idx.indices(table.capacity)))
    return len(idx)


def match_requirement(table: NodeTable, r: NodeSelectorRequirement, idx: Any) -> np.ndarray:
    col = table.codes(r.key)
    op = r.op
    if col is None:  # no node has the key
        return np.full(_n(table, idx), op in ("NotIn", "DoesNotExist"), dtype=bool)
    codes = col[idx]
    if op == "Exists":
        return codes >= 0
    if op == "DoesNotExist":
        return codes < 0
    if op in ("In", "NotIn"):
        wanted = [c for v in r.values if (c := table.code_of(r.key, v)) >= 0]
        if not wanted:
            hit = np.zeros(len(codes), dtype=bool)
        elif len(wanted) == 1:
            hit = codes == wanted[0]
        else:
            hit = np.isin(codes, np.asarray(wanted, dtype=np.int32))
        return hit if op == "In" else ~hit
    ints, ok = table.numeric_values(r.key)
    bound = parse_int64(r.values[0]) if r.values else None
    if bound is None:
        return np.zeros(len(codes), dtype=bool)
    vals = ints[codes]  # code -1 reads the trailing "does not parse" entry
    hit = vals > bound if op == "Gt" else vals < bound
    hit &= ok[codes]
    return hit


def _slots_of(table: NodeTable, idx: Any) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(*idx.indices(table.capacity))
    return np.asarray(idx)


def match_term(table: NodeTable, term: NodeSelectorTerm, idx: Any) -> np.ndarray:
    """A node selector term: all expressions and fields ANDed; an empty term matches nothing."""
    n = _n(table, idx)
    if term.empty:
        return np.zeros(n, dtype=bool)
    mask = _ones(n)
    for r in term.expressions:
        mask &= match_requirement(table, r, idx)
    if term.fields:
        slots = _slots_of(table, idx)
        for r in term.fields:
            named = [s for v in r.values if (s := table.slot_of.get(v)) is not None]
            hit = np.isin(slots, np.asarray(named, dtype=np.int64))
            mask &= hit if r.op == "In" else ~hit
    return mask


def match_node_selector(table: NodeTable, selector: NodeSelector, idx: Any) -> np.ndarray:
    mask = np.zeros(_n(table, idx), dtype=bool)
    for term in selector.terms:
        mask |= match_term(table, term, idx)
    return mask


def match_node_selector_map(table: NodeTable, selector: dict[str, str], idx: Any) -> np.ndarray:
    """``spec.nodeSelector``: every key=value must be present."""
    mask = _ones(_n(table, idx))
    for key, value in selector.items():
        col = table.codes(key)
        code = table.code_of(key, value)
        if col is None or code < 0:
            return np.zeros(len(mask), dtype=bool)
        mask &= col[idx] == code
    return mask


def taint_lookup(
    table: NodeTable, tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> np.ndarray:
    """Per taint-set id: True when every taint with one of ``effects`` is tolerated.

    Memoised on the table per (tolerations, effects); taint sets only ever get appended, so an
    entry stays valid while the number of sets is unchanged."""
    key = ("taint_lookup", tolerations, effects)
    hit = table.memo.get(key)
    if hit is not None and len(hit) == len(table.taint_sets):
        return hit
    out = np.ones(len(table.taint_sets), dtype=bool)
    for i, taints in enumerate(table.taint_sets):
        out[i] = untolerated_taint(taints, tolerations, effects) is None
    if len(table.memo) > 4096:
        table.memo.clear()
    table.memo[key] = out
    return out


def untolerated_taint(
    taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> Taint | None:
    for t in taints:
        if t.effect in effects and not any(tol.tolerates(t) for tol in tolerations):
            return t
    return None


BLOCKING_EFFECTS = _BLOCKING
