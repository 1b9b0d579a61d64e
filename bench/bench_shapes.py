"""Benchmark: the upstream shapes of TopologySpreading, SchedulingPodAntiAffinity,
SchedulingPodAffinity and PreemptionBasic, built in code. Prints each run, the median pods/s
and the issue's target.

    python bench/bench_shapes.py [--shape NAME]... [--runs 3] [--scale 1.0] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.shapes import SHAPES, run_shape


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    for name in args.shape or list(SHAPES):
        shape = SHAPES[name]
        if args.profile:
            prof = cProfile.Profile()
            prof.runcall(run_shape, shape, scale=args.scale)
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            continue
        rates = []
        for i in range(args.runs):
            r = run_shape(shape, scale=args.scale, seed=i)
            rates.append(r.pods_per_second)
            print(f"{name} run {i + 1}: {r.scheduled}/{r.measured} pods in {r.seconds:.2f} s = "
                  f"{r.pods_per_second:.0f} pods/s ({r.attempts} attempts, "
                  f"{1e6 * r.cpu_seconds / max(r.scheduled, 1):.0f} us CPU per pod)")
        print(f"{name}: median {statistics.median(rates):.0f} pods/s over {args.runs} runs "
              f"(target {shape.target:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
