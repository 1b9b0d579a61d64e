"""Parser for upstream scheduler_perf ``performance-config.yaml`` files, read unmodified.

A config file is a YAML list of test cases; each has a workload template (a list of ops) and
workloads that fill the template's ``$params``. Decoding is as strict as upstream's
``yaml.UnmarshalStrict`` + per-op strict JSON decoding: unknown fields are errors, keys match
case-insensitively, types must fit. On top, the parser checks what upstream only finds at run
time: referenced template files exist, threshold selectors are valid, metrics collection does
not overlap.

Public API (this module names it; the code lives in the modules below)::

    load_configs(path) -> list[TestCase]            # raises the first ConfigFileError
    resolve(test_case, workload) -> list[Op]        # concrete ops for one workload
    validate(paths) -> list[ConfigFileError]        # every error of every file and workload

``path`` is a ``performance-config.yaml`` file or a folder holding
``<topic>/performance-config.yaml`` files. The topic of a test case is the name of the folder
holding its config file.

Modules: yaml_lines (line-tracking safe YAML), decode (strict Go-like field reading, Go
durations), errors (ConfigFileError), model (TestCase, Workload), load (files -> test cases),
ops / ops_unsupported / opcodes (op dataclasses and decoding), metrics (metrics collector
config, threshold selectors), resolve (params, unrolling, defaults). Modules inside this
package import from each other, never from this facade.
"""

from __future__ import annotations

from workloads.config.decode import FrozenDict, parse_go_duration, parse_go_duration_ns
from workloads.config.errors import ConfigFileError
from workloads.config.load import CONFIG_FILE_NAME, config_files, load_configs, validate
from workloads.config.metrics import (
    DEFAULT_METRICS_COLLECTOR_CONFIG,
    DEFAULT_THRESHOLD_METRIC_SELECTOR,
    EXTENSION_POINTS,
    PLUGIN_NAMES,
    LabelValues,
    MetricsCollectorConfig,
    ThresholdMetricSelector,
)
from workloads.config.model import TestCase, Workload
from workloads.config.opcodes import OPS
from workloads.config.ops import Op
from workloads.config.resolve import resolve

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
