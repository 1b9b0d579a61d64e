"""A client of one ``schedperf-reference`` process: line-delimited JSON requests and replies
over its stdin/stdout (protocol 1, docs/reference-scheduler.md), with typed results.

Every wait has a deadline: a process that dies, hangs past ``timeout`` or writes a line that is
not a reply to the request raises ReferenceProcessError with the tail of its stderr, and the
process is killed; it never blocks forever. An error reply raises ReferenceRequestError and
leaves the process usable.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workloads.reference.errors import ReferenceProcessError, ReferenceRequestError
from workloads.reference.model import Applied, ConfigInfo, Evaluation, VersionInfo

__all__ = ["PROTOCOL", "ReferenceClient"]

PROTOCOL = 1
_STDERR_KEEP = 16 * 1024  # bytes of stderr kept for error messages
_STDERR_SHOW = 3000


class _StderrTail:
    """Drains a pipe in a daemon thread (so the child never blocks on a full stderr) and
    keeps its last bytes."""

    def __init__(self, pipe: Any) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    def _drain(self, pipe: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: pipe.read1(65536), b""):
                with self._lock:
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    while self._size > _STDERR_KEEP and len(self._chunks) > 1:
                        self._size -= len(self._chunks.popleft())

    def text(self, wait: float = 0.0) -> str:
        if wait:
            self._thread.join(wait)
        with self._lock:
            data = b"".join(self._chunks)
        text = data.decode(errors="replace").strip()
        return text[-_STDERR_SHOW:] if len(text) > _STDERR_SHOW else text


class ReferenceClient:
    """One reference process. ``binary``: the path of schedperf-reference (see
    ``workloads.reference.build.ensure_built``); ``timeout``: seconds any one request (and the
    handshake) may take. Use as a context manager, or call ``close``."""

    def __init__(self, binary: Path | str, *, timeout: float = 120.0,
                 args: Iterable[str] = (), env: Mapping[str, str] | None = None) -> None:
        self.binary = Path(binary)
        self.timeout = timeout
        self._next_id = 0
        self._buffer = bytearray()
        try:
            self._proc = subprocess.Popen(
                [str(self.binary), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        except OSError as exc:
            raise ReferenceProcessError(f"cannot start {self.binary}: {exc}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self._stderr = _StderrTail(self._proc.stderr)
        self._in = self._proc.stdin.fileno()
        self._out = self._proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._dead: str | None = None
        self.version: VersionInfo = VersionInfo.parse(self.request("hello", protocol=PROTOCOL))

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> ReferenceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout: float = 10.0) -> int | None:
        """Close stdin (the process exits at end of input), wait, kill if it does not.
        Returns the exit status."""
        with contextlib.suppress(OSError):
            self._proc.stdin.close()  # type: ignore[union-attr]
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()
        finally:
            self._dead = self._dead or "closed"
            for pipe in (self._proc.stdout, self._proc.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]

    @property
    def pid(self) -> int:
        return self._proc.pid

    def stderr_tail(self) -> str:
        return self._stderr.text()

    # ------------------------------------------------------------------ requests
    def request(self, op: str, **fields: Any) -> Any:
        """Send one request; return its ``result``. Raises ReferenceRequestError for an error
        reply, ReferenceProcessError when the process fails."""
        return self.pipeline([(op, fields)])[0]

    def pipeline(self, requests: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """Send several requests at once, then read their replies in order (one round trip);
        the results, in order. The first error reply raises ReferenceRequestError once every
        reply has been read (the requests after it were still carried out)."""
        if not requests:
            return []
        op = requests[0][0]
        if self._dead is not None:
            raise ReferenceProcessError(
                f"reference {op}: the reference process is not running ({self._dead})")
        first = self._next_id + 1
        lines = []
        for i, (name, fields) in enumerate(requests):
            lines.append(json.dumps({"id": first + i, "op": name, **fields},
                                    separators=(",", ":")))
        self._next_id += len(requests)
        deadline = time.monotonic() + self.timeout * len(requests)
        self._send(op, ("\n".join(lines) + "\n").encode(), deadline)
        results: list[Any] = []
        error: ReferenceRequestError | None = None
        for i, (name, _) in enumerate(requests):
            try:
                results.append(self._reply(name, first + i, self._receive(name, deadline)))
            except ReferenceRequestError as exc:
                results.append(None)
                error = error or exc
        if error is not None:
            raise error
        return results

    def _reply(self, op: str, rid: int, reply: Any) -> Any:
        if not isinstance(reply, dict) or reply.get("id") != rid or not isinstance(
                reply.get("ok"), bool):
            self._fail(op, f"a reply that does not answer request {rid}: {reply!r:.300}")
        if reply["ok"]:
            return reply.get("result")
        err = reply.get("error")
        if not isinstance(err, dict):
            self._fail(op, f"an error reply without an error object: {reply!r:.300}")
        fields_ = tuple((str(f.get("field", "")), str(f.get("message", "")))
                        for f in err.get("fields") or () if isinstance(f, dict))
        raise ReferenceRequestError(op, str(err.get("kind", "?")), str(err.get("message", "")),
                                    str(err.get("field", "")), fields_)

    def _send(self, op: str, data: bytes, deadline: float) -> None:
        """Write ``data``; replies that arrive meanwhile are read into the buffer (a long
        pipeline would otherwise fill both pipes and stall both processes)."""
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(self._in, selectors.EVENT_WRITE)
            sel.register(self._out, selectors.EVENT_READ)
            while view:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._fail(op, f"no progress reading the request within {self.timeout:g} s")
                ready = sel.select(left)
                if not ready:
                    continue
                fds = {key.fd for key, _ in ready}
                if self._out in fds:
                    self._read_some(op)
                if self._in not in fds:
                    continue
                try:
                    n = os.write(self._in, view)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, OSError):
                    self._fail(op, "the process closed its input")
                view = view[n:]

    def _receive(self, op: str, deadline: float) -> Any:
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._fail(op, f"no reply within {self.timeout:g} s")
                if sel.select(left):
                    self._read_some(op)
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        try:
            return json.loads(line)
        except ValueError:
            self._fail(op, f"a line that is not JSON: {line[:300]!r}")

    def _read_some(self, op: str) -> None:
        try:
            chunk = os.read(self._out, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            self._fail(op, "the process ended without replying")
        self._buffer += chunk

    def _fail(self, op: str, what: str) -> Any:
        """Kill the process and raise ReferenceProcessError saying ``what`` happened, with its
        exit status and the tail of its stderr."""
        if self._proc.poll() is None:
            self._proc.kill()
        status = self._proc.wait()
        self._dead = what
        tail = self._stderr.text(wait=2.0)
        raise ReferenceProcessError(
            f"reference {op}: {what} (process {self._proc.pid}, exit status {status}); "
            f"stderr: {tail or '(empty)'}")

    # ------------------------------------------------------------------ typed operations
    def get_version(self) -> VersionInfo:
        return VersionInfo.parse(self.request("version"))

    def config(self, config: str | Mapping[str, Any] | None = None, *,
               feature_gates: Mapping[str, bool] | None = None) -> ConfigInfo:
        """Build the scheduler from a KubeSchedulerConfiguration (YAML/JSON text or a mapping;
        None: the defaults). Must come before any object is applied."""
        text = json.dumps(config) if isinstance(config, Mapping) else (config or "")
        fields: dict[str, Any] = {"config": text}
        if feature_gates:
            fields["featureGates"] = dict(feature_gates)
        return ConfigInfo.parse(self.request("config", **fields))

    def apply(self, *objects: Mapping[str, Any]) -> tuple[Applied, ...]:
        """Create or replace objects (Kubernetes manifests), in order."""
        result = self.request("apply", objects=list(objects))
        return tuple(Applied.parse(o, f"result.objects[{i}]")
                     for i, o in enumerate(_objects_of(result)))

    def delete(self, *refs: tuple[str, str, str]) -> tuple[Applied, ...]:
        """Delete objects named (kind, namespace, name); namespace "" for cluster objects."""
        result = self.request("delete", refs=[{"kind": k, "namespace": ns, "name": n}
                                              for k, ns, n in refs])
        return tuple(Applied.parse(o, f"result.objects[{i}]")
                     for i, o in enumerate(_objects_of(result)))

    def bind(self, namespace: str, name: str, node: str, *, start_time: str = "") -> Applied:
        """Bind a pending pod; ``start_time`` (RFC 3339) is its status.startTime (default:
        the reference's logical clock)."""
        fields: dict[str, Any] = {"namespace": namespace, "name": name, "node": node}
        if start_time:
            fields["startTime"] = start_time
        result = self.request("bind", **fields)
        return Applied.parse(_objects_of(result)[0], "result.objects[0]")

    def evaluate(self, namespace: str, name: str) -> Evaluation:
        """What the real scheduler decides for the pending pod, without side effects."""
        return Evaluation.parse(self.request("evaluate", namespace=namespace, name=name))


def _objects_of(result: Any) -> list[Any]:
    objs = result.get("objects") if isinstance(result, dict) else None
    if not isinstance(objs, list):
        raise ReferenceProcessError(f"reply result.objects: expected a list, got {result!r:.200}")
    return objs
