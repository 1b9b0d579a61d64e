"""The deep check of ``schedperf compare --base-config X --head-config Y`` before anything is
measured: each side's KubeSchedulerConfiguration replaces the scheduler config of every chosen
workload (as the workers will do, bench.measure.session) and goes through the check
``validate`` and ``run`` use (workloads.catalog.check: the config loaded, every profile built,
out-of-tree plugins imported, the workloads' templates rendered and parsed).

Any problem is bad input: every one is printed on stderr, one line each, naming the flag, the
scheduler config file and the field (``--head-config: b.yaml: profiles[0].plugins.score:
unknown plugin "X" ...``), or the workload config file and field for a problem of the
workload itself; then :class:`BadInput`, before the output folder exists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import click

from bench.compare.choose import Choice
from bench.selection import BadInput
from scheduler_core.errors import SchedulerCoreError
from scheduler_core.framework.config import load_config
from workloads.catalog.check import available_memory, check_workload
from workloads.config import TestCase, Workload

__all__ = ["check_side_configs"]

_SCHEDULER_KEY = "schedulerConfigPath"  # where the deep check files a scheduler config problem
_PREFIX = "scheduler config: "


def _side_problems(flag: str, path: Path, chosen: Sequence[tuple[TestCase, Workload]],
                   memory: int) -> list[str]:
    try:
        load_config(path)  # the file itself first: one line, even with no workload chosen
    except (SchedulerCoreError, OSError) as exc:
        text = str(exc)
        return [f"{flag}: {text if str(path) in text else f'{path}: {text}'}"]
    resolved = path.resolve()
    out: list[str] = []
    for tc, w in chosen:
        check = check_workload(dataclasses.replace(tc, scheduler_config_path=resolved), w,
                               memory=memory)
        for problem in check.problems:
            if problem.yaml_path == _SCHEDULER_KEY and problem.problem.startswith(_PREFIX):
                out.append(f"{flag}: {problem.problem.removeprefix(_PREFIX)}")
            else:
                out.append(str(problem))
    return out


def check_side_configs(test_cases: Sequence[TestCase], choice: Choice,
                       sides: Sequence[tuple[str, Path]]) -> None:
    """Check each (flag, scheduler config) of ``sides`` with the workloads of ``choice``;
    print every problem and raise :class:`BadInput` if there is one."""
    names = {name for sel in choice.selections.values() for name in sel.workloads}
    chosen = [(tc, w) for tc in test_cases for w in tc.workloads if w.full_name in names]
    memory = available_memory()
    problems: list[str] = []
    for flag, path in sides:
        problems += _side_problems(flag, path, chosen, memory)
    problems = list(dict.fromkeys(problems))  # one workload problem, both sides: once
    if not problems:
        return
    for line in problems:
        click.echo(line, err=True)
    raise BadInput(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} with the "
                   "scheduler configs or the workloads (above); nothing was measured")
