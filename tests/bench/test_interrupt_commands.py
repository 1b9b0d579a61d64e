"""SIGTERM ends ingest and dashboard cleanly: exit 143, no temporary file left, nothing half
written, the store still usable. The signal is sent from inside the command at a known point
(a wrapped step), never after a delay."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bench.cli.main import main
from reports.dashboard import site as site_module
from reports.store import ingest as store_ingest
from reports.store import scan_store
from tests.reports.store.conftest import ASV_FILE, DATAITEMS_FILE, PYTEST_FILE

INPUTS = [ASV_FILE, PYTEST_FILE, DATAITEMS_FILE]


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def _rows(store: Path) -> list[tuple]:
    df = scan_store(store).drop("source_sha256").collect()
    return sorted(df.rows(), key=repr)


def test_ingest_interrupted_between_data_and_bookkeeping(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    real = store_ingest.write_parts

    def write_then_sigterm(*args, **kw):
        written = real(*args, **kw)
        os.kill(os.getpid(), signal.SIGTERM)  # the data landed, the ledger is not saved
        return written

    monkeypatch.setattr(store_ingest, "write_parts", write_then_sigterm)
    assert main(["ingest", "--store", str(store), *map(str, INPUTS)]) == 143
    assert "schedperf: interrupted by SIGTERM" in capsys.readouterr().err
    assert _temp_files(store) == []
    monkeypatch.setattr(store_ingest, "write_parts", real)
    # the lock was released and ingesting again completes the bookkeeping, adding no row twice
    assert main(["ingest", "--store", str(store), *map(str, INPUTS)]) == 0
    clean = tmp_path / "clean"
    assert main(["ingest", "--store", str(clean), *map(str, INPUTS)]) == 0
    assert _rows(store) == _rows(clean)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    assert main(["ingest", "--store", str(store), *map(str, INPUTS)]) == 0
    return store


def test_dashboard_interrupted_keeps_the_previous_site(store, tmp_path, monkeypatch, capsys):
    out = tmp_path / "site"
    assert main(["dashboard", "--store", str(store), "--out", str(out)]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = site_module.render_index

    def render_then_sigterm(*args, **kw):
        html = real(*args, **kw)
        os.kill(os.getpid(), signal.SIGTERM)  # half of the new site is written
        return html

    monkeypatch.setattr(site_module, "render_index", render_then_sigterm)
    assert main(["dashboard", "--store", str(store), "--out", str(out)]) == 143
    assert "schedperf: interrupted by SIGTERM" in capsys.readouterr().err
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]  # no temp folder
    assert scan_store(store).collect().height > 0  # the store is untouched and readable
