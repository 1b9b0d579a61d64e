"""Errors of the fidelity check."""

from __future__ import annotations

from workloads.ops.errors import WorkloadError

__all__ = ["DeviationsFileError", "FidelityError", "MirrorError"]


class FidelityError(WorkloadError):
    """The fidelity check could not go on (its message says why); a WorkloadError, so the
    runner ends the workload as failed with this message."""


class MirrorError(FidelityError):
    """A change of the core's cluster could not be sent to the reference."""


class DeviationsFileError(FidelityError):
    """The known-deviations file is unreadable or malformed (file and field named)."""
