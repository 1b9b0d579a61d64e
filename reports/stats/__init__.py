"""Statistics that decide what regressed between BASE and HEAD, and where.

    compare_samples   one (workload, metric): HL ratio, rank/bootstrap CI, MWU/Wilcoxon p,
                      min-effect verdict, more-rounds estimate            (compare.py)
    decide            Benjamini-Hochberg across all tests of one comparison (fdr.py)
    attribute         rank plugins / extension points by their change     (attribution.py)
    change_points     E-divisive means over a per-commit series           (changepoint.py)
    metric_direction  higher or lower is better, from metric and unit     (direction.py)
    compare_frames    the above over polars result tables                 (table.py)
    reports.stats.simulation.simulate   Monte-Carlo false-alarm rate / power of the rule

docs/statistics.md explains each statistic, the defaults and the simulation behind them.
"""

from reports.stats.attribution import Attribution, attribute
from reports.stats.changepoint import ChangePoint, change_points, energy_statistic
from reports.stats.compare import (
    DEFAULT_CONFIDENCE,
    DEFAULT_Q,
    MIN_EFFECT,
    Comparison,
    Verdict,
    compare_samples,
)
from reports.stats.direction import Direction, metric_direction
from reports.stats.fdr import benjamini_hochberg, decide
from reports.stats.table import compare_frames

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_Q",
    "MIN_EFFECT",
    "Attribution",
    "ChangePoint",
    "Comparison",
    "Direction",
    "Verdict",
    "attribute",
    "benjamini_hochberg",
    "change_points",
    "compare_frames",
    "compare_samples",
    "decide",
    "energy_statistic",
    "metric_direction",
]
