"""The store's bookkeeping: ``<store>/_ingested.json``, what was ingested (one entry per
sha256 of an input file's contents), and the lock serialising writers
(``<store>/_ingest.lock``). The leading ``_`` keeps them out of dataset readers that skip
such names (pyarrow.dataset by default, polars with ``hidden_file_prefix``).

    {"store_version": 1, "results_schema_version": 1,
     "files": {"<sha256>": {"path", "kind", "size", "rows", "rows_new", "run_ids",
                            "parts", "ingested_at"}}}

Reading it is strict: a key other than those three is refused, and so is a file over the
input size cap (``schedperf --max-input-size``; the bookkeeping grows with the store, about
0.5 KiB per ingested file, so the 64 MiB default holds over 100 000 of them).

It is rewritten atomically after the data files it describes have landed: a kill in between
leaves rows that are not in the bookkeeping, which the next ingest of that file recognises
(rows already in the store are not added again) and then records.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reports.store.problems import StoreError
from reports.store.schema import RESULTS_SCHEMA_VERSION
from scheduler_core.inputfile import InputFileError, format_size, max_input_bytes, read_text
from workloads.output.dataitems import atomic_write_bytes

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["LEDGER_NAME", "LOCK_NAME", "STORE_VERSION", "Ledger", "store_lock"]

LEDGER_NAME = "_ingested.json"
LOCK_NAME = "_ingest.lock"
STORE_VERSION = 1
KEYS = ("store_version", "results_schema_version", "files")  # the bookkeeping's keys


@contextlib.contextmanager
def store_lock(store: Path) -> Iterator[None]:
    """Hold the store's exclusive lock (blocks while another ingest runs)."""
    store.mkdir(parents=True, exist_ok=True)
    with open(store / LOCK_NAME, "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@dataclass
class Ledger:
    path: Path
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, store: Path) -> Ledger:
        path = store / LEDGER_NAME
        if not path.exists() and not path.is_symlink():
            return cls(path)
        advice = (f"the data files are intact: move {path.name} away and ingest again "
                  "(rows already in the store are not added twice)")
        cap = max_input_bytes()
        size = path.stat().st_size if path.is_file() else 0
        if cap and size > cap:  # it grows with the store: the remedy is a higher cap
            raise StoreError(f"{path}: the store's bookkeeping is {size} bytes, over the "
                             f"input size cap of {format_size(cap)} (it grows with the "
                             "store: raise the cap with schedperf --max-input-size SIZE)")
        try:
            doc = json.loads(read_text(path, what="the store's bookkeeping (JSON)", limit=0))
        except InputFileError as exc:
            raise StoreError(f"{path}: unreadable bookkeeping ({exc.problem}); {advice}"
                             ) from None
        except (ValueError, RecursionError) as exc:
            raise StoreError(f"{path}: unreadable bookkeeping ({exc}); {advice}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
            raise StoreError(f"{path}: not a schedperf store bookkeeping file; {advice}")
        unknown = [k for k in doc if k not in KEYS]
        if unknown:
            raise StoreError(f"{path}: unknown key {unknown[0]!r} in the store's bookkeeping "
                             f"(expected only {', '.join(KEYS)}); written by another "
                             "program or by hand?")
        version = doc.get("store_version")
        if version != STORE_VERSION:
            raise StoreError(f"{path}: store_version {version!r}, this schedperf "
                             f"understands {STORE_VERSION}")
        return cls(path, doc["files"])

    def get(self, sha256: str) -> dict[str, Any] | None:
        return self.files.get(sha256)

    def record(self, sha256: str, **entry: Any) -> None:
        self.files[sha256] = {**entry, "ingested_at": datetime.now(UTC).isoformat()}

    def save(self) -> None:
        doc = {"store_version": STORE_VERSION, "results_schema_version": RESULTS_SCHEMA_VERSION,
               "files": self.files}
        atomic_write_bytes(self.path, json.dumps(doc, indent=1, sort_keys=True).encode())
