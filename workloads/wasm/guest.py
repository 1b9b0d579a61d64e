"""A schedperf WebAssembly guest, loaded with wasmtime (ABI version 1; docs/extenders.md,
"WebAssembly guests").

The guest exports ``memory``, ``schedperf_abi_version() -> i32`` (1), ``scratch(size) -> ptr``
(where the host may write ``size`` bytes; the guest grows its memory to fit),
``reason_ptr() -> i32`` / ``reason_len() -> i32`` (the UTF-8 message of a rejection),
``filter(records, n, out)`` (n bytes: 1 passes, 0 rejected) and ``score(records, n, out)``
(n little-endian i32 scores, 0..100). A record is 16 bytes, four little-endian i32: the
offset and length of the node's label value (length -1: the node has no such label), the
node's pod count and its allocatable pods. Label values are written into the scratch area
before the records.

A ``.wat`` file is WebAssembly text, compiled by the runtime when it loads; a ``.wasm`` file
is a binary module (built elsewhere, e.g. Go with ``GOOS=wasip1``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from scheduler_core.errors import ConfigError, SchedulerCoreError

__all__ = ["ABI_VERSION", "RECORD_BYTES", "GuestModule", "WasmGuestError"]

ABI_VERSION = 1
RECORD_BYTES = 16
_EXPORTS = ("memory", "schedperf_abi_version", "scratch", "reason_ptr", "reason_len", "filter",
            "score")


class WasmGuestError(SchedulerCoreError):
    """The guest trapped (its message names the guest and the call)."""


class GuestModule:
    """One instance of a guest: its memory and exported functions."""

    def __init__(self, path: Path, *, field: str = "") -> None:
        import wasmtime

        self.path = path
        try:
            source = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the WebAssembly guest {path}: {exc.strerror}",
                              field=field) from None
        engine = wasmtime.Engine()
        self.store = wasmtime.Store(engine)
        try:
            if path.suffix == ".wat":
                module = wasmtime.Module(engine, source.decode("utf-8"))
            else:
                module = wasmtime.Module(engine, source)
            instance = wasmtime.Instance(self.store, module, [])
        except (wasmtime.WasmtimeError, UnicodeDecodeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"the WebAssembly guest {path} does not load: {first}",
                              field=field) from None
        exports = instance.exports(self.store)
        missing = [name for name in _EXPORTS if name not in exports]
        if missing:
            raise ConfigError(f"the WebAssembly guest {path} lacks the export(s) "
                              f"{', '.join(missing)} (ABI version {ABI_VERSION})", field=field)
        self._memory = exports["memory"]
        self._scratch = exports["scratch"]
        self.filter_fn = exports["filter"]
        self.score_fn = exports["score"]
        version = self.call(exports["schedperf_abi_version"])
        if version != ABI_VERSION:
            raise ConfigError(f"the WebAssembly guest {path} speaks ABI version {version}; "
                              f"this host speaks {ABI_VERSION}", field=field)
        ptr, n = self.call(exports["reason_ptr"]), self.call(exports["reason_len"])
        self.reason = bytes(self.view()[ptr:ptr + n]).decode("utf-8", "replace")

    def call(self, fn: Any, *args: int) -> Any:
        import wasmtime

        try:
            return fn(self.store, *args)
        except wasmtime.Trap as exc:
            first = str(exc).strip().splitlines()[0]
            raise WasmGuestError(f"WebAssembly guest {self.path}: trapped: {first}") from None

    def scratch(self, size: int) -> int:
        """The offset of ``size`` writable bytes (the guest's memory grown as needed)."""
        return int(self.call(self._scratch, size))

    def view(self) -> np.ndarray:
        """The guest's linear memory as a uint8 array (valid until the memory grows)."""
        n = self._memory.data_len(self.store)
        ptr = self._memory.data_ptr(self.store)
        return np.ctypeslib.as_array(ptr, shape=(n,))
