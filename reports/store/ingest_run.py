"""``schedperf run`` output: its ``results.parquet`` (one run; the folder's DataItems JSON,
placements and decisions are not ingested). Lossless: every results column is kept as is.

A file written by an older results schema is upgraded step by step (``_UPGRADES[n]`` turns
version n-1 into n, chained as asv's ``update_to_N``); a newer one is refused.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reports.store.problems import Malformed
from reports.store.schema import (
    RESULTS_SCHEMA,
    RESULTS_SCHEMA_VERSION,
    SOURCE_RUN,
    store_table,
)
from workloads.result import ENGINE_CORE

__all__ = ["RESULTS_FILE", "RUN_SIDE_FILES", "parse_results_parquet"]

RESULTS_FILE = "results.parquet"
# files of a run folder that are not metrics
RUN_SIDE_FILES = frozenset({"placements.parquet", "decisions.parquet"})


def _to_2(table: pa.Table) -> pa.Table:
    """Version 2 added where the measured scheduler_core came from (null: not recorded)."""
    for name in ("scheduler_core_origin", "scheduler_core_dirty", "scheduler_core_warning"):
        if name not in table.column_names:
            field = RESULTS_SCHEMA.field(name)
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table.set_column(table.schema.get_field_index("schema_version"), "schema_version",
                            pa.array([2] * table.num_rows, pa.int32()))


def _to_3(table: pa.Table) -> pa.Table:
    """Version 3 added the engine columns: every older run was scheduler_core's."""
    n = table.num_rows
    for name in ("engine", "engine_gomaxprocs", "kubernetes_version", "reference_sha256"):
        if name not in table.column_names:
            field = RESULTS_SCHEMA.field(name)
            column = (pa.array([ENGINE_CORE] * n, pa.string()) if name == "engine"
                      else pa.nulls(n, field.type))
            table = table.append_column(field, column)
    return table.set_column(table.schema.get_field_index("schema_version"), "schema_version",
                            pa.array([3] * n, pa.int32()))


# version n -> function upgrading a table of version n-1 to n
_UPGRADES: dict[int, Callable[[pa.Table], pa.Table]] = {2: _to_2, 3: _to_3}


def _read(data: bytes) -> pa.Table:
    if data[:4] != b"PAR1":
        raise Malformed("not a Parquet file (no PAR1 magic at the start)")
    if data[-4:] != b"PAR1":
        raise Malformed("truncated Parquet file (no PAR1 magic at the end)")
    try:
        table = pq.read_table(pa.BufferReader(data), use_threads=False)
        table.validate(full=True)  # string data is valid UTF-8, offsets in range
        table.column_names  # noqa: B018 -- decodes every column name
    except UnicodeDecodeError as exc:
        raise Malformed("unreadable Parquet file: a column name is not valid UTF-8 "
                        f"({exc.reason} at byte {exc.start})") from None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Malformed(f"unreadable Parquet file: {exc}") from exc
    return table


def _version(table: pa.Table) -> int:
    if "schema_version" not in table.column_names:
        shown = ", ".join(table.column_names[:8])
        more = ", ..." if table.num_columns > 8 else ""
        raise Malformed("a Parquet file with another schema: no schema_version column "
                        f"(columns: {shown}{more}); expected a schedperf results.parquet")
    if table.num_rows == 0:
        return RESULTS_SCHEMA_VERSION
    column = table["schema_version"]
    if column.null_count:
        raise Malformed("schema_version is null in some rows")
    if not pa.types.is_integer(column.type):
        raise Malformed(f"schema_version has type {column.type}, expected int32")
    versions = sorted(set(pc.unique(column).to_pylist()))
    if len(versions) > 1:
        raise Malformed(f"mixed schema_version values {versions}")
    version = versions[0]
    if version > RESULTS_SCHEMA_VERSION:
        raise Malformed(f"results schema_version {version} is newer than this schedperf "
                        f"understands ({RESULTS_SCHEMA_VERSION}): upgrade schedperf")
    if version < 1:
        raise Malformed(f"invalid results schema_version {version}")
    return version


def _check_columns(table: pa.Table) -> None:
    have = {f.name: f.type for f in table.schema}
    missing = [f.name for f in RESULTS_SCHEMA if f.name not in have]
    extra = [name for name in have if name not in RESULTS_SCHEMA.names]
    wrong = [f"{f.name} is {have[f.name]}, expected {f.type}" for f in RESULTS_SCHEMA
             if f.name in have and have[f.name] != f.type]
    problems = []
    if missing:
        problems.append("missing columns " + ", ".join(missing))
    if extra:
        problems.append("unexpected columns " + ", ".join(extra))
    if wrong:
        problems.append("wrong column types: " + "; ".join(wrong))
    if problems:
        raise Malformed(f"not a results.parquet of schema_version {RESULTS_SCHEMA_VERSION}: "
                        + "; ".join(problems))


def parse_results_parquet(data: bytes, sha256: str) -> pa.Table:
    """The store rows of a ``results.parquet`` (its bytes); raises :class:`Malformed`."""
    table = _read(data)
    version = _version(table)
    for step in range(version + 1, RESULTS_SCHEMA_VERSION + 1):
        table = _UPGRADES[step](table)
    _check_columns(table)
    return store_table(table, source=SOURCE_RUN, sha256=sha256)
