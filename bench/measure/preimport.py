"""The process state a counted workload starts from, alike in both counting methods.

Before a workload is counted (``bench.measure.forked``'s parent before each fork,
``bench.measure.session`` in a separate worker), the modules a native warm-up run imported are
imported (:func:`preimport`), so that no counted process imports one lazily; then everything
alive is collected and frozen (:func:`freeze_before_counting`), so that the cyclic garbage
collector never traverses it again: when a full collection comes and what it costs depend on
the workload's own objects only, not on what the process loaded before it. Without the freeze
the two methods differed by about 1 % (the forking parent holds more), all of it in the
collector (cachegrind's per-function counts: ``dict_traverse``, ``visit_reachable``...).
"""

from __future__ import annotations

import contextlib
import gc
import json
import sys
from collections.abc import Sequence

from bench.measure.launch import PREIMPORT_FILE

__all__ = ["freeze_before_counting", "preimport", "read_preimport"]


def preimport(names: Sequence[str]) -> None:
    """Import ``names`` (those not imported yet, in order; failures ignored). A module
    imported lazily in a measured section (numpy.ma, on first use in preemption workloads)
    would be counted in one of the two runs of a subtraction only, and it looks up the
    side's PYTHONPATH entries in dicts keyed by path: a few hundred instructions that differ
    between the sides of a comparison."""
    import importlib

    for name in names:
        if name not in sys.modules:
            with contextlib.suppress(Exception):  # one that cannot be imported here
                importlib.import_module(name)


def read_preimport(path: str = PREIMPORT_FILE) -> list[str]:
    """The module names in ``path`` (in the working folder), or none."""
    try:
        with open(path, encoding="utf-8") as fh:
            names = json.load(fh)
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def freeze_before_counting() -> None:
    """Collect everything unreachable, then freeze what is left (see the module docstring)."""
    gc.collect()
    gc.freeze()
