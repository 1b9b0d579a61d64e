"""A small typed reader over manifest dicts that knows its field path.

Every problem becomes a ``ManifestError`` naming the field path; unknown keys are errors,
real Kubernetes keys that the core does not model are collected as warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scheduler_core.api.quantity import Quantity, parse_quantity
from scheduler_core.errors import ManifestError

__all__ = ["Fields", "object_key"]


class Fields:
    """A mapping at ``path`` inside an object's manifest."""

    __slots__ = ("_data", "_replaced", "obj", "path", "warnings")

    def __init__(self, data: Any, path: str, obj: str, warnings: list[str] | None = None,
                 replaced: Callable[[dict[str, Any]], None] | None = None) -> None:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ManifestError(f"expected a mapping, got {_kind(data)}", field=path, obj=obj)
        self._data: dict[str, Any] = data
        # told of a renamed copy of this mapping, to put it in a copy of its parent: ``data``
        # of the root then holds the manifest with every key as read, the input untouched
        self._replaced = replaced
        self.path = path
        self.obj = obj
        self.warnings = warnings if warnings is not None else []

    def _replace(self, data: dict[str, Any]) -> None:
        self._data = data
        if self._replaced is not None:
            self._replaced(data)

    def _replace_key(self, key: str, value: Any) -> None:
        self._replace({**self._data, key: value})

    def _replace_item(self, key: str, index: int, value: Any) -> None:
        items = list(self._data[key])
        items[index] = value
        self._replace_key(key, items)

    # -- structure -------------------------------------------------------------------------
    def field(self, key: str) -> str:
        # str(): YAML can give non-string keys ({1: x}) and messages are joined as text
        return f"{self.path}.{key}" if self.path else str(key)

    def error(self, key: str, problem: str) -> ManifestError:
        return ManifestError(problem, field=self.field(key), obj=self.obj)

    def check_keys(self, modelled: Iterable[str], ignored: Iterable[str] = ()) -> None:
        """Unknown keys raise; real-but-unmodelled keys become warnings."""
        modelled_set = set(modelled)
        ignored_set = set(ignored)
        folded = {k.lower(): k for k in modelled_set | ignored_set}
        for key in list(self._data):
            if key in modelled_set:
                continue
            canonical_key = folded.get(key.lower()) if isinstance(key, str) else None
            if canonical_key is not None and canonical_key not in self._data:
                # Go's JSON decoding (used by Kubernetes clients) matches names case-insensitively
                self._replace({canonical_key if k == key else k: v
                               for k, v in self._data.items()})
                self.warnings.append(f"{self.obj}: {self.field(key)}: read as {canonical_key}")
                if canonical_key in modelled_set:
                    continue
                key = canonical_key
            if key in ignored_set:
                self.warnings.append(f"{self.obj}: {self.field(key)}: ignored (not modelled)")
                continue
            expected = ", ".join(sorted(modelled_set | ignored_set))
            raise self.error(key, f"unknown field (expected one of: {expected})")

    @property
    def data(self) -> dict[str, Any]:
        """The mapping, with keys as ``check_keys`` read them."""
        return self._data

    def has(self, key: str) -> bool:
        return self._data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self._data.get(key)

    def sub(self, key: str) -> Fields:
        return Fields(self._data.get(key), self.field(key), self.obj, self.warnings,
                      lambda d: self._replace_key(key, d))

    def items(self, key: str) -> Iterator[tuple[str, Fields]]:
        """Each element of a list of mappings, with its indexed path."""
        for i, item in enumerate(self.list(key)):
            yield f"{self.field(key)}[{i}]", Fields(
                item, f"{self.field(key)}[{i}]", self.obj, self.warnings,
                lambda d, i=i: self._replace_item(key, i, d))

    # -- scalars ---------------------------------------------------------------------------
    def str(self, key: str, default: str = "", *, required: bool = False) -> str:
        value = self._data.get(key)
        if value is None:
            if required:
                raise self.error(key, "required field is missing")
            return default
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {_kind(value)}")
        return value

    def int(
        self, key: str, default: int | None = None, *, minimum: int | None = None
    ) -> int | None:
        value = self._data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {_kind(value)}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be >= {minimum}, got {value}")
        return value

    def bool(self, key: str, default: bool = False) -> bool:
        value = self._data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {_kind(value)}")
        return value

    def enum(self, key: str, allowed: tuple[str, ...], default: str = "") -> str:
        value = self.str(key, default)
        if value not in allowed and not (value == default and default == ""):
            raise self.error(key, f'unsupported value "{value}" (expected one of: '
                             f'{", ".join(allowed)})')
        return value

    # -- collections -----------------------------------------------------------------------
    def list(self, key: str) -> list[Any]:
        value = self._data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {_kind(value)}")
        return value

    def str_list(self, key: str) -> list[str]:
        values = self.list(key)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise ManifestError(f"expected a string, got {_kind(v)}",
                                    field=f"{self.field(key)}[{i}]", obj=self.obj)
        return values

    def str_map(self, key: str) -> dict[str, str]:
        value = self._data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping of strings, got {_kind(value)}")
        out: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise self.error(key, f"expected string keys, got {_kind(k)}")
            if isinstance(v, bool) or v is None or not isinstance(v, (str, int, float)):
                raise ManifestError(f"expected a string value, got {_kind(v)}",
                                    field=f"{self.field(key)}.{k}", obj=self.obj)
            if not isinstance(v, str):
                raise ManifestError(f"expected a string value, got {_kind(v)} (quote it)",
                                    field=f"{self.field(key)}.{k}", obj=self.obj)
            out[k] = v
        return out

    def quantity_map(self, key: str) -> dict[str, Quantity]:
        value = self._data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping of quantities, got {_kind(value)}")
        out: dict[str, Quantity] = {}
        for name, raw in value.items():
            if not isinstance(name, str):
                raise self.error(key, f"expected resource names as keys, got {_kind(name)}")
            field = f"{self.field(key)}.{name}"
            try:
                q = parse_quantity(raw)
            except ValueError as exc:
                raise ManifestError(str(exc), field=field, obj=self.obj) from None
            if q.exact < 0:
                raise ManifestError(f'must be non-negative, got "{raw}"', field=field,
                                    obj=self.obj)
            out[name] = q
        return out


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f'a string ("{value}")'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def object_key(data: Any, default_namespace: str | None = None, *,
               cluster_scoped: bool = False) -> str:
    """``namespace/name`` (or ``name``) of a manifest, as well as can be read, for messages.

    A cluster-scoped object (Node, Namespace, PriorityClass) is named without a namespace even
    when its metadata has one (the API server drops it).
    """
    meta = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        meta = {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    ns = None if cluster_scoped else (meta.get("namespace") or default_namespace)
    return f"{ns}/{name}" if ns else str(name)
