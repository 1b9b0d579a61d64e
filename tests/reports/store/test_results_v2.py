"""results.parquet schema_version 2 (where the measured scheduler_core came from): version 1
files are upgraded on ingest, and a store holding parts written before reads them as null."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from reports.store import ingest_paths, scan_store, store_files
from tests.reports.store.conftest import PYTEST_FILE
from workloads.output.parquet import RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

ADDED = ["scheduler_core_origin", "scheduler_core_dirty", "scheduler_core_warning"]
LATER = ["engine", "engine_gomaxprocs", "kubernetes_version", "reference_sha256"]  # version 3


def _as_version_1(table: pa.Table) -> pa.Table:
    table = table.drop_columns([c for c in ADDED + LATER if c in table.column_names])
    index = table.schema.get_field_index("schema_version")
    return table.set_column(index, "schema_version",
                            pa.array([1] * table.num_rows, pa.int32()))


def _write(path, table: pa.Table) -> None:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    path.write_bytes(buf.getvalue())


def test_version_2_added_the_scheduler_core_columns():
    assert RESULTS_SCHEMA_VERSION >= 2
    assert [RESULTS_SCHEMA.field(c).type for c in ADDED] == [pa.string(), pa.bool_(),
                                                             pa.string()]


def test_a_version_1_results_file_is_upgraded(run_output, tmp_path):
    old = _as_version_1(pq.read_table(run_output / "results.parquet"))
    assert not set(ADDED) & set(old.column_names)
    folder = tmp_path / "old-run"
    folder.mkdir()
    _write(folder / "results.parquet", old)
    store = tmp_path / "store"
    report = ingest_paths([folder], store)
    assert [o.status for o in report.outcomes] == ["ingested"]
    df = scan_store(store).collect()
    assert df.height == old.num_rows
    assert set(df["schema_version"].to_list()) == {RESULTS_SCHEMA_VERSION}
    assert all(df[c].null_count() == df.height for c in ADDED)


def test_a_store_with_parts_from_before_reads_them_as_null(run_output, tmp_path):
    store = tmp_path / "store"
    ingest_paths([run_output], store)
    (part,) = store_files(store)
    written = pq.read_table(part)
    assert written["scheduler_core_origin"].null_count == 0  # this run recorded it
    _write(part, _as_version_1(written))  # as schedperf wrote parts before version 2
    ingest_paths([PYTEST_FILE], store)  # a new part with every column
    df = scan_store(store).collect()
    old = df.filter(df["source"] == "run")
    assert old.height == written.num_rows
    assert all(old[c].null_count() == old.height for c in ADDED)
    assert set(df.columns) >= set(ADDED)
