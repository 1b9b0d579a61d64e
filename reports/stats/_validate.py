"""Input checks shared by the statistics: one clear ``ValueError`` per bad input."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["as_positive_samples", "as_series"]


def _as_1d(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a sequence of numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: no samples (need at least 1)")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        where = ", ".join(str(i) for i in bad[:5]) + (", ..." if bad.size > 5 else "")
        raise ValueError(f"{name}: {bad.size} of {arr.size} samples are NaN or infinite "
                         f"(index {where})")
    return arr


def as_positive_samples(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    """``values`` as a finite, strictly positive float64 array (ratios are taken on log scale)."""
    arr = _as_1d(name, values)
    bad = np.flatnonzero(arr <= 0)
    if bad.size:
        raise ValueError(f"{name}: samples must be > 0 to form ratios; {bad.size} of {arr.size} "
                         f"are <= 0 (first at index {bad[0]}: {arr[bad[0]]!r})")
    return arr


def as_series(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    """``values`` as a finite float64 array (any sign)."""
    return _as_1d(name, values)
