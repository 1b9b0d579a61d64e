"""Accepted regressions: a checked-in file that lets a maintainer accept a known slowdown.

``.schedperf/accepted.yaml`` (the default path; ``--accepted PATH`` elsewhere) is a YAML list::

    - workload: "TopologySpreading/.*"     # regex, full match on <test case>/<workload>
      metric: SchedulingThroughput         # optional: every metric when absent
      until: 2026-12-31                    # a date (inclusive) or a commit hash
      why: "minDomains support costs ~4 %; tracked in #123"

An entry matches a regression of a workload and metric it names. Its ``until`` is either a
date — the acceptance holds through that day (UTC) — or a commit: it holds until that commit
is part of the compared BASE (once the change is on the base branch it is no longer a
difference, and a stale acceptance must not hide a later regression). The PR gate then passes,
and the report still lists the regression, marked accepted with the reason.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scheduler_core.inputfile import InputFileError
from workloads.config.yaml_lines import LineDict, LineList, YamlLoadError, load_yaml

__all__ = ["DEFAULT_ACCEPTED_PATH", "Acceptance", "AcceptedFileError", "load_accepted"]

DEFAULT_ACCEPTED_PATH = Path(".schedperf/accepted.yaml")
FIELDS = ("workload", "metric", "until", "why")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")


class AcceptedFileError(Exception):
    """The accepted-regressions file is malformed (bad input: exit 2)."""


@dataclass(frozen=True)
class Acceptance:
    workload: re.Pattern[str]
    metric: str | None
    until_date: dt.date | None
    until_commit: str | None
    why: str
    source: str  # file:line

    def matches(self, workload: str, metric: str) -> bool:
        return (self.workload.fullmatch(workload) is not None
                and (self.metric is None or self.metric == metric))

    def active(self, today: dt.date, in_base: Callable[[str], bool]) -> bool:
        """Still in force: the date has not passed / the commit is not in BASE yet."""
        if self.until_date is not None:
            return today <= self.until_date
        assert self.until_commit is not None
        return not in_base(self.until_commit)


def plain_type(value: object) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _err(path: Path, line: int | None, where: str, problem: str) -> AcceptedFileError:
    at = f"{path}:{line}" if line else str(path)
    return AcceptedFileError(f"{at}: {where}: {problem}")


def _entry(path: Path, i: int, item: object, line: int | None) -> Acceptance:
    where = f"[{i}]"
    if not isinstance(item, LineDict):
        raise _err(path, line, where, "expected a mapping with workload, until and why")
    for key in item:
        if key not in FIELDS:
            raise _err(path, item.key_lines.get(key, line), f"{where}.{key}",
                       f"unknown field (expected one of {', '.join(FIELDS)})")
    for key in ("workload", "until", "why"):
        if key not in item or item[key] in (None, ""):
            raise _err(path, item.line or line, f"{where}.{key}", "required field is missing")

    def text(key: str) -> str:
        value = item[key]
        if not isinstance(value, str):
            raise _err(path, item.value_lines.get(key), f"{where}.{key}",
                       f"expected a string, got {plain_type(value)}")
        return value

    try:
        pattern = re.compile(text("workload"))
    except re.error as exc:
        raise _err(path, item.value_lines.get("workload"), f"{where}.workload",
                   f"not a valid regular expression: {exc}") from None
    metric = text("metric") if item.get("metric") is not None else None
    until = item["until"]
    until_date = until_commit = None
    if isinstance(until, dt.datetime):
        until_date = until.date()
    elif isinstance(until, dt.date):
        until_date = until
    elif isinstance(until, int) and not isinstance(until, bool):
        raise _err(path, item.value_lines.get("until"), f"{where}.until",
                   "a number: write commit hashes in quotes, dates as YYYY-MM-DD")
    elif isinstance(until, str) and _COMMIT.fullmatch(until):
        until_commit = until
    else:
        try:
            until_date = dt.date.fromisoformat(str(until))
        except ValueError:
            raise _err(path, item.value_lines.get("until"), f"{where}.until",
                       f"expected a date (YYYY-MM-DD) or a commit hash, got {until!r}") from None
    return Acceptance(pattern, metric, until_date, until_commit, text("why"),
                      f"{path}:{item.line or line}")


def load_accepted(path: Path, *, required: bool = False) -> list[Acceptance]:
    """The entries of ``path``; [] when it does not exist (unless ``required``)."""
    if not os.path.lexists(path):  # a dangling link or a symlink loop is read (and refused)
        if required:
            raise AcceptedFileError(f"{path}: no such file")
        return []
    try:
        data = load_yaml(path, what="an accepted-regressions file (a YAML list)",
                         allow_empty=True)
    except YamlLoadError as exc:
        raise _err(path, exc.line, "(file)", exc.problem) from None
    except InputFileError as exc:
        raise AcceptedFileError(str(exc)) from None
    if data is None:
        return []
    if not isinstance(data, LineList):
        raise _err(path, getattr(data, "line", 1), "(top level)",
                   "expected a list of accepted regressions")
    return [_entry(path, i, item, data.item_lines[i] if i < len(data.item_lines) else None)
            for i, item in enumerate(data)]
