"""How an op says the workload cannot go on."""

from __future__ import annotations

__all__ = ["UnsupportedWorkload", "WorkloadError"]


class WorkloadError(Exception):
    """The workload cannot go on; the message says why (status "failed")."""


class UnsupportedWorkload(WorkloadError):
    """The workload needs something schedperf does not model (status "unsupported")."""
