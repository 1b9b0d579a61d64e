"""Kubernetes resource quantities, exact to the milli-unit.

Grammar (k8s.io/apimachinery resource.Quantity)::

    quantity  ::= signedNumber suffix
    suffix    ::= binarySI | decimalExponent | decimalSI
    binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
    decimalSI ::= m | "" | k | M | G | T | P | E
    decimalExponent ::= ("e" | "E") signedNumber

Values are held as exact fractions; ``milli_value`` and ``value`` round up as
``Quantity.MilliValue()`` and ``Quantity.Value()`` do.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["INT64_MAX", "Quantity", "parse_quantity"]

INT64_MAX = 2**63 - 1

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# ASCII digits only: Go's parser accepts '0'-'9'; Python's \d also takes non-ASCII digits.
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_RE = re.compile(
    rf"^(?P<num>{_NUMBER})"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exp>[+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)
_MAX_EXPONENT = 1000  # guards against "1e999999999" eating memory


class Quantity:
    """An exact resource quantity. Immutable; compares by value."""

    __slots__ = ("_text", "_value")

    def __init__(self, value: Fraction | int, text: str | None = None) -> None:
        self._value = Fraction(value)
        self._text = text if text is not None else str(value)

    @property
    def exact(self) -> Fraction:
        return self._value

    @property
    def milli_value(self) -> int:
        """The value in thousandths, rounded up (``MilliValue``)."""
        return math.ceil(self._value * 1000)

    @property
    def value(self) -> int:
        """The value in whole units, rounded up (``Value``)."""
        return math.ceil(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self._value == other._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Quantity({self._text!r})"

    def __str__(self) -> str:
        return self._text


def parse_quantity(raw: object) -> Quantity:
    """Parse ``"100m"``, ``"0.5"``, ``"500Mi"``, ``"1e3"``, ``"12E"`` or an int/float.

    Raises ``ValueError('invalid quantity "<raw>"')`` for anything else.
    """
    if isinstance(raw, bool):
        raise ValueError(f"invalid quantity {raw!r}: expected a string or number")
    if isinstance(raw, int):
        return Quantity(raw, str(raw))
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise ValueError(f'invalid quantity "{raw}"')
        return Quantity(Fraction(repr(raw)), repr(raw))
    if not isinstance(raw, str):
        raise ValueError(f"invalid quantity {raw!r}: expected a string or number")
    text = raw.strip()
    m = _RE.match(text)
    if m is None:
        raise ValueError(f'invalid quantity "{raw}"')
    number = Fraction(m.group("num"))
    if m.group("bin") is not None:
        value = number * _BINARY[m.group("bin")]
    elif m.group("exp") is not None:
        exp = int(m.group("exp"))
        if abs(exp) > _MAX_EXPONENT:
            raise ValueError(f'invalid quantity "{raw}": exponent out of range')
        value = number * Fraction(10) ** exp
    else:
        value = number * _DECIMAL[m.group("dec") or ""]
    return Quantity(value, text)
