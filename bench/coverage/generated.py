"""Generated scenarios in a coverage map (``schedperf coverage --generated N``).

The N scenarios are those of ``schedperf generate --seed S --count N``
(:func:`workloads.generator.generate`: a pure function of the seed, and scenario ``i``
depends only on ``(S, i)``). They are written into the coverage run's temporary folder as
``generate`` writes them, selected by their label and run by the coverage child after the
catalog's workloads, each in a context of its own like any workload. Each is marked in the map
with a :class:`~reports.store.coverage.GeneratedOrigin`: its seed and index, its feature tags,
the ``schedperf generate`` command line that writes it again, and the ``schedperf run``
command line that runs it alone as the map ran it.

Nothing here runs coverage.py; :mod:`bench.coverage.collect` starts the child.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.selection import BadInput, load_test_cases, select_workloads
from reports.store.coverage import ORIGIN_GENERATED, CoverageMap, GeneratedOrigin
from workloads.generator import TOPIC, Generated, generate
from workloads.output import atomic_write_bytes

__all__ = ["GENERATED_LABEL", "GeneratedPart", "beyond_catalog", "generate_command",
           "out_folder", "prepare_generated", "run_command", "statement_ranges"]

GENERATED_LABEL = "generated"  # every generated workload carries it (workloads.generator)


def out_folder(seed: int) -> str:
    """Where the commands put the scenarios of ``seed`` (relative to the working folder)."""
    return f"schedperf-generated-{seed}"


def generate_command(seed: int, index: int) -> str:
    """The ``schedperf generate`` command line that writes scenario ``index`` of ``seed``
    (with those before it: a scenario depends only on its seed and index)."""
    return (f"schedperf generate --seed {seed} --count {index + 1} "
            f"--out {shlex.quote(out_folder(seed))}")


def run_command(seed: int, index: int, run_seed: int) -> str:
    """The ``schedperf run`` command line that runs that scenario alone, with the run seed
    of the map."""
    name = f"^Generated_{seed}_{index}/"
    return (f"schedperf run --config {shlex.quote(out_folder(seed))} --label "
            f"{GENERATED_LABEL} --name {shlex.quote(name)} --seed {run_seed}")


@dataclass(frozen=True)
class GeneratedPart:
    """The generated scenarios of a coverage run: the child's ``extra`` selection, the
    (test case, workload) pairs it selects (in order) and their origins."""

    spec: dict[str, Any]
    chosen: list[tuple[Any, Any]]
    origins: tuple[GeneratedOrigin, ...]


def _write(folder: Path, generated: Generated) -> None:
    target = folder / generated.topic
    for rel, text in generated.files.items():
        atomic_write_bytes(target / rel, text.encode())


def prepare_generated(folder: Path, *, seed: int, count: int, run_seed: int,
                      taken: Sequence[str] = ()) -> GeneratedPart:
    """Write the ``count`` scenarios of ``seed`` under ``folder`` and select their
    workloads; BadInput when one has the name of a workload in ``taken`` (the catalog
    selection)."""
    generated = generate(seed, count)
    _write(folder, generated)
    chosen = select_workloads(load_test_cases([folder]), GENERATED_LABEL)
    info = {s.name: s for s in generated.scenarios}
    clash = sorted({w.full_name for _, w in chosen} & set(taken))
    if clash:
        raise BadInput(f"--generated: {clash[0]} is also in the selection (a --config of "
                       "generated scenarios?): leave it out of the selection")
    origins = []
    for tc, w in chosen:
        s = info[tc.name]
        origins.append(GeneratedOrigin(w.full_name, s.seed, s.index, tuple(sorted(s.tags)),
                                       generate_command(s.seed, s.index),
                                       run_command(s.seed, s.index, run_seed)))
    spec = {"configs": [str(folder.resolve())], "label_filter": GENERATED_LABEL,
            "name_regex": None, "names": [w.full_name for _, w in chosen]}
    assert generated.topic == TOPIC
    return GeneratedPart(spec, chosen, tuple(origins))


def beyond_catalog(cmap: CoverageMap) -> dict[str, dict[str, frozenset[int]]]:
    """generated scenario -> file -> the statement lines it executes that no catalog
    workload of the map that ran executes (nor the imports): what it adds."""
    catalog: dict[str, set[int]] = {}
    for per_file in (*cmap.line_sets().values(), cmap.import_lines()):
        for file, lines in per_file.items():
            catalog.setdefault(file, set()).update(lines)
    out = {}
    for name, per_file in cmap.line_sets(cmap.workload_names(origin=ORIGIN_GENERATED)).items():
        out[name] = {f: frozenset(v - catalog.get(f, set())) for f, v in per_file.items()
                     if v - catalog.get(f, set())}
    return out


def statement_ranges(lines: Mapping[str, frozenset[int]],
                     statements: Mapping[str, frozenset[int]]) -> list[str]:
    """``file:first-last`` ranges of consecutive statements (no statement of the file between
    them) of ``lines``."""
    out = []
    for file in sorted(lines):
        order = sorted(statements.get(file, lines[file]) | lines[file])
        index = {line: i for i, line in enumerate(order)}
        run: list[int] = []
        for line in sorted(lines[file]):
            if run and index[line] != index[run[-1]] + 1:
                out.append(_range(file, run))
                run = []
            run.append(line)
        if run:
            out.append(_range(file, run))
    return out


def _range(file: str, run: list[int]) -> str:
    return f"{file}:{run[0]}" + (f"-{run[-1]}" if run[-1] != run[0] else "")

