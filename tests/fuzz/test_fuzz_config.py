"""Fuzz the workload config decoder (issue 16): any file either loads or raises
ConfigFileError with a message; resolving any loaded workload either works or raises
ConfigFileError; never another exception, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.support import fuzz_settings, no_hang, yaml_values
from workloads.config import OPS, ConfigFileError, load_configs, resolve

VALID = """\
- name: Basic
  labels: [performance]
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  workloads:
  - name: small
    params: {nodes: 5, pods: 10}
"""

FIELDS = st.sampled_from([
    "name", "labels", "workloadTemplate", "workloads", "params", "opcode", "count",
    "countParam", "collectMetrics", "nodeTemplatePath", "podTemplatePath", "namespace",
    "featureGates", "threshold", "thresholdMetricSelector", "schedulerConfigPath",
    "defaultPodTemplatePath", "metricsCollectorConfig", "duration", "durationParam",
    "steadyState", "skipWaitToCompletion", "createPodsOp", "namespacePrefix", "templatePath",
    "templateParams", "mode", "number", "intervalMilliseconds", "stageRequirement",
    "countMultiplierParam", "signatureBatchSize", "deletePodsPerSecond", *OPS])
PARAMS = st.sampled_from(["$nodes", "$pods", "$x", "$", "$nodes$"])


def _check(path: Path) -> None:
    with no_hang():
        try:
            test_cases = load_configs(path)
        except ConfigFileError as exc:
            assert str(exc).strip(), "an error without a message"
            return
        for tc in test_cases:
            for w in tc.workloads:
                try:
                    resolve(tc, w)
                except ConfigFileError as exc:
                    assert str(exc).strip()


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "misc" / "performance-config.yaml"
    path.parent.mkdir()
    return path


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@fuzz_settings()
@given(st.binary(max_size=400))
def test_any_bytes(config_file: Path, data: bytes) -> None:
    _check(_write(config_file, data))


@fuzz_settings()
@given(st.lists(st.tuples(st.integers(0, len(VALID)), st.text(max_size=6)), max_size=4))
def test_mutated_valid_config(config_file: Path, edits: list[tuple[int, str]]) -> None:
    text = VALID
    for pos, insert in edits:
        text = text[:pos] + insert + text[pos + len(insert):]
    _check(_write(config_file, text.encode("utf-8", "surrogatepass")))


test_case = st.fixed_dictionaries(
    {"name": st.text(max_size=8) | st.integers()},
    optional={
        "labels": st.lists(st.text(max_size=5), max_size=3) | yaml_values(FIELDS),
        "workloadTemplate": st.lists(st.dictionaries(
            FIELDS, st.sampled_from(list(OPS)) | PARAMS | yaml_values(FIELDS, max_leaves=4),
            max_size=5), max_size=4) | yaml_values(FIELDS),
        "workloads": st.lists(st.dictionaries(
            FIELDS, yaml_values(st.sampled_from(["nodes", "pods", "x"]), max_leaves=6),
            max_size=5), max_size=3),
    })


@fuzz_settings()
@given(st.lists(test_case, max_size=3) | yaml_values(FIELDS))
def test_structured_configs(config_file: Path, doc: object) -> None:
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except (yaml.YAMLError, ValueError):
        return
    _check(_write(config_file, text.encode("utf-8", "surrogatepass")))
