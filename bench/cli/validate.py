"""``schedperf validate``: check config files; print every error."""

from __future__ import annotations

from pathlib import Path

import click

from workloads.config import validate as validate_configs

__all__ = ["validate"]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...]) -> None:
    """Check config files; print every error and exit 2 if any.

    PATH is a performance-config.yaml or a folder of <topic>/performance-config.yaml.
    """
    missing = [p for p in paths if not p.exists()]
    errors = [f"{p}: no such file or folder" for p in missing]
    errors += [str(e) for e in validate_configs([p for p in paths if p.exists()])]
    if errors:
        for line in errors:
            click.echo(line, err=True)
        click.echo(f"{len(errors)} error{'s' if len(errors) != 1 else ''}", err=True)
        ctx.exit(2)
    click.echo(f"ok: {len(paths)} path{'s' if len(paths) != 1 else ''} valid")
