"""results.parquet schema_version 3 (which engine ran the workload): version 2 files are
upgraded on ingest as scheduler_core's, a store's parts written before read as null (also
scheduler_core's), and ingesting such a file again adds nothing."""

from __future__ import annotations

import io

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from reports.store import ingest_paths, scan_store, store_files
from reports.store.schema import core_engine
from workloads.output.parquet import RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION
from workloads.result import ENGINE_CORE

ADDED = ["engine", "engine_gomaxprocs", "kubernetes_version", "reference_sha256"]


def _as_version_2(table: pa.Table) -> pa.Table:
    table = table.drop_columns([c for c in ADDED if c in table.column_names])
    index = table.schema.get_field_index("schema_version")
    return table.set_column(index, "schema_version",
                            pa.array([2] * table.num_rows, pa.int32()))


def _write(path, table: pa.Table) -> None:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    path.write_bytes(buf.getvalue())


def test_version_3_has_the_engine_columns():
    assert RESULTS_SCHEMA_VERSION == 3
    assert [RESULTS_SCHEMA.field(c).type for c in ADDED] == [
        pa.string(), pa.int64(), pa.string(), pa.string()]


def test_a_version_2_file_is_upgraded_as_scheduler_cores(run_output, tmp_path):
    written = pq.read_table(run_output / "results.parquet")
    assert set(written["engine"].to_pylist()) == {ENGINE_CORE}  # a run records it
    old = _as_version_2(written)
    folder = tmp_path / "old-run"
    folder.mkdir()
    _write(folder / "results.parquet", old)
    store = tmp_path / "store"
    report = ingest_paths([folder], store)
    assert [o.status for o in report.outcomes] == ["ingested"]
    df = scan_store(store).collect()
    assert df.height == old.num_rows
    assert set(df["schema_version"].to_list()) == {3}
    assert set(df["engine"].to_list()) == {ENGINE_CORE}
    assert all(df[c].null_count() == df.height for c in ADDED[1:])


def test_parts_from_before_read_as_null_count_as_core_and_are_not_added_again(
        run_output, tmp_path):
    store = tmp_path / "store"
    ingest_paths([run_output], store)
    (part,) = store_files(store)
    written = pq.read_table(part)
    _write(part, _as_version_2(written))  # as schedperf wrote parts before version 3
    df = scan_store(store).collect()
    assert df["engine"].null_count() == df.height
    assert df.filter(core_engine()).height == df.height
    # the same rows ingested again from another file (they say schedperf-core): nothing new
    copy = tmp_path / "again"
    copy.mkdir()
    pq.write_table(pq.read_table(run_output / "results.parquet"), copy / "results.parquet",
                   compression="gzip")  # other bytes: not skipped as a file already seen
    ingest_paths([copy], store)
    assert scan_store(store).select(pl.len()).collect().item() == df.height
