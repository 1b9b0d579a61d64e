"""Operands of a command and the closures they compile to: a token stream over one action,
the parsed operand, and field-chain lookups (``.A.B``, ``$.A``, ``(x).A``) with located
errors naming the fields that exist."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workloads.template.errors import TemplateError, Where
from workloads.template.lex import Tok
from workloads.template.values import describe

__all__ = ["Getter", "Operand", "TokenStream", "field_getter", "identity", "variable"]

Getter = Callable[[Any, list[Any]], Any]  # (dot, variables) -> value; variables[0] is $


def identity(dot: Any, _vars: list[Any]) -> Any:
    return dot


def variable(slot: int) -> Getter:
    """The getter of the variable in ``slot`` (0: ``$``, the data passed to the template)."""

    def get_variable(_dot: Any, variables: list[Any]) -> Any:
        return variables[slot]

    return get_variable


class Operand:
    """One parsed operand of a command."""

    __slots__ = ("const", "fn", "kind", "name", "off", "text")

    def __init__(self, kind: str, off: int, text: str, *, fn: Getter | None = None,
                 name: str = "", const: tuple[Any, int | None] | None = None) -> None:
        self.kind = kind  # "ident" (function name), "const" (literal), "value" (anything else)
        self.off = off
        self.text = text
        self.fn = fn
        self.name = name
        self.const = const


class TokenStream:
    """The tokens of one action, read left to right."""

    __slots__ = ("i", "toks")

    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok


def field_getter(where: Where, base: Getter, prefix: str, names: tuple[str, ...],
                 off: int) -> Getter:
    """Field chain `names` looked up on base(data); prefix spells base in messages."""
    if not names:
        return base

    def fail(value: Any, depth: int) -> TemplateError:
        spelled_parent = prefix + "".join(f".{k}" for k in names[:depth])
        spelled = spelled_parent + f".{names[depth]}"
        if isinstance(value, Mapping):
            keys = sorted(k for k in value if isinstance(k, str))
            available = ", ".join(f"{spelled_parent}.{k}" for k in keys) or "none"
            return where.error(off, f"undefined field {spelled} (available: {available})")
        shown = spelled_parent or "."
        return where.error(
            off, f"can't evaluate field {spelled}: {shown} is {describe(value)}, not a map"
        )

    if len(names) == 1 and base is identity:
        key = names[0]

        def get_one(data: Any, variables: list[Any]) -> Any:
            try:
                return data[key]
            except Exception:
                raise fail(data, 0) from None

        def get_one_or_none(data: Any, variables: list[Any]) -> Any:
            if isinstance(data, Mapping) and key not in data:
                return None
            return get_one(data, variables)

        get_one.if_missing_false = get_one_or_none  # type: ignore[attr-defined]
        return get_one

    def get_chain(data: Any, variables: list[Any], missing_ok: bool = False) -> Any:
        value = base(data, variables)
        for depth, key in enumerate(names):
            if not isinstance(value, Mapping):
                raise fail(value, depth)
            if missing_ok and key not in value:
                return None
            try:
                value = value[key]
            except Exception:
                raise fail(value, depth) from None
        return value

    get_chain.if_missing_false = (  # type: ignore[attr-defined]
        lambda data, variables: get_chain(data, variables, True))
    return get_chain

