"""The in-memory fake cluster (API store + scheduler cache) and its watch events."""

from scheduler_core.cluster.events import EventType, WatchEvent
from scheduler_core.cluster.store import Cluster

__all__ = ["Cluster", "EventType", "WatchEvent"]
