"""Fixtures shared by the measurement tests."""

from __future__ import annotations

import sys

import pytest

# Runs the command after the options like valgrind would, then writes a cachegrind file whose
# total is 10**9 + 1000 per pod scheduled so far (read from the worker's result.json): one per
# run, or, for a forked run (an output file name with %p), one per set-up and full process.
FAKE_VALGRIND = """\
#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
n = next(i for i, a in enumerate(args) if not a.startswith("--"))
opts, cmd = args[:n], args[n:]
out = next(a.split("=", 1)[1] for a in opts if a.startswith("--cachegrind-out-file="))
assert "--tool=cachegrind" in opts and "--cache-sim=no" in opts
code = subprocess.run(cmd).returncode


def write(name, pods):
    with open(name, "w") as fh:
        fh.write(f"events: Ir\\nsummary: {{10**9 + 1000 * pods}}\\n")


if code == 0:
    result = json.load(open("result.json"))
    if "%p" not in out:
        write(out, result["workloads"][0]["scheduled_pods"])
    for e in result.get("forked", []):
        if e["setup_pid"] and e["measurement"]:
            write(out.replace("%p", str(e["setup_pid"])), e["setup_pods"])
            write(out.replace("%p", str(e["full_pid"])), e["measurement"]["scheduled_pods"])
sys.exit(code)
"""


@pytest.fixture(scope="module")
def fake_valgrind(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("bin") / "valgrind"
    path.write_text(FAKE_VALGRIND.format(python=sys.executable))
    path.chmod(0o755)
    return str(path)
