"""Node table (snapshot) updates on 500 / 5000 (/ 15000) node clusters: account one pod,
unaccount it (the incremental pod indexes' listeners included), add one node.

Each timed call mutates the table, so ``setup`` restores the state the call expects (the pod
absent before ``time_add_pod``, present before ``time_remove_pod``, the extra node absent
before ``time_add_node``) and ``number = 1``: one call per sample whatever the asv_runner
version (older runners run setup once per sample, newer ones before every call).
"""

from __future__ import annotations

from bench import hotpaths as _hp

_NODES = list(_hp.node_counts())


class _Snapshot:
    params = _NODES
    param_names = ["nodes"]
    number = 1
    repeat = (20, 100, 2.0)  # ~0.1 ms calls: many single-call samples, capped at ~2 s
    rounds = 2
    warmup_time = 0.1
    timeout = 180.0


class PodAdd(_Snapshot):
    def setup(self, nodes: int) -> None:
        self.case = _hp.pod_update_case(nodes)
        self.case.reset_absent()

    def time_add_pod(self, nodes: int) -> None:
        self.case.add()


class PodRemove(_Snapshot):
    def setup(self, nodes: int) -> None:
        self.case = _hp.pod_update_case(nodes)
        self.case.reset_present()

    def time_remove_pod(self, nodes: int) -> None:
        self.case.remove()


class NodeAdd(_Snapshot):
    def setup(self, nodes: int) -> None:
        self.case = _hp.node_add_case(nodes)
        self.case.reset_absent()

    def time_add_node(self, nodes: int) -> None:
        self.case.add()
