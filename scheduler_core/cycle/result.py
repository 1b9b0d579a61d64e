"""What a scheduling cycle and its steps return, and what it records for decision records."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scheduler_core.api.pod import Pod
from scheduler_core.framework.diagnosis import Diagnosis
from scheduler_core.framework.interface import PostFilterResult, Status
from scheduler_core.framework.runtime import ScoreBreakdown

__all__ = ["CycleRecord", "FeasibleNodes", "ScheduleResult"]


@dataclass(slots=True, eq=False)  # compared by identity: results are never compared
class ScheduleResult:
    """What a scheduling cycle decided: kube's ScheduleResult, and the status upstream returns
    beside it.

    ``status`` None: the pod is assumed on ``suggested_host``, chosen among ``feasible_nodes``
    nodes that passed the filters out of ``evaluated_nodes`` filtered; the binding cycle goes
    on. ``status`` Wait: the same, but a Permit plugin holds the pod (``Scheduler.waiting``).
    Any other ``status`` says why the pod was not placed, with the ``diagnosis`` when nodes
    rejected it (None after an error) and PostFilter's ``nominating_info`` (None clears the
    pod's nomination), for the failure handler.

    ``schedule_pod`` returns neither host nor status when no node fits (kube's FitError): the
    ``diagnosis`` says why, and the scheduling cycle runs PostFilter before it makes the status.
    """

    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    status: Status | None = None
    diagnosis: Diagnosis | None = None
    nominating_info: PostFilterResult | None = None


# What kube's findNodesThatFitPod returns: the slots of the nodes that fit, in the order found;
# the diagnosis; how many nodes the filters evaluated; and the error (a PreFilter status that is
# not a rejection) that ended the cycle, if any. A plain tuple: one is made every cycle.
FeasibleNodes = tuple[np.ndarray, Diagnosis, int, Status | None]


@dataclass
class CycleRecord:
    """What one attempt evaluated, for decision records (kept only when ``record_cycles``)."""

    pod: Pod
    attempt: int
    profile: str
    pre_filter_status: Status | None = None
    filter_plugins: list[str] = field(default_factory=list)
    examined: list[tuple[np.ndarray, np.ndarray | None]] = field(default_factory=list)
    feasible: np.ndarray | None = None
    scores: list[ScoreBreakdown] = field(default_factory=list)
    total: np.ndarray | None = None
    selected: int | None = None
    status: Status | None = None
