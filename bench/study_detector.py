"""Proving the detector: false alarms and power of ``schedperf compare``, measured.

    python bench/study_detector.py [--label compare] [--time-label compare-time]
        [--feature spread] [--sizes 0.01,0.02,0.05,0.10] [--measure instructions|time]
        [--rounds 10,20] [--pool 40] [--pool-slowdown 30] [--draws 300] [--out DIR]

The script the docs name; the study is the package bench/study/ (its __init__ gives the
method, docs/detector-study.md the details and the numbers).

Outputs in ``--out``: results.json, time_pools.parquet (every paced round's samples, by
pool), time_decisions.parquet (every resampled decision), instructions.parquet (every
count), the scheduler configs, the compare reports and the raw worker folders.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.study.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
