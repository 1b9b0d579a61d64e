"""Feature gates: ``SchedulerQueueingHints`` and ``SchedulerPopFromBackoffQ`` (both on by
default, as in v1.34) are honoured; every other gate is listed as ignored."""

from __future__ import annotations

from dataclasses import dataclass

from workloads.config import Workload

__all__ = ["HONOURED_GATES", "POP_FROM_BACKOFF_GATE", "QUEUEING_HINTS_GATE", "FeatureGates"]

QUEUEING_HINTS_GATE = "SchedulerQueueingHints"
POP_FROM_BACKOFF_GATE = "SchedulerPopFromBackoffQ"
HONOURED_GATES = frozenset({QUEUEING_HINTS_GATE, POP_FROM_BACKOFF_GATE})


@dataclass(frozen=True)
class FeatureGates:
    """The gates of one workload as the runner applies them."""

    queueing_hints: bool
    pop_from_backoff: bool
    ignored: tuple[str, ...]  # sorted

    @classmethod
    def of(cls, workload: Workload) -> FeatureGates:
        gates = dict(workload.feature_gates)
        return cls(queueing_hints=bool(gates.get(QUEUEING_HINTS_GATE, True)),
                   pop_from_backoff=bool(gates.get(POP_FROM_BACKOFF_GATE, True)),
                   ignored=tuple(sorted(g for g in gates if g not in HONOURED_GATES)))
