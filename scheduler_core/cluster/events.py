"""Watch events delivered by the fake cluster to its subscribers, in order."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["ADDED", "DELETED", "MODIFIED", "EventType", "WatchEvent"]


class EventType(Enum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


# the members as module constants, for hot paths: attribute access on an enum class goes
# through EnumType's __getattr__ hook and costs several times a global lookup in 3.11
ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """``kind`` is the object kind ("Node", "Pod", "Namespace", ...); ``old`` is None for ADDED,
    ``new`` is None for DELETED."""

    kind: str
    type: EventType
    old: Any
    new: Any

    @property
    def obj(self) -> Any:
        return self.new if self.new is not None else self.old
