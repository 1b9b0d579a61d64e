"""The end of ``schedperf run``: one row per finished workload run, then where the results are.

    --format table   a rich table (the default), then every workload that is not ok with
                     its reason, then one line: the folder, how many files of each kind, the
                     workloads by status
    --format json    one JSON object on stdout (:func:`summary_document`); messages go to stderr
    --format csv     one CSV row per workload run on stdout; messages go to stderr

Workload names are never cut: a table that does not fit a terminal wraps them; written to a
file or a pipe the table is as wide as its longest row, so every row stays on one line.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from bench.cli.engine_summary import (
    comparison_rows,
    comparison_table,
    cpu_ms_per_pod,
    engine_label,
    pods_per_second,
)
from bench.interrupt import signal_name
from workloads.result import (
    ENGINE_CORE,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_THRESHOLD_MISSED,
    STATUS_TIMEOUT,
    WorkloadResult,
)

__all__ = ["FORMATS", "RunSummary", "render", "summary_document", "summary_rows"]

FORMATS = ("table", "json", "csv")
CSV_COLUMNS = ("workload", "round", "status", "pods_per_s", "attempts_per_pod", "wall_seconds",
               "reason", "engine", "cpu_ms_per_pod", "warnings")
_STATUS_STYLE = {STATUS_OK: "green", STATUS_THRESHOLD_MISSED: "yellow", STATUS_FAILED: "red",
                 STATUS_TIMEOUT: "red"}
_FILE_KINDS = (("dataitems", "DataItems JSON"), ("progress", ".dat progress"),
               ("parquet", "Parquet"))


@dataclass
class RunSummary:
    """What a run did: where its files are, how many workload runs were planned (workloads
    x rounds), those that finished, and the signal that interrupted it (None: it ran to the
    end)."""

    out: Path
    planned: int
    results: list[tuple[int, WorkloadResult]]
    repeat: int = 1
    files: dict[str, int] = field(default_factory=dict)  # kind -> count (RunWriter)
    interrupted_by: int | None = None
    profiles: tuple[Path | None, int] = (None, 0)  # --profile folder, files written there

    def statuses(self) -> dict[str, int]:
        return dict(Counter(r.status for _, r in self.results))


def summary_rows(summary: RunSummary) -> list[dict[str, Any]]:
    rows = []
    for round_no, r in summary.results:
        rows.append({
            "workload": r.name, "round": round_no, "status": r.status,
            "pods_per_s": pods_per_second(r),
            "attempts_per_pod": (r.attempts / r.scheduled_pods
                                 if r.scheduled_pods and r.engine == ENGINE_CORE else None),
            "wall_seconds": r.wall_seconds, "reason": r.reason, "engine": engine_label(r),
            "warnings": list(r.warnings),
            "cpu_ms_per_pod": cpu_ms_per_pod(r),
        })
    return rows


def summary_document(summary: RunSummary) -> dict[str, Any]:
    """The ``--format json`` object."""
    return {
        "out": str(summary.out),
        "complete": summary.interrupted_by is None,
        "interrupted_by": (None if summary.interrupted_by is None
                           else signal_name(summary.interrupted_by)),
        "planned": summary.planned,
        "finished": len(summary.results),
        "statuses": summary.statuses(),
        "files": {**summary.files, "total": sum(summary.files.values())},
        "workloads": summary_rows(summary),
        "engines": comparison_rows(summary.results),
    }


def _csv(summary: RunSummary) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in summary_rows(summary):
        row["warnings"] = "; ".join(row["warnings"])
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def _table(summary: RunSummary) -> Table:
    table = Table(title="schedperf run")
    table.add_column("workload", overflow="fold")
    if summary.repeat > 1:
        table.add_column("round", justify="right", overflow="fold")
    engines = any(r.engine != ENGINE_CORE for _, r in summary.results)
    if engines:
        table.add_column("engine", overflow="fold")
    table.add_column("status", overflow="fold")
    table.add_column("pods/s Average", justify="right", overflow="fold")
    table.add_column("attempts/pod", justify="right", overflow="fold")
    table.add_column("wall s", justify="right", overflow="fold")
    for row in summary_rows(summary):
        style = _STATUS_STYLE.get(row["status"], "dim")
        cells: list[str | Text] = [Text(row["workload"])]  # a name is text, never markup
        if summary.repeat > 1:
            cells.append(str(row["round"]))
        if engines:
            cells.append(row["engine"])
        cells += [f"[{style}]{row['status']}[/]",
                  "-" if row["pods_per_s"] is None else f"{row['pods_per_s']:.1f}",
                  "-" if row["attempts_per_pod"] is None else f"{row['attempts_per_pod']:.2f}",
                  f"{row['wall_seconds']:.2f}"]
        table.add_row(*cells)
    return table


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def footer(summary: RunSummary) -> str:
    """``results in DIR: 5 files (2 DataItems JSON, 1 .dat progress, 2 Parquet); 3 workload
    runs: 2 ok, 1 threshold-missed``."""
    total = sum(summary.files.values())
    kinds = ", ".join(f"{summary.files[k]} {name}" for k, name in _FILE_KINDS
                      if summary.files.get(k))
    files = _plural(total, "file") + (f" ({kinds})" if kinds else "")
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(summary.statuses().items(),
                                                         key=lambda kv: (-kv[1], kv[0])))
    runs = _plural(len(summary.results), "workload run" if summary.repeat > 1 else "workload")
    line = f"results in {summary.out}: {files}; {runs}" + (f": {statuses}" if statuses else "")
    folder, count = summary.profiles
    if folder is not None:
        line += f"; profiles in {folder}: {_plural(count, 'file')}"
    return line


def interruption_line(summary: RunSummary) -> str:
    done, planned = len(summary.results), summary.planned
    if not summary.results:
        return f"interrupted after 0/{planned} workloads; no results written"
    return f"interrupted after {done}/{planned} workloads; partial results in {summary.out}"


def _print_wide(console: Console, table: Table) -> None:
    """On a terminal as wide as it is (long names wrap); elsewhere as wide as the table needs,
    so that every row stays on one line in a log."""
    if console.is_terminal:
        console.print(table)
        return
    width = Measurement.get(console, console.options.update(width=100_000), table).maximum
    Console(file=console.file, width=max(console.width, width), no_color=console.no_color,
            force_terminal=False, highlight=False).print(table)


def render(summary: RunSummary, fmt: str, *, out: Console, err: Console) -> None:
    """Print the summary: the table (or JSON / CSV) to ``out``; reasons and the closing line
    to ``out`` for a table, to ``err`` otherwise (so that stdout stays machine-readable)."""
    if fmt == "json":
        out.file.write(json.dumps(summary_document(summary), indent=2) + "\n")
    elif fmt == "csv":
        out.file.write(_csv(summary))
    elif summary.results:
        _print_wide(out, _table(summary))
        compared = comparison_rows(summary.results)
        if compared:
            _print_wide(out, comparison_table(compared))
    notes = out if fmt == "table" else err
    for round_no, r in summary.results:
        where = r.name if summary.repeat == 1 else f"{r.name} #{round_no}"
        if r.engine != ENGINE_CORE:
            where += f" ({engine_label(r)})"
        if r.status != STATUS_OK and r.reason:
            notes.print(Text.assemble((where, "bold"), f": {r.status}: {r.reason}"),
                        highlight=False, soft_wrap=True)
        for warning in r.warnings:
            notes.print(Text.assemble((where, "bold"), f": warning: {warning}"),
                        highlight=False, soft_wrap=True)
    if summary.results or any(summary.files.values()):
        notes.print(footer(summary), highlight=False, soft_wrap=True, markup=False)
    if summary.interrupted_by is not None:
        err.print(interruption_line(summary), highlight=False, soft_wrap=True, markup=False)
