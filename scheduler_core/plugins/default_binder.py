"""DefaultBinder. Extension points: Bind.

Binds through the framework handle (the fake cluster's Binding); a Status returned by the
handle is passed on, anything else counts as success.

See docs/scheduling-model.md, "DefaultBinder".
"""

from __future__ import annotations

from typing import ClassVar

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import CycleState, Handle, Status
from scheduler_core.plugins import names
from scheduler_core.plugins.helper import no_args

__all__ = ["NAME", "DefaultBinder"]

NAME = names.DEFAULT_BINDER


class DefaultBinder:
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        no_args(args, args_path, NAME)
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        result = self.handle.bind(pod, node_name)
        return result if isinstance(result, Status) else None
