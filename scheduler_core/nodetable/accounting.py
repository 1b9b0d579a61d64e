"""A pod's accounting on the node table, as arrays over many pods.

``NodeTable.add_pod`` adds a pod's *load* to its node's accounting columns: the effective
request per resource (``requested``), the non-zero cpu/memory requests, one to ``pod_count``
and its host ports. ``PodLoads`` holds the loads of a list of pods as arrays, so a dry run can
add them to (or take them off) many nodes at once with a few vector operations.

``PodLoads.apply`` changes only those columns: ``table.pods`` and the pod listeners (the
incremental pod indexes) are left alone. That is exact for checks that read pods only through
the accounting columns, which is what the node-local Filter plugins do
(``plugins.node_local``): the columns hold exactly the values ``add_pod``/``remove_pod`` would
give them (int64 sums wrap identically in any order). Callers put back what they change
(``placed`` does it in a ``finally``).

``load_of(spec)`` is memoised per ``PodSpec`` (immutable and shared between a template's
clones), so each spec's requests are walked once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from scheduler_core.api.pod import HostPort, Pod, PodSpec
from scheduler_core.api.quantity import INT64_MAX

if TYPE_CHECKING:
    from scheduler_core.nodetable.table import NodeTable

__all__ = ["Load", "PodLoads", "SlotPods", "add_load", "load_of"]

_CACHE_LIMIT = 4096

# (requests (resource, clipped value) in the spec's order, non-zero cpu, clipped non-zero
# memory, host ports)
Load = tuple[tuple[tuple[str, int], ...], int, int, tuple[HostPort, ...]]
_cache: dict[int, tuple[PodSpec, Load]] = {}  # id(spec) -> (spec kept alive, its load)


def _clip(v: int) -> int:
    return v if v <= INT64_MAX else INT64_MAX


def load_of(spec: PodSpec) -> Load:
    """What ``add_pod`` adds for a pod with this spec (memoised per spec object)."""
    hit = _cache.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    load: Load = (tuple((r, _clip(v)) for r, v in spec.requests.items()), spec.non_zero_cpu,
                  _clip(spec.non_zero_memory), spec.host_ports)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[id(spec)] = (spec, load)
    return load


def add_load(table: NodeTable, spec: PodSpec, slots: np.ndarray, sign: int) -> None:
    """One pod's load added to (``sign`` 1) or taken off (-1) each of ``slots`` (no slot
    twice): ``PodLoads.apply`` for a single pod, without building its matrix."""
    if not len(slots):
        return
    requests, nz_cpu, nz_memory, ports = load_of(spec)
    for name, v in requests:
        table.ensure_resource(name)[slots] += sign * v
    table.nonzero_cpu[slots] += sign * nz_cpu
    table.nonzero_memory[slots] += sign * nz_memory
    table.pod_count[slots] += sign
    for hp in ports:
        for slot in slots.tolist():
            table.port_add(hp, slot, sign)


class PodLoads:
    """The loads of ``pods`` (rows in that order): ``matrix[row, j]`` is the request for
    ``resources[j]``, plus per-row non-zero cpu/memory and host ports."""

    __slots__ = ("matrix", "nz_cpu", "nz_memory", "ports", "resources")

    def __init__(self, pods: Sequence[Pod]) -> None:
        specs = [p.spec for p in pods]
        ids = np.fromiter(map(id, specs), dtype=np.int64, count=len(specs))
        _, first, rows = np.unique(ids, return_index=True, return_inverse=True)
        rows = rows.reshape(-1)
        loads = [load_of(specs[i]) for i in first.tolist()]  # per distinct spec
        col_of: dict[str, int] = {}
        for reqs, _, _, _ in loads:
            for name, _ in reqs:
                col_of.setdefault(name, len(col_of))
        distinct = np.zeros((len(loads), len(col_of)), dtype=np.int64)
        for r, (reqs, _, _, _) in enumerate(loads):
            for name, v in reqs:
                distinct[r, col_of[name]] = v
        self.resources = list(col_of)
        self.matrix = distinct[rows]
        self.nz_cpu = np.asarray([ld[1] for ld in loads], dtype=np.int64)[rows]
        self.nz_memory = np.asarray([ld[2] for ld in loads], dtype=np.int64)[rows]
        # row -> host ports, only for rows that have some
        self.ports: dict[int, tuple[HostPort, ...]] = {}
        if any(ld[3] for ld in loads):
            for i, r in enumerate(rows.tolist()):
                if loads[r][3]:
                    self.ports[i] = loads[r][3]

    def __len__(self) -> int:
        return len(self.matrix)

    def apply(self, table: NodeTable, rows: np.ndarray, slots: np.ndarray, sign: int, *,
              unique: bool | None = None) -> None:
        """Add (``sign`` 1) or take off (-1) the loads of ``rows`` on ``slots`` (pairwise; a
        slot may repeat unless ``unique`` says otherwise). Only the accounting columns change
        (see the module docstring)."""
        if not len(rows):
            return
        if unique is None:
            unique = len(slots) == 1 or len(np.unique(slots)) == len(slots)

        def add(col: np.ndarray, values: np.ndarray) -> None:
            if sign < 0:
                values = -values
            if unique:
                col[slots] += values
            else:
                np.add.at(col, slots, values)

        for j, name in enumerate(self.resources):
            add(table.ensure_resource(name), self.matrix[rows, j])
        add(table.nonzero_cpu, self.nz_cpu[rows])
        add(table.nonzero_memory, self.nz_memory[rows])
        counts = np.ones(len(rows), dtype=np.int64)
        add(table.pod_count, counts)
        if self.ports:
            for row, slot in zip(rows.tolist(), slots.tolist(), strict=True):
                for hp in self.ports.get(row, ()):
                    table.port_add(hp, slot, sign)

    @contextmanager
    def placed(self, table: NodeTable, slots: np.ndarray, rows: np.ndarray | None = None, *,
               unique: bool | None = None) -> Iterator[None]:
        """The loads of ``rows`` (default: every row) added on ``slots`` for the duration of
        the block, then taken off again."""
        if rows is None:
            rows = np.arange(len(self), dtype=np.int64)
        if unique is None:
            unique = len(slots) == 1 or len(np.unique(slots)) == len(slots)
        self.apply(table, rows, slots, 1, unique=unique)
        try:
            yield
        finally:
            self.apply(table, rows, slots, -1, unique=unique)


class SlotPods:
    """Pods, each meant for a slot (``pod_slots``, pairwise), with their loads: e.g. the
    nominated pods a nominated pass adds to their nodes. ``size``: more than the highest slot
    ``on``/``placed`` will be asked about (e.g. the table's capacity)."""

    __slots__ = ("has", "loads", "pod_slots", "pods", "slots")

    def __init__(self, pods: list[Pod], pod_slots: np.ndarray, size: int) -> None:
        self.pods = pods
        self.pod_slots = pod_slots
        self.has = np.zeros(max(size, int(pod_slots.max()) + 1 if len(pod_slots) else 0),
                            dtype=bool)
        self.has[pod_slots] = True
        self.slots = np.flatnonzero(self.has)  # slots with pods
        self.loads = PodLoads(pods)

    @classmethod
    def by_slot(cls, by_slot: Mapping[int, Sequence[Pod]], size: int) -> SlotPods:
        pods = [p for s in by_slot for p in by_slot[s]]
        slots = np.fromiter((s for s in by_slot for _ in by_slot[s]), dtype=np.int64,
                            count=len(pods))
        return cls(pods, slots, size)

    def __bool__(self) -> bool:
        return len(self.slots) > 0

    def pods_on(self, slot: int) -> list[Pod]:
        return [self.pods[i] for i in np.flatnonzero(self.pod_slots == slot).tolist()]

    def on(self, idx: np.ndarray) -> np.ndarray:
        """The positions in ``idx`` (slots) that have pods to place."""
        if not len(self.slots):
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.has[idx])

    @contextmanager
    def placed(self, table: NodeTable, idx: np.ndarray | None = None) -> Iterator[None]:
        """The pods meant for the slots in ``idx`` (default: all; no slot twice) added to the
        accounting columns for the duration of the block."""
        if not len(self.pods):
            yield
            return
        rows = None
        if idx is not None and np.count_nonzero(self.has[idx]) < len(self.slots):
            wanted = np.zeros(len(self.has), dtype=bool)
            wanted[idx] = True
            rows = np.flatnonzero(wanted[self.pod_slots])
        slots = self.pod_slots if rows is None else self.pod_slots[rows]
        with self.loads.placed(table, slots, rows,
                               unique=len(self.pod_slots) == len(self.slots)):
            yield
