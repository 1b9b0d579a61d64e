"""Which workloads a measured comparison (the refs or the configs form) runs, mode by mode.

Time mode selects with its own label filter (``--time-label``: a small set, it runs
``--repeat`` rounds a side), instructions mode with ``--label``; ``--name`` narrows both. The
configs form leaves out the test cases that set their own schedulerConfigPath: the two
configurations compared would replace it. The refs form may then :func:`widen` every mode's
set with the workloads change-aware selection added (bench.compare.changes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.selection import BadInput, select_workloads
from workloads.config import TestCase, Workload

__all__ = ["Choice", "Selection", "choose_workloads", "widen"]


@dataclass(frozen=True)
class Selection:
    """One mode's workloads (``<test case>/<workload>``, in selection order) and the config
    files holding them (sorted)."""

    workloads: tuple[str, ...]
    configs: tuple[str, ...]


@dataclass(frozen=True)
class Choice:
    """The :class:`Selection` of every mode (in the order the modes were given); the uncommon
    workloads; each workload's labels (comma-joined); and ``not_compared``: the workloads left
    out because their test case sets its own schedulerConfigPath (name -> that file's name)."""

    selections: Mapping[str, Selection]
    uncommon: frozenset[str]
    labels: Mapping[str, str]
    not_compared: Mapping[str, str]

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.selections)


def choose_workloads(test_cases: Sequence[TestCase], modes: Sequence[str],
                     label_filter: str | None, time_label: str | None,
                     name_regex: str | None, *, own_config_left_out: bool) -> Choice:
    """The workloads of each mode in ``modes``; ``own_config_left_out`` (the configs form)
    leaves out those whose test case sets its own schedulerConfigPath (BadInput when that
    leaves a mode nothing)."""
    selections: dict[str, Selection] = {}
    uncommon: set[str] = set()
    labels: dict[str, str] = {}
    not_compared: dict[str, str] = {}
    for mode in modes:
        flt = time_label if mode == "time" else label_filter
        picked = select_workloads(test_cases, flt, name_regex)
        if own_config_left_out:
            # --base-config/--head-config replace each test case's scheduler config: a test
            # case that brings its own (profiles, out-of-tree plugins) would not run as written
            own = [(tc, w) for tc, w in picked if tc.scheduler_config_path is not None]
            for tc, w in own:
                not_compared[w.full_name] = Path(str(tc.scheduler_config_path)).name
            picked = [(tc, w) for tc, w in picked if tc.scheduler_config_path is None]
            if not picked:
                raise BadInput(f"{mode} label filter {flt!r}: every selected workload's test "
                               "case sets its own schedulerConfigPath, which --base-config/"
                               "--head-config would replace; nothing to compare")
        selections[mode] = Selection(
            workloads=tuple(w.full_name for _, w in picked),
            configs=tuple(sorted({str(tc.source) for tc, _ in picked})))
        uncommon |= {w.full_name for _, w in picked if "uncommon" in w.labels}
        labels.update({w.full_name: ",".join(w.labels) for _, w in picked})
    return Choice(selections, frozenset(uncommon), labels, not_compared)


def widen(choice: Choice, added: Sequence[tuple[TestCase, Workload]]) -> Choice:
    """``choice`` with ``added`` appended to every mode's workloads (those a mode has already
    stay where they are), their config files, labels and uncommon names included."""
    selections: dict[str, Selection] = {}
    for mode, sel in choice.selections.items():
        names = list(sel.workloads)
        names += [w.full_name for _, w in added if w.full_name not in names]
        configs = set(sel.configs) | {str(tc.source) for tc, _ in added}
        selections[mode] = Selection(workloads=tuple(names), configs=tuple(sorted(configs)))
    labels = dict(choice.labels)
    labels.update({w.full_name: ",".join(w.labels) for _, w in added})
    uncommon = choice.uncommon | {w.full_name for _, w in added if "uncommon" in w.labels}
    return Choice(selections, frozenset(uncommon), labels, choice.not_compared)
