"""Fuzz the results readers (issue 16): ``ingest``'s parsers for run folders'
results.parquet, DataItems, asv and pytest-benchmark files, ``report.json`` (schedperf report,
compare --base-results) and ``accepted.yaml``: any input is read or raises the project's own
error with a message (Malformed, ReportFileError, AcceptedFileError); never another exception,
never a hang."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bench.cli.main import main
from reports.accepted import AcceptedFileError, load_accepted
from reports.render import ReportFileError, load_report, parse_report
from reports.store.detect import Candidate
from reports.store.ingest import _parse
from reports.store.problems import Malformed
from tests.builders import tiny_config
from tests.fuzz.support import fuzz_settings, no_hang, yaml_values
from tests.reports.render.conftest import report_dict

FIXTURES = Path(__file__).resolve().parents[1] / "reports" / "fixtures"
JSON_FILES = {
    "dataitems": FIXTURES / "dataitems"
    / "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z.json",
    "asv": FIXTURES / "asv" / "results" / "ci-runner"
    / "4f2a9c1e-virtualenv-py3.11-numpy.json",
    "pytest": FIXTURES / "pytest-benchmark" / "bench-4f2a9c1e.json",
}


@pytest.fixture(scope="module")
def results_parquet(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    base = tmp_path_factory.mktemp("fuzz-run")
    (base / "configs" / "misc").mkdir(parents=True)
    (base / "configs" / "misc" / "performance-config.yaml").write_text(
        tiny_config(("4Nodes", [], 4, 2, 6)))
    assert main(["run", "--config", str(base / "configs"), "--label", "", "--out",
                 str(base / "out"), "--format", "json"]) == 0
    return (base / "out" / "results.parquet").read_bytes()


def _ingest(path: Path, data: bytes) -> None:
    with no_hang():
        try:
            _parse(Candidate(path, explicit=True), data, hashlib.sha256(data).hexdigest())
        except Malformed as exc:
            assert str(exc).strip()


mutation = st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 64), st.binary(max_size=8)),
                    min_size=1, max_size=4)


def _mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    for pos, cut, insert in edits:
        pos %= max(len(data), 1)
        data = data[:pos] + insert + data[pos + cut:]
    return data


@fuzz_settings()
@given(st.binary(max_size=300), st.sampled_from(["results.parquet", "x.json",
                                                  *[p.name for p in JSON_FILES.values()]]))
def test_ingest_any_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes,
                          name: str) -> None:
    _ingest(Path("/nonexistent") / name, data)


@fuzz_settings()
@given(mutation)
def test_ingest_mutated_results_parquet(results_parquet: bytes,
                                        edits: list[tuple[int, int, bytes]]) -> None:
    _ingest(Path("/nonexistent/results.parquet"), _mutate(results_parquet, edits))


@fuzz_settings()
@given(st.sampled_from(sorted(JSON_FILES)), mutation)
def test_ingest_mutated_json_bytes(kind: str, edits: list[tuple[int, int, bytes]]) -> None:
    path = JSON_FILES[kind]
    _ingest(path, _mutate(path.read_bytes(), edits))


def _replace_somewhere(doc: Any, data: st.DataObject) -> Any:
    """``doc`` with one subtree (chosen by ``data``) replaced by a random value."""
    doc = copy.deepcopy(doc)
    new = data.draw(yaml_values(max_leaves=6))
    if not isinstance(doc, (dict, list)) or not doc:
        return new
    parent: Any = doc
    while True:
        keys = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
        key = data.draw(st.sampled_from(keys))
        child = parent[key]
        if isinstance(child, (dict, list)) and child and data.draw(st.booleans()):
            parent = child
            continue
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[key]
        else:
            parent[key] = new
        return doc


@fuzz_settings()
@given(st.sampled_from(sorted(JSON_FILES)), st.data())
def test_ingest_mutated_json_documents(kind: str, data: st.DataObject) -> None:
    path = JSON_FILES[kind]
    doc = _replace_somewhere(json.loads(path.read_text()), data)
    _ingest(path, json.dumps(doc).encode())


def _report(fn, *args, **kw) -> None:
    with no_hang():
        try:
            fn(*args, **kw)
        except ReportFileError as exc:
            assert str(exc).strip() and "\n" not in str(exc)


@fuzz_settings()
@given(st.data())
def test_report_documents(data: st.DataObject) -> None:
    _report(parse_report, _replace_somewhere(report_dict(), data), source="report.json")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-files")


@fuzz_settings()
@given(st.binary(max_size=300) | mutation.map(
    lambda e: _mutate(json.dumps(report_dict()).encode(), e)))
def test_report_files(work: Path, data: bytes) -> None:
    path = work / "report.json"
    path.write_bytes(data)
    _report(load_report, path)


entry = st.fixed_dictionaries({}, optional={
    "workload": st.text(max_size=10) | st.sampled_from(["(", "a.*", "[", "*"]),
    "metric": yaml_values(max_leaves=1), "until": st.dates().map(str) | st.text(max_size=12)
    | st.sampled_from(["abcdef1", "2026-13-40", "deadbeef" * 5]) | yaml_values(max_leaves=1),
    "why": yaml_values(max_leaves=2), "extra": st.text(max_size=3)})


@fuzz_settings()
@given(st.binary(max_size=300) | st.lists(entry, max_size=3).map(
    lambda d: yaml.safe_dump(d, allow_unicode=True).encode("utf-8", "surrogatepass"))
    | yaml_values().map(lambda d: yaml.safe_dump(d).encode("utf-8", "surrogatepass")))
def test_accepted_files(work: Path, data: bytes) -> None:
    path = work / "accepted.yaml"
    path.write_bytes(data)
    with no_hang():
        try:
            load_accepted(path, required=True)
        except AcceptedFileError as exc:
            assert str(exc).startswith(str(path))
