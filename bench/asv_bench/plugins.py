"""Each default plugin's vectorised Filter and Score over 500 / 5000 nodes (and 15000 with
``SCHEDPERF_ASV_FULL=1``), on the cluster of :mod:`bench.hotpaths`.

``setup`` builds (once per process, memoised) the cluster and the plugin's PreFilter / PreScore
state; the timed call is only ``filter`` (one slice over all nodes) or ``score`` + ``normalize``
(over all nodes). Timing attributes are explained in docs/benchmarks.md.
"""

from __future__ import annotations

from bench import hotpaths as _hp

_NODES = list(_hp.node_counts())


class _HotPath:
    # read-only calls: setup (a dict lookup after the first build) may run between calls, so
    # 25 calls per sample; 10-40 samples of at most ~2 s per round; 2 rounds (processes)
    number = 25
    repeat = (10, 40, 2.0)
    rounds = 2
    warmup_time = 0.1
    timeout = 180.0  # per process: building a 15000-node cluster takes a few seconds


class PluginFilter(_HotPath):
    params = (list(_hp.FILTER_PLUGINS), _NODES)
    param_names = ["plugin", "nodes"]

    def setup(self, plugin: str, nodes: int) -> None:
        self.case = _hp.filter_case(plugin, nodes)

    def time_filter(self, plugin: str, nodes: int) -> None:
        self.case.run()


class PluginScore(_HotPath):
    params = (list(_hp.SCORE_PLUGINS), _NODES)
    param_names = ["plugin", "nodes"]

    def setup(self, plugin: str, nodes: int) -> None:
        self.case = _hp.score_case(plugin, nodes)

    def time_score(self, plugin: str, nodes: int) -> None:
        self.case.run()
