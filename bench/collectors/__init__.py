"""Collectors that observe scheduler_core through its metrics hooks."""

from bench.collectors.recorder import CollectingRecorder

__all__ = ["CollectingRecorder"]
