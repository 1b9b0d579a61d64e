"""A probe plugin for the no-tracer tests: a per-node Filter that accepts every node and, on
its first call in a process, appends ``<pid> traced`` or ``<pid> untraced`` to the file named
by ``$SCHEDPERF_TRACE_PROBE``: whether a tracer (``sys.settrace``, or a ``sys.monitoring``
tool where Python has one) is active *inside a running workload*."""

from __future__ import annotations

import os
import sys
from typing import Any, ClassVar

PROBE_ENV = "SCHEDPERF_TRACE_PROBE"
_seen: list[bool] = []


def tracer_active() -> bool:
    if sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(i) is not None
                                          for i in range(6))


class TraceProbe:
    name: ClassVar[str] = "TraceProbe"
    per_node: ClassVar[bool] = True

    def __init__(self, args: dict | None = None, handle: Any = None, *,
                 args_path: str = "") -> None:
        pass

    def filter(self, pod: Any, node_info: Any) -> None:
        target = os.environ.get(PROBE_ENV)
        if target and not _seen:
            _seen.append(True)
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()} {'traced' if tracer_active() else 'untraced'}\n")
        return None

    def events_to_register(self) -> list[Any]:
        return []


class FailingProbe(TraceProbe):
    """Fails every Filter call: a workload that fails (status ``failed``) at run time."""

    name: ClassVar[str] = "FailingProbe"

    def filter(self, pod: Any, node_info: Any) -> None:
        raise RuntimeError("probe failure")
