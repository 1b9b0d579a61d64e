"""Which plugin / extension point explains a workload's change.

Input: per-round maps ``{(plugin, extension_point): seconds_per_pod}`` for BASE and HEAD (any
hashable key works; tuples are joined with spaces for display). A key missing from a round
counts as 0 s (the plugin did not run there). Every key is compared with the same machinery as
whole metrics (:func:`reports.stats.compare_samples`, lower is better, then Benjamini-Hochberg
across the keys of the workload), and the keys are ranked by the absolute change of their
median time per pod: that is what adds up to the workload's change, whereas a +200 % on a
plugin costing 10 ns/pod explains nothing.

Each :class:`Attribution` carries a sentence such as
``"PodTopologySpread Filter +35 % (+12.3 us/pod, 41 % of the total change; regression)"``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reports.stats.compare import DEFAULT_Q, Comparison, Mode, compare_samples
from reports.stats.fdr import decide

__all__ = ["Attribution", "attribute", "format_seconds"]

Rounds = Sequence[Mapping[Hashable, float]] | Mapping[Hashable, float]


@dataclass(frozen=True)
class Attribution:
    """One key's change. ``base``/``head``: median seconds per pod; ``abs_change``: their
    difference; ``rel_change``: ratio - 1 (the comparison's HL ratio when both sides ran,
    ``inf`` for a key new in HEAD, -1 for one gone); ``share``: ``|abs_change|`` over the sum of
    ``|abs_change|`` of all keys; ``comparison``: the statistics, None when a side has zeros."""

    key: Hashable
    label: str
    base: float
    head: float
    abs_change: float
    rel_change: float
    share: float
    comparison: Comparison | None
    sentence: str


def format_seconds(s: float) -> str:
    """``1.23e-5`` -> ``"12.3 us"`` (s, ms, us, ns; sign kept)."""
    a = abs(s)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if a >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def _label(key: Hashable) -> str:
    return " ".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


def _rounds(name: str, rounds: Rounds) -> list[Mapping[Hashable, float]]:
    if isinstance(rounds, Mapping):
        rounds = [rounds]
    out = list(rounds)
    if not out:
        raise ValueError(f"{name}: no rounds (need at least one mapping of key -> s/pod)")
    for i, r in enumerate(out):
        if not isinstance(r, Mapping):
            raise ValueError(f"{name}: round {i} is {type(r).__name__}, expected a mapping "
                             "{(plugin, extension point): seconds per pod}")
        for k, v in r.items():
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name}: round {i}, {_label(k)}: seconds per pod must be a "
                                 f"finite number >= 0, got {v!r}")
    return out


def _sentence(label: str, rel: float, abs_change: float, share: float,
              comparison: Comparison | None) -> str:
    if math.isinf(rel):
        head = f"{label} new"
    else:
        pct = 100.0 * rel
        head = f"{label} {pct:+.0f} %" if abs(pct) >= 10 else f"{label} {pct:+.1f} %"
    extra = f"{'+' if abs_change >= 0 else ''}{format_seconds(abs_change)}/pod"
    extra += f", {share * 100:.0f} % of the total change"
    if comparison is not None:
        extra += f"; {comparison.verdict.value}"
    return f"{head} ({extra})"


def attribute(base_rounds: Rounds, head_rounds: Rounds, *, mode: Mode = "time",
              min_effect: float | None = None, paired: bool = False, q: float = DEFAULT_Q,
              top: int | None = None) -> list[Attribution]:
    """Rank the keys (plugin, extension point) of one workload by how much their time per pod
    changed from BASE to HEAD, largest absolute change first (ties: label order).

    ``base_rounds``/``head_rounds``: one mapping per round, or a single mapping for one round.
    ``paired``: rounds pair by index (needs as many BASE as HEAD rounds). ``mode``,
    ``min_effect``, ``q``: as for :func:`reports.stats.compare_samples` /
    :func:`reports.stats.decide`. ``top``: keep only the first ``top`` entries.
    """
    base = _rounds("base_rounds", base_rounds)
    head = _rounds("head_rounds", head_rounds)
    if paired and len(base) != len(head):
        raise ValueError(f"paired attribution needs as many BASE as HEAD rounds "
                         f"(got {len(base)} and {len(head)})")
    keys = sorted({k for r in (*base, *head) for k in r}, key=_label)
    if not keys:
        raise ValueError("no plugin timings in any round")
    bvals = {k: np.array([float(r.get(k, 0.0)) for r in base]) for k in keys}
    hvals = {k: np.array([float(r.get(k, 0.0)) for r in head]) for k in keys}
    tested = [k for k in keys if np.all(bvals[k] > 0) and np.all(hvals[k] > 0)]
    raw = [compare_samples(bvals[k], hvals[k], higher_is_better=False, mode=mode,
                           min_effect=min_effect, paired=paired, q=q, name=_label(k))
           for k in tested]
    comps = dict(zip(tested, decide(raw, q=q), strict=True)) if raw else {}
    rows: list[tuple[Hashable, float, float, float, float]] = []
    for k in keys:
        b, h = float(np.median(bvals[k])), float(np.median(hvals[k]))
        comp = comps.get(k)
        if comp is not None:
            rel = comp.change
        elif b > 0:
            rel = h / b - 1.0
        else:
            rel = math.inf if h > 0 else 0.0
        rows.append((k, b, h, h - b, rel))
    total = sum(abs(r[3]) for r in rows)
    rows.sort(key=lambda r: (-abs(r[3]), _label(r[0])))
    out = []
    for k, b, h, d, rel in rows[:top]:
        share = abs(d) / total if total > 0 else 0.0
        comp = comps.get(k)
        out.append(Attribution(k, _label(k), b, h, d, rel, share, comp,
                               _sentence(_label(k), rel, d, share, comp)))
    return out
