"""workloads.catalog.selection: upstream's GitHub-style label filter and workload selection."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from workloads.catalog.selection import (
    BENCHMARK_DEFAULT_FILTER,
    TEST_DEFAULT_FILTER,
    SelectionError,
    matches,
    parse_filter,
    select,
)
from workloads.config import TestCase, load_configs


@pytest.mark.parametrize(("label_filter", "labels", "expected"), [
    pytest.param("", [], True, id="empty-filter-no-labels"),
    pytest.param("", ["performance"], True, id="empty-filter-matches-all"),
    pytest.param(None, ["x"], True, id="none-filter"),
    pytest.param("performance", ["performance"], True, id="plain-must-have"),
    pytest.param("+performance", ["performance", "short"], True, id="plus-must-have"),
    pytest.param("performance", [], False, id="unlabelled-workload-excluded"),
    pytest.param("performance", ["integration-test"], False, id="missing-label"),
    pytest.param("-performance", ["integration-test"], True, id="minus-absent"),
    pytest.param("-performance", ["performance"], False, id="minus-present"),
    pytest.param("-performance", [], True, id="minus-unlabelled"),
    pytest.param("integration-test,-performance", ["integration-test", "short"], True,
                 id="test-default-matches-integration"),
    pytest.param("integration-test,-performance", ["integration-test", "performance"], False,
                 id="test-default-excludes-performance"),
    pytest.param("performance,+short", ["performance"], False, id="short-appended-needs-short"),
    pytest.param("performance,+short", ["short", "performance"], True, id="and-semantics"),
    pytest.param("performance,,", ["performance"], True, id="empty-entries-skipped"),
    pytest.param("performance, short", ["performance", "short"], True, id="blanks-ignored"),
    pytest.param("perf", ["performance"], False, id="no-prefix-matching"),
    pytest.param("Performance", ["performance"], False, id="case-sensitive"),
    pytest.param("a,-a", ["a"], False, id="contradiction-never-matches"),
])
def test_matches(label_filter: str | None, labels: list[str], expected: bool) -> None:
    assert matches(label_filter, labels) is expected


def test_parse_filter() -> None:
    assert parse_filter("+a,b,-c,") == [("a", True), ("b", True), ("c", False)]
    assert parse_filter("") == []
    with pytest.raises(SelectionError, match="names no label"):
        parse_filter("a,-")


def test_defaults_are_upstreams() -> None:
    assert (BENCHMARK_DEFAULT_FILTER, TEST_DEFAULT_FILTER) == (
        "performance", "integration-test,-performance")


@pytest.fixture
def cases(tmp_path: Path) -> list[TestCase]:
    folder = tmp_path / "misc"
    folder.mkdir()
    (folder / "performance-config.yaml").write_text(textwrap.dedent("""\
        - name: Basic
          labels: [base]
          workloadTemplate:
          - opcode: createPods
            count: 1
            collectMetrics: true
          workloads:
          - name: 5Nodes
            labels: [integration-test, short]
          - name: 500Nodes
          - name: 5000Nodes
            labels: [performance]
        - name: Affinity
          workloadTemplate:
          - opcode: createPods
            count: 1
            collectMetrics: true
          workloads:
          - name: 5Nodes
            labels: [integration-test]
          - name: 5000Nodes/Big
            labels: [performance, short]
        """))
    return load_configs(folder / "performance-config.yaml")


@pytest.mark.parametrize(("label_filter", "name_regex", "expected"), [
    pytest.param("", None, ["Basic/5Nodes", "Basic/500Nodes", "Basic/5000Nodes",
                            "Affinity/5Nodes", "Affinity/5000Nodes/Big"], id="everything"),
    pytest.param("performance", None, ["Basic/5000Nodes", "Affinity/5000Nodes/Big"],
                 id="benchmark-default"),
    pytest.param("integration-test,-performance", None, ["Basic/5Nodes", "Affinity/5Nodes"],
                 id="test-default"),
    pytest.param("integration-test,-performance,+short", None, ["Basic/5Nodes"],
                 id="go-test-short"),
    pytest.param("base", None, ["Basic/5Nodes", "Basic/500Nodes", "Basic/5000Nodes"],
                 id="test-case-label-inherited"),
    pytest.param("-base", None, ["Affinity/5Nodes", "Affinity/5000Nodes/Big"],
                 id="test-case-label-excluded"),
    pytest.param("", "^Affinity/", ["Affinity/5Nodes", "Affinity/5000Nodes/Big"],
                 id="name-prefix"),
    pytest.param("", "5000Nodes", ["Basic/5000Nodes", "Affinity/5000Nodes/Big"],
                 id="name-search-anywhere"),
    pytest.param("performance", "Basic", ["Basic/5000Nodes"], id="label-and-name"),
    pytest.param("", "Nodes/Big$", ["Affinity/5000Nodes/Big"], id="slash-in-workload-name"),
])
def test_select(cases: list[TestCase], label_filter: str, name_regex: str | None,
                expected: list[str]) -> None:
    chosen = select(cases, label_filter, name_regex)
    assert [w.full_name for _, w in chosen] == expected
    assert all(w in tc.workloads for tc, w in chosen)


@pytest.mark.parametrize(("label_filter", "name_regex", "message"), [
    pytest.param("nightly", None, "no workload matches label filter 'nightly'", id="label"),
    pytest.param("", None, "no workload matches label filter ''", id="no-workloads-at-all"),
    pytest.param("performance", "Missing",
                 "no workload matches label filter 'performance' and --name 'Missing'",
                 id="label-and-name"),
    pytest.param("", "(", "--name '(' is not a valid regular expression", id="bad-regex"),
])
def test_select_errors(cases: list[TestCase], label_filter: str, name_regex: str | None,
                       message: str) -> None:
    test_cases = [] if message.endswith("''") else cases
    with pytest.raises(SelectionError) as info:
        select(test_cases, label_filter, name_regex)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)


def test_upstream_benchmark_selection(upstream_dir: Path) -> None:
    upstream = load_configs(upstream_dir)
    chosen = select(upstream, "performance", r"^SchedulingBasic/")
    assert {w.name for _, w in chosen} == {
        "5000Nodes_10000Pods", "5000Nodes_50000Pods", "5000Nodes_50000Pods_AsyncAPICallsEnabled",
        "5000Nodes_50000Pods_NodeDeclaredFeaturesDisabled"}
    # every upstream test case has a small integration-test workload
    tests = select(upstream, "integration-test,-performance")
    covered = {(tc.topic, tc.name) for tc, _ in tests}
    event_handling = {(tc.topic, tc.name) for tc in upstream if tc.topic == "event_handling"}
    assert len(covered) + len(event_handling) == len(upstream)
