"""``schedperf run``: run the selected scheduler_perf workloads and write their results.

Also the helpers the other config-reading commands share: the ``--config`` / ``--label``
options, loading the configs (or the built-in catalog) and :class:`BadInput` (exit 2).
"""

from __future__ import annotations

import re
import statistics
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

import workloads
from bench.cli.output import WHOLE, output_console
from bench.profiling import have_pyinstrument, profile_file_stem, profile_workload
from bench.results import (
    environment_fingerprint,
    write_dataitems,
    write_decisions_parquet,
    write_placements_parquet,
    write_progress_files,
    write_results_parquet,
)
from bench.sharding import ShardError, parse_shard, shard
from workloads.catalog.selection import BENCHMARK_DEFAULT_FILTER, SelectionError, select
from workloads.config import ConfigFileError, TestCase, Workload, load_configs
from workloads.result import (
    STATUS_FAILED,
    STATUS_OK,
    STATUS_THRESHOLD_MISSED,
    STATUS_TIMEOUT,
    WorkloadResult,
)
from workloads.runner import ProgressEvent, run_workload

__all__ = [
    "CATALOG_DIR",
    "BadInput",
    "config_option",
    "label_option",
    "load_test_cases",
    "run",
    "select_workloads",
]

CATALOG_DIR = Path(workloads.__file__).resolve().parent / "configs"
FAILING_STATUSES = (STATUS_THRESHOLD_MISSED, STATUS_FAILED, STATUS_TIMEOUT)
THROUGHPUT_METRIC = "SchedulingThroughput"


class BadInput(click.ClickException):
    """Bad input (config errors, a filter matching nothing): one line, exit 2."""

    exit_code = 2


def config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--config", "configs", multiple=True, type=click.Path(path_type=Path),
        help="A performance-config.yaml or a folder of <topic>/performance-config.yaml "
             "(repeatable). Default: the built-in catalog.")(f)


def label_option(default: str | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    shown = f" [default: {default!r}; '' selects everything]" if default else ""
    return click.option(
        "--label", "label_filter", default=default,
        help="Label filter, e.g. 'performance,-short' (+x/x: must have, -x: must not)."
             + shown)


def load_test_cases(configs: Sequence[Path]) -> list[TestCase]:
    """Test cases of every ``--config`` path, or of the built-in catalog without one."""
    paths = list(configs)
    if not paths:
        if not CATALOG_DIR.is_dir():
            raise BadInput(f"no built-in catalog exists yet ({CATALOG_DIR} is missing): "
                           "pass --config PATH to a performance-config.yaml or a folder of them")
        paths = [CATALOG_DIR]
    test_cases: list[TestCase] = []
    for path in paths:
        if not path.exists():
            raise BadInput(f"--config {path}: no such file or folder")
        try:
            test_cases.extend(load_configs(path))
        except ConfigFileError as exc:
            raise BadInput(str(exc)) from exc
    return test_cases


def select_workloads(test_cases: Sequence[TestCase], label_filter: str | None,
                     name_regex: str | None = None) -> list[tuple[TestCase, Workload]]:
    try:
        return select(test_cases, label_filter, name_regex)
    except SelectionError as exc:
        raise BadInput(str(exc)) from exc


def _default_out_dir(now: datetime) -> Path:
    return Path("schedperf-results") / now.strftime("%Y-%m-%dT%H-%M-%SZ")


def _throughput(result: WorkloadResult) -> float | None:
    values = [d.data["Average"] for d in result.data_items
              if d.labels.get("Metric") == THROUGHPUT_METRIC and "Average" in d.data]
    return statistics.fmean(values) if values else None


_STATUS_STYLE = {STATUS_OK: "green", STATUS_THRESHOLD_MISSED: "yellow", STATUS_FAILED: "red",
                 STATUS_TIMEOUT: "red"}


def _summary(results: list[tuple[int, WorkloadResult]], repeat: int) -> Table:
    table = Table(title="schedperf run")
    table.add_column("workload")
    if repeat > 1:
        table.add_column("round", justify="right")
    table.add_column("status")
    table.add_column("pods/s Average", justify="right")
    table.add_column("attempts/pod", justify="right")
    table.add_column("wall s", justify="right")
    for round_no, r in results:
        pods_s = _throughput(r)
        per_pod = r.attempts / r.scheduled_pods if r.scheduled_pods else None
        style = _STATUS_STYLE.get(r.status, "dim")
        cells = [r.name]
        if repeat > 1:
            cells.append(str(round_no))
        cells += [f"[{style}]{r.status}[/]",
                  "-" if pods_s is None else f"{pods_s:.1f}",
                  "-" if per_pod is None else f"{per_pod:.2f}",
                  f"{r.wall_seconds:.2f}"]
        table.add_row(*cells)
    return table


def _write_outputs(out: Path, results: list[tuple[int, WorkloadResult]],
                   env: dict[str, Any], run_id: str, started: datetime,
                   record_decisions: bool) -> list[Path]:
    written = [
        write_results_parquet(out / "results.parquet", results, env, run_id=run_id,
                              timestamp=started),
        write_placements_parquet(out / "placements.parquet", results, run_id=run_id),
    ]
    if record_decisions:
        path = write_decisions_parquet(out / "decisions.parquet", results, run_id=run_id)
        if path is not None:
            written.append(path)
    return written


def _shard_callback(ctx: click.Context, param: click.Parameter,
                    value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except ShardError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


@click.command()
@config_option
@label_option(BENCHMARK_DEFAULT_FILTER)
@click.option("--name", "name_regex", default=None, metavar="REGEX",
              help="Only workloads whose '<test case>/<workload>' name matches REGEX.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help="Output folder [default: ./schedperf-results/<UTC timestamp>].")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(min=1),
              help="Run every selected workload N times (rounds).")
@click.option("--record-decisions", is_flag=True,
              help="Record every plugin decision into decisions.parquet (slow).")
@click.option("--timeout-per-workload", "timeout", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="S", help="Wall-time limit per workload, in seconds.")
@click.option("--clock", type=click.Choice(["virtual", "real"]), default="virtual",
              show_default=True)
@click.option("--profile", "profile_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help="Write a cProfile .pstats per workload into DIR (and a speedscope JSON "
                   "from a second, pyinstrument run when pyinstrument is installed). "
                   "Profiled throughput is not comparable with unprofiled runs.")
@click.option("--shard", "shard_spec", default=None, metavar="I/N", callback=_shard_callback,
              help="Run only shard I of N (1-based) of the selected workloads, balanced by "
                   "expected cost: N jobs with --shard 1/N ... N/N run each workload once "
                   "(docs/ci.md).")
@click.pass_context
def run(ctx: click.Context, configs: tuple[Path, ...], label_filter: str | None,
        name_regex: str | None, out_dir: Path | None, seed: int, repeat: int,
        record_decisions: bool, timeout: float | None, clock: str,
        profile_dir: Path | None, shard_spec: tuple[int, int] | None) -> None:
    """Run the selected workloads; write DataItems JSON and Parquet results into --out.

    Exit status: 0 all ok, 1 a threshold was missed or a workload failed or timed out,
    2 bad input.
    """
    if name_regex:
        try:
            re.compile(name_regex)
        except re.error as exc:
            raise BadInput(f"--name {name_regex!r} is not a valid regular expression: "
                           f"{exc}") from exc
    chosen = select_workloads(load_test_cases(configs), label_filter, name_regex)
    selected = len(chosen)
    if shard_spec is not None:
        chosen = shard(chosen, *shard_spec)
    started = datetime.now(UTC)
    out = out_dir or _default_out_dir(started)
    run_id = f"{started.strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:8]}"
    env = environment_fingerprint(clock=clock, seed=seed)
    console = output_console()  # not a terminal: wide, so names are not cut in logs
    if shard_spec is not None:
        console.print(f"shard {shard_spec[0]}/{shard_spec[1]}: {len(chosen)} of {selected} "
                      "selected workloads", highlight=False)
    results: list[tuple[int, WorkloadResult]] = []
    dataitem_files: list[Path] = []
    profiles: list[Path] = []
    if profile_dir is not None and not have_pyinstrument():
        console.print("--profile: pyinstrument is not installed, writing .pstats only "
                      "(pip install pyinstrument for speedscope JSON)", highlight=False)
    with Progress(TextColumn("{task.description}", markup=False,
                             table_column=Column(overflow=WHOLE)),
                  BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                  console=console) as progress:
        for round_no in range(1, repeat + 1):
            round_results: list[WorkloadResult] = []
            for tc, w in chosen:
                label = w.full_name if repeat == 1 else f"{w.full_name} #{round_no}"
                task = progress.add_task(label, total=None, detail="")

                def on_progress(ev: ProgressEvent, task: Any = task) -> None:
                    progress.update(task, total=ev.op_count, completed=ev.op_index,
                                    detail=f"{ev.opcode}: {ev.pods_scheduled} pods")

                def one_run(tc: TestCase = tc, w: Workload = w,
                            on_progress: Callable[[ProgressEvent], None] = on_progress,
                            ) -> WorkloadResult:
                    return run_workload(tc, w, seed=seed, clock=clock,
                                        record_decisions=record_decisions, timeout=timeout,
                                        progress=on_progress)

                if profile_dir is None:
                    result = one_run()
                else:
                    result, files = profile_workload(
                        one_run, profile_dir, profile_file_stem(w.full_name, round_no))
                    profiles.extend(files)
                total = progress.tasks[task].total or 1
                progress.update(task, total=total, completed=total,
                                detail=f"{result.status} ({result.scheduled_pods} pods)")
                round_results.append(result)
                results.append((round_no, result))
            # one DataItems file per topic and round, as upstream writes one per topic
            topics: dict[str, list[WorkloadResult]] = {}
            for r in round_results:
                topics.setdefault(r.topic, []).append(r)
            finished = datetime.now(UTC)
            for topic, rs in topics.items():
                dataitem_files.append(write_dataitems(rs, out, topic, finished))
            dataitem_files.extend(write_progress_files(round_results, out, finished))
            # rewritten after every round: an interrupted run keeps the finished rounds
            written = _write_outputs(out, results, env, run_id, started, record_decisions)
    console.print(_summary(results, repeat))
    for round_no, r in results:
        if r.status != STATUS_OK and r.reason:
            where = r.name if repeat == 1 else f"{r.name} #{round_no}"
            console.print(f"[bold]{where}[/]: {r.status}: {r.reason}", markup=True,
                          highlight=False)
    console.print(f"results in {out}: " + ", ".join(p.name for p in dataitem_files + written),
                  highlight=False)
    if profiles:
        console.print(f"profiles in {profile_dir}: " + ", ".join(p.name for p in profiles),
                      highlight=False)
    bad = [r for _, r in results if r.status in FAILING_STATUSES]
    ctx.exit(1 if bad else 0)
