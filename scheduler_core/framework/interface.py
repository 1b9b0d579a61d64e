"""The plugin contract: status codes, Status, CycleState, the ``Handle`` a plugin is constructed
with and one small protocol per extension point. Plugins depend on this module only (and on the
node table they read).

Vectorised contract
-------------------
``idx`` is what a plugin indexes node-table columns with: a ``slice`` or an int array of slots.
``filter`` returns a boolean mask over ``idx`` (True = the node passes) or ``None`` (all pass);
reasons are produced only when asked, through ``explain`` (failure messages, preemption, decision
records). ``score`` returns an int64 array over ``idx``; ``normalize`` rescales it in place or
returns a new array, which must lie in [MIN_NODE_SCORE, MAX_NODE_SCORE].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from scheduler_core.api.objects import Service
    from scheduler_core.api.pod import Pod
    from scheduler_core.cluster.store import Cluster
    from scheduler_core.framework.runtime import Framework
    from scheduler_core.nodetable.accounting import SlotPods
    from scheduler_core.nodetable.table import NodeTable
    from scheduler_core.queue.clock import Clock

__all__ = [
    "MAX_NODE_SCORE",
    "MAX_TOTAL_SCORE",
    "MIN_NODE_SCORE",
    "PODS_TO_ACTIVATE",
    "ActionType",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "FilterError",
    "FilterPlugin",
    "Handle",
    "Plugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueueingHint",
    "ReservePlugin",
    "ScorePlugin",
    "Status",
    "WaitingPod",
]

MIN_NODE_SCORE = 0
MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2**63 - 1


class Code(IntEnum):
    """What a plugin answered, and what the scheduler does next."""

    SUCCESS = 0  # go on
    ERROR = 1  # internal error: requeue with backoff, no rejector plugins recorded
    UNSCHEDULABLE = 2  # rejected; preemption (PostFilter) may help on this node
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3  # rejected; preemption cannot help on this node
    WAIT = 4  # Permit only: hold the pod until allowed, rejected or timed out
    SKIP = 5  # PreFilter/PreScore: skip the coupled Filter/Score; Bind: not handled by me
    PENDING = 6  # stop the cycle; requeue without backoff once the plugin's hint says Queue

    @property
    def upstream_name(self) -> str:
        return _UPSTREAM_NAMES[self]


_UPSTREAM_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


# module constants: attribute access on the enum class is slow (EnumType's __getattr__ hook)
_SUCCESS, _SKIP = Code.SUCCESS, Code.SKIP
_REJECTED = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer. ``None`` stands for success wherever a Status is expected."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == _SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    @property
    def is_skip(self) -> bool:
        return self.code == _SKIP

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    @staticmethod
    def unschedulable(*reasons: str, plugin: str = "") -> Status:
        return Status(Code.UNSCHEDULABLE, reasons, plugin)

    @staticmethod
    def unresolvable(*reasons: str, plugin: str = "") -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @staticmethod
    def error(*reasons: str, plugin: str = "") -> Status:
        return Status(Code.ERROR, reasons, plugin)


SKIP = Status(Code.SKIP)

# The cycle-state key of a ``dict[str, Pod]`` (pod key -> pod) that plugins fill with pods to
# move to activeQ; the scheduler activates them after a successful scheduling cycle and again
# after a successful binding cycle (kube's framework.PodsToActivateKey).
PODS_TO_ACTIVATE = "kubernetes.io/pods-to-activate"


class FilterError(Exception):
    """A Filter plugin failed with an error on a node the search reached (kube's Filter
    returning an Error status, which ends the scheduling cycle with that error). Carries the
    ``status`` and, for the nodes of the ``run_filter`` call that raised it, the pass ``mask``
    and ``first_fail`` computed up to then and the index of the failing plugin ``index``:
    every node that passed the plugins before it reached it."""

    def __init__(self, status: Status, index: int, mask: Any, first_fail: Any) -> None:
        super().__init__(status.message)
        self.status = status
        self.index = index
        self.mask = mask
        self.first_fail = first_fail


class CycleState:
    """Per-cycle scratch space shared by a profile's plugins (kube's CycleState)."""

    __slots__ = ("_data", "record_plugin_metrics", "skip_filter", "skip_score")

    def __init__(self, *, record_plugin_metrics: bool = False) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # whether this cycle times each plugin (kube samples 10 % of cycles)
        self.record_plugin_metrics = record_plugin_metrics

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(
                f"cycle state has no {key!r}: did its PreFilter/PreScore run?") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def clone(self) -> CycleState:
        """A copy for what-if evaluation; values with a ``clone()`` method are cloned."""
        out = CycleState()
        out._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        out.skip_filter = set(self.skip_filter)
        out.skip_score = set(self.skip_score)
        out.record_plugin_metrics = self.record_plugin_metrics
        return out


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """The node names a PreFilter narrows to (``None`` = all nodes)."""

    node_names: frozenset[str] | None = None

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes:
            return self
        if self.all_nodes:
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


# --------------------------------------------------------------------------- cluster events
class ActionType:
    """Bitmask of what changed (kube's framework.ActionType)."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_POD_OTHER = 1 << 12  # any other pod change (kube's updatePodOther)
    UPDATE = (UPDATE_POD_OTHER | UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT
              | UPDATE_NODE_CONDITION | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL
              | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    ALL = ADD | DELETE | UPDATE


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """``resource`` is "Node", "Pod" (assigned pods), "UnscheduledPod", "Namespace", ... or "*"."""

    resource: str
    action: int
    label: str = ""

    def matches(self, other: ClusterEvent) -> bool:
        """Does this registered event cover ``other`` (an event that happened)?"""
        if self.resource == "*" and self.action == ActionType.ALL:
            return True
        return self.resource in ("*", other.resource) and bool(self.action & other.action)

    @property
    def is_wildcard(self) -> bool:
        return self.resource == "*" and self.action == ActionType.ALL


class QueueingHint(IntEnum):
    QUEUE_SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[["Pod", Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None  # None: always Queue


# --------------------------------------------------------------------------- the handle
class WaitingPod(Protocol):
    """A pod held at Permit, as a plugin sees it (kube's framework.WaitingPod)."""

    @property
    def pod(self) -> Pod: ...

    @property
    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class Handle(Protocol):
    """Everything a plugin may use of the scheduler that runs it (kube's framework.Handle).

    Every plugin class is constructed as ``cls(args, handle, args_path=...)``; ``handle`` is
    None where a plugin runs without a scheduler (unit tests), so a plugin that can do without
    a member looks it up with a default. The scheduler's ``_Handle`` provides exactly these.
    """

    # ---- cluster state (read; DefaultPreemption deletes its victims through ``cluster``)
    @property
    def table(self) -> NodeTable: ...

    @property
    def cluster(self) -> Cluster: ...

    def namespace_labels(self, namespace: str) -> dict[str, str]: ...

    def list_services(self, namespace: str) -> list[Service]: ...

    # ---- the scheduler
    @property
    def rng(self) -> np.random.Generator: ...

    @property
    def generic_workload(self) -> bool:
        """The GenericWorkload gate (v1.37 only): on, plugins that changed since v1.34 in a way
        that matters to decisions follow v1.37.2."""
        ...

    @property
    def clock(self) -> Clock: ...

    def framework_for(self, pod: Pod) -> Framework | None:
        """The profile that schedules ``pod`` (by its schedulerName), if any."""
        ...

    def bind(self, pod: Pod, node_name: str) -> Status | None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    # ---- the nominator (kube's PodNominator)
    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...

    def delete_nominated_pod(self, pod: Pod) -> None: ...

    def nominated_placement(self, pod: Pod) -> SlotPods:
        """The pods the nominated pass adds while ``pod`` is scheduled, per slot: nominated
        there, of priority >= the pod's, not the pod itself, not bound."""
        ...

    # ---- filtering as the scheduling cycle does
    def run_filter_with_nominated(self, framework: Framework, state: CycleState, pod: Pod,
                                  slot: int) -> Status | None:
        """kube's RunFilterPluginsWithNominatedPods on one node (None: the pod fits)."""
        ...


# --------------------------------------------------------------------------- plugin protocols


@runtime_checkable
class Plugin(Protocol):
    name: ClassVar[str]


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, pod: Pod, timestamp: float, seq: int) -> tuple: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray | None:
        ...

    def explain(
        self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
    ) -> tuple[np.ndarray, list[Status]]:
        """For rejected nodes ``idx``: per node an index into the returned list of statuses."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: Any
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> Status | None:
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> np.ndarray: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


class FilterBase:
    """Convenience base for vectorised filters whose failures share one status."""

    failure: ClassVar[Status] = Status(Code.UNSCHEDULABLE)

    def explain(
        self, state: CycleState, pod: Pod, table: NodeTable, idx: Any
    ) -> tuple[np.ndarray, list[Status]]:
        n = len(range(*idx.indices(table.capacity))) if isinstance(idx, slice) else len(idx)
        return np.zeros(n, dtype=np.int64), [self.failure]

