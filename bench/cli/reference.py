"""``schedperf reference``: the real kube-scheduler as a decision oracle (reference_scheduler/).

    schedperf reference build     build it (or find it in the cache); where, key, hash, time
    schedperf reference version   its Kubernetes and Go versions and binary hash

Both act on every pinned release (v1.34, v1.37) unless ``--release`` names one.

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
from workloads.reference.build import RELEASES, Release, release_named

__all__ = ["reference"]

_source_option = click.option(
    "--source", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="The Go module to build (default: reference_scheduler/ of this checkout).")
_cache_option = click.option(
    "--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Cache folder (default: $XDG_CACHE_HOME/schedperf/reference).")
_timeout_option = click.option(
    "--timeout", type=click.FloatRange(min=1), default=3600.0, show_default=True,
    help="Seconds each build may take.")


def _releases(value: str) -> tuple[Release, ...]:
    if value == "all":
        return RELEASES
    try:
        return (release_named(value),)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_release_option = click.option(
    "--release", "releases", default="all", show_default=True, metavar="all|v1.34|v1.37",
    callback=lambda ctx, param, value: _releases(value),
    help="The pinned Kubernetes release(s) of the reference to act on.")


def _build(source: Path | None, cache_dir: Path | None, timeout: float,
           release: Release) -> ReferenceBinary:
    try:
        return ensure_built(source, cache_dir, timeout=timeout, release=release)
    except ReferenceSchedulerError as exc:
        raise BadInput(f"reference {release.name}: {exc}") from None


@click.group()
def reference() -> None:
    """The real kube-scheduler (Go library, run in-process) as a decision oracle."""


@reference.command()
@_source_option
@_cache_option
@_timeout_option
@_release_option
def build(source: Path | None, cache_dir: Path | None, timeout: float,
          releases: tuple[Release, ...]) -> None:
    """Build the reference scheduler (each release), or find it already built for these
    sources and Go."""
    for n, release in enumerate(releases):
        binary = _build(source, cache_dir, timeout, release)
        if binary.cached:
            how = (f"cached (built earlier in {binary.build_seconds:.1f} s)"
                   if binary.build_seconds else "cached")
        else:
            how = f"built in {binary.build_seconds:.1f} s"
        if n:
            click.echo("")
        click.echo(f"release: {release.name} (Kubernetes {release.kubernetes}, "
                   f"{release.modfile})")
        click.echo(f"binary:  {binary.path}")
        click.echo(f"key:     {binary.key}")
        click.echo(f"sha256:  {binary.sha256}")
        click.echo(f"go:      {binary.go_version}")
        click.echo(f"build:   {how}")


@reference.command()
@_source_option
@_cache_option
@_timeout_option
@_release_option
def version(source: Path | None, cache_dir: Path | None, timeout: float,
            releases: tuple[Release, ...]) -> None:
    """Print the reference scheduler's Kubernetes and Go versions and binary hash (building it
    first if needed), per release."""
    for n, release in enumerate(releases):
        binary = _build(source, cache_dir, timeout, release)
        try:
            with ReferenceClient(binary.path, timeout=60.0) as client:
                info = client.version
        except ReferenceSchedulerError as exc:
            raise BadInput(f"reference {release.name}: {exc}") from None
        if n:
            click.echo("")
        click.echo(f"release:    {release.name}")
        click.echo(f"kubernetes: {info.kubernetes}")
        click.echo(f"go:         {info.go}")
        click.echo(f"protocol:   {info.protocol}")
        click.echo(f"sha256:     {info.binary_sha256}")
        click.echo(f"binary:     {binary.path}")
