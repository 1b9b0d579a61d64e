"""The accepted-regressions file: parsing, strict errors with lines, matching and expiry."""

from __future__ import annotations

import datetime as dt

import pytest

from reports.accepted import AcceptedFileError, load_accepted

GOOD = """\
- workload: "TopologySpreading/.*"
  metric: SchedulingThroughput
  until: 2026-12-31
  why: minDomains support costs ~4 %
- workload: "Uncommon_.*"
  until: "0123abc"
  why: known
"""


def write(tmp_path, text):
    path = tmp_path / "accepted.yaml"
    path.write_text(text)
    return path


def test_parses_entries_and_matches(tmp_path):
    a, b = load_accepted(write(tmp_path, GOOD))
    assert a.matches("TopologySpreading/5000Nodes", "SchedulingThroughput")
    assert not a.matches("TopologySpreading/5000Nodes", "cpu_per_pod")
    assert not a.matches("XTopologySpreading/5000Nodes", "SchedulingThroughput")
    assert b.matches("Uncommon_MinDomains/small", "anything")
    assert a.until_date == dt.date(2026, 12, 31) and b.until_commit == "0123abc"
    assert a.source.endswith("accepted.yaml:1") and b.source.endswith("accepted.yaml:5")


def test_expiry_by_date_and_by_commit(tmp_path):
    a, b = load_accepted(write(tmp_path, GOOD))
    never = lambda commit: False  # noqa: E731
    assert a.active(dt.date(2026, 12, 31), never)
    assert not a.active(dt.date(2027, 1, 1), never)
    assert b.active(dt.date(2030, 1, 1), never)
    assert not b.active(dt.date(2020, 1, 1), lambda commit: commit == "0123abc")


def test_missing_file_is_empty_unless_required(tmp_path):
    assert load_accepted(tmp_path / "absent.yaml") == []
    with pytest.raises(AcceptedFileError, match="no such file"):
        load_accepted(tmp_path / "absent.yaml", required=True)
    assert load_accepted(write(tmp_path, "")) == []


@pytest.mark.parametrize(("text", "message"), [
    ("- workload: a\n  until: 2026-01-01\n  why: x\n  owner: me\n",
     r"accepted.yaml:4: \[0\].owner: unknown field"),
    ("- workload: a\n  why: x\n", r"accepted.yaml:1: \[0\].until: required field is missing"),
    ("- workload: '('\n  until: 2026-01-01\n  why: x\n",
     r"accepted.yaml:1: \[0\].workload: not a valid regular expression"),
    ("- workload: a\n  until: tomorrow\n  why: x\n",
     r"accepted.yaml:2: \[0\].until: expected a date \(YYYY-MM-DD\) or a commit hash"),
    ("- workload: a\n  until: 1234567\n  why: x\n", r"write commit hashes in quotes"),
    ("- workload: a\n  until: 2026-01-01\n  why: [x]\n",
     r"accepted.yaml:3: \[0\].why: expected a string, got list"),
    ("workload: a\n", r"\(top level\): expected a list"),
    ("- just a string\n", r"\[0\]: expected a mapping"),
    ("- workload: [\n", r"accepted.yaml:\d+: \(file\): invalid YAML"),
], ids=["unknown-field", "missing-until", "bad-regex", "bad-until", "numeric-hash",
        "why-not-string", "not-a-list", "item-not-mapping", "yaml-syntax"])
def test_errors_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(AcceptedFileError, match=message):
        load_accepted(write(tmp_path, text))
