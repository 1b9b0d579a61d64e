"""BatchGate: an example out-of-tree co-scheduling gate (a minimal scheduler-plugins
coscheduling).

The rule: pods labelled ``example.com/batch: <name>`` and ``example.com/batch-size: "<n>"``
form a batch (per namespace); none of them binds until ``n`` members hold a place.

* Reserve: the member is recorded against its batch (a batch label without a valid
  size, a positive integer, is rejected as unresolvable; so is a size that disagrees with
  the batch's earlier members). Unreserve drops it again and rejects the batch's other
  members still waiting at Permit (the batch is incomplete again, as coscheduling does).
* Permit: fewer than ``n`` members reserved -> Wait (``permitTimeoutSeconds``, default 10);
  the ``n``-th member allows every waiting member (``Handle.get_waiting_pod(uid).allow``)
  and passes itself. A member that waits out the timeout is rejected and unreserved by the
  scheduler, and retried later.
* PreBind: the member must still be recorded (a member unreserved meanwhile is an error).
* PostBind: the bound member is forgotten (its batch is dropped with its last member).
* Pods without the batch label pass every point untouched.
* Events: a pod of the same batch being added (``Pod``/``Add``) may complete the batch.

Loaded like any out-of-tree plugin::

    pluginRegistry:
      BatchGate: "workloads.example_plugins.batch_gate:BatchGate"
    profiles:
    - plugins:
        multiPoint:
          enabled:
          - name: BatchGate
      pluginConfig:
      - name: BatchGate
        args: {permitTimeoutSeconds: 10}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    QueueingHint,
    Status,
)
from scheduler_core.plugins.helper import check_keys, require_mapping

__all__ = [
    "BATCH_LABEL",
    "DEFAULT_PERMIT_TIMEOUT",
    "MAX_PERMIT_TIMEOUT",
    "NAME",
    "SIZE_LABEL",
    "BatchGate",
]

NAME = "BatchGate"
BATCH_LABEL = "example.com/batch"
SIZE_LABEL = "example.com/batch-size"
DEFAULT_PERMIT_TIMEOUT = 10.0
MAX_PERMIT_TIMEOUT = 15 * 60.0  # the framework's cap on a Permit wait

BatchKey = tuple[str, str]  # (namespace, batch name)


@dataclass(slots=True)
class _Batch:
    size: int
    members: dict[str, str] = field(default_factory=dict)  # uid -> pod name, reserved or bound


def batch_of(pod: Pod) -> BatchKey | None:
    """The batch ``pod`` belongs to, or None when it has no batch label."""
    name = pod.labels.get(BATCH_LABEL)
    return None if name is None else (pod.namespace, name)


def batch_size(pod: Pod) -> int | None:
    """The pod's ``example.com/batch-size`` as a positive integer, or None if it is not one."""
    value = pod.labels.get(SIZE_LABEL, "")
    if not value.isdigit() or not value.isascii():
        return None
    size = int(value)
    return size if size > 0 else None


def _timeout(data: dict[str, Any], path: str) -> float:
    value = data.get("permitTimeoutSeconds", DEFAULT_PERMIT_TIMEOUT)
    where = f"{path}.permitTimeoutSeconds" if path else "permitTimeoutSeconds"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"expected a number of seconds, got {value!r}", field=where)
    seconds = float(value)
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_PERMIT_TIMEOUT:
        raise ConfigError(f"expected seconds > 0 and <= {MAX_PERMIT_TIMEOUT:g}, got {value!r}",
                          field=where)
    return seconds


def _after_pod_add(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A pod added to the batch of the rejected ``pod`` may complete it."""
    if isinstance(new, Pod) and batch_of(pod) is not None and batch_of(new) == batch_of(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


class BatchGate:
    """Reserve, Permit, PreBind and PostBind of a co-scheduling gate (see the module text)."""

    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        data = require_mapping(args, args_path)
        check_keys(data, args_path, ("permitTimeoutSeconds",))
        self.permit_timeout = _timeout(data, args_path)
        self._handle = handle
        self._batches: dict[BatchKey, _Batch] = {}

    def reserved(self, namespace: str, batch: str) -> list[str]:
        """The names of the batch's members currently recorded (reserved or bound)."""
        entry = self._batches.get((namespace, batch))
        return sorted(entry.members.values()) if entry is not None else []

    # ---- Reserve
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        key = batch_of(pod)
        if key is None:
            return None
        size = batch_size(pod)
        if size is None:
            return Status.unresolvable(
                f"pod's {SIZE_LABEL} label must be a positive integer, got "
                f"{pod.labels.get(SIZE_LABEL)!r}", plugin=NAME)
        entry = self._batches.get(key)
        if entry is None:
            entry = self._batches[key] = _Batch(size)
        elif entry.size != size:
            return Status.unresolvable(
                f"batch {key[1]} has size {entry.size}, pod's {SIZE_LABEL} says {size}",
                plugin=NAME)
        entry.members[pod.uid] = pod.name
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = batch_of(pod)
        entry = self._batches.get(key) if key is not None else None
        if entry is None or entry.members.pop(pod.uid, None) is None:
            return
        if self._handle is not None:
            for uid in entry.members:
                waiting = self._handle.get_waiting_pod(uid)
                if waiting is not None:
                    waiting.reject(NAME, f"batch {key[1]} lost member {pod.name}")
        if not entry.members:
            del self._batches[key]

    # ---- Permit
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        key = batch_of(pod)
        entry = self._batches.get(key) if key is not None else None
        if entry is None:
            return None, 0.0
        if len(entry.members) < entry.size:
            return Status(Code.WAIT, (
                f"batch {key[1]}: {len(entry.members)} of {entry.size} members reserved",),
                NAME), self.permit_timeout
        if self._handle is not None:
            for uid in entry.members:
                if uid != pod.uid:
                    waiting = self._handle.get_waiting_pod(uid)
                    if waiting is not None:
                        waiting.allow(NAME)
        return None, 0.0

    # ---- PreBind / PostBind
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        key = batch_of(pod)
        if key is None:
            return None
        entry = self._batches.get(key)
        if entry is None or pod.uid not in entry.members:
            return Status.error(f"pod {pod.name} is no longer reserved in batch {key[1]}",
                                plugin=NAME)
        return None

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        key = batch_of(pod)
        entry = self._batches.get(key) if key is not None else None
        if entry is None:
            return
        entry.members.pop(pod.uid, None)
        if not entry.members:
            del self._batches[key]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.ADD), _after_pod_add)]
