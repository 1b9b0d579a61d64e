"""DynamicResources (DRA), as it behaves for pods without ResourceClaims. Extension points:
PreFilter, PostFilter, EnqueueExtensions.

With the DynamicResourceAllocation feature gate on by default (GA in v1.34) the default profile
has this plugin just before DefaultPreemption. The core does not model ResourceClaims,
DeviceClasses or ResourceSlices (workloads that need them are reported unsupported), so every
pod here has no claim, and the plugin does what upstream's does for such a pod:

- PreFilter records in the cycle state that the pod has no claims, and answers Skip (so its
  Filter never runs);
- PostFilter runs first among the PostFilter plugins and answers Unschedulable with the reason
  ``no new claims to deallocate``, which the framework adds before DefaultPreemption's reasons
  in the failure message (v1.37 gives no reason: so does the core with the GenericWorkload
  gate on, which exists only from v1.37). When its PreFilter did not run in the cycle (an
  earlier PreFilter plugin rejected the pod as UnschedulableAndUnresolvable), the state is
  missing and the answer is an Error ``not found``, which ends PostFilter before preemption
  runs.

Reserve, PreBind and PreEnqueue do nothing for a pod without claims and are not modelled.
See docs/scheduling-model.md, "DynamicResources".
"""

from __future__ import annotations

from typing import Any, ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "NO_CLAIMS_TO_DEALLOCATE", "DynamicResources"]

NAME = names.DYNAMIC_RESOURCES
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
STATE_MISSING = "not found"  # the cycle state's error for a key nobody wrote
_STATE_KEY = NAME
_NO_CLAIMS = ()  # the state PreFilter records: the pod's claims (always none here)


class DynamicResources:
    name: ClassVar[str] = NAME
    # its Filter never runs (PreFilter skips it): nothing about a node's pods is read
    node_local: ClassVar[bool] = True
    pod_blind: ClassVar[bool] = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self._handle = handle

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable
                   ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_STATE_KEY, _NO_CLAIMS)
        return None, SKIP

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, idx: Any) -> None:
        return None

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Any
                    ) -> tuple[PostFilterResult | None, Status]:
        if state.get(_STATE_KEY) is None:
            return None, Status.error(STATE_MISSING)
        if getattr(self._handle, "generic_workload", False):  # v1.37: no reason given
            return None, Status(Code.UNSCHEDULABLE)
        return None, Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # upstream's registrations with queueing hints on; the claim, class and slice events
        # never happen in the fake cluster, and the plugin never rejects a pod here
        return [
            ClusterEventWithHint(ClusterEvent(
                "Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(
                "Pod", ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)),
        ]
