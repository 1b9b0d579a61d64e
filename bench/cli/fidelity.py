"""``schedperf fidelity``: run workloads through scheduler_core in lockstep with the real
kube-scheduler (the reference binary of the pinned release each workload needs: v1.37 for pod
groups, ``workloads.engine.release``) and compare every scheduling attempt, and every
evaluation of a pod-group member inside a group cycle.

Same workload selection as ``schedperf run`` (``--config``, ``--label``, ``--name``), with
``integration-test`` as the default label: every attempt costs a full evaluation on both sides.
Writes ``fidelity.parquet`` into ``--out`` (after each workload) and prints one table per
workload and one of the disagreements by stage and plugin.

Exit status: 0 every difference is a documented deviation; 1 a disagreement that the
known-deviations file does not document; 2 bad input, or a workload the check could not
follow (the reference failed, the workload failed).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bench.cli.output import output_console
from bench.selection import (
    BadInput,
    check_name_regex,
    config_option,
    label_option,
    load_test_cases,
    select_workloads,
)
from reports.render.markdown import md_escape
from workloads.engine.release import release_for
from workloads.fidelity.deviations import DEFAULT_DEVIATIONS, load_deviations
from workloads.fidelity.errors import DeviationsFileError
from workloads.fidelity.lockstep import run_lockstep
from workloads.fidelity.results import FidelityWriter, WorkloadSummary, summarize
from workloads.reference import ReferenceSchedulerError, ensure_built

__all__ = ["fidelity"]


@click.command()
@config_option
@label_option("integration-test")
@click.option("--name", "name_regex", default=None, metavar="REGEX",
              help="Only workloads whose '<test case>/<workload>' name matches REGEX.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("schedperf-fidelity"), show_default=True,
              help="Folder for fidelity.parquet.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--timeout-per-workload", "timeout", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="S", help="Wall-time limit per workload, in seconds.")
@click.option("--every", type=click.IntRange(min=1), default=1, show_default=True,
              metavar="N", help="Compare every N-th scheduling attempt (1: all); the others "
                                "are still mirrored, so the two sides never drift.")
@click.option("--deviations", "deviations_file", type=click.Path(path_type=Path),
              default=None, help=f"Known-deviations file [default: {DEFAULT_DEVIATIONS.name} "
                                 "shipped with schedperf].")
@click.option("--reference-cache", "reference_cache",
              type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Where the reference binary is cached (default: as `schedperf reference "
                   "build`).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True,
              help="The summary: tables, or JSON or Markdown (for a CI step summary) on "
                   "stdout.")
@click.pass_context
def fidelity(ctx: click.Context, configs: tuple[Path, ...], label_filter: str | None,
             name_regex: str | None, out_dir: Path, seed: int, timeout: float | None,
             every: int,
             deviations_file: Path | None, reference_cache: Path | None, fmt: str) -> None:
    """Compare every scheduling attempt of the selected workloads with kube-scheduler.

    Exit status: 0 agreement (or documented deviations only), 1 an undocumented
    disagreement, 2 bad input or a workload the check could not follow.
    """
    check_name_regex(name_regex)
    try:
        deviations = load_deviations(deviations_file)
    except DeviationsFileError as exc:
        raise BadInput(str(exc)) from None
    chosen = select_workloads(load_test_cases(configs), label_filter, name_regex)
    releases = [release_for(tc, w) for tc, w in chosen]
    binaries = {}
    for release in dict.fromkeys(releases):  # every release needed, before anything runs
        try:
            binaries[release] = ensure_built(cache=reference_cache, release=release)
        except ReferenceSchedulerError as exc:
            raise BadInput(str(exc)) from None
    console = output_console(stderr=fmt != "table")
    writer = FidelityWriter(out_dir)
    summaries: list[WorkloadSummary] = []
    for i, ((tc, w), release) in enumerate(zip(chosen, releases, strict=True), 1):
        console.print(f"[{i}/{len(chosen)}] {tc.name}/{w.name}", highlight=False, markup=False)
        binary = binaries[release]
        wf = run_lockstep(tc, w, binary.path, seed=seed, timeout=timeout, every=every)
        summary, rows = summarize(wf, deviations)
        writer.add(rows, reference_sha256=binary.sha256)
        summaries.append(summary)
    if fmt == "json":
        click.echo(json.dumps([_as_json(s) for s in summaries], indent=2))
    elif fmt == "markdown":
        click.echo(_markdown(summaries))
    else:
        _render(output_console(), summaries, writer.path)
    failed = any(s.status == "error" for s in summaries)
    disagreed = any(s.disagreed for s in summaries)
    ctx.exit(2 if failed else 1 if disagreed else 0)


def _as_json(s: WorkloadSummary) -> dict[str, object]:
    return {"workload": s.name, "status": s.status, "reason": s.reason,
            "notes": s.notes, "attempts_run": s.attempts_run, "attempts": s.attempts,
            "agreed": s.agreed,
            "documented": s.documented,
            "disagreed": s.disagreed, "deviations": s.deviations_seen,
            "disagreements": [{"stage": k[0], "plugin": k[1], "field": k[2], "count": n,
                               "example": ex} for k, (n, ex) in sorted(s.by_plugin.items())]}


def _cell(text: object, limit: int = 200) -> str:
    return md_escape(str(text), limit=limit)


def _markdown(summaries: list[WorkloadSummary]) -> str:
    lines = ["## schedperf fidelity: scheduler_core vs kube-scheduler v1.34", "",
             "| workload | status | attempts | compared | agreed | documented | disagreed |",
             "|---|---|--:|--:|--:|--:|--:|"]
    for s in summaries:
        status = s.status if not s.reason else f"{s.status}: {s.reason}"
        lines.append(f"| {_cell(s.name)} | {_cell(status)} | {s.attempts_run} | {s.attempts} "
                     f"| {s.agreed} | {s.documented} | {s.disagreed} |")
    rows = [(s.name, key, n, ex) for s in summaries
            for key, (n, ex) in sorted(s.by_plugin.items())]
    if rows:
        lines += ["", "### Disagreements (not in the known deviations)", "",
                  "| workload | stage | plugin | field | count | example |",
                  "|---|---|---|---|--:|---|"]
        lines += [f"| {_cell(w)} | {k[0]} | {_cell(k[1] or '—')} | {_cell(k[2])} | {n} | "
                  f"{_cell(ex)} |" for w, k, n, ex in rows]
    else:
        lines += ["", "No disagreement outside the known deviations."]
    return "\n".join(lines)


def _render(console: Console, summaries: list[WorkloadSummary], path: Path) -> None:
    table = Table(title="schedperf fidelity: scheduler_core vs kube-scheduler v1.34")
    for col in ("workload", "status", "attempts", "compared", "agreed", "documented",
                "disagreed"):
        table.add_column(col, justify="left" if col in ("workload", "status") else "right")
    for s in summaries:
        status = s.status if not s.reason else f"{s.status}: {s.reason}"
        table.add_row(Text(s.name), Text(status[:160]), str(s.attempts_run), str(s.attempts),
                      str(s.agreed), str(s.documented), str(s.disagreed))
    console.print(table)
    for s in summaries:
        for note in s.notes:
            console.print(f"note: {s.name}: {note}", highlight=False, markup=False)
    worst = Table(title="disagreements (not in the known deviations)")
    for col in ("workload", "stage", "plugin", "field", "count", "example"):
        worst.add_column(col)
    for s in summaries:
        for (stage, plugin, fld), (n, example) in sorted(s.by_plugin.items()):
            worst.add_row(Text(s.name), stage, Text(plugin or "—"), Text(fld), str(n),
                          Text(example[:200]))
    if worst.row_count:
        console.print(worst)
    total = sum(s.attempts for s in summaries)
    agreed = sum(s.agreed for s in summaries)
    console.print(
        f"{total} attempts compared in {sum(s.status == 'compared' for s in summaries)} "
        f"workloads: {agreed} agreed, {sum(s.documented for s in summaries)} with documented "
        f"deviations only, {sum(s.disagreed for s in summaries)} disagreed; "
        f"{sum(s.status == 'unsupported' for s in summaries)} unsupported, "
        f"{sum(s.status == 'error' for s in summaries)} failed. Rows: {path}",
        highlight=False, markup=False)
