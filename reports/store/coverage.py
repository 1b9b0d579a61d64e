"""Coverage maps in the results store: which workloads execute which statement lines, per
commit (``schedperf coverage``, docs/coverage.md).

    <store>/_coverage/<commit>/<scope>/map.json                 what the map is (written last)
    <store>/_coverage/<commit>/<scope>/lines-<uuid>.arrow       LINES_SCHEMA rows
    <store>/_coverage/<commit>/<scope>/workloads-<uuid>.arrow   WORKLOADS_SCHEMA rows
    <store>/_coverage/<commit>/<scope>/statements-<uuid>.arrow  STATEMENTS_SCHEMA rows

``scope`` is ``all`` for a map of every file of its packages, ``files-<hash>`` for one
restricted to some files (so that a cheap map of a few changed files never replaces a full
one). The tables are Arrow IPC files (zstd), not Parquet: every ``*.parquet`` under a store is
a results part of exactly the store schema (docs/store.md), and readers glob
``**/*.parquet``; the leading ``_`` also keeps the folder out of Hive-style dataset scans.

Writing a map takes the store's lock, writes the three tables under new names, then replaces
``map.json`` atomically, then deletes the tables no ``map.json`` names: a reader sees the old
map or the new one, and a writer killed at any point leaves the old map readable. A map
replaces the one of the same commit and scope.

Rows:

* lines: ``kind`` ``line``: statement ``line`` of ``file`` executed by ``workload`` (its first
  line for a multi-line statement; the ``def``/decorator lines of a function go to the
  workloads that run its body); ``kind`` ``arc``: coverage.py's arc ``line`` -> ``to_line``
  (negative: entering or leaving a code object, as coverage.py records them). ``workload``
  :data:`IMPORT_TIME` holds what ran outside every workload (imports, loading configs).
* workloads: every workload of the selection with its ``labels``, ``cost_seconds`` (CPU
  seconds of its run under coverage), ``status`` (the run's, or ``error`` when the harness
  raised) and ``error`` (the reason, null when it ran).
* statements: every statement ``line`` of every mapped ``file`` and whether it is
  ``outside_error_branch`` (bench.coverage.statements has the definition): the denominators.

A map may also hold **generated scenarios** (``schedperf coverage --generated N``): workloads
of ``schedperf generate`` configs, mapped like the catalog's and stored in the same tables,
each marked in ``map.json`` (``generated``: its seed, index, feature tags and the command
lines that reproduce it, :class:`GeneratedOrigin`). They are not catalog workloads: nothing
``schedperf compare`` can measure, so :meth:`CoverageMap.workload_names`, ``line_sets`` and
:func:`coverage_figures` leave them out unless asked (``origin``). A map holding them is
written as ``coverage_schema_version`` 2 (an older reader refuses it instead of counting them
as catalog workloads); a map without them stays version 1.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from reports.store.bookkeeping import store_lock
from reports.store.problems import StoreError
from workloads.catalog.selection import matches
from workloads.output.dataitems import atomic_write_bytes
from workloads.result import STATUS_OK, STATUS_THRESHOLD_MISSED

__all__ = [
    "COVERAGE_DIR",
    "COVERAGE_SCHEMA_VERSION",
    "IMPORT_TIME",
    "KIND_ARC",
    "KIND_LINE",
    "LINES_SCHEMA",
    "ORIGIN_CATALOG",
    "ORIGIN_GENERATED",
    "RAN",
    "STATEMENTS_SCHEMA",
    "WORKLOADS_SCHEMA",
    "CoverageFigures",
    "CoverageMap",
    "GeneratedOrigin",
    "MapInfo",
    "coverage_figures",
    "list_maps",
    "map_commits",
    "module_name",
    "read_map",
    "write_map",
]

COVERAGE_DIR = "_coverage"
COVERAGE_SCHEMA_VERSION = 2  # written only for maps holding generated scenarios
_PLAIN_VERSION = 1  # a map without generated scenarios: readable by every reader
MANIFEST = "map.json"
IMPORT_TIME = "<import>"  # no workload name: those always hold a "/"
KIND_LINE = "line"
KIND_ARC = "arc"
# statuses of a workload that ran to its end: only their lines count as measured
RAN = (STATUS_OK, STATUS_THRESHOLD_MISSED)
SCOPE_ALL = "all"
ORIGIN_CATALOG = "catalog"  # a workload of the selected configs (the catalog)
ORIGIN_GENERATED = "generated"  # a `schedperf generate` scenario (GeneratedOrigin)
_TABLES = ("lines", "workloads", "statements")
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")

LINES_SCHEMA = pa.schema([
    ("commit", pa.string()), ("workload", pa.string()), ("file", pa.string()),
    ("kind", pa.string()), ("line", pa.int32()), ("to_line", pa.int32())])
WORKLOADS_SCHEMA = pa.schema([
    ("commit", pa.string()), ("workload", pa.string()), ("labels", pa.list_(pa.string())),
    ("cost_seconds", pa.float64()), ("status", pa.string()), ("error", pa.string())])
STATEMENTS_SCHEMA = pa.schema([
    ("commit", pa.string()), ("file", pa.string()), ("line", pa.int32()),
    ("outside_error_branch", pa.bool_())])
_SCHEMAS = {"lines": LINES_SCHEMA, "workloads": WORKLOADS_SCHEMA,
            "statements": STATEMENTS_SCHEMA}


def _empty(schema: pa.Schema) -> pl.DataFrame:
    frame = pl.from_arrow(schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.drop("commit")


@dataclass(frozen=True)
class GeneratedOrigin:
    """Where a generated scenario of a map comes from: scenario ``index`` of ``schedperf
    generate --seed <seed>`` (test case ``Generated_<seed>_<index>``, whose one workload is
    ``workload``), its feature ``tags``, ``command``: the ``schedperf generate`` command line
    that writes it again (same seed: the same scenario), ``run_command``: the command line
    that runs that one workload as the map ran it (the map's run seed)."""

    workload: str
    seed: int
    index: int
    tags: tuple[str, ...]
    command: str
    run_command: str

    @property
    def test_case(self) -> str:
        return self.workload.split("/", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload, "seed": self.seed, "index": self.index,
                "tags": list(self.tags), "command": self.command,
                "run_command": self.run_command}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: Path | str) -> GeneratedOrigin:
        try:
            return cls(str(data["workload"]), int(data["seed"]), int(data["index"]),
                       tuple(str(t) for t in data["tags"]), str(data["command"]),
                       str(data["run_command"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{where}: a generated scenario entry is not "
                             f"workload/seed/index/tags/command/run_command: {exc}") from exc


@dataclass(frozen=True)
class CoverageMap:
    """A coverage map of one commit: the three tables (without their ``commit`` column) and
    what the map covers. ``dirty``: the working tree differed from the commit (such a map is
    not the commit's, see :func:`read_map`). ``include``: the files it is restricted to
    (None: every file of ``packages``)."""

    commit: str
    dirty: bool
    lines: pl.DataFrame = field(default_factory=lambda: _empty(LINES_SCHEMA))
    workloads: pl.DataFrame = field(default_factory=lambda: _empty(WORKLOADS_SCHEMA))
    statements: pl.DataFrame = field(default_factory=lambda: _empty(STATEMENTS_SCHEMA))
    packages: tuple[str, ...] = ("scheduler_core",)
    include: tuple[str, ...] | None = None
    created: str = ""  # ISO time, UTC
    meta: dict[str, Any] = field(default_factory=dict)  # tool versions, selection, core path
    # the workloads that are generated scenarios, with their origin (module docstring)
    generated: tuple[GeneratedOrigin, ...] = ()

    @property
    def scope(self) -> str:
        return _scope(self.include)

    def origins(self) -> dict[str, GeneratedOrigin]:
        """{workload: its origin} of the generated scenarios."""
        return {g.workload: g for g in self.generated}

    def workload_names(self, statuses: Iterable[str] | None = RAN, *,
                       origin: str | None = ORIGIN_CATALOG) -> list[str]:
        """The workloads of the map (in map order) whose status is one of ``statuses``
        (None: all), of ``origin``: :data:`ORIGIN_CATALOG` (default),
        :data:`ORIGIN_GENERATED`, or None for both."""
        frame = self.workloads
        if statuses is not None:
            frame = frame.filter(pl.col("status").is_in(list(statuses)))
        names: list[str] = frame["workload"].to_list()
        if origin is None:
            return names
        generated = {g.workload for g in self.generated}
        if origin == ORIGIN_GENERATED:
            return [n for n in names if n in generated]
        if origin == ORIGIN_CATALOG:
            return [n for n in names if n not in generated]
        raise ValueError(f"origin {origin!r}: expected {ORIGIN_CATALOG!r}, "
                         f"{ORIGIN_GENERATED!r} or None")

    def failures(self) -> dict[str, str]:
        """{workload: its status and why} of the workloads that did not run to their end."""
        frame = self.workloads.filter(~pl.col("status").is_in(list(RAN)))
        return {w: f"{s}: {e}" if e else s
                for w, s, e in frame.select("workload", "status", "error").iter_rows()}

    def costs(self) -> dict[str, float]:
        return dict(self.workloads.select("workload", "cost_seconds").iter_rows())

    def _line_rows(self, names: Iterable[str]) -> pl.DataFrame:
        return self.lines.filter((pl.col("kind") == KIND_LINE)
                                 & pl.col("workload").is_in(list(names)))

    def line_sets(self, workloads: Iterable[str] | None = None,
                  ) -> dict[str, dict[str, frozenset[int]]]:
        """workload -> file -> statement lines it executes, for ``workloads`` (default: the
        catalog workloads that ran, :data:`RAN`)."""
        names = self.workload_names() if workloads is None else list(workloads)
        out: dict[str, dict[str, set[int]]] = {n: {} for n in names}
        for name, file, lines in (self._line_rows(names).group_by("workload", "file")
                                  .agg(pl.col("line")).iter_rows()):
            out[name][file] = set(lines)
        return {n: {f: frozenset(v) for f, v in files.items()} for n, files in out.items()}

    def import_lines(self) -> dict[str, frozenset[int]]:
        """file -> statement lines executed outside every workload (imports)."""
        return self.line_sets([IMPORT_TIME])[IMPORT_TIME]

    def statement_lines(self, *, outside_error: bool = False) -> dict[str, frozenset[int]]:
        """file -> its statement lines (only those outside error branches if asked)."""
        frame = self.statements
        if outside_error:
            frame = frame.filter(pl.col("outside_error_branch"))
        return {f: frozenset(v) for f, v in
                frame.group_by("file").agg(pl.col("line")).iter_rows()}

    def statement_totals(self) -> pl.DataFrame:
        """Per file: ``statements`` and ``outside_statements`` (outside error-raising
        branches), sorted by file."""
        return (self.statements.group_by("file")
                .agg(pl.len().cast(pl.Int64).alias("statements"),
                     pl.col("outside_error_branch").sum().cast(pl.Int64)
                     .alias("outside_statements"))
                .sort("file"))

    def covers_files(self, files: Iterable[str]) -> bool:
        """Whether the map has every one of ``files`` in its scope."""
        return self.include is None or set(files) <= set(self.include)


def _scope(include: Iterable[str] | None) -> str:
    if include is None:
        return SCOPE_ALL
    digest = hashlib.sha256("\0".join(sorted(set(include))).encode("utf-8", "surrogateescape"))
    return f"files-{digest.hexdigest()[:16]}"


def _commit_dir(store: Path, commit: str) -> Path:
    if not _COMMIT.match(commit):
        raise ValueError(f"{commit!r} is not a full or abbreviated commit hash")
    return Path(store) / COVERAGE_DIR / commit


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _table(cmap: CoverageMap, name: str) -> pa.Table:
    frame: pl.DataFrame = getattr(cmap, name)
    schema = _SCHEMAS[name]
    frame = frame.with_columns(pl.lit(cmap.commit, pl.String).alias("commit"))
    return frame.select(schema.names).to_arrow().cast(schema)


def write_map(store: Path | str, cmap: CoverageMap) -> Path:
    """Store ``cmap``, replacing the map of the same commit and scope; returns its
    ``map.json``. Atomic (see the module docstring)."""
    store = Path(store)
    folder = _commit_dir(store, cmap.commit) / cmap.scope
    with store_lock(store):
        names = {}
        rows = {}
        for name in _TABLES:
            table = _table(cmap, name)
            names[name] = f"{name}-{uuid.uuid4().hex}.arrow"
            rows[name] = table.num_rows
            atomic_write_bytes(folder / names[name], _ipc_bytes(table))
        manifest: dict[str, Any] = {
            "coverage_schema_version": (COVERAGE_SCHEMA_VERSION if cmap.generated
                                        else _PLAIN_VERSION),
            "commit": cmap.commit, "dirty": cmap.dirty, "scope": cmap.scope,
            "packages": list(cmap.packages),
            "include": None if cmap.include is None else sorted(cmap.include),
            "created": cmap.created or datetime.now(UTC).isoformat(timespec="seconds"),
            "tables": names, "rows": rows, "meta": cmap.meta,
        }
        if cmap.generated:
            manifest["generated"] = [g.to_dict() for g in cmap.generated]
        text = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=True)
        path = atomic_write_bytes(folder / MANIFEST, (text + "\n").encode())
        keep = set(names.values()) | {MANIFEST}
        for old in folder.iterdir():
            if old.name not in keep:
                with contextlib.suppress(OSError):
                    old.unlink()
    return path


def _manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: not a readable coverage map manifest: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("tables"), dict):
        raise StoreError(f"{path}: not a coverage map manifest (no 'tables' object)")
    version = data.get("coverage_schema_version")
    if not isinstance(version, int) or version > COVERAGE_SCHEMA_VERSION:
        raise StoreError(f"{path}: coverage_schema_version {version!r}: this schedperf reads "
                         f"versions up to {COVERAGE_SCHEMA_VERSION}")
    return data


def _load(folder: Path, data: dict[str, Any]) -> CoverageMap:
    frames = {}
    for name in _TABLES:
        path = folder / str(data["tables"].get(name))
        try:
            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
        except (OSError, pa.ArrowInvalid) as exc:
            raise StoreError(f"{path}: cannot read the coverage map's {name}: {exc}") from exc
        if not table.schema.equals(_SCHEMAS[name]):
            raise StoreError(f"{path}: the {name} table does not have the coverage schema")
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        frames[name] = frame.drop("commit")
    include = data.get("include")
    generated = data.get("generated") or []
    if not isinstance(generated, list):
        raise StoreError(f"{folder / MANIFEST}: 'generated' is not a list")
    return CoverageMap(
        commit=str(data["commit"]), dirty=bool(data.get("dirty")), **frames,
        packages=tuple(data.get("packages") or ()),
        include=None if include is None else tuple(include),
        created=str(data.get("created", "")), meta=dict(data.get("meta") or {}),
        generated=tuple(GeneratedOrigin.from_dict(g, folder / MANIFEST) for g in generated))


@dataclass(frozen=True)
class MapInfo:
    """One stored map: what :func:`list_maps` says of it."""

    commit: str
    scope: str
    dirty: bool
    include: tuple[str, ...] | None
    created: str
    workloads: int
    path: Path  # its map.json


def list_maps(store: Path | str) -> list[MapInfo]:
    """Every stored map (oldest first); a damaged manifest raises StoreError."""
    root = Path(store) / COVERAGE_DIR
    found = []
    for path in sorted(root.glob(f"*/*/{MANIFEST}")):
        data = _manifest(path)
        include = data.get("include")
        found.append(MapInfo(str(data.get("commit")), path.parent.name, bool(data.get("dirty")),
                             None if include is None else tuple(include),
                             str(data.get("created", "")),
                             int(data.get("rows", {}).get("workloads", 0)), path))
    return sorted(found, key=lambda m: (m.created, m.commit, m.scope))


def map_commits(store: Path | str) -> list[str]:
    """The commits that have a stored map (sorted)."""
    return sorted({m.commit for m in list_maps(store)})


def read_map(store: Path | str, commit: str, *, files: Iterable[str] | None = None,
             workloads: Iterable[str] | None = None,
             allow_dirty: bool = False) -> CoverageMap | None:
    """The stored map of ``commit`` (a full hash, as it was written), or None when there is
    none that will do, so that the caller computes one: a map of a dirty working tree is
    not the commit's (unless ``allow_dirty``); ``files``: the map must have them in scope
    (the full map, else a restricted one holding them all); ``workloads``: it must have
    mapped every one of them. A damaged or newer-version map raises StoreError."""
    folder = _commit_dir(Path(store), commit)
    if not folder.is_dir():
        return None
    scopes = sorted(folder.iterdir(), key=lambda p: (p.name != SCOPE_ALL, p.name))
    wanted = None if files is None else set(files)
    needed = None if workloads is None else set(workloads)
    for scope in scopes:
        path = scope / MANIFEST
        if not path.is_file():
            continue
        data = _manifest(path)
        if data.get("commit") != commit or (data.get("dirty") and not allow_dirty):
            continue
        include = data.get("include")
        if include is not None and (wanted is None or not wanted <= set(include)):
            continue
        cmap = _load(scope, data)
        if needed is not None and not needed <= set(cmap.workload_names(None)):
            continue
        return cmap
    return None


def module_name(file: str) -> str:
    """``scheduler_core/plugins/node_ports.py`` -> ``scheduler_core.plugins.node_ports``
    (a package's ``__init__.py`` -> the package)."""
    parts = file.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class CoverageFigures:
    """Coverage of a subset of a map's workloads: ``per_module`` has one row per mapped file
    (``file``, ``module``, ``statements``, ``covered``, ``outside_statements``,
    ``outside_covered``, ``percent``, ``outside_percent``); ``total`` the same summed."""

    workloads: tuple[str, ...]
    per_module: pl.DataFrame
    total: dict[str, Any]


def _percent(part: pl.Expr, whole: pl.Expr) -> pl.Expr:
    return pl.when(whole > 0).then(100.0 * part / whole).otherwise(None)


def coverage_figures(cmap: CoverageMap, *, label_filter: str | None = None,
                     workloads: Iterable[str] | None = None,
                     labels: Mapping[str, Iterable[str]] | None = None,
                     origin: str | None = ORIGIN_CATALOG) -> CoverageFigures:
    """Statement coverage (all statements, and those outside error-raising branches) per
    module and in total, of the workloads of ``cmap`` that ran (:data:`RAN`), are of
    ``origin`` (default the catalog's: no generated scenario; None: both), match
    ``label_filter`` (the ``--label`` syntax; None: all) and, if given, are among
    ``workloads``. Lines executed at import time count as covered (every workload imports
    them); a function's ``def`` line counts only when a chosen workload runs its body.
    ``labels`` overrides the map's labels per workload."""
    rows = cmap.workloads.filter(pl.col("status").is_in(list(RAN))
                                 & pl.col("workload").is_in(cmap.workload_names(
                                     None, origin=origin)))
    chosen = []
    allowed = None if workloads is None else set(workloads)
    for name, own in rows.select("workload", "labels").iter_rows():
        have = list(labels[name]) if labels is not None and name in labels else (own or [])
        if (label_filter is None or matches(label_filter, have)) and (
                allowed is None or name in allowed):
            chosen.append(name)
    covered = (cmap._line_rows([*chosen, IMPORT_TIME]).select("file", "line").unique()
               .with_columns(pl.lit(True).alias("covered")))
    joined = (cmap.statements.join(covered, on=["file", "line"], how="left")
              .with_columns(pl.col("covered").fill_null(False)))
    per_module = (joined.group_by("file").agg(
        pl.len().alias("statements"),
        pl.col("covered").sum().alias("covered"),
        pl.col("outside_error_branch").sum().alias("outside_statements"),
        (pl.col("covered") & pl.col("outside_error_branch")).sum().alias("outside_covered"))
        .with_columns(pl.col("file").map_elements(module_name, pl.String).alias("module"))
        .sort("file"))
    per_module = per_module.select(
        "file", "module", *(pl.col(c).cast(pl.Int64) for c in
                            ("statements", "covered", "outside_statements",
                             "outside_covered")),
        _percent(pl.col("covered"), pl.col("statements")).alias("percent"),
        _percent(pl.col("outside_covered"), pl.col("outside_statements"))
        .alias("outside_percent"))
    sums = {c: int(per_module[c].sum()) for c in
            ("statements", "covered", "outside_statements", "outside_covered")}
    total: dict[str, Any] = {
        **sums,
        "percent": 100.0 * sums["covered"] / sums["statements"] if sums["statements"] else None,
        "outside_percent": (100.0 * sums["outside_covered"] / sums["outside_statements"]
                            if sums["outside_statements"] else None),
    }
    return CoverageFigures(tuple(chosen), per_module, total)
