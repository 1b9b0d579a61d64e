"""Run the extender server: in a process of its own on a loopback port (``ExtenderProcess``,
as a real webhook runs beside the scheduler), or ``python -m workloads.extender_server``.

The process prints one line, ``listening http://127.0.0.1:<port>``, once it accepts
connections; werkzeug's threaded server answers each request in a thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server

from workloads.extender_server.app import MODES, ExtenderApp

__all__ = ["ExtenderProcess", "ExtenderServerError", "main"]

_READY = "listening "


class ExtenderServerError(Exception):
    """The server could not be started (its cause in the message)."""


class ExtenderProcess:
    """``with ExtenderProcess(mode="ok") as server: server.url`` (stopped on exit)."""

    def __init__(self, mode: str = "ok", *, start_timeout: float = 60.0) -> None:
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.start_timeout = start_timeout
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None

    def start(self) -> str:
        cmd = [sys.executable, "-m", "workloads.extender_server", "--port", "0",
               "--mode", self.mode]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # stderr into a file, never a pipe nobody reads (a full pipe would block the server)
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed in stop)
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._stderr,
                                      text=True, env=env, start_new_session=True)
        ready, _, _ = select.select([self._proc.stdout], [], [], self.start_timeout)
        line = self._proc.stdout.readline() if ready else ""  # type: ignore[union-attr]
        if not line.startswith(_READY):
            err = self._stop_reading_stderr()
            raise ExtenderServerError(
                "the extender server did not start"
                + (f" within {self.start_timeout:g} s" if not line else f": {line.strip()}")
                + (f": {err}" if err else ""))
        self.url = line[len(_READY):].strip()
        return self.url

    def cache_nodes(self, nodes: list[dict[str, Any]], deleted: tuple[str, ...] = ()) -> None:
        """Tell the server's node cache about nodes (as an informer would)."""
        body = json.dumps({"nodes": nodes, "deleted": list(deleted)}).encode()
        req = urllib.request.Request(self.url + "/cache", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            resp.read()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/stats", timeout=60) as resp:
            return json.loads(resp.read())

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far."""
        import psutil

        if self._proc is None:
            return 0.0
        try:
            t = psutil.Process(self._proc.pid).cpu_times()
        except psutil.Error:
            return 0.0
        return t.user + t.system

    def stop(self) -> None:
        self._stop_reading_stderr()

    def _stop_reading_stderr(self) -> str:
        proc, self._proc = self._proc, None
        if proc is None:
            return ""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        err = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            err = self._stderr.read()
            self._stderr.close()
            self._stderr = None
        return err.strip().splitlines()[-1] if err.strip() else ""

    def __del__(self) -> None:
        # a server never stopped (a run that was not closed) must not outlive its owner
        with contextlib.suppress(Exception):
            self.stop()

    def __enter__(self) -> ExtenderProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _KeepAlive(WSGIRequestHandler):
    """HTTP/1.1: the scheduler's client keeps its connection open between calls, as Go's
    net/http client does with a real extender (werkzeug's default is HTTP/1.0, a new TCP
    connection per call). TCP_NODELAY, as Go sets on every TCP connection: otherwise a reply
    written in two parts waits for the peer's delayed ACK (tens of milliseconds a call)."""

    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """No line per request (thousands a second; werkzeug logs each by default)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workloads.extender_server",
                                     description="schedperf's scheduler extender (TierGate)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=MODES, default="ok")
    args = parser.parse_args(argv)
    app = ExtenderApp(args.mode)
    server = make_server(args.host, args.port, app, threaded=True, request_handler=_KeepAlive)

    def stop(signum: int, frame: Any) -> None:
        # at once: the threads of kept-alive connections would block a graceful close
        app.stopping.set()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    print(f"{_READY}http://{args.host}:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        app.stopping.set()
        server.server_close()
    return 0
