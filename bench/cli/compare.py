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
samples.parquet, outcomes.parquet and the raw worker results.

With refs, change-aware selection (on unless --no-select-changed) adds to the measured sets
the catalog workloads that run HEAD's changed scheduler_core lines (a coverage map of HEAD,
stored in --coverage-store) and reports the changed lines no workload runs (blind spots):
bench.compare.changes, docs/coverage.md.

Exit status: 0; 1 with --fail-on-regression when a regression nobody accepted is
significant, or with --fail-on-blind-spot when a changed line is a blind spot; 2 for bad
input (git diff failing included), and whenever a side failed (it could not import its code,
crashed, timed out or failed on a workload, HEAD's workloads under coverage included: verdict
ERROR, and the report opens with which side, which workloads and why), whatever
--fail-on-regression and --fail-on-blind-spot say.

This module parses the options, checks which form was given and writes the outputs; each
form is a function of bench.compare.forms.
"""

from __future__ import annotations

import datetime as dt
import io
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from bench.compare.changes import ChangeOptions, blind_spot_gate, cover_packages
from bench.compare.forms import (
    MODES,
    NO_SELECTION,
    Comparison,
    Settings,
    compare_configs,
    compare_recorded,
    compare_refs,
)
from bench.coverage import DEFAULT_LABEL as COVERAGE_LABEL
from bench.selection import BadInput, config_option
from reports.accepted import DEFAULT_ACCEPTED_PATH, AcceptedFileError, load_accepted
from reports.render import parse_report, render
from reports.stats.compare import MIN_EFFECT
from reports.store.schema import DEFAULT_STORE
from workloads.output import atomic_write_bytes

__all__ = ["compare"]

DEFAULT_LABEL = "compare"
DEFAULT_TIME_LABEL = "compare-time"


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


def _write_outputs(out: Path, comparison: Comparison) -> None:
    for name, frame in (("samples.parquet", comparison.samples),
                        ("outcomes.parquet", comparison.outcomes)):
        buf = io.BytesIO()
        frame.write_parquet(buf)
        atomic_write_bytes(out / name, buf.getvalue())
    model = parse_report(comparison.report, source=str(out / "report.json"))
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("html", "report.html")):
        atomic_write_bytes(out / name, render(model, fmt).encode())  # type: ignore[arg-type]


_SELECTION_OPTIONS = ("select_changed", "coverage_store", "coverage_label", "cover_package",
                      "fail_on_blind_spot")


def _change_options(ctx: click.Context, refs: bool, enabled: bool, store: Path,
                    label: str, packages: tuple[str, ...],
                    fail_on_blind_spot: bool) -> ChangeOptions:
    """The change-aware selection options: refs only (BadInput when one is given with
    another form)."""
    if not refs:
        given = [f"--{n.replace('_', '-')}" for n in _SELECTION_OPTIONS
                 if ctx.get_parameter_source(n) is not ParameterSource.DEFAULT]
        if given:
            raise BadInput(f"{', '.join(given)}: change-aware selection compares git refs "
                           "(BASE HEAD) only")
        return NO_SELECTION
    return ChangeOptions(enabled=enabled, store=store, label=label or None,
                         packages=cover_packages(packages),
                         fail_on_blind_spot=fail_on_blind_spot)


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
@click.option("--select-changed/--no-select-changed", "select_changed", default=True,
              show_default=True,
              help="Refs only: add the workloads (of --coverage-label) that run HEAD's changed "
                   "scheduler_core lines to every mode's set, and report the changed lines "
                   "no workload runs (blind spots).")
@click.option("--coverage-store", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_STORE, show_default=True,
              help="Where HEAD's coverage map is reused from (a clean map of that commit) "
                   "or stored (the results store `schedperf coverage` writes to).")
@click.option("--coverage-label", default=COVERAGE_LABEL, show_default=True,
              help="The workloads change-aware selection maps and may add (label filter).")
@click.option("--cover-package", "cover_package", multiple=True, metavar="IMPORT.PATH",
              help="Also select for changes to this out-of-tree plugin package of the "
                   "repository (each side then imports it from its own worktree); "
                   "repeatable.")
@click.option("--fail-on-blind-spot", is_flag=True,
              help="Exit 1 when a changed line is a blind spot (no catalog workload runs "
                   "it); without it blind spots are a warning at the top of the report.")
@click.pass_context
def compare(ctx: click.Context, refs: tuple[str, ...], base_config: Path | None,
            head_config: Path | None, base_results: str | None, head_results: str | None,
            store: Path | None, configs: tuple[Path, ...], label_filter: str,
            time_label: str | None, name_regex: str | None, modes: tuple[str, ...],
            repeat: int, seed: int, min_effect: tuple[str, ...], q: float,
            accepted_path: Path | None, fail_on_regression: bool, jobs: int,
            timeout: float | None, repo: Path, out_dir: Path | None, select_changed: bool,
            coverage_store: Path, coverage_label: str, cover_package: tuple[str, ...],
            fail_on_blind_spot: bool) -> None:
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
    changes = _change_options(ctx, bool(refs), select_changed, coverage_store, coverage_label,
                              cover_package, fail_on_blind_spot)
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
    # recorded results were selected when they were measured: --label filters them only
    # when given (--time-label has no meaning here)
    given = ctx.get_parameter_source("label_filter") is not ParameterSource.DEFAULT
    label = label_filter if given or not forms[2] else None
    settings = Settings(
        modes=modes, seed=seed, repeat=repeat, q=q, effects=effects, accepted=accepted,
        jobs=jobs, timeout=timeout, label=label, time_label=time_label,
        name_regex=name_regex, out=out, started=started,
        progress=lambda text: console.print(f"[dim]{text}[/]", highlight=False),
        changes=changes)
    if forms[2]:
        assert base_results is not None and head_results is not None
        comparison = compare_recorded((base_results, head_results), store, settings)
    elif refs:
        comparison = compare_refs((refs[0], refs[1]), repo, configs, settings)
    else:
        assert base_config is not None and head_config is not None
        comparison = compare_configs(base_config, head_config, configs, settings)
    _finish(ctx, out, comparison, fail_on_regression, console)


def _finish(ctx: click.Context, out: Path, comparison: Comparison, fail_on_regression: bool,
            console: Console) -> None:
    """Write the outputs, say what was found, exit: 2 when a side failed, 1 when a regression
    nobody accepted is significant and --fail-on-regression asks, otherwise 0."""
    _write_outputs(out, comparison)
    report = comparison.report
    results = report["results"]
    failures = report.get("failures") or []
    regressions = [r for r in results if r["verdict"] == "regression" and not r["accepted"]]
    console.print(f"verdict: [bold]{report['verdict']}[/] ({len(results)} comparisons, "
                  f"{len(regressions)} open regression(s)); report in {out}/report.md",
                  highlight=False)
    for f in failures:  # once per kind of failure, not once per round
        rounds = f" in round(s) {', '.join(map(str, f['rounds']))}" if f["rounds"] else ""
        mode = "under coverage" if f["mode"] == "coverage" else f"{f['mode']} mode"
        console.print(f"[red]{f['side'].upper()} failed ({f['status']}, {mode}"
                      f"{rounds}) on {len(f['workloads'])} workload(s): "
                      f"{', '.join(f['workloads'])}[/]", highlight=False)
        console.print(f["error"], style="red", highlight=False, markup=False, soft_wrap=True)
    if not results and not failures:
        console.print("[yellow]nothing was compared: no workload produced a value on both "
                      "sides[/]")
    _say_selection(report, console)
    gate = (fail_on_regression and regressions) or blind_spot_gate(report)
    # a failed side is an error whatever --fail-on-regression says: exit 2
    ctx.exit(2 if failures else 1 if gate else 0)


def _say_selection(report: dict[str, Any], console: Console) -> None:
    """The blind spots (a warning, or the failed gate) on the console."""
    selection = report.get("selection") or {}
    spots = selection.get("blind_spots") or []
    if not spots:
        return
    failing = selection.get("fail_on_blind_spot")
    console.print(f"[{'red' if failing else 'yellow'}]{len(spots)} blind spot(s): changed "
                  "lines no catalog workload runs"
                  + (" (--fail-on-blind-spot)" if failing else "") + "[/]", highlight=False)
    for spot in spots[:20]:
        where = f"{spot['file']}:{spot['first']}" + (
            f"-{spot['last']}" if spot["last"] != spot["first"] else "")
        console.print(f"  {where}", highlight=False, markup=False)
