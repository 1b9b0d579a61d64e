"""Reading ``performance-config.yaml`` files: test cases decoded strictly, every error kept.

:func:`load_configs` raises the first error; :func:`validate` returns every error of every file
and of every workload's resolution. ``path`` is a ``performance-config.yaml`` file or a folder
holding ``<topic>/performance-config.yaml`` files; the topic of a test case is the name of the
folder holding its config file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_core.inputfile import InputFileError
from workloads.config.decode import EMPTY, Fields, FrozenDict, Issues, Scope
from workloads.config.errors import ConfigFileError
from workloads.config.metrics import (
    DEFAULT_METRICS_COLLECTOR_CONFIG,
    DEFAULT_THRESHOLD_METRIC_SELECTOR,
    MetricsCollectorConfig,
    ThresholdMetricSelector,
    check_selector,
    read_metrics_collector_config,
    read_selector,
    read_threshold,
)
from workloads.config.model import TestCase, Workload
from workloads.config.opcodes import decode_op
from workloads.config.ops import (
    CreatePods,
    CreatePodSets,
    Op,
    StartCollectingMetrics,
    StopCollectingMetrics,
)
from workloads.config.resolve import resolve_collect
from workloads.config.yaml_lines import LineDict, LineList, YamlLoadError, load_yaml, plain

__all__ = ["CONFIG_FILE_NAME", "config_files", "load_configs", "validate"]

CONFIG_FILE_NAME = "performance-config.yaml"


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
        data = load_yaml(path, what="a workload config (a YAML list of test cases)",
                         allow_empty=True)  # an empty file: "no test cases defined"
    except InputFileError as err:
        issues.add(err.problem, line=err.line)
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
    # lexists: a config that is a dangling link, a symlink loop or a FIFO is found, and then
    # refused with its reason, rather than silently left out
    found = sorted(d / CONFIG_FILE_NAME for d in path.iterdir()
                   if d.is_dir() and os.path.lexists(d / CONFIG_FILE_NAME))
    if os.path.lexists(path / CONFIG_FILE_NAME):
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


def validate(paths: Path | str | Iterable[Path | str], *,
             deep: Callable[[TestCase, Workload], list[ConfigFileError]] | None = None,
             ) -> list[ConfigFileError]:
    """Every problem of every config file and of every workload's resolution.

    ``paths`` is one path or several (files or folders as in :func:`config_files`). Errors are
    sorted by file, then line. ``deep(test_case, workload)`` (workloads.catalog.check) adds
    the problems of each workload that resolved cleanly: templates rendered, manifests and
    scheduler configs parsed.
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
                    if deep is not None and not errs and tc.name not in result.broken:
                        file_errors.extend(deep(tc, w))
            file_errors.sort(key=lambda e: e.line or 0)
            errors.extend(file_errors)
    return errors
