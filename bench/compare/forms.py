"""The three forms of ``schedperf compare``, one function each, one result (a
:class:`Comparison`: the report, the samples and the outcomes tables):

* :func:`compare_refs`: two git refs of the repository, each checked out in its own worktree
  (removed afterwards whatever happens) and imported by the workers of its side;
* :func:`compare_configs`: two KubeSchedulerConfigurations, the same code;
* :func:`compare_recorded`: results already recorded; nothing is rerun.

What the three share (modes, seed, rounds, statistics, accepted regressions, parallelism,
selection, output folder, progress) is one :class:`Settings`. Bad input raises BadInput
(exit 2); writing the outputs and the exit status are the CLI's (bench.cli.compare).

The refs form alone selects for the change (``Settings.changes``, bench.compare.changes):
once both refs are checked out it adds the workloads that run HEAD's changed lines to every
mode's set, and its report gets a ``selection`` object (added workloads, blind spots).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from bench.compare.changes import (
    ChangeOptions,
    ChangeStep,
    HeadSide,
    select_changes,
    side_links,
)
from bench.compare.choose import Choice, choose_workloads
from bench.compare.config_check import check_side_configs
from bench.compare.judge import ENV_KEYS, build_report, group_failures
from bench.compare.measure import SideRun, run_instructions, run_time, side_env
from bench.compare.recorded import load_recorded, select_recorded
from bench.compare.samples import outcomes_frame, to_frame
from bench.compare.worktrees import (
    Side,
    WorktreeError,
    checked_out,
    core_path_entry,
    is_ancestor,
    repo_root,
)
from bench.interrupt import deferred_signals
from bench.measure.instructions import valgrind_available
from bench.measure.spec import WorkerSpec
from bench.selection import BadInput, load_test_cases, select_workloads
from reports.accepted import Acceptance
from reports.render.engines import engine_dicts, engine_ratios_of
from workloads.output import environment_fingerprint

__all__ = ["MODES", "Comparison", "Settings", "compare_configs", "compare_recorded",
           "compare_refs", "measured_modes"]

MODES = ("instructions", "time")
NO_SELECTION = ChangeOptions(enabled=False)


@dataclass(frozen=True)
class Settings:
    """What every form shares. ``modes``: the measurement modes (empty: instructions when
    valgrind is installed, and time; recorded results use the modes they hold); ``effects``:
    the smallest change that counts, by mode; ``label``/``time_label``/``name_regex``: the
    workload selection (``label`` None: no label filter); ``out``: the output folder (raw
    worker results under ``raw``); ``started``: ``time.perf_counter()`` when the command
    started (the report's wall_seconds); ``progress``: one line for the console;
    ``changes``: change-aware selection (the refs form only)."""

    modes: tuple[str, ...]
    seed: int
    repeat: int
    q: float
    effects: Mapping[str, float]
    accepted: Sequence[Acceptance]
    jobs: int
    timeout: float | None
    label: str | None
    time_label: str | None
    name_regex: str | None
    out: Path
    started: float
    progress: Callable[[str], None]
    changes: ChangeOptions = NO_SELECTION

    @property
    def raw(self) -> Path:
        return self.out / "raw"


@dataclass(frozen=True)
class Comparison:
    """A form's result: the report dict (reports.render schema 1) and the samples and
    outcomes tables of both sides (bench.compare.samples)."""

    report: dict[str, Any]
    samples: pl.DataFrame
    outcomes: pl.DataFrame


@dataclass(frozen=True)
class _Measured:
    """Both sides of a measured form once measured: the report's kind, the sides, their
    sample rows, their config files (the configs form) and which commits BASE holds (the
    refs form: accepted regressions until a commit)."""

    kind: str
    sides: Sequence[SideRun]
    rows: list[dict[str, Any]]
    configs: tuple[str | None, str | None] = (None, None)
    in_base: Callable[[str], bool] = lambda commit: False
    change: ChangeStep | None = None  # the refs form's change-aware selection


def measured_modes(modes: Sequence[str]) -> tuple[str, ...]:
    """``modes``, or without any: instructions when valgrind is installed, and time."""
    if modes:
        return tuple(modes)
    return ("instructions", "time") if valgrind_available() else ("time",)


def compare_refs(refs: tuple[str, str], repo: Path, configs: Sequence[Path],
                 settings: Settings) -> Comparison:
    """BASE and HEAD git refs of the repository holding ``repo``, measured on the workloads
    of the test cases in ``configs`` (the built-in catalog without any)."""
    modes = measured_modes(settings.modes)
    choice = choose_refs_workloads(configs, modes, settings)
    if settings.changes.enabled:  # a label that selects nothing is bad input before checkout
        try:
            select_workloads(load_test_cases(configs), settings.changes.label)
        except BadInput as exc:
            raise BadInput(f"--coverage-label: {exc.message} (change-aware selection maps and "
                           "adds those workloads; give another label, '' for every workload, "
                           "or --no-select-changed)") from exc
    env_keep = _prepare_output(settings)
    measured = _measure_refs(refs, repo, configs, choice, env_keep, settings)
    if measured.change is not None:
        choice = measured.change.widened(choice)
    return _judge(measured, choice, settings)


def choose_refs_workloads(configs: Sequence[Path], modes: Sequence[str],
                          settings: Settings) -> Choice:
    """The refs form's workloads: those of the test cases in ``configs`` that the label
    filters and the name select, per mode."""
    return choose_workloads(load_test_cases(configs), modes, settings.label,
                            settings.time_label, settings.name_regex,
                            own_config_left_out=False)


def compare_configs(base_config: Path, head_config: Path, configs: Sequence[Path],
                    settings: Settings) -> Comparison:
    """Two KubeSchedulerConfigurations run by this checkout's code on the workloads of the
    test cases in ``configs`` whose test case brings no scheduler config of its own (those
    are listed as not compared)."""
    modes = measured_modes(settings.modes)
    test_cases = load_test_cases(configs)
    choice = choose_workloads(test_cases, modes, settings.label, settings.time_label,
                              settings.name_regex, own_config_left_out=True)
    check_side_configs(test_cases, choice, (("--base-config", base_config),
                                            ("--head-config", head_config)))
    env_keep = _prepare_output(settings)
    here = side_env([])
    sides = [SideRun("base", str(base_config), dict(here), str(base_config.resolve()),
                     environment=dict(env_keep)),
             SideRun("head", str(head_config), dict(here), str(head_config.resolve()),
                     environment=dict(env_keep))]
    rows = _measure(sides, choice, settings)
    return _judge(_Measured("configs", sides, rows, (str(base_config), str(head_config))),
                  choice, settings)


def compare_recorded(specs: tuple[str, str], store: Path | None,
                     settings: Settings) -> Comparison:
    """The recorded results BASE and HEAD ``specs`` name (``store``: where commit:<sha>
    sides are), selected by ``settings.label`` and ``settings.name_regex``; nothing is
    rerun."""
    try:
        recorded = [select_recorded(load_recorded(spec, name, store=store), settings.label,
                                    settings.name_regex)
                    for spec, name in zip(specs, ("base", "head"), strict=True)]
    except WorktreeError as exc:
        raise BadInput(str(exc)) from exc
    samples = pl.concat([r.samples for r in recorded])
    outcomes = pl.concat([r.outcomes for r in recorded])
    used_modes = [m for m in MODES if m in set(samples["mode"].to_list())
                  | set(outcomes["mode"].to_list())]
    uncommon_names = set().union(*(r.uncommon for r in recorded))
    report = build_report(
        samples, kind="results", base=recorded[0].side, head=recorded[1].side,
        modes=used_modes, repeat=int(samples["round"].max() or 1), q=settings.q,
        min_effect=settings.effects, seed=None, label=settings.label,
        uncommon=lambda w: w in uncommon_names, accepted=settings.accepted,
        wall_seconds=time.perf_counter() - settings.started, outcomes=outcomes,
        extra_settings={"name": settings.name_regex} if settings.name_regex else None)
    engines = [e for side, rec in zip(("base", "head"), recorded, strict=True)
               for e in engine_ratios_of(side, rec.engines)]
    if engines:
        report["engines"] = engine_dicts(engines)
    return Comparison(report, samples, outcomes)


def _prepare_output(settings: Settings) -> dict[str, Any]:
    """Make the output folder; the environment both measured sides record."""
    env_fp = environment_fingerprint(clock="virtual", seed=settings.seed)
    env_keep = {k: env_fp.get(k) for k in ENV_KEYS}
    settings.out.mkdir(parents=True, exist_ok=True)
    return env_keep


def _measure_refs(refs: tuple[str, str], repo: Path, configs: Sequence[Path], choice: Choice,
                  env_keep: Mapping[str, Any], settings: Settings) -> _Measured:
    """Check both refs out, select for the change, measure them, remove the worktrees
    again."""
    try:
        root = repo_root(repo)
        with checked_out(root, list(refs)) as checked:
            sides, rows, change = _measure_worktrees(root, refs, checked, configs, choice,
                                                     env_keep, settings)
        base_commit = checked[0].commit

        def in_base(commit: str) -> bool:
            return is_ancestor(root, commit, base_commit)
    except WorktreeError as exc:
        raise BadInput(str(exc)) from exc
    return _Measured("refs", sides, rows, in_base=in_base, change=change)


def _measure_worktrees(root: Path, refs: tuple[str, str], checked: Sequence[Side],
                       configs: Sequence[Path], choice: Choice, env_keep: Mapping[str, Any],
                       settings: Settings
                       ) -> tuple[list[SideRun], list[dict[str, Any]], ChangeStep | None]:
    """Measure the checked-out sides, each importing its worktree's scheduler_core (and the
    --cover-package packages) through a PYTHONPATH entry of its own (a temporary folder,
    removed afterwards); before that, select for the change (which maps HEAD through HEAD's
    entry, in coverage processes of their own)."""
    entries: Path | None = None
    try:
        with deferred_signals():  # made <=> removed below
            entries = Path(tempfile.mkdtemp(prefix="schedperf-core-"))
        sides = []
        for name, side in zip(("base", "head"), checked, strict=True):
            links = side_links(settings.changes.packages, side.worktree)
            entry = core_path_entry(side.core, entries / name, also=links)
            sides.append(SideRun(name, side.ref, side_env([entry]), commit=side.commit,
                                 environment=dict(env_keep)))
        settings.progress(f"BASE {refs[0]} = {checked[0].commit[:12]}, "
                          f"HEAD {refs[1]} = {checked[1].commit[:12]}")
        change = ChangeStep("off", settings.changes)
        if settings.changes.enabled:
            head = HeadSide(root, checked[0].commit, checked[1].commit, entries / "head")
            change = select_changes(head, configs, choice, settings, settings.progress)
        rows = _measure(sides, change.widened(choice), settings)
        for run, side in zip(sides, checked, strict=True):
            # tracebacks name files as in the repository, not in a temp folder
            _repo_paths(run, (entries / run.side, side.worktree))
    finally:
        if entries is not None:
            shutil.rmtree(entries, ignore_errors=True)
    return sides, rows, change


def _measure(sides: list[SideRun], choice: Choice, settings: Settings
             ) -> list[dict[str, Any]]:
    """Both sides in every chosen mode, instructions first; the sample rows."""
    rows: list[dict[str, Any]] = []
    for mode in MODES:
        if mode not in choice.selections:
            continue
        selection = choice.selections[mode]
        spec = WorkerSpec(configs=selection.configs, workloads=selection.workloads,
                          seed=settings.seed)
        if mode == "instructions":
            try:
                rows.extend(run_instructions(sides, spec, settings.raw, jobs=settings.jobs,
                                             timeout=settings.timeout,
                                             progress=settings.progress))
            except FileNotFoundError as exc:
                raise BadInput(f"--measure instructions: {exc}") from exc
        else:
            rows.extend(run_time(sides, spec, settings.repeat, settings.raw,
                                 jobs=settings.jobs, timeout=settings.timeout,
                                 progress=settings.progress))
    return rows


def _repo_paths(run: SideRun, folders: Sequence[Path]) -> None:
    """Drop the temporary ``folders`` from the paths in ``run``'s errors and problems."""
    def strip(text: str | None) -> str | None:
        for folder in folders:
            text = text and text.replace(f"{folder}{os.sep}", "")
        return text

    for row in run.outcomes:
        row["error"] = strip(row["error"])
    run.problems[:] = [strip(p) or "" for p in run.problems]


def _side_dict(run: SideRun, config: str | None) -> dict[str, Any]:
    env = dict(run.environment)
    if run.core.get("path"):
        env["core_path"] = run.core["path"]
    return {"label": run.label, "commit": run.core.get("commit") or run.commit,
            "core_path": run.core.get("path"), "config": config, "environment": env,
            "problems": run.problems}


def _judge(measured: _Measured, choice: Choice, settings: Settings) -> Comparison:
    """The report of a measured form; says which workloads were not compared."""
    base, head = measured.sides
    samples = to_frame(measured.rows)
    outcomes = outcomes_frame(base.outcomes + head.outcomes).with_columns(
        pl.col("workload").replace_strict(dict(choice.labels), default=None,
                                          return_dtype=pl.String).alias("labels"))
    not_compared = choice.not_compared
    report = build_report(
        samples, kind=measured.kind, base=_side_dict(base, measured.configs[0]),
        head=_side_dict(head, measured.configs[1]), modes=list(choice.modes),
        repeat=settings.repeat, q=settings.q, min_effect=settings.effects, seed=settings.seed,
        label=settings.label, uncommon=lambda w: w in choice.uncommon,
        accepted=settings.accepted, in_base=measured.in_base,
        wall_seconds=time.perf_counter() - settings.started,
        extra_settings={"time_label": settings.time_label,
                        "workloads": {m: len(s.workloads)
                                      for m, s in choice.selections.items()},
                        "not_compared": [f"{w} (its test case sets schedulerConfigPath {c})"
                                         for w, c in sorted(not_compared.items())]},
        outcomes=outcomes)
    if not_compared:
        settings.progress(f"not compared: {len(not_compared)} workload(s) whose test case "
                          f"sets its own schedulerConfigPath ({', '.join(sorted(not_compared))})")
    if measured.change is not None:
        _add_selection(report, measured.change)
    return Comparison(report, samples, outcomes)


def _add_selection(report: dict[str, Any], change: ChangeStep) -> None:
    """The refs form's selection in the report; a workload that failed under coverage is a
    failure of HEAD (mode ``coverage``), which makes the verdict ``error``."""
    report["selection"] = change.report()
    if change.failure_rows:
        report["failures"] = [*report["failures"], *group_failures(change.failure_rows)]
        report["verdict"] = "error"
