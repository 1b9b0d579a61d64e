"""Entry point: dispatch subcommands; the project's errors become one line and exit 2.

SIGINT and SIGTERM end every command cleanly (bench.interrupt): the command's clean-up runs
(worktrees removed, worker process groups killed, temporary files deleted) and the exit status
is 128 + the signal, 130 for SIGINT and 143 for SIGTERM. ``run`` reports how far it got itself.
"""

from __future__ import annotations

import os
import sys

import click

from bench.cli.changes import changes
from bench.cli.compare import compare
from bench.cli.coverage import coverage_command
from bench.cli.dashboard import dashboard
from bench.cli.demo import demo
from bench.cli.fidelity import fidelity
from bench.cli.generate import generate
from bench.cli.history import history
from bench.cli.ingest import ingest
from bench.cli.list import list_workloads
from bench.cli.merge import merge
from bench.cli.reference import reference
from bench.cli.report import report
from bench.cli.run import run
from bench.cli.validate import validate
from bench.interrupt import exit_code_of, handle_signals, signal_name
from scheduler_core.errors import SchedulerCoreError
from scheduler_core.inputfile import (
    DEFAULT_MAX_INPUT_BYTES,
    ENV_MAX_INPUT_SIZE,
    format_size,
    parse_size,
    set_max_input_bytes,
)

__all__ = ["cli", "main"]


class _InOrder(click.Group):
    """Lists subcommands in workflow order (the order they are added), as asv does."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


def _max_input_size(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``--max-input-size``: the input size cap for this process and its children."""
    if value is None:
        return
    try:
        limit = parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    set_max_input_bytes(limit)
    os.environ[ENV_MAX_INPUT_SIZE] = str(limit)  # measurement workers read it too


@click.group(cls=_InOrder, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="schedperf")
@click.option("--max-input-size", metavar="SIZE", default=None, expose_value=False,
              is_eager=True, callback=_max_input_size,
              help="Largest input file read (configs, templates, scheduler configs, "
                   "accepted.yaml, results files), e.g. 512M or 2G; 0: no cap. "
                   f"[default: ${ENV_MAX_INPUT_SIZE} or "
                   f"{format_size(DEFAULT_MAX_INPUT_BYTES)}]")
def cli() -> None:
    """schedperf: performance-regression benchmarking for Kubernetes-style scheduling."""


cli.add_command(run)
cli.add_command(merge)
cli.add_command(list_workloads)
cli.add_command(validate)
cli.add_command(generate)
cli.add_command(compare)
cli.add_command(coverage_command)
cli.add_command(report)
cli.add_command(ingest)
cli.add_command(history)
cli.add_command(changes)
cli.add_command(dashboard)
cli.add_command(demo)
cli.add_command(reference)
cli.add_command(fidelity)


def _interrupted(exc: BaseException) -> int:
    code = exit_code_of(exc)
    click.echo(f"schedperf: interrupted by {signal_name(code - 128)}", err=True)
    return code


def main(argv: list[str] | None = None) -> int:
    with handle_signals():
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:  # outside a command (click turns the rest into Abort)
            return _interrupted(exc)


def _main(argv: list[str] | None) -> int:
    try:
        result = cli.main(args=argv, prog_name="schedperf", standalone_mode=False)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(exc.__cause__)
        click.echo("aborted", err=True)
        return 130
    except click.exceptions.UsageError as exc:
        click.echo(f"schedperf: error: {exc.format_message()}", err=True)
        return 2
    except click.exceptions.ClickException as exc:
        click.echo(f"schedperf: error: {exc.format_message()}", err=True)
        return 2
    except SchedulerCoreError as exc:
        click.echo(f"schedperf: error: {exc}", err=True)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
