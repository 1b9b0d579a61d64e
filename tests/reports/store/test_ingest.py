"""Ingest as a whole: idempotence, what a folder walk picks, bookkeeping, atomicity and
recovery after a kill, and the one-schema rule for every data file of a store."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from reports.store import LEDGER_NAME, STORE_SCHEMA, StoreError, ingest_paths, scan_store
from reports.store import ingest as ingest_module
from reports.store.bookkeeping import Ledger
from reports.store.schema import RESULTS_SCHEMA_VERSION
from tests.reports.store.conftest import (
    ASV_FILE,
    ASV_RESULTS,
    DATAITEMS_DIR,
    DATAITEMS_FILE,
    PYTEST_FILE,
    read_store,
)

ALL_FORMATS = [ASV_RESULTS, PYTEST_FILE, DATAITEMS_DIR]


def ledger(store):
    return json.loads((store / LEDGER_NAME).read_text())


def test_every_format_into_one_schema(run_dir, store):
    report = ingest_paths([run_dir, *ALL_FORMATS], store)
    assert not report.errors
    assert sorted(o.kind for o in report.ingested) == [
        "asv", "asv", "dataitems", "dataitems", "pytest-benchmark", "run"]
    files = list(store.rglob("*.parquet"))
    assert files
    for f in files:
        assert pq.read_schema(f).remove_metadata().equals(STORE_SCHEMA), f
    # the documented way to read it, and the Hive-partitioned ways
    df = pl.scan_parquet(f"{store}/**/*.parquet").collect()
    assert set(df["source"]) == {"run", "asv", "pytest-benchmark", "dataitems"}
    by_folder = pl.scan_parquet(store, hidden_file_prefix=["_", "."]).select(
        "source", "date").collect()
    assert by_folder.height == df.height and by_folder["date"].dtype == pl.Date
    assert ds.dataset(store, format="parquet", partitioning="hive").count_rows() == df.height
    assert {p.parent.parent.name for p in files} == {
        "source=run", "source=asv", "source=pytest-benchmark", "source=dataitems"}


def test_same_files_twice_add_nothing(run_dir, store):
    first = ingest_paths([run_dir, *ALL_FORMATS], store)
    before = read_store(store)
    second = ingest_paths([run_dir, *ALL_FORMATS], store)
    assert not second.ingested and second.rows_new == 0
    assert len(second.duplicates) == len(first.ingested)
    assert read_store(store).height == before.height
    assert len(ledger(store)["files"]) == len(first.ingested)


def test_same_contents_under_another_name_is_a_duplicate(tmp_path, store):
    copy = tmp_path / "copy-of-bench.json"
    shutil.copy(PYTEST_FILE, copy)
    report = ingest_paths([PYTEST_FILE, copy], store)
    assert [o.status for o in report.outcomes] == ["ingested", "already ingested"]


def test_run_folder_ingests_once_and_skips_side_files(run_dir, store):
    assert (run_dir / "placements.parquet").exists() and (run_dir / "decisions.parquet").exists()
    report = ingest_paths([run_dir], store)
    assert len(report.ingested) == 1 and not report.errors
    assert report.ingested[0].rows == pq.read_metadata(run_dir / "results.parquet").num_rows
    # its DataItems copy, named explicitly, stands for the run: nothing new
    dataitems = sorted(run_dir.glob("BenchmarkPerfScheduling_*.json"))[0]
    again = ingest_paths([dataitems], store)
    assert [o.status for o in again.outcomes] == ["already ingested"]
    assert "part of the schedperf run" in again.outcomes[0].message


def test_folder_of_runs(run_output, tmp_path, store):
    for name in ("a", "b"):
        shutil.copytree(run_output, tmp_path / "results" / name)
    report = ingest_paths([tmp_path / "results"], store)
    # two copies of one run: the second is the same file
    assert [o.status for o in report.outcomes] == ["ingested", "already ingested"]


def test_walk_leaves_out_what_is_clearly_not_results(tmp_path, store):
    root = tmp_path / "mixed"
    (root / "asv").mkdir(parents=True)
    shutil.copytree(ASV_RESULTS, root / "asv" / "results")
    shutil.copy(PYTEST_FILE, root / "bench.json")
    (root / "README.md").write_text("# notes\n")
    (root / "asv.conf.json").write_text('{"version": 1, "project": "x"}')
    (root / "package.json").write_text("[1, 2]")
    pq.write_table(pa.table({"pod": ["p"]}), root / "placements.parquet")
    (root / ".hidden").mkdir()
    shutil.copy(DATAITEMS_FILE, root / ".hidden")
    report = ingest_paths([root], store)
    assert not report.errors
    assert sorted(o.path.name for o in report.ingested) == [
        "4f2a9c1e-virtualenv-py3.11-numpy.json", "9b3c5d7e-virtualenv-py3.11-numpy.json",
        "bench.json"]


def test_walk_skips_the_store_itself(tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    shutil.copy(PYTEST_FILE, root)
    store = root / "store"
    ingest_paths([root], store)
    report = ingest_paths([root], store)  # the store's parts are not re-read as inputs
    assert [o.status for o in report.outcomes] == ["already ingested"]


def test_bookkeeping_records_each_file(run_dir, store):
    ingest_paths([run_dir, PYTEST_FILE], store)
    doc = ledger(store)
    assert doc["store_version"] == 1 and doc["results_schema_version"] == RESULTS_SCHEMA_VERSION
    entries = sorted(doc["files"].values(), key=lambda e: e["kind"])
    assert [e["kind"] for e in entries] == ["pytest-benchmark", "run"]
    for sha, entry in doc["files"].items():
        assert len(sha) == 64 and entry["rows"] == entry["rows_new"] > 0
        for part in entry["parts"]:
            assert (store / part).is_file()
    run_entry = entries[1]
    assert run_entry["path"].endswith("results.parquet")
    stored = read_store(store).filter(pl.col("source") == "run")
    assert stored["run_id"].unique().to_list() == run_entry["run_ids"]


def test_kill_before_bookkeeping_then_reingest_adds_nothing(run_dir, store, monkeypatch):
    """Data landed, bookkeeping not written (killed in between): the store is readable and
    complete, and the next ingest of the same file records it without adding rows."""
    def killed(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Ledger, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        ingest_paths([run_dir], store)
    monkeypatch.undo()
    rows = read_store(store).height
    assert rows == pq.read_metadata(run_dir / "results.parquet").num_rows
    assert not (store / LEDGER_NAME).exists()
    report = ingest_paths([run_dir], store)
    assert report.ingested[0].rows_new == 0 and report.ingested[0].rows == rows
    assert read_store(store).height == rows
    assert len(ledger(store)["files"]) == 1


def test_kill_while_writing_a_part_leaves_no_partial_file(run_dir, store, monkeypatch):
    """A killed writer leaves at most a hidden .tmp file, which no reader sees and the next
    ingest removes."""
    ingest_paths([PYTEST_FILE], store)
    before = read_store(store)
    part_dir = next(store.rglob("part-*.parquet")).parent
    stale = part_dir / ".part-dead.parquet.x1y2.tmp"
    stale.write_bytes(b"PAR1 half a file")
    assert read_store(store).equals(before)
    ingest_paths([run_dir], store)
    assert not stale.exists()
    assert read_store(store).height > before.height


def test_results_rewritten_mid_run_add_only_new_rounds(run_dir, tmp_path, store):
    """results.parquet is rewritten after every round: ingested after round 1 and again at
    the end, the second ingest adds round 2 only."""
    full = pq.read_table(run_dir / "results.parquet")
    partial_dir = tmp_path / "partial"
    partial_dir.mkdir()
    round1 = full.filter(pa.compute.equal(full["round"], 1))
    pq.write_table(round1, partial_dir / "results.parquet")
    ingest_paths([partial_dir], store)
    report = ingest_paths([run_dir], store)
    assert report.ingested[0].rows_new == full.num_rows - round1.num_rows
    assert read_store(store).height == full.num_rows


def test_batches_flush_into_several_parts(store):
    report = ingest_paths([ASV_RESULTS, PYTEST_FILE], store, flush_rows=1)
    assert len(report.ingested) == 3
    assert len(list(store.rglob("*.parquet"))) == 3
    assert read_store(store).height == sum(o.rows for o in report.ingested)


def test_empty_store_scans_as_empty_frame(store):
    df = scan_store(store).collect()
    assert df.is_empty() and df.columns == STORE_SCHEMA.names


@pytest.mark.parametrize("content", [b"{not json", b'{"files": []}', b'{"files": {}}'],
                         ids=["unreadable", "wrong-shape", "no-version"])
def test_corrupt_bookkeeping_is_a_store_error(store, content):
    store.mkdir(parents=True)
    (store / LEDGER_NAME).write_bytes(content)
    with pytest.raises(StoreError, match=r"_ingested\.json"):
        ingest_paths([ASV_FILE], store)
    assert not list(store.rglob("*.parquet"))


def test_flush_rows_default_is_large():
    assert ingest_module.FLUSH_ROWS >= 100_000


def test_foreign_parquet_inside_the_store_is_a_store_error(store):
    ingest_paths([PYTEST_FILE], store)
    stray = store / "source=run" / "date=2025-01-01" / "part-stray.parquet"
    stray.parent.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), stray)
    with pytest.raises(StoreError, match=r"every \*\.parquet under the store must have"):
        ingest_paths([ASV_FILE], store)
