"""The error tree of scheduler_core.

    SchedulerCoreError            base of every error the core raises on purpose
    ├── ManifestError             a Kubernetes manifest is malformed (file, object, field path)
    ├── ConfigError               a KubeSchedulerConfiguration is malformed (file, field path)
    ├── ClusterError              an operation on the fake cluster is invalid
    │   ├── NotFoundError         the object does not exist
    │   ├── AlreadyExistsError    an object with that key exists already
    │   └── UnknownSchedulerError a pod names a schedulerName no profile has
    └── FrameworkError            a plugin misbehaved (bad score range, wrong return type)

Every message is meant for a person: it says where (file, object, field path) and what was
expected. The CLI prints ``str(err)`` on one line and exits 2 for bad input.
"""

from __future__ import annotations

__all__ = [
    "AlreadyExistsError",
    "ClusterError",
    "ConfigError",
    "FrameworkError",
    "ManifestError",
    "NotFoundError",
    "SchedulerCoreError",
    "UnknownSchedulerError",
    "UnsupportedConfigError",
]


class SchedulerCoreError(Exception):
    """Base of every deliberate scheduler_core error."""


class ManifestError(SchedulerCoreError, ValueError):
    """A manifest has a bad field. Message: ``[file: ]kind ns/name: field.path: problem``."""

    def __init__(
        self,
        problem: str,
        *,
        field: str = "",
        obj: str = "",
        source: str | None = None,
        line: int | None = None,
    ) -> None:
        self.problem = problem
        self.field = field
        self.obj = obj
        self.source = source
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.source:
            parts.append(f"{self.source}:{self.line}" if self.line else self.source)
        if self.obj:
            parts.append(self.obj)
        if self.field:
            parts.append(self.field)
        parts.append(self.problem)
        return ": ".join(parts)

    def located(
        self, *, source: str | None = None, obj: str | None = None, line: int | None = None
    ) -> ManifestError:
        """Return a copy with the source file / object / line filled in where still unknown."""
        return ManifestError(
            self.problem,
            field=self.field,
            obj=self.obj or (obj or ""),
            source=self.source or source,
            line=self.line or line,
        )


class ConfigError(SchedulerCoreError, ValueError):
    """A scheduler configuration is invalid. Message: ``[file: ]field.path: problem``."""

    def __init__(self, problem: str, *, field: str = "", source: str | None = None) -> None:
        self.problem = problem
        self.field = field
        self.source = source
        parts = [p for p in (source, field) if p]
        parts.append(problem)
        super().__init__(": ".join(parts))


class UnsupportedConfigError(ConfigError):
    """A valid scheduler configuration that needs something the core does not implement
    (a workload using it is unsupported, not bad input)."""


class ClusterError(SchedulerCoreError):
    """An invalid operation on the fake cluster."""


class NotFoundError(ClusterError, KeyError):
    """The object does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it plain
        return str(self.args[0]) if self.args else ""


class AlreadyExistsError(ClusterError):
    """An object with that key exists already."""


class UnknownSchedulerError(ClusterError):
    """A pod names a schedulerName that no profile has (reject_unknown_scheduler)."""


class FrameworkError(SchedulerCoreError):
    """A plugin broke the framework contract (e.g. a normalised score outside [0, 100])."""
