"""``schedperf validate``: check config files deeply; print every error."""

from __future__ import annotations

from pathlib import Path

import click

from scheduler_core.inputfile import path_problem
from workloads.catalog.check import available_memory, check_workload
from workloads.config import TestCase, Workload
from workloads.config import validate as validate_configs

__all__ = ["validate"]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...]) -> None:
    """Check config files; print every error and exit 2 if any.

    PATH is a performance-config.yaml or a folder of <topic>/performance-config.yaml. Beyond
    the config itself, every workload is checked as `schedperf run` would start it: its
    templates rendered with its parameters (first and last index of each op) and parsed as
    manifests, its scheduler config loaded (out-of-tree plugins imported), its object counts
    checked against the memory available. A workload needing objects schedperf does not
    model is reported unsupported, which is not an error.
    """
    usable = [p for p in paths if path_problem(p) is None]
    errors = [f"{p}: {path_problem(p)}" for p in paths if path_problem(p) is not None]
    memory = available_memory()
    checked: list[str] = []
    unsupported: list[str] = []

    def deep(tc: TestCase, w: Workload) -> list:
        check = check_workload(tc, w, memory=memory)
        checked.append(check.name)
        if check.ok and check.unsupported:
            unsupported.append(check.name)
        return check.problems

    errors += [str(e) for e in validate_configs(usable, deep=deep)]
    if errors:
        for line in errors:
            click.echo(line, err=True)
        click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", err=True)
        ctx.exit(2)
    extra = f", {len(unsupported)} unsupported" if unsupported else ""
    click.echo(f"ok: {len(paths)} path{'s' if len(paths) != 1 else ''} valid "
               f"({len(checked)} workload{'s' if len(checked) != 1 else ''} checked{extra})")
