"""reports.store's public surface, and two ingests at once (the store lock)."""

from __future__ import annotations

import importlib
import json
import threading

import pytest

from reports.store import LEDGER_NAME, ingest_paths
from tests.reports.store.conftest import (
    ASV_FILE,
    ASV_FILE_2,
    DATAITEMS_FILE,
    PYTEST_FILE,
    read_store,
)

MODULES = ["reports.store"] + [f"reports.store.{m}" for m in (
    "bookkeeping", "coverage", "dataset", "detect", "history", "ingest", "ingest_asv",
    "ingest_dataitems", "ingest_pytest", "ingest_run", "problems", "schema")]


@pytest.mark.parametrize("module_name", MODULES)
def test_every_name_in_all_is_importable(module_name):
    module = importlib.import_module(module_name)
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        namespace: dict[str, object] = {}
        exec(f"from {module_name} import {name}", namespace)
        assert namespace[name] is getattr(module, name)


def test_concurrent_ingests_keep_every_file(store):
    inputs = [[ASV_FILE], [ASV_FILE_2], [PYTEST_FILE], [DATAITEMS_FILE]]
    reports = [None] * len(inputs)

    def work(i):
        reports[i] = ingest_paths(inputs[i], store)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and len(r.ingested) == 1 for r in reports)
    files = json.loads((store / LEDGER_NAME).read_text())["files"]
    assert len(files) == 4
    assert read_store(store).height == sum(r.ingested[0].rows for r in reports)
