"""Fuzz the KubeSchedulerConfiguration loader (issue 16): any document or file parses or
raises ConfigError naming the field; building the profiles of a parsed config works or raises
the core's own error; never another exception, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.errors import ConfigError, SchedulerCoreError
from scheduler_core.framework.config import build_frameworks, load_config, parse_config
from tests.fuzz.support import fuzz_settings, no_hang, yaml_values

KEYS = st.sampled_from([
    "apiVersion", "kind", "profiles", "schedulerName", "plugins", "pluginConfig", "args",
    "enabled", "disabled", "name", "weight", "multiPoint", "filter", "score", "preFilter",
    "postFilter", "queueSort", "bind", "permit", "reserve", "preScore", "preEnqueue",
    "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
    "pluginRegistry", "scoringStrategy", "type", "resources", "NodeResourcesFit",
    "PodTopologySpread", "InterPodAffinity", "defaultConstraints", "hardPodAffinityWeight",
    "*", "TaintToleration", "NodeAffinity", "addedAffinity", "requestedToCapacityRatio",
    "shape", "utilization", "score", "defaultingType", "ignorePreferredTermsOfExistingPods"])
PLUGIN = st.sampled_from(["NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
                          "TaintToleration", "NodeAffinity", "ImageLocality", "*", "Nope",
                          "DefaultPreemption", "NodeResourcesBalancedAllocation"])

plugin_set = st.fixed_dictionaries({}, optional={
    "enabled": st.lists(st.fixed_dictionaries({"name": PLUGIN}, optional={
        "weight": st.integers(-5, 2**64) | yaml_values(max_leaves=1)}), max_size=3),
    "disabled": st.lists(st.fixed_dictionaries({"name": PLUGIN}), max_size=2)})
profile = st.fixed_dictionaries({}, optional={
    "schedulerName": st.text(max_size=8) | yaml_values(max_leaves=1),
    "percentageOfNodesToScore": yaml_values(max_leaves=1),
    "plugins": st.dictionaries(KEYS, plugin_set | yaml_values(KEYS, max_leaves=4),
                               max_size=3),
    "pluginConfig": st.lists(st.fixed_dictionaries({"name": PLUGIN}, optional={
        "args": yaml_values(KEYS, max_leaves=10)}), max_size=3)})
config = st.fixed_dictionaries(
    {"apiVersion": st.just("kubescheduler.config.k8s.io/v1") | st.text(max_size=5)},
    optional={"kind": st.just("KubeSchedulerConfiguration") | st.text(max_size=5),
              "profiles": st.lists(profile, max_size=3) | yaml_values(KEYS, max_leaves=5),
              "percentageOfNodesToScore": yaml_values(max_leaves=1),
              "podInitialBackoffSeconds": yaml_values(max_leaves=1),
              "pluginRegistry": st.dictionaries(st.text(max_size=5), st.sampled_from(
                  ["os:path", "no.such.module:X", "json:JSONDecoder", "x", ":"])
                  | yaml_values(max_leaves=1), max_size=2)})


def _check(doc: object) -> None:
    with no_hang():
        try:
            cfg = parse_config(doc, source="sched.yaml")
        except ConfigError as exc:
            assert str(exc).strip()
            return
        try:
            build_frameworks(cfg, None)
        except SchedulerCoreError as exc:
            assert str(exc).strip()


@fuzz_settings()
@given(config | yaml_values(KEYS))
def test_documents(doc: object) -> None:
    _check(doc)


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "sched.yaml"


@fuzz_settings()
@given(st.binary(max_size=300) | config.map(
    lambda d: yaml.safe_dump(d, allow_unicode=True).encode("utf-8", "surrogatepass")))
def test_files(config_file: Path, data: bytes) -> None:
    config_file.write_bytes(data)
    with no_hang():
        try:
            load_config(config_file)
        except ConfigError as exc:
            assert str(exc).startswith(str(config_file))
