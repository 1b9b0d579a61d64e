"""Which pinned build of the reference runs a workload on the kube-scheduler engine.

The v1.34 build (the release scheduler_core emulates) runs everything it can; a workload that
needs what only v1.37 has runs on the v1.37 build: pod groups (the createPodGroups and
createCompositePodGroups ops: PodGroup / CompositePodGroup objects of scheduling.k8s.io) or a
feature gate of workload-aware scheduling that v1.34 does not know.
"""

from __future__ import annotations

from workloads.config import TestCase, Workload
from workloads.config.ops_groups import CreateCompositePodGroups, CreatePodGroups
from workloads.reference.build import DEFAULT_RELEASE, V1_37, Release
from workloads.runner.gates import (
    COMPOSITE_POD_GROUP_GATE,
    GENERIC_WORKLOAD_GATE,
    TOPOLOGY_AWARE_GATE,
)

__all__ = ["V1_37_GATES", "release_for"]

# feature gates of workload-aware scheduling, unknown to v1.34's feature gate registry
V1_37_GATES = frozenset({GENERIC_WORKLOAD_GATE, TOPOLOGY_AWARE_GATE, COMPOSITE_POD_GROUP_GATE})


def release_for(test_case: TestCase, workload: Workload) -> Release:
    """The reference release the workload needs (see the module docstring)."""
    gates = {**test_case.feature_gates, **workload.feature_gates}
    if any(name in V1_37_GATES for name in gates):
        return V1_37
    if any(isinstance(op, (CreatePodGroups, CreateCompositePodGroups))
           for op in test_case.workload_template):
        return V1_37
    return DEFAULT_RELEASE
