"""Errors of the template package: where a problem is, and how a builtin reports one."""

from __future__ import annotations

__all__ = ["CallError", "TemplateError", "Where"]


class TemplateError(ValueError):
    """A template cannot be parsed or rendered.

    The message reads ``source:line:column: problem``, for example
    ``templates/pod.yaml:7:12: unknown function "modd"``. The parts are also attributes.
    """

    def __init__(self, problem: str, *, source: str = "<template>", line: int = 0,
                 column: int = 0) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        where = f"{source}:{line}:{column}" if line else source
        super().__init__(f"{where}: {problem}")


class Where:
    """Turns an offset in the template text into a located TemplateError (only on error)."""

    __slots__ = ("source", "text")

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text

    def error(self, off: int, problem: str) -> TemplateError:
        line = self.text.count("\n", 0, off) + 1
        column = off - self.text.rfind("\n", 0, off)
        return TemplateError(problem, source=self.source, line=line, column=column)


class CallError(Exception):
    """Raised by a builtin; reported as ``error calling NAME: reason``."""

