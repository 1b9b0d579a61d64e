"""``schedperf list``: the workloads of the configs, their labels, sizes and support."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from bench.cli.run import config_option, label_option, load_test_cases, select_workloads
from workloads.config import ConfigFileError, TestCase, Workload, resolve
from workloads.config_ops import CreateNodes, CreatePods, CreatePodSets
from workloads.support import support_reason

__all__ = ["list_workloads", "sizes"]


def sizes(test_case: TestCase, workload: Workload) -> tuple[int, int]:
    """(nodes, pods) the workload creates, from its resolved ops (raises ConfigFileError)."""
    nodes = pods = 0
    for op in resolve(test_case, workload):
        if isinstance(op, CreateNodes):
            nodes += op.count
        elif isinstance(op, CreatePods):
            pods += op.count
        elif isinstance(op, CreatePodSets):
            pods += op.count * op.create_pods_op.count
    return nodes, pods


@click.command("list")
@config_option
@label_option(None)
def list_workloads(configs: tuple[Path, ...], label_filter: str | None) -> None:
    """List the workloads (test case/workload), labels, node and pod counts, support."""
    chosen = select_workloads(load_test_cases(configs), label_filter)
    table = Table(title=f"{len(chosen)} workloads")
    table.add_column("test case/workload")
    table.add_column("labels")
    table.add_column("nodes", justify="right")
    table.add_column("pods", justify="right")
    table.add_column("supported")
    for tc, w in chosen:
        try:
            nodes, pods = sizes(tc, w)
            counts = [str(nodes), str(pods)]
        except ConfigFileError as exc:
            counts = ["?", "?"]
            table.add_row(w.full_name, ",".join(w.labels), *counts, f"[red]error: {exc}[/]")
            continue
        reason = support_reason(tc, w)
        table.add_row(w.full_name, ",".join(w.labels), *counts,
                      "[green]yes[/]" if reason is None else f"[yellow]no: {reason}[/]")
    Console().print(table)
