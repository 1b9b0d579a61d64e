"""WasmTierGate: a Filter and Score plugin whose decisions are made by a WebAssembly guest
(``workloads/wasm/guests/tier_gate.wat`` by default), through wasmtime.

Args (pluginConfig, all optional):

* ``guest``: the guest module, a ``.wat`` (text, compiled at load) or ``.wasm`` file; relative
  paths are relative to the working directory. Default: the shipped TierGate guest.
* ``labelKey``: the node label whose value is sent to the guest (default
  ``example.com/tier``).
* ``crossing``: ``batched`` (default: one call per Filter or Score over all the nodes of the
  call, the records written with numpy) or ``per-node`` (one call per node, as a guest that
  is handed one node at a time).

The guest sees each node's label value, pod count and allocatable pods (guest.py's ABI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from scheduler_core.errors import ConfigError
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    FilterBase,
    Handle,
    Status,
)
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.plugins.helper import check_keys, memo_by_version, require_str
from workloads.wasm.guest import RECORD_BYTES, GuestModule

__all__ = ["CROSSINGS", "DEFAULT_GUEST", "NAME", "WasmTierGate"]

NAME = "TierGate"
DEFAULT_GUEST = Path(__file__).with_name("guests") / "tier_gate.wat"
CROSSINGS = ("batched", "per-node")


class WasmTierGate(FilterBase):
    name: ClassVar[str] = NAME

    def __init__(self, args: dict | None = None, handle: Handle | None = None, *,
                 args_path: str = "") -> None:
        args = args or {}
        check_keys(args, args_path, ("guest", "labelKey", "crossing"))

        def at(key: str) -> str:
            return f"{args_path}.{key}" if args_path else key

        guest = Path(require_str(args["guest"], at("guest"))) if "guest" in args \
            else DEFAULT_GUEST
        self.label_key = require_str(args.get("labelKey", "example.com/tier"), at("labelKey"))
        self.crossing = require_str(args.get("crossing", "batched"), at("crossing"))
        if self.crossing not in CROSSINGS:
            raise ConfigError(f'"{self.crossing}": expected one of {", ".join(CROSSINGS)}',
                              field=at("crossing"))
        self.guest = GuestModule(guest, field=at("guest"))
        self.failure = Status.unschedulable(self.guest.reason, plugin=NAME)

    # ------------------------------------------------------------------ records
    def _values(self, table: NodeTable) -> tuple[bytes, np.ndarray, np.ndarray]:
        """The label's values one after the other, and per code (plus a trailing entry for
        code -1, no label) their offset and length (-1: no label)."""

        def compute() -> tuple[bytes, np.ndarray, np.ndarray]:
            values = [v.encode() for v in table.label_values.get(self.label_key, [])]
            lens = np.array([len(v) for v in values] + [-1], dtype=np.int32)
            offs = np.zeros(len(values) + 1, dtype=np.int32)
            if values:
                offs[1:len(values)] = np.cumsum(lens[:-2])
            return b"".join(values), offs, lens

        return memo_by_version(table, (NAME, "values", self.label_key), compute)

    def _call(self, fn: Any, table: NodeTable, idx: Any, out_width: int) -> np.ndarray:
        """Write the records of ``idx`` and run ``fn`` over them; the raw output bytes."""
        strings, offs, lens = self._values(table)
        codes = table.codes(self.label_key)
        n = len(table.pod_count[idx])
        code = codes[idx] if codes is not None else np.full(n, -1, dtype=np.int64)
        per_call = n if self.crossing == "batched" else 1
        head = (len(strings) + 7) // 8 * 8
        g = self.guest
        base = g.scratch(head + per_call * (RECORD_BYTES + out_width))
        records = np.empty((n, 4), dtype="<i4")
        records[:, 0] = offs[code] + base
        records[:, 1] = lens[code]
        records[:, 2] = table.pod_count[idx]
        records[:, 3] = table.allocatable["pods"][idx]
        rec_at = base + head
        out_at = rec_at + per_call * RECORD_BYTES
        mem = g.view()
        mem[base:base + len(strings)] = np.frombuffer(strings, dtype=np.uint8)
        raw = records.view(np.uint8).reshape(n, RECORD_BYTES)
        if self.crossing == "batched":
            mem[rec_at:rec_at + n * RECORD_BYTES] = raw.reshape(-1)
            g.call(fn, rec_at, n, out_at)
            return g.view()[out_at:out_at + n * out_width].copy()
        out = np.empty(n * out_width, dtype=np.uint8)
        for i in range(n):  # the per-node crossing: one guest call per node
            mem[rec_at:rec_at + RECORD_BYTES] = raw[i]
            g.call(fn, rec_at, 1, out_at)
            out[i * out_width:(i + 1) * out_width] = mem[out_at:out_at + out_width]
        return out

    # ------------------------------------------------------------------ plugin
    def filter(self, state: CycleState, pod: Any, table: NodeTable, idx: Any
               ) -> np.ndarray | None:
        return self._call(self.guest.filter_fn, table, idx, 1) != 0

    def score(self, state: CycleState, pod: Any, table: NodeTable, idx: Any) -> np.ndarray:
        raw = self._call(self.guest.score_fn, table, idx, 4)
        return raw.view("<i4").astype(np.int64)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD
                                                  | ActionType.UPDATE_NODE_LABEL))]
