"""Which workloads a command works on: the ``--config`` / ``--label`` options, loading the
configs (or the built-in catalog), selecting workloads by label and name, their sizes, and
:class:`BadInput` (one line, exit 2). Shared by ``run``, ``list``, ``compare``, sharding and
the studies; it imports no command."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

import workloads
from scheduler_core.inputfile import path_problem
from workloads.catalog.selection import SelectionError, select
from workloads.config import ConfigFileError, TestCase, Workload, load_configs, resolve
from workloads.config.ops import CreateNodes, CreatePods, CreatePodSets

__all__ = [
    "CATALOG_DIR",
    "BadInput",
    "check_name_regex",
    "config_option",
    "label_option",
    "load_test_cases",
    "select_workloads",
    "sizes",
]

CATALOG_DIR = Path(workloads.__file__).resolve().parent / "configs"


class BadInput(click.ClickException):
    """Bad input (config errors, a filter matching nothing): one line, exit 2."""

    exit_code = 2


def config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--config", "configs", multiple=True, type=click.Path(path_type=Path),
        help="A performance-config.yaml or a folder of <topic>/performance-config.yaml "
             "(repeatable). Default: the built-in catalog.")(f)


def label_option(default: str | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    shown = f" [default: {default!r}; '' selects everything]" if default else ""
    return click.option(
        "--label", "label_filter", default=default,
        help="Label filter, e.g. 'performance,-short' (+x/x: must have, -x: must not)."
             + shown)


def check_name_regex(name_regex: str | None) -> None:
    """A ``--name`` that is not a regular expression is bad input, found before any work."""
    if name_regex:
        try:
            re.compile(name_regex)
        except re.error as exc:
            raise BadInput(f"--name {name_regex!r} is not a valid regular expression: "
                           f"{exc}") from exc


def load_test_cases(configs: Sequence[Path]) -> list[TestCase]:
    """Test cases of every ``--config`` path, or of the built-in catalog without one."""
    paths = list(configs)
    if not paths:
        if not CATALOG_DIR.is_dir():
            raise BadInput(f"no built-in catalog exists yet ({CATALOG_DIR} is missing): "
                           "pass --config PATH to a performance-config.yaml or a folder of them")
        paths = [CATALOG_DIR]
    test_cases: list[TestCase] = []
    for path in paths:
        problem = path_problem(path)
        if problem is not None:
            raise BadInput(f"--config {path}: {problem}")
        try:
            test_cases.extend(load_configs(path))
        except ConfigFileError as exc:
            raise BadInput(str(exc)) from exc
    return test_cases


def select_workloads(test_cases: Sequence[TestCase], label_filter: str | None,
                     name_regex: str | None = None) -> list[tuple[TestCase, Workload]]:
    try:
        return select(test_cases, label_filter, name_regex)
    except SelectionError as exc:
        raise BadInput(str(exc)) from exc


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
