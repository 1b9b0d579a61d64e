"""The one error type of the scheduler_perf config parser.

    ValueError
    └── ConfigFileError   a performance-config.yaml (or a file it names) is wrong

A message names the file, the line where known, the test case / workload, the YAML path inside
the test case and the problem, for example::

    misc/performance-config.yaml:41: SchedulingBasic/5000Nodes: workloadTemplate[1].countParam:
    parameter $initPods is undefined

(printed on one line). The file is shown as ``<topic folder>/<file name>``; ``path`` keeps the
full path.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ConfigFileError", "display_name"]


def display_name(path: Path) -> str:
    """``misc/performance-config.yaml``: the file with its topic folder."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


class ConfigFileError(ValueError):
    """A scheduler_perf config file is invalid.

    Message: ``<topic>/<file>[:line]: [test case[/workload]: ][yaml.path: ]problem``.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: Path,
        line: int | None = None,
        test_case: str | None = None,
        workload: str | None = None,
        yaml_path: str = "",
    ) -> None:
        self.problem = problem
        self.path = path
        self.line = line
        self.test_case = test_case
        self.workload = workload
        self.yaml_path = yaml_path
        super().__init__(self._render())

    def _render(self) -> str:
        where = display_name(self.path)
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.test_case is not None:
            parts.append(self.test_case if self.workload is None
                         else f"{self.test_case}/{self.workload}")
        if self.yaml_path:
            parts.append(self.yaml_path)
        parts.append(self.problem)
        return ": ".join(parts)
