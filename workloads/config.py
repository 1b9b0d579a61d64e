"""Parser for upstream scheduler_perf ``performance-config.yaml`` files, read unmodified.

A config file is a YAML list of test cases; each has a workload template (a list of ops) and
workloads that fill the template's ``$params``. Decoding is as strict as upstream's
``yaml.UnmarshalStrict`` + per-op strict JSON decoding: unknown fields are errors, keys match
case-insensitively, types must fit. On top, the parser checks what upstream only finds at run
time: referenced template files exist, threshold selectors are valid, metrics collection does
not overlap.

Public API::

    load_configs(path) -> list[TestCase]            # raises the first ConfigFileError
    resolve(test_case, workload) -> list[Op]        # concrete ops for one workload
    validate(paths) -> list[ConfigFileError]        # every error of every file and workload

``path`` is a ``performance-config.yaml`` file or a folder holding
``<topic>/performance-config.yaml`` files. The topic of a test case is the name of the folder
holding its config file.

Modules: config_yaml (line-tracking safe YAML), config_decode (strict Go-like field reading, Go
durations), config_ops / config_ops_unsupported / config_opcodes (op dataclasses and decoding),
config_metrics (metrics collector config, threshold selectors), config_resolve (params,
unrolling, defaults), config_errors (ConfigFileError).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workloads.config_decode import (
    EMPTY,
    Fields,
    FrozenDict,
    Issues,
    Scope,
    parse_go_duration,
    parse_go_duration_ns,
)
from workloads.config_errors import ConfigFileError
from workloads.config_metrics import (
    DEFAULT_METRICS_COLLECTOR_CONFIG,
    DEFAULT_THRESHOLD_METRIC_SELECTOR,
    EXTENSION_POINTS,
    PLUGIN_NAMES,
    LabelValues,
    MetricsCollectorConfig,
    ThresholdMetricSelector,
    check_selector,
    read_metrics_collector_config,
    read_selector,
    read_threshold,
)
from workloads.config_opcodes import OPS, decode_op
from workloads.config_ops import (
    CreatePods,
    CreatePodSets,
    Op,
    StartCollectingMetrics,
    StopCollectingMetrics,
)
from workloads.config_resolve import resolve, resolve_collect
from workloads.config_yaml import LineDict, LineList, YamlLoadError, load_yaml, plain

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_METRICS_COLLECTOR_CONFIG",
    "DEFAULT_THRESHOLD_METRIC_SELECTOR",
    "EXTENSION_POINTS",
    "OPS",
    "PLUGIN_NAMES",
    "ConfigFileError",
    "FrozenDict",
    "LabelValues",
    "MetricsCollectorConfig",
    "Op",
    "TestCase",
    "ThresholdMetricSelector",
    "Workload",
    "config_files",
    "load_configs",
    "parse_go_duration",
    "parse_go_duration_ns",
    "resolve",
    "validate",
]

CONFIG_FILE_NAME = "performance-config.yaml"


# --------------------------------------------------------------------------- test cases


@dataclass(frozen=True)
class Workload:
    """One sized instance of a test case (a Go sub-benchmark)."""

    name: str
    test_case: str
    params: FrozenDict[str, Any]
    labels: tuple[str, ...]  # the test case's labels, then the workload's own
    threshold: float | FrozenDict[str, float] | None
    threshold_metric_selector: ThresholdMetricSelector
    feature_gates: FrozenDict[str, bool]  # test case gates overridden by the workload's
    line: int | None = field(default=None, compare=False, repr=False)
    params_line: int | None = field(default=None, compare=False, repr=False)
    yaml_path: str = field(default="", compare=False, repr=False)

    @property
    def full_name(self) -> str:
        """``<test case>/<workload>``, what ``--name`` is matched against."""
        return f"{self.test_case}/{self.name}"

    def threshold_for(self, topic: str) -> float:
        """Upstream thresholds.Get: the topic's value, else the plain number; 0 = no check."""
        if self.threshold is None:
            return 0.0
        if isinstance(self.threshold, Mapping):
            return float(self.threshold.get(topic, 0.0))
        return float(self.threshold)


@dataclass(frozen=True)
class TestCase:
    """One entry of a performance-config.yaml."""

    __test__ = False  # not a pytest test class

    name: str
    feature_gates: FrozenDict[str, bool]
    workload_template: tuple[Op, ...]
    workloads: tuple[Workload, ...]
    scheduler_config_path: Path | None
    default_pod_template_path: Path | None
    labels: tuple[str, ...]
    default_threshold_metric_selector: ThresholdMetricSelector | None
    metrics_collector_config: MetricsCollectorConfig | None  # None: the upstream default
    source: Path
    topic: str
    line: int | None = field(default=None, compare=False, repr=False)

    @property
    def effective_metrics_collector_config(self) -> MetricsCollectorConfig:
        return self.metrics_collector_config or DEFAULT_METRICS_COLLECTOR_CONFIG

    @property
    def unsupported_reason(self) -> str | None:
        """Why schedperf cannot run this test case's workloads (an op it does not model)."""
        for op in self.workload_template:
            inner = op.create_pods_op if isinstance(op, CreatePodSets) else op
            reason = op.unsupported_reason or inner.unsupported_reason
            if reason:
                return f"op {op.opcode} ({op.yaml_path}): {reason}"
        return None

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(f"{self.name} has no workload {name!r}")


# --------------------------------------------------------------------------- decoding


def _peek_name(node: LineDict) -> str:
    for key, value in node.items():
        if key.lower() == "name" and isinstance(value, (str, int, float)):
            return str(value)
    return ""


@dataclass
class _FileResult:
    test_cases: list[TestCase]
    errors: list[ConfigFileError]
    broken: set[str]  # test cases whose template did not decode cleanly


class _TestCaseDecoder:
    def __init__(self, issues: Issues, base_dir: Path, source: Path) -> None:
        self.issues = issues
        self.base_dir = base_dir
        self.source = source

    def decode(self, index: int, node: Any, line: int) -> tuple[TestCase | None, bool]:
        """(test case or None, template decoded cleanly)."""
        scope = Scope(self.issues, self.base_dir)
        if not isinstance(node, LineDict):
            scope.error(f"[{index}]", "a test case must be a mapping", line)
            return None, False
        scope.test_case = _peek_name(node) or f"[{index}]"
        f = Fields(scope, node, "", coerce=True)
        name = f.string("name")
        if not name:
            f.error(f.key_of("name"), "name must be set")
        feature_gates = f.bool_map("featureGates")
        mcc = read_metrics_collector_config(f.sub("metricsCollectorConfig"))
        template, clean = self._template(f, scope)
        scheduler_config = f.opt_string("schedulerConfigPath")
        scheduler_config_path = (f.check_file(f.key_of("schedulerConfigPath"), scheduler_config,
                                              f.lines.get("schedulerConfigPath"))
                                 if scheduler_config else None)
        default_pod = f.file("defaultPodTemplatePath")
        labels = f.str_list("labels")
        default_selector = read_selector(f.sub("defaultThresholdMetricSelector"))
        effective_mcc = mcc or DEFAULT_METRICS_COLLECTOR_CONFIG
        if default_selector is not None:
            check_selector(f.key_of("defaultThresholdMetricSelector"), scope,
                            f.lines.get("defaultThresholdMetricSelector"), default_selector,
                            effective_mcc)
        workloads = self._workloads(f, scope, name, labels, feature_gates,
                                    default_selector, effective_mcc)
        f.finish()
        if not workloads and not f.node.get(f.key_of("workloads")):
            scope.error(f.key_of("workloads"), "no workloads defined", f.line)
        self._check_ops(f, scope, template, clean)
        tc = TestCase(
            name=name, feature_gates=feature_gates, workload_template=tuple(template),
            workloads=tuple(workloads), scheduler_config_path=scheduler_config_path,
            default_pod_template_path=default_pod, labels=labels,
            default_threshold_metric_selector=default_selector, metrics_collector_config=mcc,
            source=self.source, topic=self.source.parent.name, line=node.line)
        return tc, clean

    def _template(self, f: Fields, scope: Scope) -> tuple[list[Op], bool]:
        present, value = f.raw("workloadTemplate")
        key = f.key_of("workloadTemplate")
        if not present:
            return [], True
        if not isinstance(value, LineList):
            f.error(key, "expected a list of ops")
            return [], False
        before = len(self.issues.errors)
        ops = []
        for j, item in enumerate(value):
            op = decode_op(scope, item, f"{key}[{j}]", value.item_lines[j])
            if op is not None:
                ops.append(op)
        return ops, len(self.issues.errors) == before

    def _workloads(self, f: Fields, scope: Scope, tc_name: str, tc_labels: tuple[str, ...],
                   tc_gates: FrozenDict[str, bool],
                   default_selector: ThresholdMetricSelector | None,
                   mcc: MetricsCollectorConfig) -> list[Workload]:
        present, value = f.raw("workloads")
        key = f.key_of("workloads")
        if not present or (isinstance(value, list) and not value):
            return []  # reported after the unknown fields, see _check_structure
        if not isinstance(value, LineList):
            f.error(key, "expected a list of workloads")
            return []
        seen: dict[str, int] = {}
        workloads = []
        for k, node in enumerate(value):
            path = f"{key}[{k}]"
            if not isinstance(node, LineDict):
                f.error(path, "a workload must be a mapping", value.item_lines[k])
                continue
            wscope = Scope(self.issues, self.base_dir, scope.test_case,
                           _peek_name(node) or f"[{k}]")
            wf = Fields(wscope, node, path, coerce=True)
            name = wf.string("name")
            if not name:
                wf.error(wf.key_of("name"), "name must be set")
            elif name in seen:
                wf.error(wf.key_of("name"), f"workload name {name} is not unique (also used on "
                         f"line {seen[name]})")
            else:
                seen[name] = wf.lines["name"]
            params_node = wf.mapping("params")
            params = FrozenDict(plain(params_node)) if params_node is not None else EMPTY
            own_labels = wf.str_list("labels")
            threshold = read_threshold(wf)
            selector = read_selector(wf.sub("thresholdMetricSelector"))
            if selector is not None:
                check_selector(wf.path(wf.key_of("thresholdMetricSelector")), wscope,
                                wf.lines.get("thresholdMetricSelector"), selector, mcc)
            gates = wf.bool_map("featureGates")
            wf.finish()
            workloads.append(Workload(
                name=name, test_case=tc_name, params=params,
                labels=tuple(dict.fromkeys((*tc_labels, *own_labels))), threshold=threshold,
                threshold_metric_selector=(selector or default_selector
                                           or DEFAULT_THRESHOLD_METRIC_SELECTOR),
                feature_gates=FrozenDict({**tc_gates, **gates}), line=node.line,
                params_line=wf.lines.get("params", node.line), yaml_path=path))
        return workloads

    @staticmethod
    def _check_ops(f: Fields, scope: Scope, template: list[Op], clean: bool) -> None:
        key = f.key_of("workloadTemplate")
        line = f.lines.get("workloadTemplate", f.line)
        if not template:
            if clean:
                scope.error(key, "no ops defined", line)
            return
        if clean and not any(op.collects_metrics for op in template):
            scope.error(key, "no op in the workload template collects metrics", line)
        collecting = False
        for op in template:
            starts = isinstance(op, StartCollectingMetrics) or (
                isinstance(op, (CreatePods, CreatePodSets)) and op.collects_metrics)
            if starts and collecting:
                scope.error(op.yaml_path, "metrics collection is overlapping: a collector is "
                            "started before the previous one was stopped", op.line)
            if isinstance(op, StartCollectingMetrics):
                collecting = True
            elif isinstance(op, StopCollectingMetrics):
                if not collecting:
                    scope.error(op.yaml_path, "missing startCollectingMetrics operation before",
                                op.line)
                collecting = False


def _load_file(path: Path) -> _FileResult:
    path = Path(path).absolute()
    issues = Issues(path)
    result = _FileResult([], issues.errors, set())
    try:
        data = load_yaml(path)
    except OSError as err:
        issues.add(f"cannot read the file: {err.strerror or err}")
        return result
    except YamlLoadError as err:
        issues.add(err.problem, line=err.line)
        return result
    if data is None or (isinstance(data, list) and not data):
        issues.add("no test cases defined")
        return result
    if not isinstance(data, LineList):
        issues.add("the file must be a YAML list of test cases",
                   line=getattr(data, "line", None))
        return result
    decoder = _TestCaseDecoder(issues, path.parent, path)
    seen: dict[str, int] = {}
    for index, node in enumerate(data):
        tc, clean = decoder.decode(index, node, data.item_lines[index])
        if tc is None:
            continue
        if tc.name in seen:
            line = node.value_lines.get(next(k for k in node if k.lower() == "name"))
            issues.add(f"name is not unique (also used on line {seen[tc.name]})", line=line,
                       test_case=tc.name, yaml_path="name")
            continue
        if tc.name:
            seen[tc.name] = node.value_lines.get(
                next(k for k in node if k.lower() == "name"), node.line)
        if not clean:
            result.broken.add(tc.name)
        result.test_cases.append(tc)
    return result


def config_files(path: Path | str) -> list[Path]:
    """The config files ``path`` stands for: the file itself, or for a folder its
    ``performance-config.yaml`` and every ``<topic>/performance-config.yaml`` (sorted)."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    found = sorted(path.glob(f"*/{CONFIG_FILE_NAME}"))
    if (path / CONFIG_FILE_NAME).is_file():
        found.insert(0, path / CONFIG_FILE_NAME)
    return found


def _no_files(path: Path | str) -> ConfigFileError:
    return ConfigFileError(f"no {CONFIG_FILE_NAME} found in this folder or its subfolders",
                           path=Path(path).absolute())


def load_configs(path: Path | str) -> list[TestCase]:
    """Parse a config file (or every ``<topic>/performance-config.yaml`` under a folder).

    Raises the first :class:`ConfigFileError` found (test cases in file order; in a test case,
    field errors before structural ones such as "no workloads defined"). Parameter errors that
    only show for one workload are raised by :func:`resolve`.
    """
    files = config_files(path)
    if not files:
        raise _no_files(path)
    test_cases: list[TestCase] = []
    for file in files:
        result = _load_file(file)
        if result.errors:
            raise result.errors[0]
        test_cases.extend(result.test_cases)
    return test_cases


def validate(paths: Path | str | Iterable[Path | str]) -> list[ConfigFileError]:
    """Every problem of every config file and of every workload's resolution.

    ``paths`` is one path or several (files or folders as in :func:`config_files`). Errors are
    sorted by file, then line.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    errors: list[ConfigFileError] = []
    for path in paths:
        files = config_files(path)
        if not files:
            errors.append(_no_files(path))
        for file in files:
            result = _load_file(file)
            file_errors = list(result.errors)
            for tc in result.test_cases:
                for w in tc.workloads:
                    _, errs = resolve_collect(tc, w, check_unused=tc.name not in result.broken)
                    file_errors.extend(errs)
            file_errors.sort(key=lambda e: e.line or 0)
            errors.extend(file_errors)
    return errors
