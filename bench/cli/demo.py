"""``schedperf demo``: schedule the SchedulingBasic shape and print pods/s."""

from __future__ import annotations

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.demo import run_scheduling_basic

__all__ = ["demo"]


@click.command()
@click.option("--nodes", default=5000, show_default=True, type=click.IntRange(min=1))
@click.option("--init-pods", default=1000, show_default=True, type=click.IntRange(min=0))
@click.option("--pods", "measured", default=10000, show_default=True,
              type=click.IntRange(min=1), help="Measured pods.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--no-metrics", is_flag=True, help="Turn the metrics hooks off.")
def demo(nodes: int, init_pods: int, measured: int, seed: int, no_metrics: bool) -> int:
    """Create NODES default nodes, schedule INIT-PODS then PODS default pods; print pods/s."""
    console = Console()
    with Progress(TextColumn("[bold]scheduling"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task("pods", total=measured)
        result = run_scheduling_basic(nodes, init_pods, measured, seed=seed,
                                      metrics=not no_metrics,
                                      progress=lambda done: progress.update(task, completed=done))
    console.print(
        f"[bold]{result.scheduled}[/] of {measured} pods scheduled on {nodes} nodes in "
        f"{result.seconds:.2f} s: [bold green]{result.pods_per_second:.0f} pods/s[/] "
        f"({result.attempts} attempts)")
    return 0 if result.scheduled == measured else 1
