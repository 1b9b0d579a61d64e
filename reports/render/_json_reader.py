"""Typed reading of decoded JSON: each getter checks one field and names it on failure.

``Obj(value, "results[3]")`` wraps an object; ``o.number("ci_low", nullable=True)`` returns the
float or raises :class:`Invalid` with the field path (``results[3].ci_low``) and the problem.
Keys never asked for come back from ``o.extra()`` (``o.closed()`` refuses them instead);
``int_`` and ``num`` check bare values (list items). Used by :mod:`reports.render.model`,
which adds the file name to the message.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

__all__ = ["Invalid", "Obj", "fail", "int_", "join", "kind_of", "num", "num_map", "str_list"]


class Invalid(Exception):
    """A field is missing or has the wrong type or value."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field_path
        self.problem = problem


def fail(field_path: str, problem: str) -> NoReturn:
    raise Invalid(field_path, problem)


def kind_of(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def join(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


class Obj:
    """A JSON object being read: typed getters; the keys nobody asked for become ``extra``.

    ``required=False``: an absent key gives the default; an explicit ``null`` is allowed only
    where ``nullable`` (optional numbers are always nullable).
    """

    def __init__(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            fail(path or "(top level)", f"expected an object, got {kind_of(value)}")
        self.data: dict[str, Any] = value
        self.path = path
        self.seen: set[str] = set()

    def at(self, key: str) -> str:
        return join(self.path, key)

    def raw(self, key: str, *, required: bool = True) -> Any:
        self.seen.add(key)
        if key not in self.data and required:
            fail(self.at(key), "missing")
        return self.data.get(key)

    def text(self, key: str, *, nullable: bool = False, required: bool = True,
             default: str | None = None) -> Any:
        value = self.raw(key, required=required)
        if key not in self.data:
            return default
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            fail(self.at(key), f"expected a string, got {kind_of(value)}")
        return value

    def flag(self, key: str, *, required: bool = True) -> bool:
        value = self.raw(key, required=required)
        if key not in self.data:
            return False
        if not isinstance(value, bool):
            fail(self.at(key), f"expected true or false, got {kind_of(value)}")
        return value

    def whole(self, key: str, *, required: bool = True, minimum: int | None = None) -> Any:
        return int_(self.raw(key, required=required), self.at(key), nullable=not required,
                    minimum=minimum)

    def number(self, key: str, *, nullable: bool = False, required: bool = True,
               positive: bool = False) -> Any:
        return num(self.raw(key, required=required), self.at(key),
                    nullable=nullable or not required, positive=positive)

    def choice(self, key: str, choices: tuple[str, ...]) -> Any:
        value = self.text(key)
        if value not in choices:
            fail(self.at(key), f"{value!r} is not one of {', '.join(map(repr, choices))}")
        return value

    def items(self, key: str, *, required: bool = True) -> list[Any]:
        value = self.raw(key, required=required)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            fail(self.at(key), f"expected a list, got {kind_of(value)}")
        return value

    def child(self, key: str) -> Obj:
        return Obj(self.raw(key), self.at(key))

    def optional_child(self, key: str) -> Obj | None:
        value = self.raw(key, required=False)
        return None if value is None else Obj(value, self.at(key))

    def extra(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.seen}

    def closed(self) -> dict[str, Any]:
        """For an object whose every key is known once read: the first key never asked for
        is refused (Invalid naming it); returns the (empty) extra."""
        for key in self.data:
            if key not in self.seen:
                fail(self.at(key), "unknown field (expected only "
                                   f"{', '.join(sorted(self.seen))})")
        return {}


def int_(value: object, path: str, *, nullable: bool = False,
         minimum: int | None = None) -> Any:
    if value is None and nullable:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        fail(path, f"expected a whole number, got {kind_of(value)}")
    if minimum is not None and value < minimum:
        fail(path, f"{value} is below the minimum {minimum}")
    return value


def num(value: object, path: str, *, nullable: bool = False, positive: bool = False) -> Any:
    """A finite float; None for null or NaN when ``nullable``."""
    if value is None and nullable:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        fail(path, f"expected a number, got {kind_of(value)}")
    number = float(value)
    if math.isnan(number):
        if nullable:
            return None
        fail(path, "NaN is not allowed here")
    if math.isinf(number):
        fail(path, f"{number} is not a finite number")
    if positive and number <= 0:
        fail(path, f"{number:g} is not positive")
    return number


def str_list(value: list[Any], path: str) -> tuple[str, ...]:
    for i, item in enumerate(value):
        if not isinstance(item, str):
            fail(join(path, i), f"expected a string, got {kind_of(item)}")
    return tuple(value)


def num_map(o: Obj, *, positive: bool = False) -> dict[str, float]:
    return {key: o.number(key, positive=positive) for key in o.data}
