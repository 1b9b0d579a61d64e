"""Change points in a per-commit series: E-divisive means (Matteson & James 2014), the
algorithm behind MongoDB's signal-processing-algorithms, Hunter and Apache Otava.

Statistic. For a split of a segment ``Z`` into ``X = Z[:tau]`` and ``Y = Z[tau:]`` (sizes
``a``, ``b``), the empirical energy distance (alpha = 1) is ::

    E = 2/(a b) sum_ij |X_i - Y_j|  -  sum_{i<k} |X_i - X_k| / C(a,2)
                                     -  sum_{j<l} |Y_j - Y_l| / C(b,2)

and ``Q(tau) = a b / (a + b) * E``. ``E`` is zero in expectation when both parts come from the
same distribution and positive otherwise (it sees shifts of the mean and changes of spread);
the weight ``a b / (a + b)`` favours balanced, well-supported splits. The candidate is
``argmax Q`` over ``min_size <= tau <= len - min_size``.

Significance. The segment is permuted ``permutations`` times (numpy ``Generator`` seeded from
``seed`` and the segment bounds, so the result does not depend on evaluation order), ``max Q``
is recomputed for each permutation, and ``p = (1 + #{perm >= observed}) / (1 + #perms)``.
The split is kept when ``p <= p_value``; permutations stop early once the count of exceedances
already rules that out (Besag-Clifford), which makes noise segments cheap.

Recursion. Accepted splits bisect the segment and both halves are tested the same way (each
segment on its own, as binary segmentation does; Otava/MongoDB instead test the best candidate
across all windows and stop at the first failure). Segments shorter than ``2 * min_size`` are
not split. On a pure-noise series exactly one test runs, so the chance of a false change point
is ``p_value``.

Speed. ``Q`` for every ``tau`` needs the within-prefix sums ``sum_{i<k<tau} |z_i - z_k|``.
For a batch of permuted series they are computed from ranks in ``O(m^1.5)`` per series (blocks
of ``sqrt(m)``: counts/sums of smaller values in earlier blocks via prefix tables, exact pair
comparisons inside a block) instead of the ``O(m^2)`` distance matrix, so 1000 points with 199
permutations take well under a second.

Defaults: ``p_value=0.01``, ``permutations=199`` (smallest attainable p 0.005), ``min_size=5``
commits, ``min_magnitude=0`` (as Otava's ``--magnitude 0.0``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from reports.stats._validate import as_series

__all__ = ["ChangePoint", "change_points", "energy_statistic"]

DEFAULT_P_VALUE = 0.01
DEFAULT_PERMUTATIONS = 199
DEFAULT_MIN_SIZE = 5
_CHUNK_ELEMENTS = 1_500_000   # working-set bound (elements) per permutation batch


@dataclass(frozen=True)
class ChangePoint:
    """A change at ``index`` (the first point of the new regime).

    ``before_mean``/``after_mean``: means of the neighbouring segments (between adjacent change
    points); ``magnitude``: ``after_mean / before_mean - 1`` (NaN if ``before_mean`` is 0);
    ``delta``: ``after_mean - before_mean``; ``p_value``: permutation p of the split when it
    was accepted; ``statistic``: its ``Q``.
    """

    index: int
    before_mean: float
    after_mean: float
    magnitude: float
    delta: float
    p_value: float
    statistic: float


def _prefix_within(ranks: np.ndarray, sorted_vals: np.ndarray) -> np.ndarray:
    """``c[p, k] = sum_{i<k} |x[p, i] - x[p, k]|`` with ``x[p, k] = sorted_vals[ranks[p, k]]``.

    ``ranks`` holds distinct ranks 0..m-1 per row. Uses ``c_k = x_k (2 L_k - k) + S_k - 2 W_k``
    with ``L_k``/``W_k`` the count/sum of earlier values of lower rank and ``S_k`` the sum of
    all earlier values. ``L``/``W`` split into earlier elements of the same block of
    ``sqrt(m)`` positions (pairwise comparisons) and of earlier blocks (per block boundary, a
    prefix table over ranks): ``O(m^1.5)`` work per row, all vectorised.
    """
    p_count, m = ranks.shape
    x = sorted_vals[ranks]
    bsz = max(1, math.isqrt(m))
    nb = -(-m // bsz)
    pad = nb * bsz - m
    small = np.int16 if m < 2**15 else np.int64
    r = np.pad(ranks.astype(small), ((0, 0), (0, pad)), constant_values=m)
    r = r.reshape(p_count, nb, bsz)
    v = np.pad(x, ((0, 0), (0, pad))).reshape(p_count, nb, bsz)
    # same block: lower[.., i, k] = element i is before k and of lower rank; one batched
    # matmul gives both the sum (row 0) and the count (row 1) of such i for every k
    lower = r[:, :, :, None] < r[:, :, None, :]
    lower &= np.triu(np.ones((bsz, bsz), dtype=bool), 1)
    both = np.stack([v, np.ones_like(v)], axis=2) @ lower.view(np.uint8).astype(np.float64)
    sm = both[:, :, 0, :].reshape(p_count, -1)[:, :m]
    cnt = both[:, :, 1, :].reshape(p_count, -1)[:, :m]
    # earlier blocks: table[p, j, q] = sum + 1j * count of the ranks <= q that sit in blocks
    # before j (complex numbers carry both prefix sums through one cumsum)
    rows = np.arange(p_count)[:, None]
    block_of_rank = np.empty((p_count, m), dtype=small)
    block_of_rank[rows, ranks] = np.arange(m) // bsz
    table = np.where(block_of_rank[:, None, :] < np.arange(nb, dtype=small)[None, :, None],
                     sorted_vals + 1j, 0j)
    np.cumsum(table, axis=2, out=table)
    flat = ((rows * nb + np.arange(m)[None, :] // bsz) * m + np.maximum(ranks - 1, 0)).ravel()
    hit = np.where(ranks > 0, table.ravel()[flat].reshape(p_count, m), 0j)
    sm = sm + hit.real
    cnt = cnt + hit.imag
    before = np.cumsum(x, axis=1) - x
    return x * (2.0 * cnt - np.arange(m)) + before - 2.0 * sm


def _total_distances(sorted_vals: np.ndarray) -> np.ndarray:
    """``s_j = sum_l |v_j - v_l|`` for sorted ``v`` (O(m))."""
    m = sorted_vals.size
    pre = np.cumsum(sorted_vals) - sorted_vals
    return sorted_vals * (2.0 * np.arange(m) - m) + sorted_vals.sum() - 2.0 * pre


def _qhat(order: np.ndarray, sorted_vals: np.ndarray, s_sorted: np.ndarray,
          min_size: int) -> np.ndarray:
    """Q(tau) for tau = min_size..m-min_size for each row of ``order`` (rank sequences)."""
    m = order.shape[1]
    # within_left[:, tau-1]: pairs inside the left part [0, tau)
    within_left = np.cumsum(_prefix_within(order, sorted_vals), axis=1)
    to_all = np.cumsum(s_sorted[order], axis=1)                  # sum_{i<tau} s_i
    total = s_sorted.sum() / 2.0
    tau = np.arange(min_size, m - min_size + 1)
    wl = within_left[:, tau - 1]
    cross = to_all[:, tau - 1] - 2.0 * wl
    wr = total - wl - cross
    a = tau.astype(np.float64)
    b = m - a
    energy = 2.0 * cross / (a * b) - wl / (a * (a - 1) / 2.0) - wr / (b * (b - 1) / 2.0)
    return a * b / m * energy


def energy_statistic(values: Iterable[float] | np.ndarray, *,
                     min_size: int = DEFAULT_MIN_SIZE) -> np.ndarray:
    """``Q(tau)`` for ``tau = min_size .. len - min_size`` (index ``tau - min_size``)."""
    z = as_series("values", values)
    if min_size < 2:
        raise ValueError(f"min_size must be >= 2, got {min_size}")
    if z.size < 2 * min_size:
        raise ValueError(f"values: need at least 2*min_size = {2 * min_size} points, "
                         f"got {z.size}")
    order = np.argsort(z, kind="stable")
    ranks = np.empty(z.size, dtype=np.int64)
    ranks[order] = np.arange(z.size)
    sv = z[order]
    return _qhat(ranks[None, :], sv, _total_distances(sv), min_size)[0]


def _test_segment(seg: np.ndarray, min_size: int, permutations: int, p_value: float,
                  rng: np.random.Generator) -> tuple[int, float, float]:
    """Best split ``tau`` of ``seg``, its ``Q`` and permutation p-value."""
    m = seg.size
    scale = float(np.std(seg))
    if scale == 0.0:
        return -1, 0.0, 1.0
    z = (seg - np.median(seg)) / scale           # Q is scale-equivariant: better conditioning
    order = np.argsort(z, kind="stable")
    ranks = np.empty(m, dtype=np.int64)
    ranks[order] = np.arange(m)
    sv = z[order]
    s_sorted = _total_distances(sv)
    q_obs = _qhat(ranks[None, :], sv, s_sorted, min_size)[0]
    best = int(np.argmax(q_obs))
    observed = float(q_obs[best])
    # Besag-Clifford: stop once p <= p_value is out of reach
    limit = math.floor(p_value * (permutations + 1)) - 1
    exceed = done = 0
    chunk = max(1, _CHUNK_ELEMENTS // (m * (m // max(1, math.isqrt(m)) + 1)))
    while done < permutations:
        k = min(chunk, permutations - done)
        perm = rng.permuted(np.broadcast_to(ranks, (k, m)), axis=1)
        qmax = _qhat(perm, sv, s_sorted, min_size).max(axis=1)
        exceed += int(np.count_nonzero(qmax >= observed - 1e-12 * abs(observed)))
        done += k
        if exceed > limit:
            break
    return best + min_size, observed * scale, (exceed + 1) / (done + 1)


def change_points(values: Iterable[float] | np.ndarray, *, min_size: int = DEFAULT_MIN_SIZE,
                  p_value: float = DEFAULT_P_VALUE, permutations: int = DEFAULT_PERMUTATIONS,
                  min_magnitude: float = 0.0, max_change_points: int | None = None,
                  seed: int = 0) -> list[ChangePoint]:
    """Change points of a per-commit series by E-divisive means (module docstring).

    Parameters
    ----------
    values : the series in commit order (finite numbers).
    min_size : fewest points on each side of a change (>= 2).
    p_value : permutation-test level for accepting a split.
    permutations : permutations per test (the smallest attainable p is 1/(permutations+1)).
    min_magnitude : drop splits whose ``|after/before - 1|`` (segment means) is smaller.
    max_change_points : stop after this many accepted splits (found top-down: the first is
        the best split of the whole series); None for no limit.
    seed : seeds the permutations (deterministic output).

    Returns
    -------
    list[ChangePoint] sorted by index; empty for a series shorter than ``2 * min_size``.
    """
    z = as_series("values", values)
    if min_size < 2:
        raise ValueError(f"min_size must be >= 2, got {min_size}")
    if not 0 < p_value < 1:
        raise ValueError(f"p_value must be in (0, 1), got {p_value!r}")
    if permutations < 1 or (1 / (permutations + 1)) > p_value:
        raise ValueError(f"permutations={permutations} cannot reach p <= {p_value} "
                         f"(need at least {math.ceil(1 / p_value) - 1})")
    if min_magnitude < 0:
        raise ValueError(f"min_magnitude must be >= 0, got {min_magnitude!r}")
    found: dict[int, tuple[float, float]] = {}
    stack = [(0, z.size)]
    while stack:
        if max_change_points is not None and len(found) >= max_change_points:
            break
        start, end = stack.pop()
        if end - start < 2 * min_size:
            continue
        rng = np.random.default_rng([seed, start, end])
        tau, stat, p = _test_segment(z[start:end], min_size, permutations, p_value, rng)
        if tau < 0 or p > p_value:
            continue
        left, right = z[start:start + tau], z[start + tau:end]
        lm, rm = float(left.mean()), float(right.mean())
        if min_magnitude > 0 and (lm == 0 or abs(rm / lm - 1) < min_magnitude):
            continue
        found[start + tau] = (p, stat)
        stack.extend([(start + tau, end), (start, start + tau)])
    idx = sorted(found)
    bounds = [0, *idx, z.size]
    means = [float(z[bounds[i]:bounds[i + 1]].mean()) for i in range(len(bounds) - 1)]
    out = []
    for i, cp in enumerate(idx):
        before, after = means[i], means[i + 1]
        mag = after / before - 1.0 if before != 0 else math.nan
        p, stat = found[cp]
        out.append(ChangePoint(cp, before, after, mag, after - before, p, stat))
    return out
