"""``templateParams`` defaults (``$name|default``), the upstream templates that use ``with`` /
``range`` / variables rendered as Go renders them, and ``schedperf validate`` on the upstream
configs that needed them."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bench.cli.main import cli
from tests.shared import SHARED_DIR, require_shared
from tests.workloads.test_config import load_one, write_config
from workloads.config import ConfigFileError, resolve
from workloads.config.param_ref import ParamRef, parse_param_ref
from workloads.template import Template

NEXT_DIR = SHARED_DIR / "upstream" / "scheduler_perf-next"


@pytest.mark.parametrize(("text", "expected"), [
    ("$n", ParamRef("n")),
    ("$numDevices|64", ParamRef("numDevices", True, 64)),
    ("$constraints|", ParamRef("constraints", True, None)),
    ("$c| ", ParamRef("c", True, None)),
    ("$s|abc", ParamRef("s", True, "abc")),
    ("$f|0.5", ParamRef("f", True, 0.5)),
    ("$b|true", ParamRef("b", True, True)),
    ("$l|[a, 1]", ParamRef("l", True, ["a", 1])),
    ("$p|a|b", ParamRef("p", True, "a|b")),
])
def test_parse_param_ref(text: str, expected: ParamRef) -> None:
    assert parse_param_ref(text) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("$|5", "bad parameter reference '$|5': want $name|default, with a name of letters, "
            "digits and underscores before the '|'"),
    ("$a b|5", "bad parameter reference '$a b|5': want $name|default"),
    ("$n|[1, 2", "bad default in parameter reference '$n|[1, 2': '[1, 2' is not one YAML "
                 "value"),
    ("$n|a: b: c", "bad default in parameter reference '$n|a: b: c': 'a: b: c' is not one "
                   "YAML value"),
])
def test_bad_default_syntax_is_one_clear_error(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_param_ref(text)
    assert str(info.value).startswith(problem)


DEFAULTS = """
- name: Defaults
  workloadTemplate:
  - opcode: createAny
    templatePath: pod.yaml
    namespace: ns
    templateParams: {devices: $numDevices|64, constraints: $constraints|, reqs: $numRequests|1}
  - opcode: createPods
    count: 1
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: w
    params: {numRequests: 32}
"""


def test_default_used_only_when_the_workload_does_not_define_the_param(tmp_path: Path) -> None:
    tc = load_one(tmp_path, DEFAULTS)
    op, _ = resolve(tc, tc.workloads[0])
    assert op.template_params == {"devices": 64, "constraints": None, "reqs": 32}


def test_a_param_with_a_default_is_not_unused_and_an_undefined_one_still_fails(
        tmp_path: Path) -> None:
    tc = load_one(tmp_path, DEFAULTS.replace("params: {numRequests: 32}",
                                             "params: {numRequests: 32, numDevices: 8}"))
    op, _ = resolve(tc, tc.workloads[0])
    assert op.template_params["devices"] == 8
    tc = load_one(tmp_path, DEFAULTS.replace("$numRequests|1", "$numRequests")
                  .replace("params: {numRequests: 32}", "params: {}"))
    with pytest.raises(ConfigFileError) as info:
        resolve(tc, tc.workloads[0])
    assert str(info.value) == ("misc/performance-config.yaml:6: Defaults/w: "
                               "workloadTemplate[0].templateParams: parameter $numRequests is "
                               "undefined")


def test_validate_names_file_line_and_param_for_a_bad_default(tmp_path: Path) -> None:
    path = write_config(tmp_path, DEFAULTS.replace("$numDevices|64", "$|64"))
    result = CliRunner().invoke(cli, ["validate", str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert ("misc/performance-config.yaml:6: Defaults/w: workloadTemplate[0].templateParams: "
            "devices: bad parameter reference '$|64': want $name|default") in result.output
    assert "Traceback" not in result.output


# What Go's text/template printed for upstream's DRA templates (go1.26, upstream's Int and
# JSON); the two long ones as the sha256 of Go's output.
CLAIM_TEMPLATE_HEAD = ("\n\n\n\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                       "metadata:\n  name: test-claim-template\nspec:\n  spec:\n    devices:\n")
REQUEST = ("      - name: req-{i}\n        exactly:\n          deviceClassName: test-class\n"
           "          selectors: null\n")
UPSTREAM_RENDERS: list[tuple[str, str, dict[str, Any], str]] = [
    ("claim template, no params", "dra/templates/resourceclaimtemplate.yaml", {},
     CLAIM_TEMPLATE_HEAD + "      constraints: null\n      requests:\n" + REQUEST.format(i=0)),
    ("claim template, params", "dra/templates/resourceclaimtemplate.yaml",
     {"numRequests": 2, "constraints": [{"matchAttribute": "dra.example.com/match"}],
      "selectors": None},
     CLAIM_TEMPLATE_HEAD + '      constraints: [{"matchAttribute":"dra.example.com/match"}]\n'
     "      requests:\n" + REQUEST.format(i=0) + REQUEST.format(i=1)),
    ("basic devices", "dra/templates/resourceslice-basic-devices.yaml",
     {"Index": 3, "Count": 5, "numDevices": 2},
     "sha256:2fcb93225c7e8a963f340e9a5e56757fc6742d32026ff3f9091c5568c6e22909"),
    ("list attribute devices", "dra/templates/resourceslice-list-attributes-devices.yaml",
     {"Index": 1, "Count": 2, "numDevices": 3, "numNonMatchingDevices": 1, "numListValues": 2},
     "sha256:f935de92ccf0abf3a66cdbea61538b870afb37cfd3b011ff77a509f3033b4f45"),
]


@pytest.mark.parametrize(("rel", "data", "expected"), [c[1:] for c in UPSTREAM_RENDERS],
                         ids=[c[0] for c in UPSTREAM_RENDERS])
def test_upstream_dra_templates_render_as_go_renders_them(rel: str, data: dict[str, Any],
                                                          expected: str) -> None:
    path = require_shared(NEXT_DIR / rel)
    text = Template(path.read_text(), source=str(path)).render({"Index": 0, "Count": 1, **data})
    if expected.startswith("sha256:"):
        assert hashlib.sha256(text.encode()).hexdigest() == expected.removeprefix("sha256:")
    else:
        assert text == expected
    assert isinstance(yaml.safe_load(text), dict)


def test_list_attribute_devices_structure() -> None:
    path = require_shared(NEXT_DIR / "dra/templates/resourceslice-list-attributes-devices.yaml")
    data = {"Index": 1, "Count": 2, "numDevices": 3, "numNonMatchingDevices": 1,
            "numListValues": 2}
    devices = yaml.safe_load(Template(path.read_text()).render(data))["spec"]["devices"]
    strings = [d["attributes"]["dra.example.com/match"]["strings"] for d in devices]
    assert strings == [["device-0-value-0", "device-0-value-1"],
                       ["shared-value", "device-1-value-0", "device-1-value-1"],
                       ["shared-value", "device-2-value-0", "device-2-value-1"]]


FIXED_CONFIGS = ("cpg/performance-config.multilevel-a5bb9771.yaml",
                 "dra/listattributes/performance-config.yaml")


@pytest.mark.parametrize("rel", FIXED_CONFIGS)
def test_validate_exits_0_on_the_configs_that_use_with_range_and_defaults(rel: str) -> None:
    config = require_shared(NEXT_DIR / rel)
    result = CliRunner().invoke(cli, ["validate", str(config)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_dra_config_templates_now_validate() -> None:
    """dra/performance-config.yaml: its templates (variables, range over an int, Int, JSON)
    pass; what is left is the upstream file's own $measurePods, used by workloads that do not
    define it (empty_100nodes, empty_200nodes, empty_500nodes)."""
    config = require_shared(NEXT_DIR / "dra/performance-config.yaml")
    result = CliRunner().invoke(cli, ["validate", str(config)], catch_exceptions=False)
    errors = [line for line in result.output.splitlines() if line.startswith("dra/")]
    assert [e.split(": ", 1)[1].split(":")[0] for e in errors] == [
        f"SchedulingWithResourceClaimTemplate/empty_{n}nodes" for n in (100, 200, 500)]
    assert all(e.endswith("countParam: parameter $measurePods is undefined") for e in errors)
