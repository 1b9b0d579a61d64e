"""The detector study's command line (``python bench/study_detector.py --help``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
from rich.console import Console

from bench.study.report import print_summary
from bench.study.run import run_study
from bench.study.settings import StudySettings

__all__ = ["main"]


def _floats(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated fractions") from None
    if not values or any(not 0 < v <= 1 for v in values):
        raise click.BadParameter(f"{text!r}: fractions in (0, 1], e.g. 0.01,0.05")
    return values


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated integers") from None
    if not values or any(v < 1 for v in values):
        raise click.BadParameter(f"{text!r}: round counts >= 1, e.g. 10,20")
    return values


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "configs", multiple=True,
              type=click.Path(exists=True, path_type=Path),
              help="performance-config.yaml files or folders [default: the catalog].")
@click.option("--label", default=None,
              help="Label filter of the study set [default: compare, or integration-test "
                   "when no workload has compare].")
@click.option("--time-label", default=None,
              help="Label filter of the time-mode set [default: compare-time, as schedperf "
                   "compare, or --label when no workload has it].")
@click.option("--name", "name_regex", default=None, metavar="REGEX")
@click.option("--feature", default="spread", show_default=True,
              type=click.Choice(["minDomains", "spread", "affinity", "all"]),
              help="Pods with this feature get the injected slowdown.")
@click.option("--sizes", default="0.01,0.02,0.05,0.10", show_default=True,
              help="Injected slowdowns (fractions).")
@click.option("--measure", "modes", multiple=True, type=click.Choice(["instructions", "time"]),
              help="Modes (repeatable) [default: both].")
@click.option("--rounds", default="10,20", show_default=True,
              help="Time mode: paced rounds per resampled decision (compare's --repeat is "
                   "10).")
@click.option("--pool", default=40, show_default=True, type=click.IntRange(min=1),
              help="Time mode: A/A paced rounds of the whole time set (BASE on both sides).")
@click.option("--pool-slowdown", default=30, show_default=True, type=click.IntRange(min=1),
              help="Time mode: paced rounds per size and affected workload (BASE vs HEAD).")
@click.option("--draws", default=300, show_default=True, type=click.IntRange(min=1),
              help="Time mode: resampled decisions per cell and round count.")
@click.option("--attribution-rounds", default=3, show_default=True,
              type=click.IntRange(min=0),
              help="Instructions mode: paced time rounds behind the attribution of a "
                   "flagged workload (smallest and largest size; 0: none).")
@click.option("--controls", default=2, show_default=True, type=click.IntRange(min=0),
              help="Instructions mode: unaffected workloads counted at every size.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1),
              help="Parallel valgrind runs; time mode: paced rounds at once.")
@click.option("--no-compare", "no_compare", is_flag=True,
              help="Skip the real `schedperf compare` A/A runs (no wall times; instruction "
                   "A/A counted in-process; time A/A from the study's own pool anyway).")
@click.option("--timeout-per-run", "timeout", default=900.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Wall seconds per worker run (time mode: per paced round).")
@click.option("--resume", is_flag=True,
              help="Reuse the real compare reports an interrupted study left in --out; "
                   "time rounds and instruction counts always run again.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Output folder [default: ./detector-study/<UTC time>].")
def main(configs: tuple[Path, ...], label: str | None, time_label: str | None,
         name_regex: str | None, feature: str, sizes: str, modes: tuple[str, ...],
         rounds: str, pool: int, pool_slowdown: int, draws: int, attribution_rounds: int,
         controls: int, seed: int, jobs: int, no_compare: bool,
         timeout: float, resume: bool, out_dir: Path | None) -> None:
    """Measure the false-alarm rate and the power of `schedperf compare` with injected
    slowdowns (docs/detector-study.md)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
    settings = StudySettings(
        out=(out_dir or Path("detector-study") / stamp).resolve(), configs=configs,
        label=label, time_label=time_label, name_regex=name_regex, feature=feature,
        sizes=_floats(sizes), modes=modes or ("instructions", "time"), rounds=_ints(rounds),
        pool=pool, pool_slowdown=pool_slowdown, draws=draws,
        attribution_rounds=attribution_rounds, controls=controls, seed=seed,
        jobs=jobs, compare_runs=not no_compare, timeout=timeout, resume=resume)
    console = Console()
    results = run_study(settings, Console(stderr=True))
    print_summary(results, console)
    console.print(f"results: {settings.out / 'results.json'}", highlight=False)
