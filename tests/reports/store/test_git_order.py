"""Versions in git order: ingest records each commit's committer date and parents; history and
changes order versions by git ancestry (never by when they were measured or ingested), compare
each commit with the previous measured one on its first-parent line, show n and spread, and
judge steps with the project's statistics (n=1 never judged)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bench.cli.history import history as history_command
from bench.cli.ingest import ingest as ingest_command
from reports.store import (
    ONE_VALUE,
    ORDER_DATE,
    ORDER_GIT,
    ORDER_PARENTS,
    ORDER_UNKNOWN,
    STORE_SCHEMA,
    CommitGraph,
    history,
    ingest_paths,
    order_series,
    scan_store,
)
from reports.store.dataset import write_parts
from reports.store.gitinfo import find_checkout, repo_history
from reports.store.schema import OPTIONAL_FIELDS, table_from_rows
from tests.reports.gitrepo import START, git, make_repo
from tests.reports.shuffled import (
    DATE_DAYS,
    FLAT,
    MEASURED,
    ONE,
    STEP,
    Shuffled,
    make_shuffled,
)


@pytest.fixture
def shuffled(tmp_path: Path) -> Shuffled:
    return make_shuffled(tmp_path / "project")


def _ingest_shuffled(s: Shuffled, store: Path, *, repo: bool = True) -> None:
    """One ingest per run, in measurement order (c3, c0, c4, c1, c2)."""
    for i in MEASURED:
        report = ingest_paths([s.runs[i]], store, repo=s.repo if repo else None)
        assert not report.errors, [(o.path, o.message) for o in report.errors]


def _series(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    return frame.filter(pl.col("name") == name)


# ------------------------------------------------------------------------------ ingest


def test_ingest_records_committer_date_and_parents(shuffled: Shuffled, store: Path) -> None:
    _ingest_shuffled(shuffled, store)
    got = (scan_store(store).select("commit", "commit_date", "commit_parents").unique("commit")
           .collect())
    by_commit = {c: (d, p) for c, d, p in got.iter_rows()}
    assert set(by_commit) == set(shuffled.commits)
    for i, c in enumerate(shuffled.commits):
        date, parents = by_commit[c]
        assert date == START + timedelta(days=DATE_DAYS[i])
        assert parents == ([shuffled.commits[i - 1]] if i else [])


def test_ingest_finds_the_repository_of_the_results_file(tmp_path: Path, store: Path) -> None:
    """Without --repo: a run folder inside the checkout is enough."""
    s = make_shuffled(tmp_path / "project")
    inside = s.repo / "runs"
    inside.mkdir()
    moved = (s.runs[0] / "results.parquet").rename(inside / "results.parquet")
    report = ingest_paths([moved.parent], store)
    assert report.commits == {s.commits[0]: str(s.repo)}
    parents = scan_store(store).select("commit_parents").unique().collect().to_series()
    assert parents.to_list() == [[]]


def test_ingest_command_reports_commits_and_rejects_a_bad_repo(shuffled: Shuffled,
                                                               tmp_path: Path,
                                                               store: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(ingest_command, [*map(str, shuffled.runs), "--store", str(store),
                                        "--repo", str(shuffled.repo)])
    assert ok.exit_code == 0, ok.output
    assert f"5 commits: date and parents recorded from git ({shuffled.repo})" in ok.output
    missing = runner.invoke(ingest_command, [str(shuffled.runs[0]), "--store",
                                             str(tmp_path / "other"), "--repo",
                                             str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert f"--repo {tmp_path / 'nowhere'}: no such folder" in missing.output
    plain = tmp_path / "plain"
    plain.mkdir()
    not_git = runner.invoke(ingest_command, [str(shuffled.runs[0]), "--store",
                                             str(tmp_path / "other"), "--repo", str(plain)])
    assert not_git.exit_code == 2 and "not a git repository" in not_git.output


def test_ingest_says_which_commits_were_not_found(shuffled: Shuffled, store: Path) -> None:
    result = CliRunner().invoke(ingest_command, [str(shuffled.runs[2]), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert f"1 commit ({shuffled.commits[2][:10]}) not found in any repository" in result.output
    assert "pass --repo PATH" in result.output


# ----------------------------------------------------------------------------- history


@pytest.mark.parametrize("at_read_time", [False, True], ids=["stored-parents", "repo"])
def test_history_follows_git_not_measurement_or_commit_date(shuffled: Shuffled, store: Path,
                                                            at_read_time: bool) -> None:
    _ingest_shuffled(shuffled, store, repo=not at_read_time)
    repo = shuffled.repo if at_read_time else None
    _, frame = history(store, repo=repo)
    c = shuffled.commits
    for name in (STEP, FLAT, ONE):
        s = _series(frame, name)
        assert s["commit"].to_list() == c  # not c3 c0 c4 c1 c2 (measured), c2 c0 c1 c4 c3 (date)
        assert s["previous"].to_list() == [None, *c[:-1]]
        assert set(s["order"]) == {ORDER_GIT if at_read_time else ORDER_PARENTS}
        assert s["mainline"].all()


def test_history_shows_n_and_spread_and_judges_steps(shuffled: Shuffled, store: Path) -> None:
    _ingest_shuffled(shuffled, store)
    _, frame = history(store)
    step = _series(frame, STEP)
    assert step["n"].to_list() == [6] * 5
    assert (step["min"] < step["mean"]).all() and (step["mean"] < step["max"]).all()
    assert step["verdict"].to_list()[-1] == "regression"
    assert step["change"].to_list()[-1] == pytest.approx(-0.2, abs=0.02)
    assert step["p_value"].to_list()[-1] < 0.05
    significant = frame.filter(pl.col("verdict").is_in(["regression", "improvement"]))
    assert significant.select("name", "commit").rows() == [(STEP, shuffled.commits[-1])]
    assert set(_series(frame, FLAT)["verdict"].drop_nulls()) <= {"no change", "inconclusive"}
    one = _series(frame, ONE)
    assert one["n"].to_list() == [1] * 5
    assert (one["min"] == one["max"]).all()
    assert one["verdict"].to_list() == [None] + ["not judged"] * 4
    assert one["note"].to_list()[1:] == [ONE_VALUE] * 4
    assert max(abs(x) for x in one["change"].drop_nulls()) > 0.15  # big steps, not judged


def test_history_command(shuffled: Shuffled, store: Path) -> None:
    _ingest_shuffled(shuffled, store)
    result = CliRunner(env={"COLUMNS": "250"}).invoke(history_command, ["--store", str(store)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    step = [line for line in lines if line.startswith("│ Step/500Nodes")]
    assert [c[:10] in line for line, c in zip(step, shuffled.commits, strict=True)] == [True] * 5
    assert ["regression" in line for line in step] == [False] * 4 + [True]
    one = [line for line in lines if line.startswith("│ One/Shot")]
    assert all(ONE_VALUE in line for line in one[1:])
    assert not any("regression" in line or "improvement" in line for line in one)
    assert "order: parent commits recorded at ingest" in result.output
    assert f"{ONE_VALUE}: 1 workload with a single value per commit" in result.output


def test_history_without_order_says_so_and_compares_nothing(shuffled: Shuffled,
                                                            store: Path) -> None:
    """Nothing recorded at ingest (no repository at hand), no --repo: order unknown; with
    --repo the same store is in git order."""
    _ingest_shuffled(shuffled, store, repo=False)
    _, frame = history(store)
    s = _series(frame, STEP)
    assert set(s["order"]) == {ORDER_UNKNOWN}
    assert s["previous"].to_list() == [None] * 5 and s["verdict"].to_list() == [None] * 5
    result = CliRunner(env={"COLUMNS": "250"}).invoke(history_command, ["--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "order unknown for 15 of 15 versions" in result.output
    assert "pass --repo PATH" in result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert len(rows) == 15 and not any("regression" in line for line in rows)
    with_repo = CliRunner(env={"COLUMNS": "250"}).invoke(
        history_command, ["--store", str(store), "--repo", str(shuffled.repo)])
    assert with_repo.exit_code == 0, with_repo.output
    assert f"order: git history of {shuffled.repo}" in with_repo.output
    bad = CliRunner().invoke(history_command, ["--store", str(store), "--repo",
                                               str(store / "nope")])
    assert bad.exit_code == 2 and "no such folder" in bad.output


def test_store_written_before_the_commit_columns_is_readable(shuffled: Shuffled,
                                                             store: Path) -> None:
    """Parts without commit_date/commit_parents (older stores): read as unknown."""
    _ingest_shuffled(shuffled, store)
    old = pa.schema([f for f in STORE_SCHEMA if f.name not in OPTIONAL_FIELDS])
    for part in store.glob("**/*.parquet"):
        pq.write_table(pq.read_table(part).select(old.names), part)
    assert pq.read_schema(next(store.glob("**/*.parquet"))).names == old.names
    _, frame = history(store)
    assert set(frame["order"]) == {ORDER_UNKNOWN}
    _, frame = history(store, repo=shuffled.repo)
    assert _series(frame, STEP)["commit"].to_list() == shuffled.commits
    report = ingest_paths([shuffled.runs[0]], store)  # a new part beside the old ones
    assert report.duplicates and not report.errors


# ------------------------------------------------------------- merges and fallbacks


def test_merge_and_side_branch_compare_along_first_parents(tmp_path: Path) -> None:
    """A - B - M - C on main, F1 - F2 branched off A and merged at M: B, M and C follow main,
    F1 is compared with A (its fork point), M with B (the commit it merged into)."""
    repo = tmp_path / "repo"
    (a,) = make_repo(repo, 1)
    day = START + timedelta(days=1)
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "commit", "-q", "--allow-empty", "-m", "F1", when=day)
    f1 = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "F2", when=day + timedelta(days=2))
    f2 = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "B", when=day + timedelta(days=1))
    b = git(repo, "rev-parse", "HEAD")
    git(repo, "merge", "-q", "--no-ff", "-m", "M", "side", when=day + timedelta(days=3))
    m = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "C", when=day + timedelta(days=4))
    c = git(repo, "rev-parse", "HEAD")
    measured = [c, f2, m, a, b, f1]  # any order
    items = [(x, None) for x in measured]
    h = repo_history(repo, measured)
    graph = CommitGraph(h.parents, h.dates, h.position, h.names, repo)
    placed = order_series(items, graph)
    by = dict(zip(measured, placed, strict=True))
    ranked = sorted(measured, key=lambda x: by[x].rank)
    assert ranked.index(a) < ranked.index(b) < ranked.index(m) < ranked.index(c)
    assert ranked.index(f1) < ranked.index(f2) < ranked.index(m)
    previous = {x: measured[by[x].previous] if by[x].previous is not None else None
                for x in measured}
    assert previous == {a: None, b: a, f1: a, f2: f1, m: b, c: m}
    assert {x for x in measured if by[x].mainline} == {a, b, m, c}
    assert {by[x].order for x in measured} == {ORDER_GIT}
    # the same from recorded parents alone (every commit measured)
    stored = CommitGraph(parents={k: v for k, v in graph.parents.items() if k in measured},
                         dates={k: v for k, v in graph.dates.items() if k in measured})
    again = dict(zip(measured, order_series(items, stored), strict=True))
    assert {x: measured[again[x].previous] if again[x].previous is not None else None
            for x in measured} == previous
    assert {again[x].order for x in measured} == {ORDER_PARENTS}


def test_commit_date_orders_where_ancestry_is_unknown() -> None:
    """Recorded dates but no parents (e.g. asv results outside any repository): by date, and
    said so; a commit with neither is unknown, last, compared with nothing."""
    d = [START + timedelta(days=k) for k in range(3)]
    graph = CommitGraph(dates={"x": d[2], "y": d[0], "z": d[1]})
    placed = order_series([("x", None), ("y", None), ("z", None), ("w", d[0])], graph)
    assert [p.rank for p in placed] == [2, 0, 1, 3]
    assert [p.order for p in placed] == [ORDER_DATE] * 3 + [ORDER_UNKNOWN]
    assert [p.previous for p in placed] == [2, None, 1, None]
    assert placed[3].mainline is False


def test_measurement_time_never_orders_commits() -> None:
    """Two commits with nothing recorded: measured in one order, both unknown (not that
    order); runs without a commit keep the order they ran in."""
    early, late = START, START + timedelta(days=1)
    placed = order_series([("b", early), ("a", late)], CommitGraph())
    assert {p.order for p in placed} == {ORDER_UNKNOWN}
    assert [p.previous for p in placed] == [None, None]
    runs = order_series([(None, late), (None, early)], CommitGraph())
    assert [p.rank for p in runs] == [1, 0] and runs[0].previous == 1


def test_run_folder_is_dated_from_the_checkout_it_measured(run_output: Path,
                                                           store: Path) -> None:
    """A real ``schedperf run`` (made in this checkout): its commit's date and parents come
    from the checkout its scheduler_core was imported from (an editable install), else from
    the current folder's, without --repo."""
    rows = pq.read_table(run_output / "results.parquet",
                         columns=["commit", "scheduler_core_path"]).to_pylist()
    commit, core = rows[0]["commit"], rows[0]["scheduler_core_path"]
    assert commit, "the test suite runs in a git checkout: the run records its commit"
    checkout = find_checkout(core) or find_checkout(Path.cwd())
    assert checkout is not None
    report = ingest_paths([run_output], store)
    assert report.commits == {commit: str(checkout)}
    date, parents = (scan_store(store).select("commit_date", "commit_parents").unique()
                     .collect().row(0))
    assert int(date.timestamp()) == int(git(checkout, "show", "-s", "--format=%ct", commit))
    assert parents == git(checkout, "show", "-s", "--format=%P", commit).split()


def test_a_version_without_value_is_skipped_as_previous(tmp_path: Path) -> None:
    """a <- b <- c; b failed (no value): c is compared with a."""
    chain = {"a": [], "b": ["a"], "c": ["b"]}
    values = {"a": [10.0, 10.1], "b": [None], "c": [12.0, 12.1]}
    rows = [{"run_id": f"r-{c}", "round": r, "timestamp": START, "commit": c,
             "commit_parents": chain[c], "test_case": "T", "workload": "w",
             "metric": "SchedulingThroughput", "bucket": "Average", "value": v,
             "unit": "pods/s", "status": "ok" if v is not None else "failed"}
            for c in chain for r, v in enumerate(values[c], 1)]
    store = tmp_path / "store"
    write_parts(store, [table_from_rows(rows, source="run", sha256="x")])
    _, frame = history(store)
    assert frame["commit"].to_list() == ["a", "b", "c"]
    assert frame["previous"].to_list() == [None, "a", "a"]
    assert frame["n"].to_list() == [2, 0, 2]
