"""``templateParams`` values that name a workload parameter: ``$name`` or ``$name|default``.

The newest scheduler_perf configs give a template parameter a fallback for workloads that do
not define the parameter: ``numDevices: $numDevices|64``. The text after the first ``|`` is read
as one YAML value (PyYAML safe loading), so ``64`` is the int 64, ``true`` a bool, ``abc`` a
string, and nothing at all (``$constraints|``) is nil -- which a template's ``or`` / ``if`` /
``with`` treats as empty, as upstream's ``(or .constraints nil) | JSON`` expects. A workload
that defines the parameter always wins over the default, and the parameter counts as used
either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["ParamRef", "parse_param_ref"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ParamRef:
    name: str
    has_default: bool = False
    default: Any = None


def parse_param_ref(text: str) -> ParamRef:
    """``$name`` or ``$name|default`` -> ParamRef; ValueError naming what was expected.

    ``text`` must start with ``$``. Without ``|`` the name is taken as written (upstream looks
    any name up, so an odd one is reported as undefined, not here).
    """
    body = text[1:]
    if "|" not in body:
        return ParamRef(body)
    name, default_text = body.split("|", 1)
    if not _NAME.fullmatch(name):
        raise ValueError(f"bad parameter reference {text!r}: want $name|default, with a name "
                         "of letters, digits and underscores before the '|'")
    if not default_text.strip():
        return ParamRef(name, True, None)
    try:
        default = yaml.safe_load(default_text)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise ValueError(f"bad default in parameter reference {text!r}: {default_text!r} is "
                         f"not one YAML value ({problem})") from None
    return ParamRef(name, True, default)
