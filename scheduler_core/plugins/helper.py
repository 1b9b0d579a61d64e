"""Shared plugin helpers: DefaultNormalizeScore, index arithmetic, version-keyed memoisation
on the node table, and small validators for plugin args.

Nothing here loops over nodes in Python.

See docs/scheduling-model.md, "Score normalization".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import MAX_NODE_SCORE
from scheduler_core.nodetable.table import NodeTable

__all__ = [
    "SpecCache",
    "alloc_profile",
    "check_keys",
    "count",
    "default_normalize",
    "is_zeros",
    "label_name_problem",
    "memo_by_version",
    "no_args",
    "per_spec",
    "require_int",
    "require_list",
    "require_mapping",
    "require_str",
    "zeros",
]

_MEMO_LIMIT = 4096
_SPEC_CACHE_LIMIT = 4096
_MAX = np.maximum.reduce  # ndarray.max() without the method's Python-level wrapper
_ALLOC_KEYS: dict[str, tuple[str, str]] = {}  # resource name -> its alloc_profile memo key


def default_normalize(
    scores: np.ndarray, max_priority: int = MAX_NODE_SCORE, reverse: bool = False
) -> np.ndarray:
    """kube's ``helper.DefaultNormalizeScore``, in place on an int64 array (also returned).

    The running maximum starts at 0. When it stays 0, scores are left alone (or all set to
    ``max_priority`` when ``reverse``); otherwise ``s = max_priority * s // max`` and, when
    ``reverse``, ``max_priority - s``."""
    top = int(_MAX(scores)) if len(scores) else 0
    if top <= 0:
        if reverse:
            scores[:] = max_priority
        return scores
    np.multiply(scores, max_priority, out=scores)
    np.floor_divide(scores, top, out=scores)
    if reverse:
        np.subtract(max_priority, scores, out=scores)
    return scores


_zeros = np.zeros(1024, dtype=np.int64)  # shared, read-only, all 0; replaced when too short
_zeros.flags.writeable = False


def zeros(n: int) -> np.ndarray:
    """``n`` int64 zeros as a read-only view of a shared all-zero column: for scores that are
    0 on every node, much cheaper than ``np.zeros``. Never written to (writes raise)."""
    global _zeros
    if len(_zeros) < n:
        _zeros = np.zeros(max(n, 2 * len(_zeros), 1024), dtype=np.int64)
        _zeros.flags.writeable = False
    return _zeros[:n]


def is_zeros(scores: np.ndarray) -> bool:
    """Is ``scores`` a ``zeros()`` result (known to be all 0 without reading it)?"""
    base = scores.base
    return base is not None and base is _zeros


def count(table: NodeTable, idx: Any) -> int:
    """How many nodes ``idx`` (a slice or an int array of slots) addresses."""
    if type(idx) is slice:
        start, stop = idx.start, idx.stop
        if (idx.step is None and start is not None and stop is not None
                and 0 <= start <= stop <= table.capacity):
            return stop - start  # the scheduler's own slices: slice(first, first + n)
        return len(range(*idx.indices(table.capacity)))
    return len(idx)


def memo_by_version(table: NodeTable, key: Any, compute: Callable[[], Any]) -> Any:
    """A value derived from node-level state (labels, taints, unschedulable), cached in
    ``table.memo`` under ``key`` until ``table.version`` changes (pod changes keep it)."""
    hit = table.memo.get(key)
    if hit is not None and hit[0] == table.version:
        return hit[1]
    value = compute()
    if len(table.memo) > _MEMO_LIMIT:
        table.memo.clear()
    table.memo[key] = (table.version, value)
    return value


def per_spec(cache: dict[int, tuple[Any, Any]], spec: Any, compute: Callable[[Any], Any]
             ) -> Any:
    """``compute(spec)``, memoised in ``cache`` per PodSpec object (immutable and shared by a
    template's clones; kept alive by the entry, so its id is not reused while cached)."""
    hit = cache.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    value = compute(spec)
    if len(cache) >= _SPEC_CACHE_LIMIT:
        cache.clear()
    cache[id(spec)] = (spec, value)
    return value


class SpecCache:
    """``cache(spec)`` is ``compute(spec)``, memoised per PodSpec object (:func:`per_spec`)."""

    __slots__ = ("_compute", "_entries")

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[Any, Any]] = {}

    def __call__(self, spec: Any) -> Any:
        return per_spec(self._entries, spec, self._compute)


def alloc_profile(table: NodeTable, name: str) -> tuple[int | None, bool]:
    """For resource ``name`` over the live nodes: (the allocatable they all share, or None;
    whether every one is non-zero). Memoised until a node changes; lets hot paths divide by a
    scalar and skip presence masks on homogeneous clusters."""
    key = _ALLOC_KEYS.get(name)
    if key is None:
        key = _ALLOC_KEYS[name] = ("alloc-profile", name)
    hit = table.memo.get(key)  # memo_by_version's hit path, without building its closure
    if hit is not None and hit[0] == table.version:
        return hit[1]

    def compute() -> tuple[int | None, bool]:
        col = table.allocatable.get(name)
        high = table.high
        if col is None:
            return (0, False) if table.num_nodes else (None, True)
        live = col[:high][table.live[:high]]
        if not len(live):
            return None, True
        lo, hi = int(live.min()), int(live.max())
        return (lo if lo == hi else None), lo > 0

    return memo_by_version(table, key, compute)


# --------------------------------------------------------------------------- args validation
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_name_problem(value: str) -> str | None:
    """metav1validation.ValidateLabelName: an optional DNS-subdomain prefix and "/" then a
    name of at most 63 characters. Returns the problem, or None when valid."""
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return (f'prefix part of "{value}" must be a lowercase DNS subdomain (e.g. '
                "example.com), at most 253 characters")
    if not name:
        return f'name part of "{value}" must be non-empty'
    if len(name) > 63 or not _LABEL_NAME.match(name):
        return (f'name part of "{value}" must be at most 63 characters of alphanumerics, '
                "'-', '_' or '.', starting and ending with an alphanumeric character")
    return None


def no_args(args: dict | None, args_path: str, plugin: str) -> None:
    """Plugins without an args type accept no (or empty) args."""
    if args:
        raise ConfigError(f"plugin {plugin} takes no arguments", field=args_path)


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def require_mapping(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"expected a mapping, got {_kind(value)}", field=path)
    return value


def check_keys(data: dict[str, Any], path: str, allowed: Iterable[str], kind: str = "") -> None:
    """Unknown keys are errors (kube-scheduler decodes its configuration strictly).
    ``apiVersion``/``kind`` are accepted; ``kind`` must then name the args type."""
    allowed_set = set(allowed) | {"apiVersion", "kind"}
    for key in data:
        if key not in allowed_set:
            expected = ", ".join(sorted(set(allowed)))
            raise ConfigError(f"unknown field (expected one of: {expected})",
                              field=_at(path, str(key)))
    if kind and "kind" in data and data["kind"] != kind:
        raise ConfigError(f'expected "{kind}", got {data["kind"]!r}', field=_at(path, "kind"))


def require_list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"expected a list, got {_kind(value)}", field=path)
    return value


def require_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"expected a string, got {_kind(value)}", field=path)
    return value


def require_int(value: Any, path: str, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"expected an integer, got {_kind(value)}", field=path)
    return value
