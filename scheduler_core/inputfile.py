"""Reading an input file safely: the one reader every input path of schedperf goes through.

Configs, object templates, scheduler configs, ``accepted.yaml``, ``report.json`` and results
files arrive from users. :func:`read_bytes` / :func:`read_text` read one of them and turn
every way it can be unreadable into one :class:`InputFileError` that names the file and what
was expected, never another exception and never a hang:

* missing, a folder, a symlink loop, not permitted: said so;
* a FIFO, socket or device: refused by its type *before* it is opened (opening a FIFO with no
  writer would block), and the file is opened with ``O_NONBLOCK`` so one swapped in between
  the check and the open still cannot block (the type is checked again on the open file);
* larger than the input size cap: refused from its size, before reading (the cap,
  :data:`DEFAULT_MAX_INPUT_BYTES` = 64 MiB, is raised with ``schedperf --max-input-size`` or
  the ``SCHEDPERF_MAX_INPUT_SIZE`` environment variable, e.g. ``512M``, ``2G``, ``0`` for no
  cap);
* empty (unless the caller allows it);
* text that is not UTF-8: the line, column and byte offset of the first bad byte.

:func:`check_file` does the same checks without reading, for files a library reads itself
(Parquet).
"""

from __future__ import annotations

import errno
import os
import re
import stat

from scheduler_core.errors import SchedulerCoreError

__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "ENV_MAX_INPUT_SIZE",
    "MAX_EXPANDED_VALUES",
    "InputFileError",
    "check_file",
    "decode_utf8",
    "expanded_size",
    "format_size",
    "max_input_bytes",
    "parse_size",
    "path_problem",
    "read_bytes",
    "read_text",
    "set_max_input_bytes",
]

DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024
ENV_MAX_INPUT_SIZE = "SCHEDPERF_MAX_INPUT_SIZE"
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)
_override: int | None = None


class InputFileError(SchedulerCoreError, ValueError):
    """An input file cannot be read as one. Message: ``<file>: <problem>``."""

    def __init__(self, source: str, problem: str, *, line: int | None = None) -> None:
        self.source = source
        self.problem = problem
        self.line = line
        super().__init__(f"{source}:{line}: {problem}" if line else f"{source}: {problem}")


def parse_size(text: str) -> int:
    """``"64M"`` -> 67108864 (K, M, G, T are powers of 1024; an optional ``B``/``iB``);
    ``"0"`` means no cap. Raises ValueError naming what was expected."""
    m = _SIZE.fullmatch(text or "")
    if m is None:
        raise ValueError(f"expected a size such as 64M, 512M or 2G (0: no cap), got {text!r}")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def format_size(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit] and n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]} {unit}iB"
    return f"{n} bytes"


def set_max_input_bytes(limit: int | None) -> None:
    """Set the cap for this process (None: back to the environment / default; 0: no cap)."""
    global _override
    _override = limit


def max_input_bytes() -> int:
    """The cap in force: :func:`set_max_input_bytes`, else ``$SCHEDPERF_MAX_INPUT_SIZE``, else
    :data:`DEFAULT_MAX_INPUT_BYTES`. 0 means no cap."""
    if _override is not None:
        return _override
    env = os.environ.get(ENV_MAX_INPUT_SIZE)
    if env:
        try:
            return parse_size(env)
        except ValueError as exc:
            raise InputFileError(f"${ENV_MAX_INPUT_SIZE}", str(exc)) from None
    return DEFAULT_MAX_INPUT_BYTES


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _os_problem(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.ELOOP:
        return "a symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOTDIR:
        return "no such file (a part of the path is not a folder)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENAMETOOLONG:
        return "the file name is too long"
    return f"cannot read: {exc.strerror or exc}"


def _check_stat(source: str, st: os.stat_result, what: str, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(source, f"is {_kind(st.st_mode)}, not a regular file; expected "
                                     f"{what}")
    if limit and st.st_size > limit:
        raise InputFileError(source, f"is {st.st_size} bytes, over the input size cap of "
                                     f"{format_size(limit)} (raise it with schedperf "
                                     "--max-input-size SIZE)")


def check_file(path: str | os.PathLike[str], *, what: str = "a file",
               limit: int | None = None) -> int:
    """Check that ``path`` is a readable regular file within the cap, without reading it;
    return its size. Raises :class:`InputFileError`."""
    source = os.fspath(path)
    cap = max_input_bytes() if limit is None else limit
    try:
        st = os.stat(source)
    except OSError as exc:
        raise InputFileError(source, _os_problem(exc)) from None
    except ValueError as exc:  # an embedded NUL byte in the name
        raise InputFileError(repr(source), f"not a usable file name: {exc}") from None
    _check_stat(source, st, what, cap)
    return st.st_size


def read_bytes(path: str | os.PathLike[str], *, what: str = "a file",
               limit: int | None = None, allow_empty: bool = False) -> bytes:
    """The bytes of ``path``; every problem an :class:`InputFileError` (module docstring).
    ``what`` names the expected file in messages ("a workload config")."""
    source = os.fspath(path)
    cap = max_input_bytes() if limit is None else limit
    check_file(source, what=what, limit=cap)
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(source, _os_problem(exc)) from None
    try:
        st = os.fstat(fd)
        _check_stat(source, st, what, cap)  # the file may have been swapped since the stat
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError as exc:
                raise InputFileError(source, _os_problem(exc)) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if cap and total > cap:  # it grew while being read
                raise InputFileError(source, f"is over the input size cap of "
                                             f"{format_size(cap)} (raise it with schedperf "
                                             "--max-input-size SIZE)")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if not data and not allow_empty:
        raise InputFileError(source, f"empty file (0 bytes); expected {what}")
    return data


def decode_utf8(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped); not UTF-8 is an
    :class:`InputFileError` naming the line, column and byte offset of the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[:exc.start]
        line = good.count(b"\n") + 1
        column = exc.start - (good.rfind(b"\n") + 1) + 1
        raise InputFileError(source, f"not UTF-8 text (binary data?): byte 0x{data[exc.start]:02x}"
                                     f" at column {column} (byte offset {exc.start}) "
                                     f"is {exc.reason}", line=line) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | os.PathLike[str], *, what: str = "a file", limit: int | None = None,
              allow_empty: bool = False) -> str:
    """:func:`read_bytes` decoded as UTF-8 (:func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path, what=what, limit=limit, allow_empty=allow_empty),
                       os.fspath(path))


def path_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (a file or a folder) cannot be used, or None: for messages about a path
    named on the command line ("no such file or folder", "a symlink loop", ...)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        problem = _os_problem(exc)
        return "no such file or folder" if problem == "no such file" else problem
    except ValueError as exc:
        return f"not a usable file name: {exc}"
    if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
        return None
    return f"is {_kind(st.st_mode)}; expected a regular file or a folder"



MAX_EXPANDED_VALUES = 1_000_000


def expanded_size(value: object, limit: int = MAX_EXPANDED_VALUES) -> int | None:
    """How many values ``value`` (a loaded YAML document) holds once its aliases are expanded,
    or None when that is over ``limit``: a "billion laughs" document loads in an instant (an
    alias is one shared object) but every walk over it would take for ever. Counted over the
    distinct objects only (memoised by identity), so it is cheap whatever the expansion."""
    memo: dict[int, int] = {}

    def size(v: object) -> int:
        if not isinstance(v, (dict, list)):
            return 1
        key = id(v)
        if key in memo:
            return memo[key]
        memo[key] = 1  # a cycle (not produced by safe loading) counts once
        items = v.values() if isinstance(v, dict) else v
        total = 1
        for child in items:
            total += size(child)
            if total > limit:
                break
        memo[key] = total
        return total

    n = size(value)
    return None if n > limit else n
