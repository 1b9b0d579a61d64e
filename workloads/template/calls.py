"""Compiling function calls: arity and argument-type checks at parse time, and the closures
that evaluate the arguments and call the function (lazily for ``and`` / ``or``)."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from workloads.template.errors import TemplateError, Where
from workloads.template.funcs import Func
from workloads.template.operands import Getter, Operand
from workloads.template.values import describe, truth

__all__ = ["CallCompiler"]


class CallCompiler:
    """Compiles ``name arg...`` (with an optional piped value) into a closure."""

    def __init__(self, where: Where, funcs: Mapping[str, Func],
                 user_funcs: Mapping[str, Callable[..., Any]]) -> None:
        self.where = where
        self.funcs = funcs
        self.user_funcs = user_funcs

    def err(self, off: int, problem: str) -> TemplateError:
        return self.where.error(off, problem)

    def call(self, ident: Operand, args: list[Operand], piped: Getter | None) -> Getter:
        name, off = ident.name, ident.off
        spec = self.funcs[name]
        count = len(args) + (piped is not None)
        if name in self.user_funcs:
            self._check_user_arity(name, self.user_funcs[name], count, off)
        elif count < spec.min_args or (spec.max_args is not None and count > spec.max_args):
            if spec.max_args is None:
                want = f"at least {spec.min_args}"
            else:
                want = str(spec.max_args)
            raise self.err(off, f"wrong number of arguments for {name}: want {want}, got {count}")
        fns: list[Getter] = []
        for index, arg in enumerate(args, start=1):
            if arg.kind == "ident":
                fn = self.call(arg, [], None)
            elif arg.kind == "const" and spec.int_args:
                fn = self._int_const(name, index, arg)
            else:
                assert arg.fn is not None
                fn = arg.fn
            if spec.int_args and arg.kind != "const":
                fn = self._int_checked(name, index, arg.off, fn)
            fns.append(fn)
        if piped is not None:
            fns.append(self._int_checked(name, count, off, piped) if spec.int_args else piped)
        if spec.lazy:
            return self._lazy(spec.lazy, fns)
        return self._invoke(name, spec.impl, fns, off)

    def _check_user_arity(self, name: str, fn: Callable[..., Any], count: int, off: int) -> None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return
        try:
            sig.bind(*range(count))
        except TypeError:
            raise self.err(
                off, f"wrong number of arguments for {name}: {count} do not fit {name}{sig}"
            ) from None

    def _int_const(self, name: str, index: int, arg: Operand) -> Getter:
        assert arg.const is not None
        value, as_int = arg.const
        if as_int is None or isinstance(value, bool):
            raise self.err(arg.off, f"wrong type for argument {index} of {name}: "
                                    f"want int, got {describe(value)}")
        return lambda _dot, _vars: as_int

    def _int_checked(self, name: str, index: int, off: int, fn: Getter) -> Getter:
        where = self.where

        def checked(data: Any, variables: list[Any]) -> int:
            v = fn(data, variables)
            if v.__class__ is int:
                return v
            if isinstance(v, numbers.Integral) and not isinstance(v, bool):
                return int(v)
            raise where.error(
                off, f"wrong type for argument {index} of {name}: want int, got {describe(v)}"
            )

        return checked

    def _invoke(self, name: str, impl: Callable[..., Any], fns: list[Getter],
                off: int) -> Getter:
        where = self.where

        def fail(exc: Exception) -> TemplateError:
            return where.error(off, f"error calling {name}: {exc}")

        if len(fns) == 2:
            a, b = fns

            def call2(data: Any, variables: list[Any]) -> Any:
                x, y = a(data, variables), b(data, variables)
                try:
                    return impl(x, y)
                except TemplateError:
                    raise
                except Exception as exc:
                    raise fail(exc) from exc

            return call2

        def call(data: Any, variables: list[Any]) -> Any:
            values = [f(data, variables) for f in fns]
            try:
                return impl(*values)
            except TemplateError:
                raise
            except Exception as exc:
                raise fail(exc) from exc

        return call

    @staticmethod
    def _lazy(op: str, fns: list[Getter]) -> Getter:
        """Go's and/or: the first argument that decides (empty / non-empty), else the last."""
        stop_on = op == "or"

        # Go: a missing map key is "no value", which and/or take as empty (``or .n 10``)
        fns = [getattr(f, "if_missing_false", f) for f in fns]

        def run(data: Any, variables: list[Any]) -> Any:
            value = None
            for f in fns:
                value = f(data, variables)
                if truth(value) == stop_on:
                    return value
            return value

        return run


