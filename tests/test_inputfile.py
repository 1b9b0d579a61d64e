"""scheduler_core.inputfile: the one safe reader of input files (issue 16)."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from scheduler_core import inputfile
from scheduler_core.inputfile import (
    DEFAULT_MAX_INPUT_BYTES,
    ENV_MAX_INPUT_SIZE,
    InputFileError,
    check_file,
    max_input_bytes,
    parse_size,
    path_problem,
    read_bytes,
    read_text,
    set_max_input_bytes,
)


@pytest.fixture(autouse=True)
def _default_cap(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_MAX_INPUT_SIZE, "")  # recorded: undone after the test, even
    monkeypatch.delenv(ENV_MAX_INPUT_SIZE)  # when `schedperf --max-input-size` sets it
    set_max_input_bytes(None)
    yield
    set_max_input_bytes(None)


def _error(path: Path, **kw) -> InputFileError:
    with pytest.raises(InputFileError) as info:
        read_text(path, what="a test file", **kw)
    assert str(info.value).startswith(str(path)), info.value
    assert "\n" not in str(info.value)
    return info.value


def test_reads_utf8_and_drops_a_bom(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes("\ufeffname: é\n".encode())
    assert read_text(f) == "name: é\n"
    assert read_bytes(f) == "\ufeffname: é\n".encode()


def test_not_utf8_names_line_column_and_offset(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"a: 1\nb: \xff\xfe\n")
    err = _error(f)
    assert err.line == 2
    assert "not UTF-8" in err.problem and "0xff" in err.problem
    assert "column 4" in err.problem and "byte offset 8" in err.problem
    assert str(err).startswith(f"{f}:2: ")


def test_empty_file_is_an_error_unless_allowed(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"")
    assert "empty file (0 bytes); expected a test file" in _error(f).problem
    assert read_text(f, allow_empty=True) == ""


def test_oversize_is_refused_from_its_size_and_names_the_flag(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"x" * 2048)
    err = _error(f, limit=1024)
    assert "2048 bytes, over the input size cap of 1 KiB" in err.problem
    assert "--max-input-size" in err.problem
    assert read_text(f, limit=4096) == "x" * 2048
    assert read_text(f, limit=0) == "x" * 2048  # 0: no cap


def test_cap_from_the_setter_then_the_environment_then_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_input_bytes() == DEFAULT_MAX_INPUT_BYTES
    monkeypatch.setenv(ENV_MAX_INPUT_SIZE, "1K")
    assert max_input_bytes() == 1024
    f = tmp_path / "a.yaml"
    f.write_bytes(b"x" * 1500)
    assert "over the input size cap" in _error(f).problem
    set_max_input_bytes(2048)
    assert read_text(f) == "x" * 1500
    set_max_input_bytes(None)
    monkeypatch.setenv(ENV_MAX_INPUT_SIZE, "lots")
    with pytest.raises(InputFileError, match=ENV_MAX_INPUT_SIZE):
        max_input_bytes()


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("512", 512), ("64M", 64 << 20), ("2g", 2 << 30), ("1KiB", 1024), ("3 MB", 3 << 20),
])
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "-1", "1.5G", "12Q", "G"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="expected a size"):
        parse_size(text)


def test_missing_folder_and_symlink_loop(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope.yaml").problem == "no such file"
    assert "is a folder, not a regular file; expected a test file" in _error(tmp_path).problem
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    assert "symlink loop" in _error(tmp_path / "l1").problem
    assert "symlink loop" in (path_problem(tmp_path / "l1") or "")
    assert path_problem(tmp_path / "nope") == "no such file or folder"
    assert path_problem(tmp_path) is None


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """No writer ever opens the FIFO: a reader that opened it would block for ever. The read
    runs in a thread so that a regression fails the test instead of hanging it."""
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException | str] = []

    def attempt() -> None:
        try:
            read_text(fifo, what="a test file")
            outcome.append("read")
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(timeout=30)
    assert outcome, "reading a FIFO blocked"
    err = outcome[0]
    assert isinstance(err, InputFileError), err
    assert "is a FIFO (named pipe), not a regular file" in err.problem
    with pytest.raises(InputFileError, match="FIFO"):
        check_file(fifo)


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        assert "is a socket" in _error(path).problem


def test_a_device_is_refused() -> None:
    err = _error(Path("/dev/null"))
    assert "is a device" in err.problem


def test_permission_denied(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    f = tmp_path / "a.yaml"
    f.write_text("x")
    f.chmod(0)
    assert _error(f).problem == "permission denied"


def test_file_that_grows_past_the_cap_while_read(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The size is checked again while reading: a file growing after the stat is cut."""
    f = tmp_path / "a.yaml"
    f.write_bytes(b"x" * 100)
    real_check = inputfile._check_stat
    calls = []

    def check_then_grow(source, st, what, limit):
        real_check(source, st, what, limit)
        calls.append(1)
        if len(calls) == 2:  # after the fstat of the open file
            with open(f, "ab") as fh:
                fh.write(b"y" * 200)

    monkeypatch.setattr(inputfile, "_check_stat", check_then_grow)
    assert "over the input size cap" in _error(f, limit=150).problem


def test_expanded_size_counts_aliases_without_expanding_them() -> None:
    import yaml

    from scheduler_core.inputfile import expanded_size

    text = 'a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n' + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 12))
    doc = yaml.safe_load(text)  # 10^12 values once expanded: loads at once
    assert expanded_size(doc) is None
    assert expanded_size({"a": [1, 2, {"b": 3}]}) == 6
    assert expanded_size(yaml.safe_load("a: &x [1, 2]\nb: *x\n")) == 7
    assert expanded_size(list(range(10)), limit=5) is None
