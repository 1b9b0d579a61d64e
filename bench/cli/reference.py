"""``schedperf reference``: the real kube-scheduler as a decision oracle (reference_scheduler/).

    schedperf reference build     build it (or find it in the cache); where, key, hash, time
    schedperf reference version   its Kubernetes and Go versions and binary hash

Exit 2 when ``go`` is missing, the sources are not found, or the build or the binary fails.
"""

from __future__ import annotations

from pathlib import Path

import click

from bench.selection import BadInput
from workloads.reference import (
    ReferenceBinary,
    ReferenceClient,
    ReferenceSchedulerError,
    ensure_built,
)

__all__ = ["reference"]

_source_option = click.option(
    "--source", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="The Go module to build (default: reference_scheduler/ of this checkout).")
_cache_option = click.option(
    "--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Cache folder (default: $XDG_CACHE_HOME/schedperf/reference).")
_timeout_option = click.option(
    "--timeout", type=click.FloatRange(min=1), default=3600.0, show_default=True,
    help="Seconds the build may take.")


def _build(source: Path | None, cache_dir: Path | None, timeout: float) -> ReferenceBinary:
    try:
        return ensure_built(source, cache_dir, timeout=timeout)
    except ReferenceSchedulerError as exc:
        raise BadInput(str(exc)) from None


@click.group()
def reference() -> None:
    """The real kube-scheduler (Go library, run in-process) as a decision oracle."""


@reference.command()
@_source_option
@_cache_option
@_timeout_option
def build(source: Path | None, cache_dir: Path | None, timeout: float) -> None:
    """Build the reference scheduler, or find it already built for these sources and Go."""
    binary = _build(source, cache_dir, timeout)
    if binary.cached:
        how = (f"cached (built earlier in {binary.build_seconds:.1f} s)" if binary.build_seconds
               else "cached")
    else:
        how = f"built in {binary.build_seconds:.1f} s"
    click.echo(f"binary:  {binary.path}")
    click.echo(f"key:     {binary.key}")
    click.echo(f"sha256:  {binary.sha256}")
    click.echo(f"go:      {binary.go_version}")
    click.echo(f"build:   {how}")


@reference.command()
@_source_option
@_cache_option
@_timeout_option
def version(source: Path | None, cache_dir: Path | None, timeout: float) -> None:
    """Print the reference scheduler's Kubernetes and Go versions and binary hash (building it
    first if needed)."""
    binary = _build(source, cache_dir, timeout)
    try:
        with ReferenceClient(binary.path, timeout=60.0) as client:
            info = client.version
    except ReferenceSchedulerError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"kubernetes: {info.kubernetes}")
    click.echo(f"go:         {info.go}")
    click.echo(f"protocol:   {info.protocol}")
    click.echo(f"sha256:     {info.binary_sha256}")
    click.echo(f"binary:     {binary.path}")
