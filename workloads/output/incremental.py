"""A run's output folder, brought up to date as each workload finishes.

    writer = RunWriter(out, env=env, run_id=run_id, started=started, record_decisions=False)
    writer.add(round_no, result)     after every finished workload
    writer.finish()                  at the normal end (an empty shard gets empty files)
    writer.files                     every file written so far (each path once)

After :meth:`RunWriter.add` returns, the folder holds every finished workload and is readable
as the output of a complete run of those workloads: a run that is interrupted or killed (even
with SIGKILL) part-way keeps them. Every file is written atomically (a temporary file in the
folder, then ``os.replace``), so a reader sees the previous version or the new one:

* the workload's ``.dat`` progress file (a new file);
* the DataItems JSON of its topic and round, rewritten with every finished workload of that
  topic and round (its name carries the time the first of them finished);
* ``placements.parquet`` (and ``decisions.parquet`` when decisions are recorded), rewritten;
* ``results.parquet`` last, rewritten: a workload found there has all its files written.

The Parquet files are rewritten whole each time from Arrow tables kept in memory (a Parquet
file cannot be appended to and stay readable); that costs a fraction of a second per workload
even for a run with a million placements.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.output.dataitems import atomic_write_bytes, dataitems_payload, write_dataitems
from workloads.output.parquet import (
    DECISIONS_SCHEMA,
    PLACEMENTS_SCHEMA,
    RESULTS_SCHEMA,
    decision_rows,
    placement_rows,
    result_rows,
)
from workloads.output.progress import write_progress_files
from workloads.result import ENGINE_CORE, WorkloadResult

__all__ = ["RESULTS_FILE", "RunWriter", "dataitems_topic"]

RESULTS_FILE = "results.parquet"
PLACEMENTS_FILE = "placements.parquet"
DECISIONS_FILE = "decisions.parquet"


def _write_tables(path: Path, tables: list[pa.Table], schema: pa.Schema) -> Path:
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return atomic_write_bytes(path, buf.getvalue())


def dataitems_topic(result: WorkloadResult) -> str:
    """The topic part of a result's DataItems file name: the topic for scheduler_core; for
    the kube-scheduler engine ``<topic>_kube-scheduler_GOMAXPROCS<n>``, so that the two
    engines' items (same Name labels) are never in one file."""
    if result.engine == ENGINE_CORE:
        return result.topic
    return f"{result.topic}_{result.engine}_GOMAXPROCS{result.engine_gomaxprocs}"


class RunWriter:
    """Writes the files of one ``schedperf run`` into ``out`` as workloads finish."""

    def __init__(self, out: Path, *, env: Mapping[str, Any], run_id: str, started: datetime,
                 record_decisions: bool = False) -> None:
        self.out = Path(out)
        self.env = dict(env)
        self.run_id = run_id
        self.started = started
        self.record_decisions = record_decisions
        self.finished: list[tuple[int, WorkloadResult]] = []
        self._results: list[pa.Table] = []
        self._placements: list[pa.Table] = []
        self._decisions: list[pa.Table] = []
        self._topics: dict[tuple[str, int], tuple[Path, list[WorkloadResult]]] = {}
        self._files: dict[Path, str] = {}  # path -> kind, in the order first written

    @property
    def files(self) -> list[Path]:
        return list(self._files)

    def file_counts(self) -> dict[str, int]:
        """Files written so far by kind: ``dataitems`` (JSON), ``progress`` (.dat),
        ``parquet``."""
        counts = {"dataitems": 0, "progress": 0, "parquet": 0}
        for kind in self._files.values():
            counts[kind] += 1
        return counts

    def _wrote(self, path: Path, kind: str) -> None:
        self._files.setdefault(path, kind)

    def add(self, round_no: int, result: WorkloadResult, when: datetime | None = None) -> None:
        """Record one finished workload: every file of the folder now includes it."""
        when = when or datetime.now(UTC)
        run = [(round_no, result)]
        for path in write_progress_files([result], self.out, when):
            self._wrote(path, "progress")
        self._write_dataitems(round_no, result, when)
        self._placements.append(pa.Table.from_pylist(
            placement_rows(run, run_id=self.run_id), schema=PLACEMENTS_SCHEMA))
        self._wrote(_write_tables(self.out / PLACEMENTS_FILE, self._placements,
                                  PLACEMENTS_SCHEMA), "parquet")
        if self.record_decisions:
            rows = decision_rows(run, run_id=self.run_id)
            if rows is not None:
                self._decisions.append(pa.Table.from_pylist(rows, schema=DECISIONS_SCHEMA))
            if self._decisions:
                self._wrote(_write_tables(self.out / DECISIONS_FILE, self._decisions,
                                          DECISIONS_SCHEMA), "parquet")
        self._results.append(pa.Table.from_pylist(
            result_rows(run, self.env, run_id=self.run_id, timestamp=self.started),
            schema=RESULTS_SCHEMA))
        self._wrote(_write_tables(self.out / RESULTS_FILE, self._results, RESULTS_SCHEMA),
                    "parquet")
        self.finished.append((round_no, result))

    def finish(self) -> None:
        """The run ended normally: a run that finished no workload (an empty shard) still
        gets an empty ``results.parquet`` and ``placements.parquet``."""
        if not self.finished:
            for name, schema in ((RESULTS_FILE, RESULTS_SCHEMA),
                                 (PLACEMENTS_FILE, PLACEMENTS_SCHEMA)):
                self._wrote(_write_tables(self.out / name, [], schema), "parquet")

    def _write_dataitems(self, round_no: int, result: WorkloadResult, when: datetime) -> None:
        """One DataItems file per topic and round, as upstream writes one per topic (and per
        engine: :func:`dataitems_topic`)."""
        topic = dataitems_topic(result)
        key = (topic, round_no)
        if key not in self._topics:
            path = write_dataitems([result], self.out, topic, when)
            self._topics[key] = (path, [result])
        else:
            path, results = self._topics[key]
            results.append(result)
            data = json.dumps(dataitems_payload(results), indent=2).encode() + b"\n"
            atomic_write_bytes(path, data)
        self._wrote(path, "dataitems")
