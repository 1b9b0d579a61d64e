"""Safe YAML loading that remembers where every mapping, sequence and value starts.

Mappings load as :class:`LineDict` and sequences as :class:`LineList`: plain ``dict`` /
``list`` subclasses that carry 1-based line numbers (``line`` for the node itself,
``key_lines`` / ``value_lines`` per key, ``item_lines`` per item). Loading stays safe: the loader
is PyYAML's (C if available) SafeLoader with only the map and seq constructors replaced.

Keys are turned into strings the way ``sigs.k8s.io/yaml`` does before JSON decoding
(``5`` -> ``"5"``, ``true`` -> ``"true"``), and a key given twice in one mapping is an error
(``UnmarshalStrict`` refuses duplicate keys).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scheduler_core.inputfile import MAX_EXPANDED_VALUES, expanded_size, read_text

__all__ = ["LineDict", "LineList", "YamlLoadError", "load_yaml", "load_yaml_string", "plain"]

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLoadError(Exception):
    """The text is not YAML (or repeats a key). ``line`` is 1-based or None."""

    def __init__(self, problem: str, line: int | None) -> None:
        self.problem = problem
        self.line = line
        super().__init__(problem)


class LineDict(dict):
    """A mapping that knows the line of itself, of each key and of each value."""

    __slots__ = ("key_lines", "line", "value_lines")

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[str, int] = {}
        self.value_lines: dict[str, int] = {}


class LineList(list):
    """A sequence that knows the line of itself and of each item."""

    __slots__ = ("item_lines", "line")

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []


def _go_key(key: Any) -> str:
    """A mapping key as a string, as sigs.k8s.io/yaml converts it for JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, float) and key.is_integer() and abs(key) < 1e21:
        return str(int(key))
    return str(key)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader whose maps and seqs remember their line numbers."""


def _construct_map(loader: Any, node: yaml.MappingNode):
    data = LineDict(node.start_mark.line + 1)
    yield data
    seen: dict[str, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        if isinstance(key_node, yaml.ScalarNode):
            key = _go_key(loader.construct_object(key_node, deep=True))
            line = key_node.start_mark.line + 1
            if key in seen:
                raise YamlLoadError(
                    f'key "{key}" is given twice in one mapping (first on line {seen[key]})',
                    line)
            seen[key] = line
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise YamlLoadError("mapping keys must be scalars", key_node.start_mark.line + 1)
        key = _go_key(loader.construct_object(key_node, deep=True))
        try:
            data[key] = loader.construct_object(value_node, deep=True)
        except (ValueError, OverflowError) as exc:  # a constructor's: 2026-13-45
            raise YamlLoadError(f'invalid value of "{key}": {exc}',
                                value_node.start_mark.line + 1) from None
        data.key_lines[key] = key_node.start_mark.line + 1
        data.value_lines[key] = value_node.start_mark.line + 1


def _construct_seq(loader: Any, node: yaml.SequenceNode):
    data = LineList(node.start_mark.line + 1)
    yield data
    for item in node.value:
        data.append(loader.construct_object(item, deep=True))
        data.item_lines.append(item.start_mark.line + 1)


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def load_yaml(path: Path, *, what: str = "a YAML file", allow_empty: bool = False) -> Any:
    """Parse one YAML document from ``path`` with line information (safe loading).

    Raises :class:`YamlLoadError` for syntax errors and duplicate keys,
    :class:`~scheduler_core.inputfile.InputFileError` if the file cannot be read as text
    (missing, a folder, a FIFO, over the size cap, empty unless ``allow_empty``, not UTF-8).
    """
    text = read_text(path, what=what, allow_empty=allow_empty)
    return load_yaml_string(text)


def load_yaml_string(text: str) -> Any:
    """Parse one YAML document from ``text`` with line information (see :func:`load_yaml`).
    A document whose aliases expand to more than ``MAX_EXPANDED_VALUES`` values is refused."""
    try:
        data = yaml.load(text, Loader=_Loader)
        if expanded_size(data) is None:
            raise YamlLoadError(f"its aliases expand to more than {MAX_EXPANDED_VALUES} values "
                                "(an alias bomb?)", None)
        return data
    except YamlLoadError:
        raise
    except RecursionError:
        raise YamlLoadError("invalid YAML: nested too deeply", None) from None
    except (ValueError, OverflowError) as err:  # a constructor's: a date like 2026-13-45
        raise YamlLoadError(f"invalid YAML value: {err}", None) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = " ".join(p for p in (err.context, err.problem) if p) or str(err)
        raise YamlLoadError(f"invalid YAML: {problem}",
                            mark.line + 1 if mark is not None else None) from err
    except yaml.YAMLError as err:
        raise YamlLoadError(f"invalid YAML: {err}", None) from err


def plain(value: Any) -> Any:
    """A copy of a loaded value with LineDict/LineList turned into plain dict/list."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
