"""``schedperf list``: the workloads of the configs, their labels, sizes and support.

``--format table`` (default) prints a rich table whose names are never cut (wrapped on a
terminal, whole when piped); ``json`` a list of objects and ``csv`` a header and one row per
workload, both with the fields of :data:`FIELDS`: the table's columns, with its
``supported`` cell ("no: <reason>") split into ``supported`` (yes/no/error) and ``reason``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from bench.cli.output import WHOLE, output_console
from bench.selection import (
    config_option,
    label_option,
    load_test_cases,
    select_workloads,
    sizes,
)
from workloads.catalog.support import support_reason
from workloads.config import ConfigFileError, TestCase, Workload

__all__ = ["FIELDS", "Listed", "list_workloads", "listed"]

_SUPPORTED_STYLE = {"yes": "green", "no": "yellow", "error": "red"}


@dataclass(frozen=True)
class Listed:
    """One line of ``schedperf list``; the fields in the order of :data:`FIELDS`."""

    workload: str  # "<test case>/<workload>"
    labels: tuple[str, ...]
    nodes: int | None  # None: the ops do not resolve (see reason)
    pods: int | None
    supported: str  # "yes", "no" (not modelled; see reason) or "error" (bad config)
    reason: str | None

    def record(self) -> dict[str, Any]:
        """The fields as JSON values (labels a list)."""
        return {**asdict(self), "labels": list(self.labels)}


FIELDS = tuple(f.name for f in fields(Listed))


def listed(test_case: TestCase, workload: Workload) -> Listed:
    try:
        nodes, pods = sizes(test_case, workload)
    except ConfigFileError as exc:
        return Listed(workload.full_name, workload.labels, None, None, "error", str(exc))
    reason = support_reason(test_case, workload)
    return Listed(workload.full_name, workload.labels, nodes, pods,
                  "yes" if reason is None else "no", reason)


def _table(rows: list[Listed]) -> Table:
    table = Table(title=f"{len(rows)} workloads")
    table.add_column("workload", overflow=WHOLE)
    table.add_column("labels", overflow=WHOLE)
    table.add_column("nodes", justify="right")
    table.add_column("pods", justify="right")
    table.add_column("supported", overflow=WHOLE)
    for row in rows:
        supported = row.supported if row.reason is None else f"{row.supported}: {row.reason}"
        table.add_row(Text(row.workload), Text(",".join(row.labels)),  # Text: not markup
                      "?" if row.nodes is None else str(row.nodes),
                      "?" if row.pods is None else str(row.pods),
                      Text(supported, style=_SUPPORTED_STYLE[row.supported]))
    return table


def _json(rows: list[Listed]) -> str:
    return json.dumps([r.record() for r in rows], indent=2)


def _csv(rows: list[Listed]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS, lineterminator="\n")  # None: an empty cell
    writer.writeheader()
    for r in rows:
        writer.writerow({**r.record(), "labels": ",".join(r.labels)})
    return out.getvalue()


@click.command("list")
@config_option
@label_option(None)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True,
              help="table: for people (names are never cut); json: a list of objects; csv: a "
                   f"header and a row per workload. Fields: {', '.join(FIELDS)}.")
def list_workloads(configs: tuple[Path, ...], label_filter: str | None, fmt: str) -> None:
    """List the workloads (test case/workload), labels, node and pod counts, support."""
    rows = [listed(tc, w) for tc, w in select_workloads(load_test_cases(configs), label_filter)]
    if fmt == "json":
        click.echo(_json(rows))
    elif fmt == "csv":
        click.echo(_csv(rows), nl=False)
    else:
        output_console().print(_table(rows))
