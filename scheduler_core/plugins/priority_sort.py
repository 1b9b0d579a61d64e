"""PrioritySort. Extension points: QueueSort.

Higher priority first; equal priorities by the queue timestamp (refreshed every time the pod
is requeued), then by arrival sequence so that the order is total.

See docs/scheduling-model.md, "Queue ordering".
"""

from __future__ import annotations

from typing import ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import Handle
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "PrioritySort"]

NAME = names.PRIORITY_SORT


class PrioritySort:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)

    def sort_key(self, pod: Pod, timestamp: float, seq: int) -> tuple:
        return (-pod.priority, timestamp, seq)
