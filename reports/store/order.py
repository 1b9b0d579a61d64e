"""Versions in git order: which measured commit comes after which, and which one each is
compared with ("vs previous"), for ``schedperf history``, ``changes`` and the dashboard.

Where the order comes from, best first (the ``order`` of each version says which was used):

``git``          ``--repo``: the repository's history (``git log --topo-order`` of the
                 measured commits: no commit before one of its ancestors, lines of history
                 kept apart);
``parents``      the parents recorded at ingest (``commit_parents``): a commit comes after
                 the measured commits it descends from through recorded commits;
``commit date``  the committer date recorded at ingest (``commit_date``), where ancestry is
                 not known (commits between them were not measured and no ``--repo``);
``run time``     a series without any commit (DataItems files, runs outside a checkout):
                 its runs in the order they ran, the only order they have;
``single``       the one version of a series measured at one commit only (nothing to
                 order it against);
``unknown``      a commit with neither date nor ancestry (stored before ingest recorded
                 them, and no ``--repo``), or a run without a commit in a series of
                 commits: listed after the ordered versions, never compared, never
                 "newest", left out of change points.

Measurement (ingest) time never orders commits.

*Previous* of a commit: the nearest measured commit of the same series on its first-parent
line (what the commit was built on), so a merge is compared with the commit it merged into
and a side-branch commit with its fork point, not with whatever sorts before it. When the
first-parent line leaves what is known (no ``--repo``, the parent never measured) it is the
version before it in the order (``commit date``). The *mainline* of a series is the chain of
previous versions from its newest one: change points are looked for along it.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import polars as pl

from reports.store.dataset import scan_store, store_files
from reports.store.gitinfo import repo_history
from reports.store.problems import StoreError
from reports.store.schema import CommitInfo

__all__ = ["ORDER_DATE", "ORDER_GIT", "ORDER_PARENTS", "ORDER_RUN", "ORDER_SINGLE",
           "ORDER_UNKNOWN",
           "CommitGraph", "Placed", "load_graph", "order_note", "order_series",
           "stored_commits"]

ORDER_GIT = "git"
ORDER_PARENTS = "parents"
ORDER_DATE = "commit date"
ORDER_RUN = "run time"
ORDER_SINGLE = "single"
ORDER_UNKNOWN = "unknown"
_MIN = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class CommitGraph:
    """What is known about the store's commits: parents and committer dates (stored at
    ingest, overridden by ``repo``'s history when given), and with a repository the
    position of every commit of its history in git's topological order (0 the oldest).
    Keys are full hashes where the repository resolved the stored name (``names``)."""

    parents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dates: Mapping[str, datetime] = field(default_factory=dict)
    position: Mapping[str, int] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    repo: Path | None = None
    shallow: bool = False

    def key(self, commit: str) -> str:
        return self.names.get(commit, commit)

    def date(self, commit: str | None) -> datetime | None:
        return self.dates.get(self.key(commit)) if commit else None


@dataclass(frozen=True)
class Placed:
    """Where one version of a series goes: ``rank`` 0 is the oldest (versions of unknown
    order rank after all others), ``order`` how that was decided, ``previous`` the input
    index of the version it is compared with (None: the first of its line, or unknown
    order), ``mainline``: on the chain of previous versions from the newest one."""

    rank: int
    order: str
    previous: int | None
    mainline: bool


def stored_commits(store: Path | str) -> dict[str, CommitInfo]:
    """{commit: (committer date, parents)} as recorded in the store (None: not recorded).
    Raises :class:`reports.store.StoreError` when the store's data cannot be read."""
    if not store_files(Path(store)):
        return {}
    try:
        frame = (scan_store(store).filter(pl.col("commit").is_not_null())
                 .group_by("commit")
                 .agg(pl.col("commit_date").drop_nulls().first(),
                      pl.col("commit_parents").drop_nulls().first())
                 .collect())
    except pl.exceptions.PolarsError as exc:
        raise StoreError(f"store {store}: {str(exc).splitlines()[0]}") from exc
    return {c: (d, tuple(p) if p is not None else None)
            for c, d, p in frame.iter_rows()}


def load_graph(store: Path | str, repo: Path | str | None = None, *,
               extra: Mapping[str, CommitInfo] | None = None) -> CommitGraph:
    """The commit graph of the store's commits: what ingest recorded, and the history of
    ``repo`` when given (raises :class:`reports.store.gitinfo.GitError` if it cannot be
    read, :class:`reports.store.StoreError` if the store cannot). ``extra``: more commits
    with the date and parents recorded elsewhere (coverage maps record theirs), used where
    ingest recorded none; with ``repo`` their history is read too."""
    stored = stored_commits(store)
    for commit, (when, parents) in (extra or {}).items():
        have_when, have_parents = stored.get(commit, (None, None))
        stored[commit] = (have_when or when,
                          have_parents if have_parents is not None else parents)
    parents = {c: p for c, (_, p) in stored.items() if p is not None}
    dates = {c: d for c, (d, _) in stored.items() if d is not None}
    if repo is None:
        return CommitGraph(parents, dates)
    history = repo_history(Path(repo), stored)
    for name, full in history.names.items():  # stored info under the full hash
        if name != full:
            if name in parents:
                parents.setdefault(full, parents.pop(name))
            if name in dates:
                dates.setdefault(full, dates.pop(name))
    parents.update(history.parents)
    dates.update(history.dates)
    return CommitGraph(parents, dates, history.position, history.names, Path(repo),
                       history.shallow)


def _series_ancestors(start: str, members: set[str],
                      parents: Mapping[str, tuple[str, ...]]) -> set[str]:
    """The members nearest to ``start`` among its ancestors (walking known parents)."""
    found: set[str] = set()
    seen = {start}
    stack = list(parents.get(start, ()))
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        if c in members:
            found.add(c)
        else:
            stack.extend(parents.get(c, ()))
    return found


def _first_parent_hit(start: str, members: set[str], graph: CommitGraph,
                      lowest: int | None) -> tuple[str | None, bool]:
    """(nearest member on the first-parent line of ``start``, whether the line was known
    all the way: False when it ran into a commit whose parents are not known)."""
    seen = {start}
    c = start
    while True:
        ps = graph.parents.get(c)
        if ps is None:
            return None, False
        if not ps:
            return None, True  # a root commit
        c = ps[0]
        if c in members:
            return c, True
        if c in seen:
            return None, False
        seen.add(c)
        pos = graph.position.get(c)
        if lowest is not None and pos is not None and pos < lowest:
            return None, True  # older than every measured commit of the series in git


def _topological(nodes: list[str], after: Mapping[str, set[str]],
                 key: dict[str, tuple[object, ...]]) -> list[str]:
    """``nodes`` with every node after those in ``after[node]``; among the nodes free to
    come next, the smallest ``key`` first (Kahn's algorithm)."""
    members = set(nodes)
    before: dict[str, set[str]] = {n: {a for a in after.get(n, ()) if a in members}
                                   for n in nodes}
    children: dict[str, list[str]] = {n: [] for n in nodes}
    for n, ancestors in before.items():
        for a in ancestors:
            children[a].append(n)
    waiting = {n: len(b) for n, b in before.items()}
    heap = [(key[n], n) for n in nodes if not waiting[n]]
    heapq.heapify(heap)
    out: list[str] = []
    while heap:
        _, n = heapq.heappop(heap)
        out.append(n)
        for child in children[n]:
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(heap, (key[child], child))
    if len(out) < len(nodes):  # a cycle in recorded parents: the rest by key
        placed = set(out)
        out += sorted((n for n in nodes if n not in placed), key=key.__getitem__)
    return out


def order_series(items: Sequence[tuple[str | None, datetime | None]],
                 graph: CommitGraph) -> list[Placed]:
    """Place the versions of one series, given as (commit or None, first measured);
    returns one :class:`Placed` per item, in input order (module docstring)."""
    n = len(items)
    if not any(commit for commit, _ in items):
        runs = sorted(range(n), key=lambda i: (items[i][1] is None, items[i][1] or _MIN, i))
        placed_runs: list[Placed | None] = [None] * n
        for r, i in enumerate(runs):
            placed_runs[i] = Placed(r, ORDER_RUN, runs[r - 1] if r else None, True)
        return [p for p in placed_runs if p is not None]
    index: dict[str, int] = {}
    for i, (commit, _) in enumerate(items):
        if commit:
            index.setdefault(graph.key(commit), i)
    members = set(index)
    after: dict[str, set[str]] = {}
    linked: set[str] = set()
    for k in members:
        if k not in graph.position:
            ancestors = _series_ancestors(k, members, graph.parents)
            if ancestors:
                after[k] = ancestors
                linked |= ancestors | {k}
    known = [k for k in members
             if k in graph.position or k in graph.dates or k in linked]
    if n == 1 and not known:
        return [Placed(0, ORDER_SINGLE, None, True)]
    in_git = sorted((k for k in known if k in graph.position), key=graph.position.__getitem__)
    for a, b in pairwise(in_git):
        after.setdefault(b, set()).add(a)
    key = {k: (graph.dates.get(k) is None, graph.dates.get(k) or _MIN,
               graph.position.get(k, -1), k) for k in known}
    ordered = _topological(known, after, key)
    known_set = set(ordered)
    lowest = graph.position[in_git[0]] if in_git else None
    out: list[Placed | None] = [None] * n
    previous: dict[str, str | None] = {}
    for r, k in enumerate(ordered):
        hit, complete = _first_parent_hit(k, known_set, graph, lowest)
        if complete:
            previous[k] = hit
            how = ORDER_GIT if k in graph.position else ORDER_PARENTS
        else:
            previous[k] = ordered[r - 1] if r else None
            how = ORDER_DATE if k in graph.dates else ORDER_PARENTS
        out[index[k]] = Placed(r, how, None, False)
    mainline: set[str] = set()
    c: str | None = ordered[-1] if ordered else None
    while c is not None and c not in mainline:
        mainline.add(c)
        c = previous[c]
    for k in ordered:
        p = out[index[k]]
        assert p is not None
        before = previous[k]
        out[index[k]] = Placed(p.rank, p.order, index[before] if before else None,
                               k in mainline)
    rest = sorted((i for i in range(n) if out[i] is None),
                  key=lambda i: (items[i][1] is None, items[i][1] or _MIN, i))
    for r, i in enumerate(rest, start=len(ordered)):
        out[i] = Placed(r, ORDER_UNKNOWN, None, False)
    return [p for p in out if p is not None]


def order_note(orders: Iterable[str], graph: CommitGraph) -> str:
    """One sentence on how the versions shown were ordered (``orders``: their ``order``)."""
    counts = Counter(orders)
    total = sum(counts.values())
    if not total:
        return ""
    parts = []
    if counts[ORDER_GIT]:
        shallow = " (a shallow clone: history before its cut is not known)" \
            if graph.shallow else ""
        parts.append(f"git history of {graph.repo}{shallow}")
    if counts[ORDER_PARENTS]:
        parts.append("parent commits recorded at ingest")
    if counts[ORDER_DATE]:
        parts.append(f"commit date for {counts[ORDER_DATE]} (their ancestry is not known)")
    if counts[ORDER_RUN]:
        parts.append(f"run time for {counts[ORDER_RUN]} runs without a commit")
    text = "order: " + "; ".join(parts) if parts else ""
    if counts[ORDER_UNKNOWN]:
        unknown = (f"order unknown for {counts[ORDER_UNKNOWN]} of {total} versions (no "
                   "commit date or parents recorded"
                   + ("" if graph.repo else "; pass --repo PATH, a clone that has them")
                   + "): listed last by measurement time, not compared, no change points")
        text = f"{text}. {unknown}" if text else unknown
    return text
