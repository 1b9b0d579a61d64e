"""The malformed-input corpus (issue 16, tests/corpus/cases.py): every input kind x every
failure class ends in exit 2 with the file and the field (or the problem) named and no
traceback; a broken workload config, template, manifest or scheduler config is also refused by
``schedperf run`` before anything runs (no output folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.cli.main import main
from scheduler_core.inputfile import ENV_MAX_INPUT_SIZE, set_max_input_bytes
from tests.corpus.cases import CASES, Case, Setup, write_base


@pytest.fixture(autouse=True)
def _default_cap(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_MAX_INPUT_SIZE, "")  # recorded: undone after the test, even
    monkeypatch.delenv(ENV_MAX_INPUT_SIZE)  # when `schedperf --max-input-size` sets it
    set_max_input_bytes(None)
    yield
    set_max_input_bytes(None)


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid setup: the config folder, a run of it, a compare report, a store."""
    root = tmp_path_factory.mktemp("corpus")
    write_base(root / "cfg")
    assert main(["run", "--config", str(root / "cfg"), "--label", "", "--out",
                 str(root / "run"), "--format", "json"]) == 0
    none = root / "none.yaml"
    none.write_text("[]\n")
    assert main(["compare", "--base-results", str(root / "run"), "--head-results",
                 str(root / "run"), "--out", str(root / "cmp0"), "--accepted", str(none)]) == 0
    assert main(["ingest", str(root / "run"), "--store", str(root / "store")]) == 0
    return root


def _check(case: Case, code: int, output: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    assert case.file in output, output
    if case.field is not None:
        assert case.field in output, output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input_exits_2_naming_file_and_field(case: Case, golden: Path,
                                                       tmp_path: Path, capsys) -> None:
    root = Path(shutil.copytree(golden, tmp_path / "w", symlinks=True))
    setup = Setup(root, root / "run", root / "cmp0" / "report.json", root / "store")
    capsys.readouterr()
    args = case.prepare(setup)
    code = main(args)
    captured = capsys.readouterr()
    _check(case, code, captured.err + captured.out)
    if case.absent is not None:
        assert not (root / case.absent).exists(), f"{case.absent} created on bad input"
    if case.runs:  # `schedperf run` refuses the same input before running anything
        prefix = args[:args.index("validate")]
        out = root / "run-out"
        code = main([*prefix, "run", "--config", str(setup.cfg), "--label", "", "--out",
                     str(out)])
        captured = capsys.readouterr()
        _check(case, code, captured.err + captured.out)
        assert not out.exists(), "run started on bad input"


def test_a_fifo_inside_an_ingested_folder_is_named_not_waited_on(golden: Path, tmp_path: Path,
                                                                capsys) -> None:
    """Walking a folder, ingest meets a FIFO named like a results file: it is refused by its
    type (never opened, so never a hang) and the folder's other files are ingested."""
    from tests.fuzz.support import no_hang

    folder = tmp_path / "results"
    shutil.copytree(golden / "run", folder / "run")
    os.mkfifo(folder / "stuck.json")
    with no_hang(120):
        code = main(["ingest", str(folder), "--store", str(tmp_path / "store")])
    output = "".join(capsys.readouterr())
    assert code == 2
    assert f"error: {folder / 'stuck.json'}: is a FIFO (named pipe), not a regular file" in output
    assert "1 file ingested" in output
