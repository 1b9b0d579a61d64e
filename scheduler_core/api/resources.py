"""Resource names, canonical integer units and the effective pod request.

Canonical units: ``cpu`` in millicores, every other resource in whole units (bytes for memory
and ephemeral-storage, a count for ``pods`` and extended resources), rounded up as
``Quantity.MilliValue()`` / ``Quantity.Value()`` do.

See docs/scheduling-model.md, "Resources and effective requests", and, for the defaults used in
scoring, docs/scheduling-model.md, "Non-zero requests for scoring".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler_core.api.quantity import Quantity

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "canonical",
    "canonical_map",
    "is_scalar_resource",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util/pod_resources.go
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NATIVE = frozenset((CPU, MEMORY, EPHEMERAL_STORAGE, PODS))


def is_scalar_resource(name: str) -> bool:
    """Extended/scalar resources: everything but cpu, memory, ephemeral-storage and pods."""
    return name not in _NATIVE


def canonical(name: str, q: Quantity) -> int:
    return q.milli_value if name == CPU else q.value


def canonical_map(quantities: Mapping[str, Quantity]) -> dict[str, int]:
    return {name: canonical(name, q) for name, q in quantities.items()}


def add_into(acc: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        acc[k] = acc.get(k, 0) + v


def max_into(acc: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > acc.get(k, 0):
            acc[k] = v


def effective_requests(
    containers: Iterable[Mapping[str, int]],
    init_containers: Iterable[tuple[Mapping[str, int], bool]],
    overhead: Mapping[str, int],
) -> dict[str, int]:
    """``PodRequests``: containers summed, init containers and sidecars folded in, overhead added.

    ``init_containers`` yields ``(requests, is_sidecar)`` in declaration order.
    """
    reqs: dict[str, int] = {}
    for c in containers:
        add_into(reqs, c)
    sidecar_sum: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for r, is_sidecar in init_containers:
        if is_sidecar:
            add_into(reqs, r)
            add_into(sidecar_sum, r)
            cur = dict(sidecar_sum)
        else:
            cur = dict(r)
            add_into(cur, sidecar_sum)
        max_into(init_max, cur)
    max_into(reqs, init_max)
    add_into(reqs, overhead)
    return reqs


def non_zero_requests(
    containers: Iterable[Mapping[str, int]],
    init_containers: Iterable[tuple[Mapping[str, int], bool]],
    overhead: Mapping[str, int],
) -> tuple[int, int]:
    """(cpu, memory) of the effective request with the non-zero defaults applied per container,
    only where the request key is absent (an explicit 0 stays 0)."""

    def nz(r: Mapping[str, int]) -> dict[str, int]:
        return {
            CPU: r.get(CPU, DEFAULT_MILLI_CPU_REQUEST),
            MEMORY: r.get(MEMORY, DEFAULT_MEMORY_REQUEST),
        }

    total = effective_requests(
        (nz(c) for c in containers), ((nz(r), s) for r, s in init_containers), overhead
    )
    return total.get(CPU, 0), total.get(MEMORY, 0)
