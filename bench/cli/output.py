"""Console output that stays readable in logs.

A rich :class:`~rich.console.Console` writing to something that is not a terminal (a pipe, a CI
log, click's CliRunner) is 80 columns wide, and table cells that do not fit are cut with an
ellipsis (``SchedulingPodAn…``). :func:`output_console` makes such a console wide enough for
whole names, and :data:`WHOLE` is the column overflow that wraps a cell that still does not fit
instead of cutting it. On a terminal the console keeps the terminal's width.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Literal

import click
from rich.console import Console

__all__ = ["PIPE_WIDTH", "WHOLE", "is_tty", "output_console", "warn_unreadable_parts"]

PIPE_WIDTH = 1000  # columns when not a terminal: lines are only as long as what they hold
WHOLE: Literal["fold"] = "fold"  # wrap a long cell (at spaces, else anywhere), never cut it


def is_tty(stream: IO[str]) -> bool:
    """Whether ``stream`` is an interactive terminal (not a pipe, file or captured stream)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def output_console(*, stderr: bool = False) -> Console:
    """A console for stdout (stderr): the terminal's width on a terminal, otherwise at least
    :data:`PIPE_WIDTH` columns so tables and progress lines are not squeezed into 80.

    Whether it is a terminal is asked of the stream itself, so ``FORCE_COLOR`` (which makes
    rich treat any stream as a terminal) keeps colours in a CI log but not the 80 columns.
    """
    console = Console(stderr=stderr)
    if is_tty(console.file):
        return console
    return Console(stderr=stderr, width=max(console.width, PIPE_WIDTH))


def warn_unreadable_parts(store: Path) -> None:
    """One warning line per data file of the store that cannot be read (a corrupt or
    truncated part): the command reads around it."""
    from reports.store import unreadable_parts  # polars: only for the store commands

    for path, problem in unreadable_parts(store):
        click.echo(f"schedperf: warning: {path}: {problem}; its rows are left out", err=True)
