"""schedperf compare ended by SIGTERM or SIGINT while its workers run: exit 128 + signal, no
git worktree left registered, no worker process left running, no temporary folder left.

BASE's scheduler_core blocks when a worker imports it, after telling the test its pid through
a FIFO, so the signal arrives while the workers certainly run (never after a delay)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from bench.measure.instructions import valgrind_available
from tests.builders import tiny_config

ROOT = Path(__file__).resolve().parents[3]
READY = "SCHEDPERF_TEST_READY_FIFO"
BLOCK_ON_IMPORT = f"""\
import os as _os
if _os.environ.get({READY!r}):  # test hook: say who we are, then hang until killed
    with open(_os.environ[{READY!r}], "w") as _ready:
        _ready.write(f"{{_os.getpid()}}\\n")
    import signal as _signal
    while True:
        _signal.pause()
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def _repo(tmp_path: Path) -> Path:
    """BASE (main~1): a scheduler_core whose import blocks (under the test's variable);
    HEAD (main): the real one."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scheduler_core", repo / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = repo / "scheduler_core" / "__init__.py"
    real = init.read_text()
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    init.write_text(BLOCK_ON_IMPORT + real)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base: hangs on import")
    init.write_text(real)
    _git(repo, "commit", "-q", "-am", "head")
    return repo


def _still_running(procs: list[psutil.Process]) -> list[int]:
    """Those of ``procs`` that have not ended (zombies not reaped yet have ended). Killed ones
    are waited for, as long as the kernel takes to end them (the limit only keeps a process
    that was never killed from hanging the suite)."""
    _, alive = psutil.wait_procs(procs, timeout=60)
    return [p.pid for p in alive if p.status() != psutil.STATUS_ZOMBIE]


@pytest.mark.parametrize(("mode", "signum"), [
    ("time", signal.SIGTERM),
    ("time", signal.SIGINT),
    pytest.param("instructions", signal.SIGTERM, marks=pytest.mark.skipif(
        not valgrind_available(), reason="valgrind is not installed")),
])
def test_signal_ends_compare_cleanly(tmp_path, mode, signum):
    repo = _repo(tmp_path)
    configs = tmp_path / "configs" / "misc"
    configs.mkdir(parents=True)
    (configs / "performance-config.yaml").write_text(tiny_config(
        ("A", [], 10, 2, 20), ("B", [], 10, 2, 20), labels="compare, compare-time"))
    temp = tmp_path / "tmp"  # where compare's temporary folders go
    temp.mkdir()
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    ready = os.open(fifo, os.O_RDWR)  # never blocks; reads wait for a writer's line
    env = {**os.environ, READY: str(fifo), "TMPDIR": str(temp),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.cli.main", "compare", "main~1", "main", "--repo",
         str(repo), "--config", str(configs.parent), "--measure", mode, "--repeat", "2",
         "--jobs", "2", "--no-select-changed", "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def unblock_when_compare_ends() -> None:
        proc.wait()
        os.write(ready, b"compare ended\n")

    watchdog = threading.Thread(target=unblock_when_compare_ends, daemon=True)
    watchdog.start()
    try:
        line = b""
        while not line.endswith(b"\n"):
            line += os.read(ready, 1)
        assert line.strip().isdigit(), f"{line!r}: {proc.communicate()}"
        blocked = int(line)
        workers = psutil.Process(proc.pid).children(recursive=True)
        assert blocked in {w.pid for w in workers}
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        watchdog.join()
        os.close(ready)
    assert proc.returncode == 128 + signum, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in stderr
    assert "Traceback" not in stderr
    assert _git(repo, "worktree", "list").count("\n") == 1  # only the main checkout
    assert not (repo / ".git" / "worktrees").exists() or not any(
        (repo / ".git" / "worktrees").iterdir())
    assert _still_running(workers) == []
    assert list(temp.iterdir()) == []
