"""Feature gates: ``SchedulerQueueingHints``, ``SchedulerPopFromBackoffQ`` and
``SchedulerAsyncPreemption`` (all on by default, as in v1.34), ``GenericWorkload`` (off by
default, as in v1.37: on, PodGroups are served and their pods scheduled by the pod-group cycle),
``TopologyAwareWorkloadScheduling`` (off by default: on, a group is tried in each placement of
its topology constraint and the best one kept) and ``CompositePodGroup`` (off by default; on, a
root PodGroup is scheduled as with it off: CompositePodGroup objects and
``parentCompositePodGroupName`` are refused by the ops that would create them) are honoured. The
gates of :data:`UNMODELLED_WHEN_ON` turn on behaviour the core does not model: set to true they
make the workload unsupported (with the reason); set to false they ask for what the core does
(the behaviour off) and count as honoured. Every other gate is listed as ignored."""

from __future__ import annotations

from dataclasses import dataclass

from workloads.config import Workload

__all__ = [
    "ASYNC_PREEMPTION_GATE",
    "COMPOSITE_POD_GROUP_GATE",
    "GENERIC_WORKLOAD_GATE",
    "HONOURED_GATES",
    "POP_FROM_BACKOFF_GATE",
    "QUEUEING_HINTS_GATE",
    "TOPOLOGY_AWARE_GATE",
    "UNMODELLED_WHEN_ON",
    "FeatureGates",
]

QUEUEING_HINTS_GATE = "SchedulerQueueingHints"
POP_FROM_BACKOFF_GATE = "SchedulerPopFromBackoffQ"
GENERIC_WORKLOAD_GATE = "GenericWorkload"
TOPOLOGY_AWARE_GATE = "TopologyAwareWorkloadScheduling"
COMPOSITE_POD_GROUP_GATE = "CompositePodGroup"
ASYNC_PREEMPTION_GATE = "SchedulerAsyncPreemption"
HONOURED_GATES = frozenset({QUEUEING_HINTS_GATE, POP_FROM_BACKOFF_GATE, ASYNC_PREEMPTION_GATE,
                            GENERIC_WORKLOAD_GATE, TOPOLOGY_AWARE_GATE, COMPOSITE_POD_GROUP_GATE})
UNMODELLED_WHEN_ON = {
    "OpportunisticBatching": "opportunistic batching (a pod reuses the filtering and scoring "
                             "of the previous pod with the same signature), which "
                             "scheduler_core does not model",
}


@dataclass(frozen=True)
class FeatureGates:
    """The gates of one workload as the runner applies them."""

    queueing_hints: bool
    pop_from_backoff: bool
    generic_workload: bool
    ignored: tuple[str, ...]  # sorted
    unsupported: str | None = None  # why the workload cannot run (a gate the core lacks)
    topology_aware: bool = False
    composite_pod_group: bool = False
    async_preemption: bool = True

    @classmethod
    def of(cls, workload: Workload) -> FeatureGates:
        gates = dict(workload.feature_gates)
        on = sorted(g for g in gates if g in UNMODELLED_WHEN_ON and gates[g])
        reason = "; ".join(f"feature gate {g}=true: {UNMODELLED_WHEN_ON[g]}" for g in on)
        return cls(queueing_hints=bool(gates.get(QUEUEING_HINTS_GATE, True)),
                   pop_from_backoff=bool(gates.get(POP_FROM_BACKOFF_GATE, True)),
                   generic_workload=bool(gates.get(GENERIC_WORKLOAD_GATE, False)),
                   async_preemption=bool(gates.get(ASYNC_PREEMPTION_GATE, True)),
                   ignored=tuple(sorted(g for g in gates if g not in HONOURED_GATES
                                        and g not in UNMODELLED_WHEN_ON)),
                   unsupported=reason or None,
                   topology_aware=bool(gates.get(TOPOLOGY_AWARE_GATE, False)),
                   composite_pod_group=bool(gates.get(COMPOSITE_POD_GROUP_GATE, False)))
