"""The client never hangs and never hides a failure: a process that dies, stays silent,
writes garbage or answers another request is an error naming what happened, with the tail of
its stderr. Fake reference binaries (small Python scripts) play each failure; no Go needed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from workloads.reference import ReferenceClient, ReferenceProcessError, ReferenceRequestError

HELLO = {"protocol": 1, "kubernetes": "v1.34.4", "go": "go1.26.8", "binarySHA256": "ab" * 32}

_PRELUDE = f"""
import json, sys, time
HELLO = {HELLO!r}
def reply(rid, result=None, error=None):
    out = {{"id": rid, "ok": error is None}}
    if error is None:
        out["result"] = result
    else:
        out["error"] = error
    sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    rid, op = req.get("id"), req.get("op")
    if op == "hello":
        reply(rid, HELLO)
        continue
"""


def fake(tmp_path: Path, body: str, name: str = "fake-reference") -> Path:
    """An executable fake reference: the prelude answers hello, ``body`` (indented into the
    request loop) the rest."""
    script = tmp_path / name
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    script.write_text(f"#!{sys.executable}\n{_PRELUDE}{lines}\n")
    script.chmod(0o755)
    return script


def test_a_well_behaved_process(tmp_path):
    binary = fake(tmp_path, """
if op == "evaluate":
    reply(rid, error={"kind": "not_found", "message": "pod default/x not found"})
elif op == "version":
    reply(rid, HELLO)
""")
    with ReferenceClient(binary, timeout=60) as client:
        assert client.version.binary_sha256 == "ab" * 32
        with pytest.raises(ReferenceRequestError) as err:
            client.evaluate("default", "x")
        assert err.value.kind == "not_found"
        assert client.get_version().kubernetes == "v1.34.4"  # still usable after an error
    assert client.close() == 0


def test_a_process_that_dies_is_an_error_with_its_stderr(tmp_path):
    binary = fake(tmp_path, """
sys.stderr.write("panic: something broke inside\\n"); sys.stderr.flush()
sys.exit(3)
""")
    with ReferenceClient(binary, timeout=60) as client:
        with pytest.raises(ReferenceProcessError) as err:
            client.evaluate("default", "p")
        message = str(err.value)
        assert "ended without replying" in message
        assert "exit status 3" in message
        assert "panic: something broke inside" in message
        with pytest.raises(ReferenceProcessError, match="not running"):
            client.get_version()


def test_a_process_that_cannot_start(tmp_path):
    with pytest.raises(ReferenceProcessError, match="cannot start"):
        ReferenceClient(tmp_path / "missing-binary", timeout=60)


def test_a_silent_process_times_out_instead_of_hanging(tmp_path):
    binary = fake(tmp_path, """
sys.stderr.write("thinking forever\\n"); sys.stderr.flush()
time.sleep(3600)
""")
    with ReferenceClient(binary, timeout=60) as client:
        client.timeout = 0.5
        start = time.monotonic()
        with pytest.raises(ReferenceProcessError) as err:
            client.evaluate("default", "p")
        assert time.monotonic() - start < 30  # bounded by the timeout, not by the sleep
        assert "no reply within 0.5 s" in str(err.value)
        assert "thinking forever" in str(err.value)


def test_a_garbled_reply_is_an_error(tmp_path):
    binary = fake(tmp_path, """
sys.stdout.write("goroutine 1 [running]: not json\\n"); sys.stdout.flush()
""")
    with ReferenceClient(binary, timeout=60) as client, \
            pytest.raises(ReferenceProcessError, match="not JSON"):
        client.get_version()


def test_a_reply_to_another_request_is_an_error(tmp_path):
    binary = fake(tmp_path, """
reply(rid + 100, {})
""")
    with ReferenceClient(binary, timeout=60) as client, \
            pytest.raises(ReferenceProcessError, match="does not answer request"):
        client.get_version()


def test_a_reply_of_the_wrong_shape_is_an_error(tmp_path):
    binary = fake(tmp_path, """
reply(rid, {"pod": {"namespace": "default", "name": "p"}, "profile": 7})
""")
    with ReferenceClient(binary, timeout=60) as client, \
            pytest.raises(ReferenceProcessError, match=r"result\.profile"):
        client.evaluate("default", "p")


def test_requests_are_one_json_line_each(tmp_path):
    log = tmp_path / "requests.jsonl"
    binary = fake(tmp_path, f"""
open({str(log)!r}, "a").write(line)
reply(rid, {{"objects": [{{"kind": "Node", "name": "n1", "uid": "u", "action": "created"}}]}})
""")
    with ReferenceClient(binary, timeout=60) as client:
        applied = client.apply({"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": "n1", "annotations": {"a": "x\ny"}}})
    assert applied[0].name == "n1"
    (request,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert request["op"] == "apply" and request["id"] == 2
    assert request["objects"][0]["metadata"]["annotations"]["a"] == "x\ny"
