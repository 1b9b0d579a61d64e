"""The deep check at the start of ``schedperf run`` (issue 16): every selected workload is
checked before the first one runs (workloads.catalog.check: templates rendered and parsed,
scheduler configs loaded, sizes against memory). Bad input stops the run before it starts
(exit 2) unless ``--keep-going``: then the good workloads run, the bad ones are named again at
the end and the run exits 2."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from bench.selection import BadInput
from workloads.catalog.check import WorkloadCheck, check_selection
from workloads.config import TestCase, Workload

__all__ = ["check_before_run", "keep_going_option", "report_not_run"]

Chosen = list[tuple[TestCase, Workload]]


def keep_going_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--keep-going", is_flag=True,
        help="When some selected workloads have bad input (a template, manifest or scheduler "
             "config that does not parse, an impossible size), run the others, name the bad "
             "ones and exit 2 at the end. Without it such a run does not start.")(f)


def check_before_run(chosen: Sequence[tuple[TestCase, Workload]], *, keep_going: bool
                     ) -> tuple[Chosen, list[WorkloadCheck]]:
    """(the workloads to run, the checks of those with bad input); every problem is printed
    on stderr, one line each. Raises :class:`BadInput` when the run must not start."""
    checks = check_selection(chosen)
    bad = [c for c in checks if not c.ok]
    for check in bad:
        for problem in check.problems:
            click.echo(str(problem), err=True)
    good = [(c.test_case, c.workload) for c in checks if c.ok]
    if bad and not keep_going:
        raise BadInput(f"{len(bad)} of {len(checks)} selected workloads "
                       f"{'has' if len(bad) == 1 else 'have'} bad input (above); nothing "
                       "was run (--keep-going runs the others)")
    if bad and not good:
        raise BadInput("every selected workload has bad input (above): nothing to run")
    if bad:
        click.echo(f"schedperf: warning: {len(bad)} workload{'s' if len(bad) != 1 else ''} "
                   f"with bad input will not run (--keep-going): "
                   f"{', '.join(c.name for c in bad)}", err=True)
    return good, bad


def report_not_run(bad: Sequence[WorkloadCheck]) -> None:
    """The end of a --keep-going run: the workloads that did not run and why (first
    problem of each)."""
    for check in bad:
        click.echo(f"{check.name}: not run (bad input): {check.problems[0]}", err=True)
