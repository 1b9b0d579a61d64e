"""Reading cachegrind's totals and the counted worker's environment (no valgrind needed)."""

from __future__ import annotations

import os

import pytest

from bench.measure.instructions import (
    DETERMINISTIC_ENV,
    HARNESS_ROOT,
    CachegrindError,
    child_env,
    parse_cachegrind_total,
)

HEADER = "desc: I1 cache: 32768 B\ncmd: python -m bench.measure.worker\n"


@pytest.mark.parametrize(("text", "want"), [
    pytest.param(HEADER + "events: Ir\nfl=a.c\nfn=f\n3 10\nsummary: 1539311290\n",
                 1539311290, id="ir-only"),
    pytest.param(HEADER + "events: Ir I1mr ILmr\nfl=a.c\nsummary: 42 7 1\n", 42,
                 id="ir-first-of-several"),
    pytest.param(HEADER + "events: Dr Ir\nsummary: 5 99\n", 99, id="ir-not-first"),
])
def test_total_comes_from_the_summary_line(tmp_path, text, want):
    path = tmp_path / "cachegrind.out"
    path.write_text(text)
    assert parse_cachegrind_total(path) == want


@pytest.mark.parametrize("text", [
    pytest.param(HEADER + "events: Ir\nfl=a.c\n", id="no-summary-killed-run"),
    pytest.param(HEADER + "events: Dr\nsummary: 5\n", id="no-ir-event"),
    pytest.param("", id="empty"),
])
def test_incomplete_output_is_an_error(tmp_path, text):
    path = tmp_path / "cachegrind.out"
    path.write_text(text)
    with pytest.raises(CachegrindError):
        parse_cachegrind_total(path)


def test_missing_output_is_an_error(tmp_path):
    with pytest.raises(CachegrindError, match="cannot read"):
        parse_cachegrind_total(tmp_path / "none")


def test_child_env_is_deterministic_and_keeps_pythonpath_order(tmp_path):
    base = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "core"), "/x"]),
            "PYTHONHASHSEED": "random", "OMP_NUM_THREADS": "8", "PYTHONSTARTUP": "s.py",
            "HOME": "/root"}
    env = child_env(base)
    assert {k: env[k] for k in DETERMINISTIC_ENV} == DETERMINISTIC_ENV
    assert "PYTHONSTARTUP" not in env and env["HOME"] == "/root"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "core"), "/x",
                                                   str(HARNESS_ROOT)]
    assert child_env({"PYTHONPATH": str(HARNESS_ROOT)})["PYTHONPATH"] == str(HARNESS_ROOT)
    assert child_env(base, hash_seed=None)["PYTHONHASHSEED"] == "random"
