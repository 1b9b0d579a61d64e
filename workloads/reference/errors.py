"""The errors of the reference scheduler's client side.

    ReferenceSchedulerError         base: the message names what failed and why
    ├── GoToolMissing               ``go`` is not on PATH (nothing can be built)
    ├── ReferenceSourceMissing      the Go module (reference_scheduler/) is not where expected
    ├── ReferenceBuildError         ``go build`` failed (its output's tail in the message)
    ├── ReferenceProcessError       the binary died, hung past a timeout or wrote a line that
    │                               is not a reply (its stderr's tail in the message)
    └── ReferenceRequestError       the binary answered a request with an error reply
"""

from __future__ import annotations

__all__ = [
    "GoToolMissing",
    "ReferenceBuildError",
    "ReferenceProcessError",
    "ReferenceRequestError",
    "ReferenceSchedulerError",
    "ReferenceSourceMissing",
]


class ReferenceSchedulerError(Exception):
    """Base of the reference scheduler's client-side errors."""


class GoToolMissing(ReferenceSchedulerError):
    """The Go toolchain (``go``) is not installed or not on PATH."""


class ReferenceSourceMissing(ReferenceSchedulerError):
    """The reference scheduler's Go sources were not found."""


class ReferenceBuildError(ReferenceSchedulerError):
    """``go build`` of the reference scheduler failed."""


class ReferenceProcessError(ReferenceSchedulerError):
    """The reference process died, timed out or broke the protocol."""


class ReferenceRequestError(ReferenceSchedulerError):
    """An error reply: ``kind`` (protocol, invalid_config, invalid_object, not_found,
    conflict, unsupported, internal), the offending ``field`` path if any, and every field
    error (``fields``: (path, message) pairs)."""

    def __init__(self, op: str, kind: str, message: str, field: str = "",
                 fields: tuple[tuple[str, str], ...] = ()) -> None:
        self.op = op
        self.kind = kind
        self.detail = message
        self.field = field
        self.fields = fields
        super().__init__(f"reference {op}: {kind}: {message}")
