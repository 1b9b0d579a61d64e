"""Benchmark: the SchedulingBasic shape (default 5000 nodes, 1000 init, 10000 measured pods)
on the core alone, metrics hooks on. Prints each run and the median pods/s.

    python bench/bench_scheduling_basic.py [--runs 5] [--nodes 5000] [--pods 10000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.demo import run_scheduling_basic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--no-metrics", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile one run, print the top")
    args = ap.parse_args(argv)
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(run_scheduling_basic, args.nodes, args.init_pods, args.pods,
                     metrics=not args.no_metrics)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return 0
    rates = []
    for i in range(args.runs):
        r = run_scheduling_basic(args.nodes, args.init_pods, args.pods,
                                 metrics=not args.no_metrics, seed=i)
        rates.append(r.pods_per_second)
        cpu_us = 1e6 * r.cpu_seconds / max(r.scheduled, 1)
        print(f"run {i + 1}: {r.scheduled} pods in {r.seconds:.3f} s = {r.pods_per_second:.0f} "
              f"pods/s ({r.attempts} attempts, {cpu_us:.0f} us CPU per pod)")
    print(f"median: {statistics.median(rates):.0f} pods/s over {args.runs} runs "
          f"({args.nodes} nodes, {args.init_pods} init, {args.pods} measured, "
          f"metrics {'off' if args.no_metrics else 'on'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
