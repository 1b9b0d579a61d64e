"""Decoding helpers that mimic Go's strict JSON decoding of scheduler_perf structs.

* :class:`Fields` reads one YAML mapping into typed values. Keys match field names
  case-insensitively (Go structs without json tags), every key not asked for is an
  ``unknown field`` error, YAML ``null`` leaves the zero value, and a wrong type is an error.
* :func:`parse_go_duration` is Go's ``time.ParseDuration`` (returns seconds).
* :class:`FrozenDict` is the immutable mapping used in the config dataclasses.

Errors are not raised here: they are recorded in an :class:`Issues` list so that one pass can
report every problem of a file.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from scheduler_core.api.duration import MAX_DURATION_NS, parse_go_duration, parse_go_duration_ns
from scheduler_core.inputfile import InputFileError, check_file
from workloads.config.errors import ConfigFileError
from workloads.config.yaml_lines import LineDict, LineList, plain

__all__ = [
    "EMPTY",
    "MAX_DURATION_NS",
    "Fields",
    "FrozenDict",
    "Issues",
    "Scope",
    "go_type_name",
    "parse_go_duration",
    "parse_go_duration_ns",
]

K = TypeVar("K")
V = TypeVar("V")



class FrozenDict(Mapping[K, V]):
    """A read-only dict. Equal to any mapping with the same items; hashable if its values are."""

    __slots__ = ("_d", "_hash")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._d: dict[K, V] = dict(*args, **kwargs)
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._d.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._d == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"


EMPTY: FrozenDict[Any, Any] = FrozenDict()

# --------------------------------------------------------------------------- issues and scope


class Issues:
    """Every ConfigFileError found in one file, in the order found."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.errors: list[ConfigFileError] = []

    def add(self, problem: str, *, line: int | None = None, test_case: str | None = None,
            workload: str | None = None, yaml_path: str = "") -> None:
        self.errors.append(ConfigFileError(
            problem, path=self.source, line=line, test_case=test_case, workload=workload,
            yaml_path=yaml_path))


@dataclass
class Scope:
    """Where decoding is: the file's issues, the test case and workload names, the config dir."""

    issues: Issues
    base_dir: Path
    test_case: str | None = None
    workload: str | None = None
    failed: bool = field(default=False)

    def error(self, yaml_path: str, problem: str, line: int | None) -> None:
        self.failed = True
        self.issues.add(problem, line=line, test_case=self.test_case, workload=self.workload,
                        yaml_path=yaml_path)


def go_type_name(value: Any) -> str:
    """How a YAML value looks to Go's JSON decoder, for error messages."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return go_type_name(value)
    return str(value)


def _coerced_str(value: Any) -> str | None:
    """sigs.k8s.io/yaml turns YAML numbers/bools into strings for Go string fields."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    return None


class Fields:
    """Typed, strict access to the keys of one YAML mapping.

    Every getter records its field as known, whether present or not; :meth:`finish` then reports
    every other key as ``unknown field``. ``coerce`` turns numbers/bools into strings for string
    fields (what sigs.k8s.io/yaml does for typed structs; not inside ops, which Go decodes
    itself).
    """

    def __init__(self, scope: Scope, node: LineDict, yaml_path: str, *,
                 coerce: bool = False) -> None:
        self.scope = scope
        self.node = node
        self.yaml_path = yaml_path
        self.coerce = coerce
        self.line = node.line
        self._by_fold: dict[str, str] = {}
        self._asked: list[str] = []
        self._used: set[str] = set()
        self.lines: dict[str, int] = {}
        for key in node:
            fold = key.lower()
            if fold in self._by_fold:
                self.error(key, f'field "{key}" is given twice (also as "{self._by_fold[fold]}")',
                           node.key_lines.get(key))
                self._used.add(key)
            else:
                self._by_fold[fold] = key

    # -- plumbing

    def path(self, key: str) -> str:
        return f"{self.yaml_path}.{key}" if self.yaml_path else key

    def error(self, key: str | None, problem: str, line: int | None = None) -> None:
        """Record a problem with field ``key`` (None: with the mapping itself)."""
        if key is None:
            self.scope.error(self.yaml_path, problem, self.line if line is None else line)
            return
        if line is None:
            line = self.lines.get(key) or self.node.key_lines.get(key) or self.line
        self.scope.error(self.path(key), problem, line)

    def key_of(self, name: str) -> str:
        """The key as written in the file for field ``name`` (``name`` if absent)."""
        return self._by_fold.get(name.lower(), name)

    def raw(self, name: str) -> tuple[bool, Any]:
        """(present and not null, value) for field ``name``; marks the field as known."""
        self._asked.append(name)
        key = self._by_fold.get(name.lower())
        if key is None:
            return False, None
        self._used.add(key)
        self.lines[name] = self.node.key_lines.get(key, self.line)
        value = self.node[key]
        return value is not None, value

    def _bad(self, name: str, what: str, value: Any) -> None:
        self.error(self.key_of(name), f"expected {what}, got {go_type_name(value)} "
                   f"{_show(value)}", self.lines.get(name))

    # -- scalars

    def string(self, name: str, default: str = "") -> str:
        present, value = self.raw(name)
        if not present:
            return default
        text = _coerced_str(value) if self.coerce else value
        if not isinstance(text, str):
            self._bad(name, "a string", value)
            return default
        return text

    def opt_string(self, name: str) -> str | None:
        present, _ = self.raw(name)
        self._asked.pop()
        return self.string(name) if present else None

    def integer(self, name: str, default: int = 0) -> int:
        present, value = self.raw(name)
        if not present:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                isinstance(value, float) and not value.is_integer()):
            self._bad(name, "an integer", value)
            return default
        if not -(2**63) <= int(value) <= 2**63 - 1:
            self._bad(name, "an integer within 64 bits (upstream's int)", value)
            return default
        return int(value)

    def opt_integer(self, name: str) -> int | None:
        present, _ = self.raw(name)
        self._asked.pop()
        return self.integer(name) if present else None

    def number(self, name: str, default: float = 0.0) -> float:
        present, value = self.raw(name)
        if not present:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._bad(name, "a number", value)
            return default
        return float(value)

    def boolean(self, name: str, default: bool = False) -> bool:
        present, value = self.raw(name)
        if not present:
            return default
        if not isinstance(value, bool):
            self._bad(name, "true or false", value)
            return default
        return value

    def duration(self, name: str) -> float:
        """A metav1.Duration field: a Go duration string, in seconds."""
        text = self.string(name)
        if not text:
            return 0.0
        try:
            return parse_go_duration(text)
        except ValueError as err:
            self.error(self.key_of(name), str(err))
            return 0.0

    def param(self, name: str) -> str:
        """A ``...Param`` field: empty or ``$name``."""
        ref = self.string(name)
        if ref and (not ref.startswith("$") or len(ref) == 1):
            self.error(self.key_of(name),
                       f'must name a workload parameter as "$name", got "{ref}"')
            return ""
        return ref

    # -- collections

    def str_list(self, name: str) -> tuple[str, ...]:
        present, value = self.raw(name)
        if not present:
            return ()
        if not isinstance(value, list):
            self._bad(name, "a list of strings", value)
            return ()
        out = []
        for i, item in enumerate(value):
            text = _coerced_str(item) if self.coerce else item
            if not isinstance(text, str):
                line = value.item_lines[i] if isinstance(value, LineList) else None
                self.error(f"{self.key_of(name)}[{i}]",
                           f"expected a string, got {go_type_name(item)} {_show(item)}", line)
                continue
            out.append(text)
        return tuple(out)

    def mapping(self, name: str) -> LineDict | None:
        """The raw mapping under ``name`` (None if absent/null or not a mapping)."""
        present, value = self.raw(name)
        if not present:
            return None
        if not isinstance(value, dict):
            self._bad(name, "a mapping", value)
            return None
        return value

    def _typed_map(self, name: str, check: Any, what: str) -> FrozenDict[str, Any]:
        node = self.mapping(name)
        if node is None:
            return EMPTY
        out: dict[str, Any] = {}
        for key, value in node.items():
            converted = check(value)
            if converted is None:
                line = node.value_lines.get(key) if isinstance(node, LineDict) else None
                self.error(f"{self.key_of(name)}.{key}",
                           f"expected {what}, got {go_type_name(value)} {_show(value)}", line)
                continue
            out[key] = converted
        return FrozenDict(out)

    def str_map(self, name: str) -> FrozenDict[str, str]:
        def check(v: Any) -> str | None:
            return _coerced_str(v) if self.coerce else (v if isinstance(v, str) else None)
        return self._typed_map(name, check, "a string")

    def bool_map(self, name: str) -> FrozenDict[str, bool]:
        return self._typed_map(name, lambda v: v if isinstance(v, bool) else None,
                               "true or false")

    def any_map(self, name: str) -> FrozenDict[str, Any]:
        node = self.mapping(name)
        return EMPTY if node is None else FrozenDict(plain(node))

    def sub(self, name: str, *, coerce: bool | None = None) -> Fields | None:
        """Fields of the nested struct under ``name`` (None if absent/null)."""
        node = self.mapping(name)
        if node is None:
            return None
        return Fields(self.scope, node, self.path(self.key_of(name)),
                      coerce=self.coerce if coerce is None else coerce)

    # -- files

    def file(self, name: str) -> Path | None:
        """A path relative to the config file's folder; it must name an existing file."""
        text = self.opt_string(name)
        if text is None:
            return None
        return self.check_file(self.key_of(name), text, self.lines.get(name))

    def check_file(self, key: str, text: str, line: int | None) -> Path | None:
        if not text:
            self.error(key, "must not be empty", line)
            return None
        try:
            resolved = (self.scope.base_dir / text).resolve()
        except (OSError, RuntimeError, ValueError):  # a symlink loop (RuntimeError in 3.11)
            resolved = Path(os.path.abspath(self.scope.base_dir / text))
        try:
            check_file(resolved, what="a file", limit=0)  # its size is checked when read
        except InputFileError as exc:
            if exc.problem.startswith("no such file"):
                self.error(key, f'file "{text}" does not exist (looked for {resolved})', line)
            else:
                self.error(key, f'file "{text}" ({resolved}): {exc.problem}', line)
        return resolved

    def file_list(self, name: str) -> tuple[Path, ...]:
        texts = self.str_list(name)
        value = self.node.get(self.key_of(name))
        out = []
        for i, text in enumerate(texts):
            line = value.item_lines[i] if isinstance(value, LineList) else None
            path = self.check_file(f"{self.key_of(name)}[{i}]", text, line)
            if path is not None:
                out.append(path)
        return tuple(out)

    # -- end

    def finish(self) -> None:
        """Report every key that no getter asked for as an unknown field."""
        known = list(dict.fromkeys(self._asked))
        for key in self.node:
            if key in self._used:
                continue
            hint = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            if not hint:
                folded = {k.lower(): k for k in known}
                hint = [folded[m] for m in difflib.get_close_matches(
                    key.lower(), list(folded), n=1, cutoff=0.6)]
            extra = f' (did you mean "{hint[0]}"?)' if hint else ""
            self.error(key, f'unknown field "{key}"{extra}', self.node.key_lines.get(key))
