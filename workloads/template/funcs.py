"""The functions a template may call: scheduler_perf's two function maps and the Go
text/template builtins (``and or not eq ne lt le gt ge``)."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workloads.template.errors import CallError
from workloads.template.lex import SPACE
from workloads.template.values import describe, go_float, go_type, truth

__all__ = ["BUILTINS", "Func", "user_func"]


def _go_div(a: int, b: int) -> int:
    """Go integer division: truncates toward zero."""
    if b == 0:
        raise CallError("integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _go_mod(a: int, b: int) -> int:
    """Go %: the result has the sign of the dividend."""
    if b == 0:
        raise CallError("integer divide by zero")
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _parse_go_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64), closely enough: no spaces, underscores only with a prefix."""
    if not s or any(c in SPACE for c in s):
        return None
    body = s.lstrip("+-")
    if body[:2].lower() == "0x":
        try:
            f = float.fromhex(s.replace("_", ""))
        except ValueError:
            return None
        return f
    if "_" in s:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _to_float(v: Any) -> float:
    """Upstream's toFloat64: numbers and numeric strings; anything else cannot be cast."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v)
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        f = _parse_go_float(v)
        if f is not None:
            return f
    raise CallError(f"cannot cast {describe(v)} to float64")


def _float_to_int(f: float) -> int:
    """Go's int(f): truncates toward zero. NaN and infinities have no int value."""
    if f != f or f in (math.inf, -math.inf):
        raise CallError(f"cannot convert {go_float(f)} to int")
    return int(f)


def _add_float(*nums: Any) -> float:
    total = 0.0
    for x in nums:  # sequential like Go, not math.fsum
        total += _to_float(x)
    return total


def _multiply_float(*nums: Any) -> float:
    product = 1.0
    for x in nums:
        product *= _to_float(x)
    return product


def _subtract_float(a: Any, b: Any) -> float:
    return _to_float(a) - _to_float(b)


def _divide_float(a: Any, b: Any) -> float:
    x, y = _to_float(a), _to_float(b)
    if y == 0:
        raise CallError("division by zero")
    return x / y


def _mod_any(a: Any, b: Any) -> int:
    return _go_mod(_float_to_int(_to_float(a)), _float_to_int(_to_float(b)))


def _int(v: Any) -> int:
    """``Int``: a number (or numeric string) as an int, truncated toward zero."""
    if isinstance(v, bool):
        raise CallError(f"cannot convert {describe(v)} to int")
    if isinstance(v, numbers.Integral):
        return int(v)
    return _float_to_int(_to_float(v))


def _go_json_default(v: Any) -> Any:
    raise CallError(f"cannot encode {describe(v)} as JSON")


def _go_json_floats(v: Any) -> Any:
    """Integral floats as ints (Go's encoding/json prints float64 2 as ``2``)."""
    if isinstance(v, float):
        if not math.isfinite(v):
            raise CallError(f"json: unsupported value: {go_float(v)}")
        return int(v) if v.is_integer() and abs(v) < 1e21 else v
    if isinstance(v, dict):
        return {k: _go_json_floats(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_go_json_floats(x) for x in v]
    return v


def _json(v: Any) -> str:
    """``JSON``: Go's json.Marshal of the value: compact, map keys sorted, ``<``, ``>``,
    ``&``, U+2028 and U+2029 escaped; nil is ``null``."""
    text = json.dumps(_go_json_floats(v), separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False, default=_go_json_default)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                     ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, esc)
    return text


def _kind(v: Any) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    if isinstance(v, str):
        return "string"
    return None


def _eq(a: Any, *others: Any) -> bool:
    ka = _kind(a)
    for b in others:
        kb = _kind(b)
        if ka is None or kb is None:
            if a is None and b is None:
                return True
            raise CallError(f"cannot compare {go_type(a)} with {go_type(b)}")
        if ka != kb:
            raise CallError(f"incompatible types for comparison: {go_type(a)} and {go_type(b)}")
        if a == b:
            return True
    return False


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _lt(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka not in ("int", "float", "string") or kb not in ("int", "float", "string"):
        raise CallError(f"cannot order {go_type(a)} and {go_type(b)}")
    if ka != kb:
        raise CallError(f"incompatible types for comparison: {go_type(a)} and {go_type(b)}")
    return bool(a < b)


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


def _gt(a: Any, b: Any) -> bool:
    return not _le(a, b)


def _ge(a: Any, b: Any) -> bool:
    return not _lt(a, b)


def _not(a: Any) -> bool:
    return not truth(a)


@dataclass(frozen=True, slots=True)
class Func:
    impl: Callable[..., Any]
    min_args: int
    max_args: int | None  # None: variadic
    int_args: bool = False  # Go int parameters: only ints are accepted
    lazy: str = ""  # "and" / "or": arguments evaluated only as far as needed


BUILTINS: dict[str, Func] = {
    # scheduler_perf, older function map
    "mod": Func(_go_mod, 2, 2, int_args=True),
    "div": Func(_go_div, 2, 2, int_args=True),
    # scheduler_perf, newer function map (numbers go through float64)
    "AddInt": Func(lambda *a: _float_to_int(_add_float(*a)), 0, None),
    "SubtractInt": Func(lambda a, b: _float_to_int(_subtract_float(a, b)), 2, 2),
    "MultiplyInt": Func(lambda *a: _float_to_int(_multiply_float(*a)), 0, None),
    "DivideInt": Func(lambda a, b: _float_to_int(_divide_float(a, b)), 2, 2),
    "Mod": Func(_mod_any, 2, 2),
    "AddFloat": Func(_add_float, 0, None),
    "SubtractFloat": Func(_subtract_float, 2, 2),
    "MultiplyFloat": Func(_multiply_float, 0, None),
    "DivideFloat": Func(_divide_float, 2, 2),
    "Int": Func(_int, 1, 1),
    "JSON": Func(_json, 1, 1),
    # Go text/template builtins
    "and": Func(lambda *a: a[-1], 1, None, lazy="and"),
    "or": Func(lambda *a: a[-1], 1, None, lazy="or"),
    "not": Func(_not, 1, 1),
    "eq": Func(_eq, 2, None),
    "ne": Func(_ne, 2, 2),
    "lt": Func(_lt, 2, 2),
    "le": Func(_le, 2, 2),
    "gt": Func(_gt, 2, 2),
    "ge": Func(_ge, 2, 2),
}


def user_func(fn: Callable[..., Any]) -> Func:
    return Func(fn, 0, None)

