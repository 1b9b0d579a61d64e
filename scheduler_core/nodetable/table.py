"""The columnar node table: per-node numpy columns that a scheduling cycle reads.

Layout
------
Every node lives in a *slot*. Columns are arrays indexed by slot, with spare capacity so that
adding nodes rarely reallocates; a deleted node's slot is cleared and reused. ``order`` holds the
live slots in the snapshot's list order (kube's nodeTree: zones interleaved round-robin), which is
the order the rotating-start filter search walks.

Ownership
---------
Only ``scheduler_core.cluster`` mutates the table (through the ``add_*``/``remove_*``/``update_*``
methods below), between scheduling cycles. Plugins only read. Nothing changes during a cycle, so a
cycle needs no copy. Derived caches (toleration lookups, numeric label values, the list order) are
recomputed lazily when their inputs change (a version counter per concern).

Extension columns: indexes that keep per-node arrays (e.g. per-selector pod counts) register
them with ``register_column`` so that growth and slot clearing apply to them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import HostPort, Pod
from scheduler_core.api.quantity import INT64_MAX
from scheduler_core.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from scheduler_core.api.selectors import Taint, parse_int64
from scheduler_core.nodetable.accounting import load_of

__all__ = ["ZONE_LABEL", "NodeTable", "zone_key"]

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_WILDCARD_IP = "0.0.0.0"
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)

PodListener = Callable[[Pod, int, int], None]  # (pod, slot, +1 | -1)


def zone_key(labels: dict[str, str]) -> str:
    """kube's ``utilnode.GetZoneKey``: region and zone joined, or "" when neither is set."""
    region = labels.get(REGION_LABEL) or labels.get(_BETA_REGION, "")
    zone = labels.get(ZONE_LABEL) or labels.get(_BETA_ZONE, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def _clip(v: int) -> int:
    return v if v <= INT64_MAX else INT64_MAX


class NodeTable:
    """Struct-of-arrays state of every node, plus the pods on each node."""

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = max(16, capacity)
        self.slot_of: dict[str, int] = {}
        self.nodes: list[Node | None] = [None] * self.capacity
        self.pods: list[dict[str, Pod]] = [{} for _ in range(self.capacity)]
        self._free: list[int] = []
        self._high = 0  # slots [0, _high) have been used at least once
        self.live = np.zeros(self.capacity, dtype=bool)
        # resources: allocatable and requested per resource, non-zero requested cpu/memory
        self.allocatable: dict[str, np.ndarray] = {}
        self.requested: dict[str, np.ndarray] = {}
        for r in BASE_RESOURCES:
            self._add_resource(r)
        self.nonzero_cpu = np.zeros(self.capacity, dtype=np.int64)
        self.nonzero_memory = np.zeros(self.capacity, dtype=np.int64)
        self.pod_count = np.zeros(self.capacity, dtype=np.int64)
        self.unschedulable = np.zeros(self.capacity, dtype=bool)
        # labels: per key an int32 code column (-1 = key absent) and a value vocabulary
        self.label_codes: dict[str, np.ndarray] = {}
        self.label_vocab: dict[str, dict[str, int]] = {}
        self.label_values: dict[str, list[str]] = {}
        self._numeric_cache: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        # taints: per node an id into taint_sets (0 = no taints)
        self.taint_set_id = np.zeros(self.capacity, dtype=np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_set_ids: dict[tuple[Taint, ...], int] = {(): 0}
        # images: per image name, the size on each node (0 = absent) and how many nodes have it
        self.image_size: dict[str, np.ndarray] = {}
        self.image_nodes: dict[str, int] = {}
        # host ports: (protocol, port) -> uses on any IP; (ip, protocol, port) -> uses on that IP
        self.port_any_ip: dict[tuple[str, int], np.ndarray] = {}
        self.port_by_ip: dict[tuple[str, str, int], np.ndarray] = {}
        # extension columns registered by indexes
        self._extra: dict[str, tuple[np.ndarray, Any]] = {}
        self.pod_listeners: list[PodListener] = []
        self.node_listeners: list[Callable[[int, Node | None, Node | None], None]] = []
        # list order (kube nodeTree)
        self._zones: dict[str, list[str]] = {}
        self._order: np.ndarray = np.zeros(0, dtype=np.int64)
        self._order_is_identity = True
        self._order_dirty = False
        self.version = 0  # bumped on every node-level change (labels, taints, add/remove)
        self.memo: dict[Any, Any] = {}  # derived lookups keyed by their inputs (see matching)
        self.indexes: dict[str, Any] = {}  # incremental pod indexes, created on first use

    # ------------------------------------------------------------------ capacity & columns
    def _new_column(self, dtype: Any, fill: Any = 0) -> np.ndarray:
        return np.full(self.capacity, fill, dtype=dtype)

    def _add_resource(self, name: str) -> None:
        self.allocatable[name] = self._new_column(np.int64)
        self.requested[name] = self._new_column(np.int64)

    def register_column(self, name: str, dtype: Any, fill: Any = 0) -> np.ndarray:
        """A per-slot column kept by an index; it grows with the table and is reset when its
        node is removed."""
        if name not in self._extra:
            self._extra[name] = (self._new_column(dtype, fill), fill)
        return self._extra[name][0]

    def column(self, name: str) -> np.ndarray:
        return self._extra[name][0]

    def drop_column(self, name: str) -> None:
        self._extra.pop(name, None)

    def _grow(self) -> None:
        old = self.capacity
        new = old * 2

        def grown(a: np.ndarray, fill: Any = 0) -> np.ndarray:
            out = np.full(new, fill, dtype=a.dtype)
            out[:old] = a
            return out

        self.capacity = new
        self.nodes.extend([None] * (new - old))
        self.pods.extend({} for _ in range(new - old))
        self.live = grown(self.live)
        for d in (self.allocatable, self.requested, self.image_size, self.port_any_ip,
                  self.port_by_ip):
            for k, a in d.items():
                d[k] = grown(a)
        for k, a in self.label_codes.items():
            self.label_codes[k] = grown(a, -1)
        self.nonzero_cpu = grown(self.nonzero_cpu)
        self.nonzero_memory = grown(self.nonzero_memory)
        self.pod_count = grown(self.pod_count)
        self.unschedulable = grown(self.unschedulable)
        self.taint_set_id = grown(self.taint_set_id)
        for k, (a, fill) in self._extra.items():
            self._extra[k] = (grown(a, fill), fill)

    # ------------------------------------------------------------------ read helpers
    def __len__(self) -> int:
        return len(self.slot_of)

    @property
    def num_nodes(self) -> int:
        return len(self.slot_of)

    @property
    def high(self) -> int:
        """One past the highest slot ever used: columns[:high] cover every live node."""
        return self._high

    def order(self) -> np.ndarray:
        """Live slots in snapshot list order (zones interleaved, as kube's nodeTree.list())."""
        if self._order_dirty:
            self._rebuild_order()
        return self._order

    @property
    def order_is_identity(self) -> bool:
        if self._order_dirty:
            self._rebuild_order()
        return self._order_is_identity

    def _rebuild_order(self) -> None:
        zones = list(self._zones.values())
        if len(zones) == 1:
            names = zones[0]
        else:
            names = []
            longest = max((len(z) for z in zones), default=0)
            for i in range(longest):
                for z in zones:
                    if i < len(z):
                        names.append(z[i])
        slots = np.fromiter((self.slot_of[n] for n in names), dtype=np.int64, count=len(names))
        self._order = slots
        self._order_is_identity = bool(
            len(slots) == self._high and np.array_equal(slots, np.arange(len(slots)))
        )
        self._order_dirty = False

    def node(self, slot: int) -> Node:
        n = self.nodes[slot]
        assert n is not None
        return n

    def names_of(self, slots: Iterable[int]) -> list[str]:
        return [self.node(int(s)).name for s in slots]

    def codes(self, key: str) -> np.ndarray | None:
        """The label code column for ``key`` (None when no node ever had the key)."""
        return self.label_codes.get(key)

    def code_of(self, key: str, value: str) -> int:
        """The code of ``key=value``, or -2 when no node has that value (matches nothing)."""
        vocab = self.label_vocab.get(key)
        if vocab is None:
            return -2
        return vocab.get(value, -2)

    def numeric_values(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """Per label code of ``key``: the value parsed as int64 (Go's strconv.ParseInt) and
        whether it parsed. Both arrays have one extra trailing entry, read by code -1 (absent),
        which never parses."""
        values = self.label_values.get(key, [])
        cached = self._numeric_cache.get(key)
        if cached is not None and cached[0] == len(values):
            return cached[1], cached[2]
        ints = np.zeros(len(values) + 1, dtype=np.int64)
        ok = np.zeros(len(values) + 1, dtype=bool)
        for i, v in enumerate(values):
            parsed = parse_int64(v)
            if parsed is not None:
                ints[i] = parsed
                ok[i] = True
        self._numeric_cache[key] = (len(values), ints, ok)
        return ints, ok

    # ------------------------------------------------------------------ node mutations
    def add_node(self, node: Node) -> int:
        if node.name in self.slot_of:
            raise ValueError(f"node {node.name} already in the table")
        if self._free:
            slot = self._free.pop()
        else:
            if self._high == self.capacity:
                self._grow()
            slot = self._high
            self._high += 1
        self.slot_of[node.name] = slot
        self.live[slot] = True
        self._write_node(slot, node)
        self._zones.setdefault(zone_key(node.labels), []).append(node.name)
        self._order_dirty = True
        self.version += 1
        for fn in self.node_listeners:
            fn(slot, None, node)
        return slot

    def update_node(self, node: Node) -> int:
        slot = self.slot_of[node.name]
        old = self.node(slot)
        self._clear_node_fields(slot, old)
        self._write_node(slot, node)
        zk_old, zk_new = zone_key(old.labels), zone_key(node.labels)
        if zk_old != zk_new:
            self._zone_remove(zk_old, node.name)
            self._zones.setdefault(zk_new, []).append(node.name)
            self._order_dirty = True
        self.version += 1
        for fn in self.node_listeners:
            fn(slot, old, node)
        return slot

    def remove_node(self, name: str) -> int:
        slot = self.slot_of.pop(name)
        node = self.node(slot)
        for pod in list(self.pods[slot].values()):
            self.remove_pod(pod, slot)
        self._clear_node_fields(slot, node)
        self.nodes[slot] = None
        self.live[slot] = False
        for a, fill in self._extra.values():
            a[slot] = fill
        self._free.append(slot)
        self._zone_remove(zone_key(node.labels), name)
        self._order_dirty = True
        self.version += 1
        for fn in self.node_listeners:
            fn(slot, node, None)
        return slot

    def _zone_remove(self, zk: str, name: str) -> None:
        zone = self._zones[zk]
        zone.remove(name)
        if not zone:
            del self._zones[zk]

    def _write_node(self, slot: int, node: Node) -> None:
        self.nodes[slot] = node
        for r, v in node.allocatable.items():
            if r not in self.allocatable:
                self._add_resource(r)
            self.allocatable[r][slot] = _clip(v)
        self.unschedulable[slot] = node.unschedulable
        for key, value in node.labels.items():
            col = self.label_codes.get(key)
            if col is None:
                col = self.label_codes[key] = self._new_column(np.int32, -1)
                self.label_vocab[key] = {}
                self.label_values[key] = []
            vocab = self.label_vocab[key]
            code = vocab.get(value)
            if code is None:
                code = vocab[value] = len(self.label_values[key])
                self.label_values[key].append(value)
            col[slot] = code
        taints = tuple(node.taints)
        tid = self._taint_set_ids.get(taints)
        if tid is None:
            tid = self._taint_set_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        self.taint_set_id[slot] = tid
        for img in node.images:
            for name in img.names:
                col = self.image_size.get(name)
                if col is None:
                    col = self.image_size[name] = self._new_column(np.int64)
                    self.image_nodes[name] = 0
                if col[slot] == 0:
                    self.image_nodes[name] += 1
                col[slot] = max(img.size_bytes, 1)  # 0 marks absence; a 0-byte image counts as 1

    def _clear_node_fields(self, slot: int, node: Node) -> None:
        for r in node.allocatable:
            self.allocatable[r][slot] = 0
        self.unschedulable[slot] = False
        for key in node.labels:
            self.label_codes[key][slot] = -1
        self.taint_set_id[slot] = 0
        for img in node.images:
            for name in img.names:
                col = self.image_size[name]
                if col[slot]:
                    col[slot] = 0
                    self.image_nodes[name] -= 1

    # ------------------------------------------------------------------ pod mutations
    def add_pod(self, pod: Pod, slot: int) -> None:
        """Account a pod (assumed or bound) on the node in ``slot``."""
        self.pods[slot][pod.uid] = pod
        self._account(pod, slot, 1)
        for fn in self.pod_listeners:
            fn(pod, slot, 1)

    def remove_pod(self, pod: Pod, slot: int) -> None:
        del self.pods[slot][pod.uid]
        self._account(pod, slot, -1)
        for fn in self.pod_listeners:
            fn(pod, slot, -1)

    def _account(self, pod: Pod, slot: int, sign: int) -> None:
        requests, nz_cpu, nz_memory, ports = load_of(pod.spec)
        requested = self.requested
        for r, v in requests:
            col = requested.get(r)
            if col is None:
                col = self.ensure_resource(r)
            col[slot] += sign * v
        self.nonzero_cpu[slot] += sign * nz_cpu
        self.nonzero_memory[slot] += sign * nz_memory
        self.pod_count[slot] += sign
        for hp in ports:
            self._port(hp, slot, sign)

    def ensure_resource(self, name: str) -> np.ndarray:
        """The ``requested`` column of a resource, created (with ``allocatable`` 0) if new."""
        col = self.requested.get(name)
        if col is None:
            self._add_resource(name)
            col = self.requested[name]
        return col

    def port_add(self, hp: HostPort, slot: int, sign: int) -> None:
        """Count a host port in use on ``slot`` (``sign`` 1) or no longer (-1)."""
        self._port(hp, slot, sign)

    def _port(self, hp: HostPort, slot: int, sign: int) -> None:
        k_any = (hp.protocol, hp.port)
        col = self.port_any_ip.get(k_any)
        if col is None:
            col = self.port_any_ip[k_any] = self._new_column(np.int32)
        col[slot] += sign
        k_ip = (hp.ip, hp.protocol, hp.port)
        col = self.port_by_ip.get(k_ip)
        if col is None:
            col = self.port_by_ip[k_ip] = self._new_column(np.int32)
        col[slot] += sign

    def port_conflicts(self, wanted: HostPort, idx: Any) -> np.ndarray:
        """Bool mask over ``idx``: does the wanted host port conflict with one in use?"""
        if wanted.ip == _WILDCARD_IP:
            col = self.port_any_ip.get((wanted.protocol, wanted.port))
            if col is None:
                return np.zeros(_length(idx, self), dtype=bool)
            return col[idx] > 0
        out = np.zeros(_length(idx, self), dtype=bool)
        for ip in (wanted.ip, _WILDCARD_IP):
            col = self.port_by_ip.get((ip, wanted.protocol, wanted.port))
            if col is not None:
                out |= col[idx] > 0
        return out


def _length(idx: Any, table: NodeTable) -> int:
    if isinstance(idx, slice):
        return len(range(*idx.indices(table.capacity)))
    return len(idx)
