"""Go values as text/template sees them: printing after Go's ``fmt`` ``%v``, Go type names
for messages, and text/template's notion of "empty" (truth)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["describe", "go_float", "go_format", "go_str", "go_type", "truth"]


def go_float(f: float) -> str:
    """float64 as Go's %v prints it (strconv 'g' with the shortest precision).

    The shortest digits that read back as the same float; exponent form when the decimal
    exponent is below -4 or at least 6 (so ``100000`` but ``1e+06``, ``0.0001`` but ``1e-05``),
    with a sign and at least two exponent digits.
    """
    if f != f:
        return "NaN"
    if f in (math.inf, -math.inf):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0"
    dec = Decimal(repr(abs(f))).normalize()  # repr is the shortest round-trip form, as in Go
    _, digit_tuple, exponent = dec.as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # decimal point position relative to the digits
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_format(v: Any, nested: bool = False) -> str:
    if v is None:
        return "<nil>" if nested else "<no value>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return go_float(float(v))
    if isinstance(v, Mapping):
        keys = sorted(v, key=lambda k: (not isinstance(k, str), str(k)))
        inner = " ".join(f"{go_format(k, True)}:{go_format(v[k], True)}" for k in keys)
        return f"map[{inner}]"
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(go_format(x, True) for x in v) + "]"
    return str(v)


def go_str(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is int:
        return str(v)
    return go_format(v)


def go_type(v: Any) -> str:
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, Mapping):
        return "map"
    if isinstance(v, (list, tuple)):
        return "slice"
    return type(v).__name__


def describe(v: Any) -> str:
    """``float64 2.5``, ``string "x"``: a value with its Go type, for messages."""
    text = f'"{v}"' if isinstance(v, str) else go_format(v)
    return f"{go_type(v)} {text}"


def truth(v: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings/collections are false."""
    if v is None:
        return False
    if isinstance(v, (bool, numbers.Number, str, Mapping, list, tuple)):
        return bool(v)
    return True

