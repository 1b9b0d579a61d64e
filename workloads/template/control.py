"""Run-time closures of the control actions ``with`` and ``range`` and of variable actions.

Every closure takes ``(dot, variables)``: ``variables`` is the render's list of variable slots,
slot 0 being ``$`` (the data passed to the template). The compiler gives each declared variable
its own slot, so scoping is settled when the template is parsed.

Go semantics (text/template, Go 1.23 and later):

* ``with``: the pipeline's value, when non-empty, becomes dot in the body; otherwise the
  ``else with`` branches are tried in turn, then ``else`` (dot unchanged there);
* ``range``: over an int ``n`` (n <= 0 runs ``else``), a list (elements in order) or a map
  (values in sorted key order); one variable gets the element (the int, the list element or the
  map value), two get index/key and element (an int cannot take two). Nil and empty collections
  run ``else``; anything else is an error "range can't iterate over ...";
* ``{{break}}`` / ``{{continue}}`` inside a range body end the loop / the iteration; what the
  body printed before them is kept. They raise :class:`Jump`, which carries that output up
  through the bodies around it (joined by :func:`jump_join`) to the range.

One deliberate difference: a render runs at most :data:`RANGE_BUDGET` range iterations in all
(slot 1 of the variables counts them down), so ``{{range .Index}}`` with a huge index is an
error, not a hang. Upstream's templates range over device and request counts far below it.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workloads.template.errors import Where
from workloads.template.operands import Getter
from workloads.template.values import go_format, truth

__all__ = ["BUDGET_SLOT", "RANGE_BUDGET", "Body", "Jump", "assign_closure", "jump_closure",
           "jump_join", "range_closure", "with_closure"]

RANGE_BUDGET = 1_000_000  # range iterations one render may run, over all its ranges
BUDGET_SLOT = 1  # the variables slot counting them down

Body = str | Callable[[Any, list[Any]], str]


class Jump(Exception):
    """{{break}} (``is_break``) or {{continue}}; ``partial`` is what was printed before it in
    the range body's current iteration."""

    def __init__(self, is_break: bool) -> None:
        super().__init__("break" if is_break else "continue")
        self.is_break = is_break
        self.partial = ""


def jump_closure(is_break: bool) -> Callable[[Any, list[Any]], str]:
    def jump(_dot: Any, _variables: list[Any]) -> str:
        raise Jump(is_break)

    return jump


def jump_join(parts: list[Any]) -> Callable[[Any, list[Any]], str]:
    """Parts rendered in order, like compile.join, keeping the output before a Jump."""

    def run_parts(dot: Any, variables: list[Any]) -> str:
        out: list[str] = []
        for part in parts:
            if part.__class__ is str:
                out.append(part)
                continue
            try:
                out.append(part(dot, variables))
            except Jump as jump:
                jump.partial = "".join(out) + jump.partial
                raise
        return "".join(out)

    return run_parts


def run_body(body: Body, dot: Any, variables: list[Any]) -> str:
    return body if body.__class__ is str else body(dot, variables)  # type: ignore[operator]


def assign_closure(slot: int, fn: Getter) -> Callable[[Any, list[Any]], str]:
    """``{{$x := pipeline}}`` / ``{{$x = pipeline}}``: sets the variable, prints nothing."""

    def assign(dot: Any, variables: list[Any]) -> str:
        variables[slot] = fn(dot, variables)
        return ""

    return assign


def with_closure(branches: list[tuple[Getter, int | None, Body]],
                 else_body: Body) -> Callable[[Any, list[Any]], str]:
    """``with`` / ``else with`` branches: (condition, variable slot or None, body)."""

    def run_with(dot: Any, variables: list[Any]) -> str:
        for cond, slot, body in branches:
            value = cond(dot, variables)
            if slot is not None:
                variables[slot] = value
            if truth(value):
                return run_body(body, value, variables)
        return run_body(else_body, dot, variables)

    return run_with


def _count(value: Any) -> int | None:
    """How many iterations range runs over ``value``; None when it cannot iterate over it."""
    if value is None:
        return 0
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return max(int(value), 0)
    if isinstance(value, (list, tuple, Mapping)):
        return len(value)
    return None


def _items(value: Any) -> Iterable[tuple[Any, Any]]:
    """(key, element) pairs range visits (``value`` is one _count accepts and non-empty)."""
    if isinstance(value, numbers.Integral):
        return ((i, i) for i in range(int(value)))
    if isinstance(value, Mapping):
        keys = sorted(value, key=lambda k: (not isinstance(k, str), k))
        return ((k, value[k]) for k in keys)
    return enumerate(value)


def range_closure(where: Where, off: int, fn: Getter, slots: tuple[int, ...], body: Body,
                  else_body: Body) -> Callable[[Any, list[Any]], str]:
    """``range`` with 0, 1 or 2 declared variables (their slots)."""

    def run_range(dot: Any, variables: list[Any]) -> str:
        value = fn(dot, variables)
        count = _count(value)
        if count is None:
            raise where.error(off, f"range can't iterate over {go_format(value)}")
        if not count:
            return run_body(else_body, dot, variables)
        if len(slots) == 2 and isinstance(value, numbers.Integral):
            raise where.error(
                off, f"can't use {value} to iterate over more than one variable")
        left = variables[BUDGET_SLOT] - count
        if left < 0:
            raise where.error(off, f"range over {count} items would exceed {RANGE_BUDGET} "
                                   "range iterations in one render")
        variables[BUDGET_SLOT] = left
        out = []
        for key, elem in _items(value):
            if len(slots) == 2:
                variables[slots[0]] = key
                variables[slots[1]] = elem
            elif slots:
                variables[slots[0]] = elem
            try:
                out.append(run_body(body, elem, variables))
            except Jump as jump:
                out.append(jump.partial)
                if jump.is_break:
                    break
        return "".join(out)

    return run_range
