"""``schedperf coverage``: which scheduler_core statement lines the selected workloads execute,
stored in the results store as the coverage map of the current commit (docs/coverage.md).

The workloads run under coverage.py in a child process (bench.coverage.collect), never in this
one; coverage.py is imported only when this command runs, so no other command imports it. The
map is stored per commit (``git rev-parse HEAD`` of the checkout the imported scheduler_core
comes from, with whether its working tree was dirty), replacing the map of that commit; then
total and per-module coverage is printed for the selection and for its ``compare`` subset
(the workloads ``schedperf compare`` measures by default).

``--generated N`` also maps the N scenarios of ``schedperf generate --seed
<--generated-seed>`` (bench.coverage.generated), stored in the same map and marked with their
origin; the catalog figures leave them out, and each is listed with the statement lines it
executes that no catalog workload does, and the command lines that write and run it again.

Interrupted (SIGINT, SIGTERM), it kills the coverage process's group, removes its temporary
folder and stores nothing: exit 130 / 143.

Exit status: 0 ok; 2 bad input (configs, filters, a module or file that is not there, no git
checkout), or a workload that failed under coverage (each named with its reason: the map is
stored all the same, with the failure recorded).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bench.cli.output import WHOLE, output_console
from bench.coverage import COMPARE_LABEL, DEFAULT_LABEL
from bench.coverage.generated import beyond_catalog, statement_ranges
from bench.selection import (
    BadInput,
    check_name_regex,
    config_option,
    label_option,
    load_test_cases,
)
from reports.store.coverage import CoverageFigures, CoverageMap, coverage_figures, write_map
from reports.store.schema import DEFAULT_STORE
from workloads.catalog.selection import SelectionError, select

if TYPE_CHECKING:
    from bench.coverage.collect import MapResult

__all__ = ["coverage_command"]

FORMATS = ("table", "json")


def _check_modules(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError) as exc:
            raise BadInput(f"--include-module {name}: cannot be found: {exc}") from exc
        if found is None:
            raise BadInput(f"--include-module {name}: no such module or package on sys.path")


def _check_files(files: tuple[str, ...], packages: tuple[str, ...]) -> tuple[str, ...] | None:
    if not files:
        return None
    tops = {p.split(".")[0] for p in packages}
    for key in files:
        spec = importlib.util.find_spec(key.split("/")[0]) if "/" in key else None
        root = Path(spec.origin).resolve().parents[1] if spec and spec.origin else None
        if (not key.endswith(".py") or key.split("/")[0] not in tops or root is None
                or not (root / key).is_file()):
            raise BadInput(f"--file {key}: not a .py file of the mapped packages "
                           f"({', '.join(sorted(tops))}), named as git names it "
                           "(e.g. scheduler_core/plugins/node_ports.py)")
    return tuple(sorted(set(files)))


def _catalog_compare_count(configs: tuple[Path, ...]) -> int:
    try:
        return len(select(load_test_cases(configs), COMPARE_LABEL))
    except SelectionError:
        return 0


def _figures_dict(fig: CoverageFigures) -> dict[str, Any]:
    return {"workloads": list(fig.workloads), "total": fig.total,
            "modules": fig.per_module.drop("file").to_dicts()}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def _totals_table(rows: list[tuple[str, CoverageFigures]]) -> Table:
    table = Table(title="statement coverage")
    for name in ("workloads", "statements", "covered", "outside error branches"):
        table.add_column(name, justify="left" if name == "workloads" else "right",
                         overflow=WHOLE)
    for title, fig in rows:
        t = fig.total
        table.add_row(Text(title), str(t["statements"]),
                      f"{t['covered']} ({_percent(t['percent'])})",
                      f"{t['outside_covered']}/{t['outside_statements']} "
                      f"({_percent(t['outside_percent'])})")
    return table


def _modules_table(selection: CoverageFigures, compare: CoverageFigures) -> Table:
    table = Table(title="per module (% of statements; outside error branches)")
    table.add_column("module", overflow=WHOLE)
    for name in ("statements", "selection", "selection outside", "compare",
                 "compare outside"):
        table.add_column(name, justify="right")
    other = {r["file"]: r for r in compare.per_module.iter_rows(named=True)}
    for r in selection.per_module.iter_rows(named=True):
        c = other[r["file"]]
        table.add_row(Text(r["module"]), str(r["statements"]), _percent(r["percent"]),
                      _percent(r["outside_percent"]), _percent(c["percent"]),
                      _percent(c["outside_percent"]))
    return table


def _generated_rows(cmap: CoverageMap) -> list[dict[str, Any]]:
    """Per generated scenario: its origin, status, and the statement lines it executes that
    no catalog workload of the map executes (count and ranges)."""
    beyond = beyond_catalog(cmap)
    status = dict(cmap.workloads.select("workload", "status").iter_rows())
    statements = cmap.statement_lines()
    rows = []
    for g in cmap.generated:
        lines = beyond.get(g.workload, {})
        rows.append({**g.to_dict(), "status": status.get(g.workload, "error"),
                     "beyond_catalog": sum(len(v) for v in lines.values()),
                     "beyond_catalog_lines": statement_ranges(lines, statements)})
    return rows


def _generated_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="generated scenarios (statement lines no catalog workload executes)")
    for name in ("scenario", "status", "new lines", "write it again"):
        table.add_column(name, justify="right" if name == "new lines" else "left",
                         overflow=WHOLE)
    for r in rows:
        table.add_row(Text(r["workload"]), Text(r["status"]), str(r["beyond_catalog"]),
                      Text(r["command"]))
    return table


def _print_table(console: Console, result: MapResult, stored: Path, label_filter: str | None,
                 figures: tuple[CoverageFigures, ...], catalog_compare: int,
                 ) -> None:
    cmap = result.cmap
    selection, compare = figures[:2]
    console.print(f"coverage map of commit {cmap.commit[:12]}"
                  f"{' (working tree dirty: not the commit exactly)' if cmap.dirty else ''}: "
                  f"{cmap.workloads.height} workloads in {result.seconds:.0f} s, stored in "
                  f"{stored.parent}", highlight=False, markup=False)
    console.print(_modules_table(selection, compare))
    totals = [(f"selection (--label {label_filter!r}): {len(selection.workloads)}", selection),
              (f"compare subset (label {COMPARE_LABEL!r}): {len(compare.workloads)} "
               f"(of {catalog_compare} in the configs)", compare)]
    if len(figures) > 2:
        n = len(cmap.generated)
        totals.append((f"selection + {n} generated scenario{'s' * (n != 1)}", figures[2]))
    console.print(_totals_table(totals))
    if cmap.generated:
        console.print(_generated_table(_generated_rows(cmap)))


def _report_problems(cmap: CoverageMap, result: MapResult) -> int:
    for item in result.import_errors:
        click.echo(f"schedperf: warning: {item['module']} did not import under coverage: "
                   f"{item['error']}", err=True)
    for key, why in result.unparsed.items():
        click.echo(f"schedperf: warning: {key}: no statements: {why}", err=True)
    failures = cmap.failures()
    for name, why in failures.items():
        click.echo(f"schedperf: error: {name} failed under coverage: {why}", err=True)
    return 2 if failures else 0


@click.command("coverage")
@config_option
@label_option(DEFAULT_LABEL)
@click.option("--name", "name_regex", default=None, metavar="REGEX",
              help="Only workloads whose '<test case>/<workload>' name matches REGEX.")
@click.option("--store", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_STORE, show_default=True,
              help="The results store the map is written to.")
@click.option("--include-module", "include_modules", multiple=True, metavar="PKG",
              help="Also map this package or module (an out-of-tree plugin package, e.g. "
                   "workloads.example_plugins); repeatable.")
@click.option("--file", "files", multiple=True, metavar="PATH",
              help="Map only these files (as git names them, e.g. "
                   "scheduler_core/plugins/node_ports.py); repeatable. A restricted map is "
                   "stored beside the full one, never replacing it.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--timeout-per-workload", "timeout", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="S",
              help="Wall-time limit per workload under coverage, in seconds (a workload over "
                   "it is a failure).")
@click.option("--generated", "generated", type=click.IntRange(min=0), default=0,
              show_default=True, metavar="N",
              help="Also map the N scenarios of `schedperf generate --seed "
                   "<--generated-seed> --count N`, stored in the same map and marked as "
                   "generated (not catalog workloads: the figures leave them out).")
@click.option("--generated-seed", "generated_seed", type=click.IntRange(min=0), default=0,
              show_default=True, metavar="S",
              help="The generator seed of --generated (the same seed: the same scenarios; "
                   "--seed stays the seed of the runs).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True,
              help="table for people, or JSON on stdout (progress then goes to stderr).")
@click.pass_context
def coverage_command(ctx: click.Context, configs: tuple[Path, ...], label_filter: str | None,
                     name_regex: str | None, store: Path, include_modules: tuple[str, ...],
                     files: tuple[str, ...], seed: int, timeout: float | None,
                     generated: int, generated_seed: int, fmt: str) -> None:
    """Map which scheduler_core lines the selected workloads execute; store the map of this
    commit and print statement coverage of the selection and of its 'compare' subset.

    Exit status: 0 ok, 2 bad input or a workload that failed under coverage.
    """
    check_name_regex(name_regex)
    # imported here: no other command (run, compare) imports coverage.py at all
    from bench.coverage.collect import CoverageRunError, MapRequest, code_version, collect_map

    _check_modules(include_modules)
    packages = tuple(dict.fromkeys(("scheduler_core", *include_modules)))
    request = MapRequest(configs=tuple(configs), label_filter=label_filter,
                         name_regex=name_regex, packages=packages,
                         include=_check_files(files, packages), seed=seed, timeout=timeout,
                         generated=generated, generated_seed=generated_seed)
    try:
        commit, dirty, _ = code_version()
        result = collect_map(request, commit=commit, dirty=dirty, progress=True)
    except CoverageRunError as exc:
        raise BadInput(str(exc)) from exc
    cmap = result.cmap
    stored = write_map(store, cmap)
    figures = (coverage_figures(cmap), coverage_figures(cmap, label_filter=COMPARE_LABEL),
               *((coverage_figures(cmap, origin=None),) if cmap.generated else ()))
    catalog_compare = _catalog_compare_count(configs)
    if fmt == "json":
        click.echo(json.dumps({
            "commit": cmap.commit, "dirty": cmap.dirty, "stored": str(stored),
            "seconds": result.seconds, "label_filter": label_filter,
            "workloads": cmap.workloads.to_dicts(),
            "selection": _figures_dict(figures[0]),
            "compare": {**_figures_dict(figures[1]), "label": COMPARE_LABEL,
                        "in_configs": catalog_compare},
            "generated": _generated_rows(cmap),
            **({"with_generated": _figures_dict(figures[2])} if cmap.generated else {}),
            "import_errors": result.import_errors, "failures": cmap.failures()}, indent=1))
    else:
        _print_table(output_console(), result, stored, label_filter, figures, catalog_compare)
    ctx.exit(_report_problems(cmap, result))
