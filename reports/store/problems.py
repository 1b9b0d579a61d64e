"""What can be wrong with an input file or the store, and typed access to JSON fields that
says exactly what is wrong (``dataItems[2].data.Average: expected a number, got a string``).

    Malformed   an input file cannot be ingested (the ingest names the file and skips it)
    StoreError  the store itself is unusable (bad bookkeeping file); ends the command
"""

from __future__ import annotations

from typing import Any

__all__ = ["Malformed", "StoreError", "describe", "field", "number", "optional_field"]


class Malformed(Exception):
    """An input file cannot be ingested; ``str()`` says what is wrong (without the path)."""


class StoreError(Exception):
    """The store cannot be used as it is (e.g. its bookkeeping file is corrupt)."""


def describe(value: Any) -> str:
    """JSON type of ``value`` in words: ``null``, ``true/false``, ``a number``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_EXPECTED = {"object": dict, "list": list, "string": str, "number": (int, float),
             "int": int}
_WORDS = {"object": "an object", "list": "a list", "string": "a string",
          "number": "a number", "int": "an integer"}


def _check(value: Any, kind: str, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, _EXPECTED[kind]):
        raise Malformed(f"{where}: expected {_WORDS[kind]}, got {describe(value)}")
    return value


def field(obj: dict[str, Any], key: str, kind: str, where: str = "",
          *, nullable: bool = False) -> Any:
    """``obj[key]``, which must exist and be of ``kind`` (object, list, string, number,
    int), or null when ``nullable``."""
    path = f"{where}.{key}" if where else key
    if key not in obj:
        raise Malformed(f"missing key {path!r}")
    value = obj[key]
    if value is None and nullable:
        return None
    return _check(value, kind, path)


def optional_field(obj: dict[str, Any], key: str, kind: str, where: str = "") -> Any:
    """``obj[key]`` of ``kind``, or None when absent or null."""
    if obj.get(key) is None:
        return None
    return field(obj, key, kind, where)


def number(value: Any, where: str, *, nullable: bool = False) -> float | None:
    """A JSON number as float (NaN/Infinity allowed: asv writes them); bools are not numbers."""
    if value is None and nullable:
        return None
    return float(_check(value, "number", where))
