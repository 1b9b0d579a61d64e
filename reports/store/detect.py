"""Which files to ingest, and what each one is.

Walking a folder (hidden files and folders, and the store itself, are left out):

* a folder holding ``results.parquet`` is a ``schedperf run`` output: only that file is
  ingested (not its DataItems copy, placements, decisions or sub-folders);
* other ``*.parquet`` and ``*.json`` files are candidates, except files that are clearly
  not results (``placements.parquet``, ``decisions.parquet``, asv ``benchmarks.json`` and
  ``machine.json``, well-formed JSON of no results shape such as ``asv.conf.json``);
* every other file is left out silently.

A file named explicitly must be results: anything else is an error. A DataItems file inside
a run folder stands for that run (its results.parquet is ingested instead).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.store.ingest_run import RESULTS_FILE, RUN_SIDE_FILES
from reports.store.problems import Malformed
from reports.store.schema import SOURCE_ASV, SOURCE_DATAITEMS, SOURCE_PYTEST, SOURCE_RUN
from workloads.output.dataitems import FILE_PREFIX

__all__ = ["SKIP", "Candidate", "expand", "identify", "load_json"]

SKIP = "skip"  # identify(): not results, leave out silently
_PYTEST_SAVED = re.compile(r"^\d{4}_.+\.json$")
_ASV_RESULT = re.compile(r"^[0-9a-f]{8}-.+\.json$")
_FORMATS = ("expected a schedperf results.parquet or run folder, asv results "
            "(results/<machine>/<commit>-<env>.json), pytest-benchmark --benchmark-json "
            f"output, or DataItems {FILE_PREFIX}_*.json")


@dataclass(frozen=True)
class Candidate:
    path: Path
    explicit: bool  # named on the command line (not found by walking a folder)
    note: str | None = None


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder)
    except ValueError:
        return False
    return True


def _walk(root: Path, store: Path) -> list[Candidate]:
    found: list[Candidate] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not _inside(here / d, store))
        if RESULTS_FILE in files:
            dirs[:] = []  # a run folder: its results.parquet only
            found.append(Candidate(here / RESULTS_FILE, explicit=False))
            continue
        for name in sorted(files):
            if name.startswith(".") or name in RUN_SIDE_FILES:
                continue
            if name.endswith((".parquet", ".json")):
                found.append(Candidate(here / name, explicit=False))
    return found


def expand(paths: list[Path], store: Path) -> tuple[list[Candidate], list[tuple[Path, str]]]:
    """(files to ingest, (path, problem) for paths that cannot be used)."""
    store = store.resolve()
    candidates: list[Candidate] = []
    problems: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            found = _walk(path, store)
            if not found:
                problems.append((path, "no results files in this folder (" + _FORMATS + ")"))
            candidates.extend(found)
        elif path.is_file():
            run_results = path.parent / RESULTS_FILE
            if (path.name.startswith(FILE_PREFIX) and path.suffix == ".json"
                    and run_results.is_file()):
                candidates.append(Candidate(
                    run_results, explicit=True,
                    note=f"{path.name} is part of the schedperf run in {path.parent}: "
                         f"ingesting its {RESULTS_FILE}"))
            else:
                candidates.append(Candidate(path, explicit=True))
        elif path.exists():
            problems.append((path, "not a regular file or folder"))
        else:
            problems.append((path, "no such file or folder"))
    return candidates, problems


def load_json(data: bytes) -> Any:
    """Parse JSON bytes (NaN/Infinity allowed, as asv writes them); raises Malformed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"not UTF-8 text (binary data?): {exc.reason} at byte "
                        f"{exc.start}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(text.rstrip()) else ""
        raise Malformed(f"not valid JSON{hint}: {exc.msg} at line {exc.lineno} column "
                        f"{exc.colno}") from exc
    except RecursionError as exc:
        raise Malformed("not valid JSON: nested too deeply") from exc


def _json_kind(path: Path, doc: Any, explicit: bool) -> str:
    name = path.name
    if name.startswith(FILE_PREFIX) or (isinstance(doc, dict) and "dataItems" in doc):
        return SOURCE_DATAITEMS
    if isinstance(doc, dict):
        if "result_columns" in doc or ("commit_hash" in doc and "env_name" in doc):
            return SOURCE_ASV
        if "machine_info" in doc or ("benchmarks" in doc and "commit_info" in doc):
            return SOURCE_PYTEST
        if name in ("benchmarks.json", "machine.json") and "version" in doc:
            if explicit:
                raise Malformed(f"an asv {name} (benchmark metadata, no results): ingest "
                                "results/<machine>/<commit>-<env>.json or the results folder")
            return SKIP
    if _ASV_RESULT.match(name) and (path.parent / "machine.json").is_file():
        return SOURCE_ASV
    if _PYTEST_SAVED.match(name) and path.parent.parent.name == ".benchmarks":
        return SOURCE_PYTEST
    if explicit:
        shape = "a JSON object" if isinstance(doc, dict) else f"JSON {type(doc).__name__}"
        raise Malformed(f"{shape} of no known results format ({_FORMATS})")
    return SKIP


def identify(path: Path, data: bytes, explicit: bool) -> tuple[str, Any]:
    """(kind, parsed JSON or None): a source kind or :data:`SKIP`; raises Malformed."""
    if not data:
        raise Malformed("empty file (0 bytes)")
    if path.name in RUN_SIDE_FILES:
        if explicit:
            raise Malformed(f"{path.name} of a schedperf run holds no metrics: ingest the "
                            f"run folder or its {RESULTS_FILE}")
        return SKIP, None
    if data[:4] == b"PAR1" or path.suffix == ".parquet":
        return SOURCE_RUN, None
    if path.suffix != ".json" and explicit and data.lstrip()[:1] not in (b"{", b"["):
        raise Malformed(f"not a results file: neither Parquet nor JSON ({_FORMATS})")
    doc = load_json(data)
    return _json_kind(path, doc, explicit), doc
