"""Benchmark: loading N default nodes (each with its hostname label) into the fake cluster.
Target: 15000 nodes in <= 0.5 s. Prints each run and the median.

    python bench/bench_cluster_load.py [--nodes 15000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.demo import make_nodes
from scheduler_core.cluster.store import Cluster


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=15000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    times = []
    for i in range(args.runs):
        nodes = make_nodes(args.nodes)  # building Node objects is the workload's job
        start = time.perf_counter()
        cluster = Cluster(capacity=1024)
        cluster.add_nodes(nodes)
        cluster.table.order()  # the list order is part of being ready to schedule
        times.append(time.perf_counter() - start)
        print(f"run {i + 1}: {args.nodes} nodes in {times[-1]:.3f} s")
    print(f"median: {statistics.median(times):.3f} s for {args.nodes} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
