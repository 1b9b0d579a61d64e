"""``schedperf compare``: did HEAD get slower than BASE, where, and how sure are we?

Three forms, one report:

    schedperf compare BASE HEAD                     git refs of this repository
    schedperf compare --base-config A --head-config B   two KubeSchedulerConfigurations
    schedperf compare --base-results X --head-results Y  results already recorded

Refs are checked out in their own worktrees (removed afterwards whatever happens); every
measurement runs in a fresh worker process whose PYTHONPATH selects that side's
scheduler_core while the harness measuring both is the same. ``--measure time`` runs
interleaved rounds (A B, B A, ...); ``--measure instructions`` counts instructions under
cachegrind, deterministically. ``--out DIR`` receives report.md, report.html, report.json,
samples.parquet, outcomes.parquet and the raw worker results. Exit status: 0; 1 with
--fail-on-regression when a regression nobody accepted is significant; 2 for bad input, and
whenever a side failed (it could not import its code, crashed, timed out or failed on a
workload: verdict ERROR, and the report opens with which side, which workloads and why),
with or without --fail-on-regression.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import polars as pl
from click.core import ParameterSource
from rich.console import Console

from bench.compare.choose import choose_workloads
from bench.compare.judge import build_report
from bench.compare.measure import SideRun, run_instructions, run_time, side_env
from bench.compare.recorded import load_recorded, select_recorded
from bench.compare.samples import outcomes_frame, to_frame
from bench.compare.worktrees import (
    WorktreeError,
    checked_out,
    core_path_entry,
    is_ancestor,
    repo_root,
)
from bench.interrupt import deferred_signals
from bench.measure.instructions import valgrind_available
from bench.measure.spec import WorkerSpec
from bench.selection import BadInput, config_option, load_test_cases
from reports.accepted import DEFAULT_ACCEPTED_PATH, AcceptedFileError, load_accepted
from reports.render import parse_report, render
from reports.stats.compare import MIN_EFFECT
from workloads.output import atomic_write_bytes, environment_fingerprint

__all__ = ["compare"]

DEFAULT_LABEL = "compare"
DEFAULT_TIME_LABEL = "compare-time"
MODES = ("instructions", "time")


def _min_effects(values: Sequence[str]) -> dict[str, float]:
    out = dict(MIN_EFFECT)
    for text in values:
        mode, _, number = text.partition("=")
        if mode not in MODES or not number:
            raise BadInput(f"--min-effect {text!r}: expected MODE=FRACTION with MODE one of "
                           f"{', '.join(MODES)}, e.g. time=0.03")
        try:
            value = float(number)
        except ValueError:
            raise BadInput(f"--min-effect {text!r}: {number!r} is not a number") from None
        if not 0 < value < 1:
            raise BadInput(f"--min-effect {text!r}: expected a fraction between 0 and 1")
        out[mode] = value
    return out


def _side_dict(run: SideRun, config: str | None) -> dict[str, Any]:
    env = dict(run.environment)
    if run.core.get("path"):
        env["core_path"] = run.core["path"]
    return {"label": run.label, "commit": run.core.get("commit") or run.commit,
            "core_path": run.core.get("path"), "config": config, "environment": env,
            "problems": run.problems}


def _repo_paths(run: SideRun, folders: Sequence[Path]) -> None:
    """Drop the temporary ``folders`` from the paths in ``run``'s errors and problems."""
    def strip(text: str | None) -> str | None:
        for folder in folders:
            text = text and text.replace(f"{folder}{os.sep}", "")
        return text

    for row in run.outcomes:
        row["error"] = strip(row["error"])
    run.problems[:] = [strip(p) or "" for p in run.problems]


def _write_outputs(out: Path, report: dict[str, Any], samples: pl.DataFrame,
                   outcomes: pl.DataFrame) -> None:
    import io

    for name, frame in (("samples.parquet", samples), ("outcomes.parquet", outcomes)):
        buf = io.BytesIO()
        frame.write_parquet(buf)
        atomic_write_bytes(out / name, buf.getvalue())
    model = parse_report(report, source=str(out / "report.json"))
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("html", "report.html")):
        atomic_write_bytes(out / name, render(model, fmt).encode())  # type: ignore[arg-type]


@click.command()
@click.argument("refs", nargs=-1, metavar="[BASE HEAD]")
@click.option("--base-config", type=click.Path(dir_okay=False, path_type=Path),
              help="KubeSchedulerConfiguration for BASE (with --head-config: same code).")
@click.option("--head-config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--base-results", metavar="SPEC",
              help="Recorded BASE: a compare folder[#base|#head], a run folder, "
                   "results.parquet, or commit:<sha> with --store.")
@click.option("--head-results", metavar="SPEC")
@click.option("--store", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results store for commit:<sha> sides.")
@config_option
@click.option("--label", "label_filter", default=DEFAULT_LABEL, show_default=True,
              help="Workloads to compare (label filter). With --base-results/--head-results "
                   "it selects among the recorded workloads, and only when given.")
@click.option("--time-label", default=DEFAULT_TIME_LABEL, show_default=True,
              help="Label filter for time mode (a small set: it runs --repeat rounds a side).")
@click.option("--name", "name_regex", default=None, metavar="REGEX",
              help="Only workloads whose <test case>/<workload> name matches (re.search).")
@click.option("--measure", "modes", multiple=True, type=click.Choice(MODES),
              help="Measurement modes (repeatable) [default: instructions when valgrind is "
                   "installed, and time].")
@click.option("--repeat", default=10, show_default=True, type=click.IntRange(min=1),
              help="Time-mode rounds. In a round both sides run every workload in fresh "
                   "processes taking turns on the CPU every few ms (paced pairs); rounds are "
                   "paired (Wilcoxon): fewer than 6 can never be significant, 10 is the "
                   "smallest default that survives Benjamini-Hochberg over a handful of "
                   "workloads.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--min-effect", "min_effect", multiple=True, metavar="MODE=FRACTION",
              help="Smallest change that counts, e.g. time=0.03 [default: time=0.03, "
                   "instructions=0.01].")
@click.option("--q", default=0.05, show_default=True,
              type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
              help="False discovery rate (Benjamini-Hochberg).")
@click.option("--accepted", "accepted_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help=f"Accepted regressions [default: {DEFAULT_ACCEPTED_PATH}].")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a significant regression is not accepted.")
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1),
              help="Parallel runs: valgrind counts, or time rounds (one process of each "
                   "paced pair runs at a time).")
@click.option("--timeout-per-run", "timeout", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="S",
              help="Wall-time limit of one valgrind run or one time round (both sides).")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The schedperf repository whose refs are compared.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Output folder [default: ./schedperf-compare/<UTC time>].")
@click.pass_context
def compare(ctx: click.Context, refs: tuple[str, ...], base_config: Path | None,
            head_config: Path | None, base_results: str | None, head_results: str | None,
            store: Path | None, configs: tuple[Path, ...], label_filter: str,
            time_label: str | None, name_regex: str | None, modes: tuple[str, ...],
            repeat: int, seed: int, min_effect: tuple[str, ...], q: float,
            accepted_path: Path | None, fail_on_regression: bool, jobs: int,
            timeout: float | None, repo: Path, out_dir: Path | None) -> None:
    """Compare BASE with HEAD (git refs, scheduler configs, or recorded results)."""
    forms = [bool(refs), base_config is not None or head_config is not None,
             base_results is not None or head_results is not None]
    if sum(forms) != 1:
        raise BadInput("give exactly one of: BASE HEAD refs, --base-config/--head-config, "
                       "--base-results/--head-results")
    if refs and len(refs) != 2:
        raise BadInput(f"expected two refs (BASE HEAD), got {len(refs)}")
    if forms[1] and (base_config is None or head_config is None):
        raise BadInput("--base-config and --head-config go together")
    if forms[2] and (base_results is None or head_results is None):
        raise BadInput("--base-results and --head-results go together")
    effects = _min_effects(min_effect)
    try:
        accepted = load_accepted(accepted_path or DEFAULT_ACCEPTED_PATH,
                                 required=accepted_path is not None)
    except AcceptedFileError as exc:
        raise BadInput(str(exc)) from exc
    started = time.perf_counter()
    stamp = dt.datetime.now(dt.UTC)
    out = out_dir or Path("schedperf-compare") / stamp.strftime("%Y-%m-%dT%H-%M-%SZ")
    console = Console(stderr=True)
    say = lambda text: console.print(f"[dim]{text}[/]", highlight=False)  # noqa: E731
    in_base = lambda commit: False  # noqa: E731

    if forms[2]:
        assert base_results is not None and head_results is not None
        # recorded results were selected when they were measured: --label filters them only
        # when given (--time-label has no meaning here)
        given = ctx.get_parameter_source("label_filter") is not ParameterSource.DEFAULT
        report, samples, outcomes = _compare_recorded(
            (base_results, head_results), store, label_filter if given else None, name_regex,
            q=q, effects=effects, accepted=accepted, started=started)
        return _finish(ctx, out, report, samples, outcomes, fail_on_regression, console)

    if not modes:
        modes = ("instructions", "time") if valgrind_available() else ("time",)
    choice = choose_workloads(load_test_cases(configs), modes, label_filter, time_label,
                              name_regex, own_config_left_out=forms[1])
    env_fp = environment_fingerprint(clock="virtual", seed=seed)
    env_keep = {k: env_fp.get(k) for k in ("machine", "cpu_model", "cpu_count", "python",
                                           "numpy_version", "blas")}
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "raw"
    rows: list[dict[str, Any]] = []

    def measure(sides: list[SideRun]) -> None:
        for mode in ("instructions", "time"):
            if mode not in modes:
                continue
            spec = WorkerSpec(configs=choice.selections[mode].configs,
                              workloads=choice.selections[mode].workloads, seed=seed)
            if mode == "instructions":
                try:
                    rows.extend(run_instructions(sides, spec, raw, jobs=jobs, timeout=timeout,
                                                 progress=say))
                except FileNotFoundError as exc:
                    raise BadInput(f"--measure instructions: {exc}") from exc
            else:
                rows.extend(run_time(sides, spec, repeat, raw, jobs=jobs, timeout=timeout,
                                     progress=say))

    if refs:
        try:
            root = repo_root(repo)
            with checked_out(root, list(refs)) as checked:
                entries: Path | None = None
                try:
                    with deferred_signals():  # made <=> removed below
                        entries = Path(tempfile.mkdtemp(prefix="schedperf-core-"))
                    sides = []
                    for name, side in zip(("base", "head"), checked, strict=True):
                        entry = core_path_entry(side.core, entries / name)
                        sides.append(SideRun(name, side.ref, side_env([entry]),
                                             commit=side.commit, environment=dict(env_keep)))
                    say(f"BASE {refs[0]} = {checked[0].commit[:12]}, "
                        f"HEAD {refs[1]} = {checked[1].commit[:12]}")
                    measure(sides)
                    for run, side in zip(sides, checked, strict=True):
                        # tracebacks name files as in the repository, not in a temp folder
                        _repo_paths(run, (entries / run.side, side.worktree))
                finally:
                    if entries is not None:
                        shutil.rmtree(entries, ignore_errors=True)
            base_commit = checked[0].commit

            def in_base(commit: str) -> bool:
                return is_ancestor(root, commit, base_commit)
        except WorktreeError as exc:
            raise BadInput(str(exc)) from exc
        kind, configs_used = "refs", (None, None)
    else:
        assert base_config is not None and head_config is not None
        from scheduler_core.errors import ConfigError
        from scheduler_core.framework.config import load_config

        for path in (base_config, head_config):
            try:
                load_config(path)
            except (ConfigError, OSError) as exc:
                raise BadInput(f"{path}: {exc}") from exc
        here = side_env([])
        sides = [SideRun("base", str(base_config), dict(here), str(base_config.resolve()),
                         environment=dict(env_keep)),
                 SideRun("head", str(head_config), dict(here), str(head_config.resolve()),
                         environment=dict(env_keep))]
        measure(sides)
        kind, configs_used = "configs", (str(base_config), str(head_config))
    samples = to_frame(rows)
    outcomes = outcomes_frame(sides[0].outcomes + sides[1].outcomes).with_columns(
        pl.col("workload").replace_strict(dict(choice.labels), default=None,
                                          return_dtype=pl.String)
        .alias("labels"))
    report = build_report(
        samples, kind=kind, base=_side_dict(sides[0], configs_used[0]),
        head=_side_dict(sides[1], configs_used[1]), modes=list(modes), repeat=repeat, q=q,
        min_effect=effects, seed=seed, label=label_filter,
        uncommon=lambda w: w in choice.uncommon, accepted=accepted, in_base=in_base,
        wall_seconds=time.perf_counter() - started,
        extra_settings={"time_label": time_label,
                        "workloads": {m: len(choice.selections[m].workloads) for m in modes},
                        "not_compared": [f"{w} (its test case sets schedulerConfigPath {c})"
                                         for w, c in sorted(choice.not_compared.items())]},
        outcomes=outcomes)
    if choice.not_compared:
        say(f"not compared: {len(choice.not_compared)} workload(s) whose test case sets its "
            f"own schedulerConfigPath ({', '.join(sorted(choice.not_compared))})")
    _finish(ctx, out, report, samples, outcomes, fail_on_regression, console)


def _compare_recorded(specs: tuple[str, str], store: Path | None, label_filter: str | None,
                      name_regex: str | None, *, q: float, effects: dict[str, float],
                      accepted: Any, started: float
                      ) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The recorded-results form: nothing is rerun; (report, samples, outcomes)."""
    try:
        recorded = [select_recorded(load_recorded(spec, name, store=store), label_filter,
                                    name_regex)
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
        modes=used_modes, repeat=int(samples["round"].max() or 1), q=q,
        min_effect=effects, seed=None, label=label_filter,
        uncommon=lambda w: w in uncommon_names, accepted=accepted,
        wall_seconds=time.perf_counter() - started, outcomes=outcomes,
        extra_settings={"name": name_regex} if name_regex else None)
    return report, samples, outcomes


def _finish(ctx: click.Context, out: Path, report: dict[str, Any], samples: pl.DataFrame,
            outcomes: pl.DataFrame, fail_on_regression: bool, console: Console) -> None:
    _write_outputs(out, report, samples, outcomes)
    results = report["results"]
    failures = report.get("failures") or []
    regressions = [r for r in results if r["verdict"] == "regression" and not r["accepted"]]
    console.print(f"verdict: [bold]{report['verdict']}[/] ({len(results)} comparisons, "
                  f"{len(regressions)} open regression(s)); report in {out}/report.md",
                  highlight=False)
    for f in failures:  # once per kind of failure, not once per round
        rounds = f" in round(s) {', '.join(map(str, f['rounds']))}" if f["rounds"] else ""
        console.print(f"[red]{f['side'].upper()} failed ({f['status']}, {f['mode']} mode"
                      f"{rounds}) on {len(f['workloads'])} workload(s): "
                      f"{', '.join(f['workloads'])}[/]", highlight=False)
        console.print(f["error"], style="red", highlight=False, markup=False, soft_wrap=True)
    if not results and not failures:
        console.print("[yellow]nothing was compared: no workload produced a value on both "
                      "sides[/]")
    # a failed side is an error whatever --fail-on-regression says: exit 2
    ctx.exit(2 if failures else 1 if fail_on_regression and regressions else 0)
