"""Corrupt, truncated and foreign inputs: each is reported by name with what is wrong, the
other inputs are still ingested, and the store is left as it was (plus the good rows)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bench.cli.ingest import ingest
from reports.store import LEDGER_NAME, STORE_SCHEMA, ingest_paths
from reports.store.schema import RESULTS_SCHEMA_VERSION
from tests.reports.store.conftest import (
    ASV_FILE,
    ASV_RESULTS,
    DATAITEMS_FILE,
    PYTEST_FILE,
    read_store,
)

DATAITEMS_NAME = "BenchmarkPerfScheduling_benchmark_misc_2025-05-01T10:00:00Z.json"
GARBAGE = bytes(range(256)) * 4


def _json(doc: object) -> bytes:
    return json.dumps(doc).encode()


def _dataitems(edit: Callable[[dict], object]) -> tuple[str, bytes]:
    doc = json.loads(DATAITEMS_FILE.read_text())
    doc = edit(doc) or doc
    return DATAITEMS_NAME, _json(doc)


def _asv(edit: Callable[[dict], object]) -> tuple[str, bytes]:
    doc = json.loads(ASV_FILE.read_text())
    edit(doc)
    return "0badc0de-virtualenv-py3.11.json", _json(doc)


def _pytest(edit: Callable[[dict], object]) -> tuple[str, bytes]:
    doc = json.loads(PYTEST_FILE.read_text())
    edit(doc)
    return "bench.json", _json(doc)


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _results(run: Path, edit: Callable[[pa.Table], pa.Table]) -> tuple[str, bytes]:
    return "results.parquet", _parquet(edit(pq.read_table(run / "results.parquet")))


def _not_utf8(run: Path, name: str) -> tuple[str, bytes]:
    """results.parquet with every byte run ``name`` (a column name, or a string value)
    broken into invalid UTF-8 of the same length; without the Arrow schema in the footer,
    so the Parquet schema's names are the ones read."""
    buf = io.BytesIO()
    pq.write_table(pq.read_table(run / "results.parquet"), buf, store_schema=False)
    data = buf.getvalue()
    assert name.encode() in data
    return "results.parquet", data.replace(name.encode(), name.encode()[:-1] + b"\x80")


def _set(doc: dict, path: str, value: object) -> None:
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


def _drop(doc: dict, path: str) -> None:
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    del doc[last]


# (id, maker(run folder) -> (file name, bytes), what the message must say)
CASES: list[tuple[str, Callable[[Path], tuple[str, bytes]], str]] = [
    ("truncated-json", lambda run: (DATAITEMS_NAME, DATAITEMS_FILE.read_bytes()[:700]),
     "not valid JSON (truncated?)"),
    ("empty-file", lambda run: (DATAITEMS_NAME, b""), "empty file (0 bytes)"),
    ("binary-garbage-json", lambda run: ("results.json", GARBAGE), "not UTF-8 text"),
    ("binary-garbage-unknown-extension", lambda run: ("dump.bin", GARBAGE),
     "neither Parquet nor JSON"),
    ("nested-too-deeply", lambda run: ("deep.json", b"[" * 100_000), "nested too deeply"),
    ("dataitems-wrong-version", lambda run: _dataitems(lambda d: _set(d, "version", "v2")),
     "unsupported DataItems version 'v2' (expected 'v1')"),
    ("dataitems-missing-dataItems", lambda run: _dataitems(lambda d: _drop(d, "dataItems")),
     "missing key 'dataItems'"),
    ("dataitems-missing-unit", lambda run: _dataitems(lambda d: _drop(d, "dataItems.1.unit")),
     "missing key 'dataItems[1].unit'"),
    ("dataitems-value-is-a-string",
     lambda run: _dataitems(lambda d: _set(d, "dataItems.0.data.Average", "1146.62")),
     "dataItems[0].data.Average: expected a number, got a string"),
    ("dataitems-not-an-object", lambda run: _dataitems(lambda d: d["dataItems"]),
     "expected a JSON object with version and dataItems"),
    ("asv-old-format", lambda run: _asv(lambda d: _set(d, "version", 1)),
     "asv results format version 1 is older than 2: run `asv update`"),
    ("asv-newer-format", lambda run: _asv(lambda d: _set(d, "version", 3)),
     "asv results format version 3 is newer"),
    ("asv-missing-results", lambda run: _asv(lambda d: _drop(d, "results")),
     "missing key 'results'"),
    ("asv-results-count-mismatch",
     lambda run: _asv(lambda d: d["results"][
         "bench_scheduling.SchedulingBasic.time_schedule_pods"][0].pop()),
     "3 values for 4 parameter combinations"),
    ("asv-result-wrong-type",
     lambda run: _asv(lambda d: d["results"].update({"bench_nodetable.time_add_nodes": "x"})),
     "expected a list (one entry per result_columns)"),
    ("pytest-missing-benchmarks", lambda run: _pytest(lambda d: _drop(d, "benchmarks")),
     "missing key 'benchmarks'"),
    ("pytest-mean-is-a-string",
     lambda run: _pytest(lambda d: _set(d, "benchmarks.0.stats.mean", "fast")),
     "benchmarks[0].stats.mean: expected a number, got a string"),
    ("pytest-bad-datetime", lambda run: _pytest(lambda d: _set(d, "datetime", "yesterday")),
     "datetime: 'yesterday' is not an ISO 8601 time"),
    ("parquet-with-another-schema",
     lambda run: ("metrics.parquet", _parquet(pa.table({"name": ["a"], "value": [1.0]}))),
     "a Parquet file with another schema: no schema_version column (columns: name, value)"),
    ("results-wrong-column-type",
     lambda run: _results(run, lambda t: t.set_column(
         t.schema.get_field_index("round"), "round", t["round"].cast(pa.int64()))),
     "wrong column types: round is int64, expected int32"),
    ("results-missing-column",
     lambda run: _results(run, lambda t: t.drop_columns(["metric", "value"])),
     "missing columns metric, value"),
    ("results-newer-schema-version",
     lambda run: _results(run, lambda t: t.set_column(
         0, "schema_version", pc.add(t["schema_version"], pa.scalar(1, pa.int32())))),
     f"results schema_version {RESULTS_SCHEMA_VERSION + 1} is newer than this schedperf "
     f"understands ({RESULTS_SCHEMA_VERSION})"),
    ("results-column-name-not-utf8", lambda run: _not_utf8(run, "status_reason"),
     "unreadable Parquet file: a column name is not valid UTF-8"),
    ("results-string-value-not-utf8", lambda run: _not_utf8(run, "schedperf-core"),
     "unreadable Parquet file: "),
    ("truncated-parquet",
     lambda run: ("results.parquet", (run / "results.parquet").read_bytes()[:3000]),
     "truncated Parquet file"),
    ("garbage-named-parquet", lambda run: ("results.parquet", GARBAGE),
     "not a Parquet file (no PAR1 magic at the start)"),
    ("placements-given-explicitly",
     lambda run: ("placements.parquet", (run / "placements.parquet").read_bytes()),
     "placements.parquet of a schedperf run holds no metrics"),
    ("json-of-no-known-format",
     lambda run: ("asv.conf.json", _json({"version": 1, "project": "schedperf"})),
     "a JSON object of no known results format"),
    ("asv-benchmarks-json-explicitly",
     lambda run: ("benchmarks.json", (ASV_RESULTS / "benchmarks.json").read_bytes()),
     "an asv benchmarks.json (benchmark metadata, no results)"),
]


@pytest.fixture
def populated(store):
    """A store holding the pytest-benchmark fixture; returns its rows and bookkeeping."""
    assert not ingest_paths([PYTEST_FILE], store).errors
    return read_store(store), (store / LEDGER_NAME).read_text()


@pytest.mark.parametrize(("make", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_corrupt_input_is_reported_and_skipped(run_output, tmp_path, store, populated, make,
                                               message):
    name, data = make(run_output)
    bad = tmp_path / "inputs" / name
    bad.parent.mkdir()
    bad.write_bytes(data)
    before, ledger_before = populated
    report = ingest_paths([bad, DATAITEMS_FILE], store)
    assert [(o.path, o.status) for o in report.errors] == [(bad, "error")]
    assert message in report.errors[0].message, report.errors[0].message
    assert [o.path for o in report.ingested] == [DATAITEMS_FILE]
    after = read_store(store)
    assert after.filter(after["source"] == "pytest-benchmark").sort(
        "metric", "workload", "bucket").equals(before.sort("metric", "workload", "bucket"))
    assert after.height == before.height + report.ingested[0].rows
    for part in store.rglob("*.parquet"):
        assert pq.read_schema(part).remove_metadata().equals(STORE_SCHEMA)
    files = json.loads((store / LEDGER_NAME).read_text())["files"]
    assert set(json.loads(ledger_before)["files"]) < set(files) and len(files) == 2


@pytest.mark.parametrize(("make", "message"), [c[1:] for c in CASES[:3]],
                         ids=[c[0] for c in CASES[:3]])
def test_cli_names_the_file_and_exits_2(run_output, tmp_path, store, make, message):
    name, data = make(run_output)
    bad = tmp_path / name
    bad.write_bytes(data)
    result = CliRunner().invoke(ingest, [str(bad), str(PYTEST_FILE), "--store", str(store)])
    assert result.exit_code == 2
    assert f"error: {bad}: {message}" in result.output
    assert "1 file ingested" in result.output and "1 error" in result.output
    assert read_store(store)["source"].unique().to_list() == ["pytest-benchmark"]


def test_corrupt_file_found_by_walking_is_reported(tmp_path, store):
    root = tmp_path / "results"
    root.mkdir()
    (root / DATAITEMS_NAME).write_bytes(DATAITEMS_FILE.read_bytes()[:500])
    (root / "good.json").write_bytes(PYTEST_FILE.read_bytes())
    report = ingest_paths([root], store)
    assert [o.path.name for o in report.errors] == [DATAITEMS_NAME]
    assert [o.path.name for o in report.ingested] == ["good.json"]
