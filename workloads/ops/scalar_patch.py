"""Re-using one parse of a rendered template for the objects whose rendering differs from it only
in plain scalar values.

A templated object (a pod naming its PodGroup by index, a node with an indexed label) renders to
text that differs from object to object in a few values on a few lines. PyYAML's constructors
are the larger part of creating such an object, so :class:`ScalarPatch` keeps the first
rendering's lines and parsed data, and for a later rendering with the same lines but for values
of ``key: value`` lines (a plain, one-line scalar, nothing after it) returns a copy of the data
with those values replaced, each value resolved by PyYAML itself (so ``true``, ``012``, ``1e3``,
``null`` and dates mean what they mean in a full parse). Anything else — a different number of
lines, a changed key or indentation, a quoted, flow or block value, an ``a: b`` or ``# x`` value,
anchors and aliases anywhere in the document — gives None, and the caller parses the text in
full, which stays the one source of truth and of error messages.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["ScalarPatch"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
# a plain scalar's style: None from the Python parser, "" from libyaml's
# a plain scalar that starts with one of these, or contains ": " or " #", may not be one
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")

Path = tuple[Any, ...]


class ScalarPatch:
    """The first rendering of a template, and where its one-line plain scalar values are."""

    def __init__(self, text: str, data: Any) -> None:
        self.lines = text.split("\n")
        self.data = data
        # line -> (path of keys to the value, column where the value starts)
        self.slots: dict[int, tuple[Path, int]] = {}
        self.usable = isinstance(data, dict)
        if self.usable:
            try:
                node = yaml.compose(text, Loader=_Loader)
            except yaml.YAMLError:  # parsed once already, so not expected: stay safe
                node = None
            self.usable = node is not None and self._walk(node, (), set())

    def _walk(self, node: yaml.Node, path: Path, seen: set[int]) -> bool:
        """Record the value slots under ``node``; False if the document shares nodes (aliases),
        where replacing one value would change several."""
        if id(node) in seen:
            return False
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            return all(self._walk(item, (*path, i), seen) for i, item in enumerate(node.value))
        if not isinstance(node, yaml.MappingNode):
            return True
        keys: set[str] = set()
        for key, value in node.value:
            if not (isinstance(key, yaml.ScalarNode) and key.tag == _STR and not key.style):
                return False  # merge keys, non-string keys: not worth the care
            if key.value in keys:  # a repeated key: the last one wins, the first is not there
                return False
            keys.add(key.value)
            where = (*path, key.value)
            if isinstance(value, yaml.ScalarNode):
                line = value.start_mark.line
                if (not value.style and value.value != "" and line == value.end_mark.line
                        and key.start_mark.line == line
                        and not self.lines[line][value.end_mark.column:].strip()):
                    if line in self.slots:  # two values on one line ({a: 1, b: 2})
                        return False
                    self.slots[line] = (where, value.start_mark.column)
            elif not self._walk(value, where, seen):
                return False
        return True

    def patched(self, text: str) -> Any | None:
        """The data of ``text`` from the first rendering's, or None when ``text`` differs in
        more than plain scalar values (then parse it in full)."""
        if not self.usable:
            return None
        lines = text.split("\n")
        if len(lines) != len(self.lines):
            return None
        changes: list[tuple[Path, Any]] = []
        for i, (old, new) in enumerate(zip(self.lines, lines, strict=True)):
            if old == new:
                continue
            slot = self.slots.get(i)
            if slot is None:
                return None
            path, column = slot
            if new[:column] != old[:column]:
                return None
            value = _plain_scalar(new[column:])
            if value is _NOT_PLAIN:
                return None
            changes.append((path, value))
        data = _copy(self.data)
        for path, value in changes:
            target = data
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        return data


_NOT_PLAIN = object()
# resolves a plain scalar's tag and constructs its value with PyYAML's own safe rules (the same
# implicit resolvers and constructors CSafeLoader uses); never fed a stream
_RESOLVER: Any = yaml.SafeLoader("")


def _plain_scalar(text: str) -> Any:
    """The value of ``text`` as a plain one-line YAML scalar, or ``_NOT_PLAIN``."""
    if (not text or text != text.strip() or text[0] in _INDICATORS or ": " in text
            or " #" in text or "\t" in text or text.endswith(":")):
        return _NOT_PLAIN
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    construct = _RESOLVER.yaml_constructors.get(tag)
    if construct is None:
        return _NOT_PLAIN
    try:
        value = construct(_RESOLVER, yaml.ScalarNode(tag, text))
    except (yaml.YAMLError, ValueError, OverflowError):
        return _NOT_PLAIN
    return _NOT_PLAIN if isinstance(value, (dict, list)) else value


def _copy(data: Any) -> Any:
    """A deep copy of parsed YAML (dicts, lists, immutable scalars; dates are immutable)."""
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data
