"""Collectors that observe scheduler_core through its metrics hooks."""

from workloads.collectors.recorder import CollectingRecorder

__all__ = ["CollectingRecorder"]
