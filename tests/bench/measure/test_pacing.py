"""Paced pairs (bench.measure.pacing): turn-taking, hand-over clock, failures, end to end."""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path

import pytest

from bench.measure.pacing import (
    DONE,
    GO,
    YIELD,
    PacingError,
    TurnPacer,
    parse_pace,
    relay_turns,
    run_paced_pair,
    start_paced,
)
from bench.measure.spec import WorkerSpec
from tests.bench.measure.helpers import SMALL, SMALLER, write_config

# A stand-in worker speaking the protocol: per workload, wait for the turn, then do
# ``slices`` slices of work, each logged as one line "<side> <workload> <slice> start|end"
# (appended with O_APPEND, so lines from both processes interleave in real order), yielding
# between slices; ``crash_after`` slices in all, it exits abruptly; ``hang`` makes it never
# yield (a stuck worker).
FAKE_WORKER = """\
import os, sys, time
side, log, workloads, slices, crash_after, hang = sys.argv[1:7]
r, w = (int(x) for x in sys.argv[sys.argv.index("--pace") + 1].split(","))
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
done = 0
for k in range(int(workloads)):
    assert os.read(r, 1) == b"g"
    for i in range(int(slices)):
        os.write(fd, f"{side} {k} {i} start\\n".encode())
        time.sleep(0.002)
        if hang == "1":
            time.sleep(60)
        os.write(fd, f"{side} {k} {i} end\\n".encode())
        done += 1
        if done == int(crash_after):
            os._exit(3)
        if i + 1 < int(slices):
            os.write(w, b"y")
            assert os.read(r, 1) == b"g"
    os.write(w, b"d")
"""


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


def test_pacer_hands_over_only_after_its_slice_and_its_clock_skips_the_waits() -> None:
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    clock = FakeClock()
    pacer = TurnPacer(to_r, from_w, 0.005, clock=clock)
    try:
        os.write(to_w, GO)
        pacer.wait_turn()
        clock.t = 0.004
        pacer()  # inside the slice: nothing sent
        assert not _readable(from_r)
        os.write(to_w, GO)  # the turn will come straight back
        clock.t = 0.006
        pacer()
        assert os.read(from_r, 1) == YIELD
        assert pacer.turns == 1
        # the fake clock did not move while waiting: no paused time, now() is the clock
        assert pacer.paused == 0.0 and pacer.now() == pytest.approx(0.006)
        pacer.paused = 2.0  # as if it had waited 2 s in all
        assert pacer.now() == pytest.approx(0.006 - 2.0)
        pacer.done()
        assert os.read(from_r, 1) == DONE
        clock.t = 100.0
        pacer()  # after done(): no deadline, nothing sent
        assert not _readable(from_r)
    finally:
        for fd in (to_r, to_w, from_r, from_w):
            os.close(fd)


def test_pacer_raises_when_the_orchestrator_is_gone() -> None:
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    pacer = TurnPacer(to_r, from_w)
    os.close(to_w)
    with pytest.raises(PacingError, match="closed"):
        pacer.wait_turn()
    os.close(from_r)
    with pytest.raises(PacingError, match="went away"):
        pacer.done()
    os.close(to_r)
    os.close(from_w)


@pytest.mark.parametrize(("text", "ok"), [("3,4", (3, 4)), ("3", None), ("a,b", None),
                                          ("-1,2", None)], ids=["ok", "one", "words", "neg"])
def test_parse_pace(text: str, ok: tuple[int, int] | None) -> None:
    if ok is None:
        with pytest.raises(ValueError, match="--pace"):
            parse_pace(text)
    else:
        assert parse_pace(text) == ok


def _fake_pair(tmp_path: Path, *, workloads: int = 3, slices: tuple[int, int] = (4, 2),
               crash_after: tuple[int, int] = (0, 0), hang: tuple[int, int] = (0, 0),
               deadline: float | None = None) -> tuple[list[str], list[str], list[int]]:
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    log = tmp_path / "turns.log"
    procs, pipes = [], []
    for i, side in enumerate("AB"):
        folder = tmp_path / side
        folder.mkdir()
        cmd = [sys.executable, str(script), side, str(log), str(workloads), str(slices[i]),
               str(crash_after[i]), str(hang[i])]
        proc, fds = start_paced(cmd, folder, dict(os.environ), 0.001)
        procs.append(proc)
        pipes.append(fds)
    try:
        problems = relay_turns(procs, pipes, workloads, lambda k: k % 2,
                               deadline=None if deadline is None else time.monotonic() + deadline)
        codes = [p.wait(10) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for fds in pipes:
            for fd in fds:
                os.close(fd)
    return log.read_text().splitlines() if log.exists() else [], problems, codes


def test_two_workers_take_turns_never_overlap_and_alternate_who_starts(tmp_path: Path) -> None:
    lines, problems, codes = _fake_pair(tmp_path, workloads=3, slices=(4, 2))
    assert problems == [] and codes == [0, 0]
    # every slice's start is followed by its own end: never both running at once
    assert len(lines) == 2 * 3 * (4 + 2)
    for start, end in zip(lines[::2], lines[1::2], strict=True):
        assert start.endswith("start") and end == start.replace("start", "end")
    slices = [tuple(x.split()[:3]) for x in lines[::2]]
    # workload by workload (both finish k before either starts k + 1), A first on even k
    by_workload = [[s for s in slices if s[1] == str(k)] for k in range(3)]
    assert [s for group in by_workload for s in group] == slices
    assert [group[0][0] for group in by_workload] == ["A", "B", "A"]
    # inside a workload they alternate while both have slices left: A B A B, then A alone
    assert [s[0] for s in by_workload[0]] == ["A", "B", "A", "B", "A", "A"]
    assert [s[0] for s in by_workload[1]] == ["B", "A", "B", "A", "A", "A"]


def test_a_worker_that_dies_leaves_the_other_to_finish_alone(tmp_path: Path) -> None:
    lines, problems, codes = _fake_pair(tmp_path, workloads=2, slices=(3, 3),
                                        crash_after=(0, 2))
    assert codes == [0, 3]
    assert len(problems) == 1 and "side 1: exited after 0 of 2 workloads" in problems[0]
    a_slices = [x for x in lines if x.startswith("A") and x.endswith("end")]
    assert len(a_slices) == 2 * 3  # A ran every slice of both workloads


def test_a_stuck_pair_is_killed_at_the_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    _, problems, codes = _fake_pair(tmp_path, workloads=1, slices=(2, 2), hang=(1, 0),
                                    deadline=1.0)
    assert time.monotonic() - started < 30
    assert any("timed out" in p for p in problems)
    assert codes[0] != 0


def test_paced_pair_of_real_workers_measures_both_sides(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg")
    spec = WorkerSpec(configs=(str(config),), workloads=(SMALL, SMALLER), seed=3,
                      plugin_sample_percent=100)
    runs = run_paced_pair([spec, spec], [tmp_path / "a", tmp_path / "b"], [None, None],
                          first=lambda k: k % 2, slice_seconds=0.0005, hash_seed=5,
                          timeout=300)
    for run in runs:
        assert run.problem() is None, run.log
        assert run.result is not None and run.result.env["PYTHONHASHSEED"] == "5"
        by_name = {m.name: m for m in run.result.workloads}
        assert list(by_name) == [SMALL, SMALLER]
        small = by_name[SMALL]
        assert small.status == "ok" and small.measured_pods == 50
        assert small.cpu_per_pod and small.cpu_per_pod > 0
        assert small.paced_turns is not None and small.paused_seconds is not None
        # the measured window's clock stops while waiting: never longer than the workload
        assert small.measured_seconds is not None and small.wall_seconds is not None
        assert small.measured_seconds <= small.wall_seconds
        assert small.plugin_seconds  # per-plugin timings survive pacing
    # the two sides really took turns on the 50-pod workload (0.5 ms slices)
    assert sum(r.result.workloads[0].paced_turns for r in runs if r.result) > 0


def test_paced_pair_rejects_different_workload_lists(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg")
    a = WorkerSpec(configs=(str(config),), workloads=(SMALL,))
    b = WorkerSpec(configs=(str(config),), workloads=(SMALLER,))
    with pytest.raises(ValueError, match="same workloads"):
        run_paced_pair([a, b], [tmp_path / "a", tmp_path / "b"], [None, None],
                       first=lambda k: 0)
