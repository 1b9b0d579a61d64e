"""``schedperf generate``: write random scheduler_perf scenarios for sweeping feature combinations.

The scenarios come from :func:`workloads.generator.generate` (same seed and count ->
byte-identical files); this module only writes them: ``<out>/generated/performance-config.yaml``
and ``<out>/generated/templates/``, each file atomically (temporary file + ``os.replace``).
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from bench.selection import BadInput
from workloads import generator as scenarios
from workloads.generator import CONFIG_FILE, TEMPLATE_DIR, Generated
from workloads.output import atomic_write_bytes

__all__ = ["DEFAULT_OUT", "generate", "write_generated"]

DEFAULT_OUT = Path("schedperf-generated")
# files a previous run may have left that --force removes when they are not rewritten
_OWN_TEMPLATE = re.compile(r"generated-\d+-\d+-[A-Za-z0-9-]+\.yaml")


def write_generated(out: Path | str, generated: Generated, *, force: bool = False) -> list[Path]:
    """Write ``generated`` under ``<out>/<topic>/``; return the written paths.

    Refuses (:class:`BadInput`) when the topic folder exists and is not empty, unless
    ``force``: then the files are replaced and earlier generated templates that are no longer
    part of the output are removed (nothing else is touched).
    """
    target = Path(out) / generated.topic
    if target.exists() and not target.is_dir():
        raise BadInput(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise BadInput(f"{target} exists and is not empty: pass --force to overwrite it")
    written = []
    try:
        for rel, text in generated.files.items():
            written.append(atomic_write_bytes(target / rel, text.encode()))
        if force:
            keep = {target / rel for rel in generated.files}
            templates = target / TEMPLATE_DIR
            for path in sorted(templates.glob("generated-*.yaml")):
                if path not in keep and _OWN_TEMPLATE.fullmatch(path.name):
                    path.unlink()
    except OSError as exc:
        where = exc.filename or target
        raise BadInput(f"cannot write {where}: {exc.strerror or exc}") from exc
    return written


@click.command("generate")
@click.option("--seed", required=True, type=click.IntRange(min=0),
              help="Random seed; the same seed and count always give the same files.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(min=1),
              help="How many scenarios (test cases Generated_<seed>_0 .. _<count-1>).")
@click.option("--out", default=DEFAULT_OUT, show_default=True,
              type=click.Path(path_type=Path, file_okay=False),
              help="Folder to write <topic>/performance-config.yaml and templates into.")
@click.option("--force", is_flag=True,
              help="Overwrite an existing, non-empty <out>/generated folder.")
def generate(seed: int, count: int, out: Path, force: bool) -> None:
    """Write COUNT random scenarios that combine scheduling features at small scale.

    Each scenario is one test case with one workload labelled integration-test and
    generated; run them with: schedperf run --config OUT --label generated
    """
    generated = scenarios.generate(seed, count)
    write_generated(out, generated, force=force)
    config = Path(out) / generated.topic / CONFIG_FILE
    nodes = sum(s.nodes for s in generated.scenarios)
    pods = sum(s.pods for s in generated.scenarios)
    click.echo(f"wrote {count} scenario{'s' if count != 1 else ''} ({nodes} nodes, {pods} pods "
               f"in total) to {config} and {len(generated.files) - 1} templates")
    click.echo(f"run them with: schedperf run --config {out} --label generated")
