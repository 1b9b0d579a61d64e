"""The malformed-input corpus (issue 16): every input kind x every failure class.

A :class:`Case` breaks one file of a small valid setup (a workload config with a node
template, a pod template and a scheduler config; a finished run folder; a compare report; an
accepted-regressions file; a results store) and says which command reads it, which file and
which field (or, for byte-level problems, which words) the one error line must name.
``python -m tests.corpus.matrix`` prints the matrix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CASES", "CLASSES", "KINDS", "Case", "Setup", "write_base"]

KINDS = ("workload config", "template", "manifest", "scheduler config", "accepted.yaml",
         "results file (ingest)", "results (compare --base-results)", "report.json",
         "store")
CLASSES = ("unreadable bytes", "syntax", "unknown field", "missing field", "wrong type",
           "out-of-range value", "missing file", "special file", "oversize")

CONFIG = """\
- name: Basic
  schedulerConfigPath: sched.yaml
  labels: [corpus]
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
    nodeTemplatePath: node.yaml
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod.yaml
    collectMetrics: true
  workloads:
  - name: small
    params: {nodes: 4, pods: 6}
"""
NODE = """\
apiVersion: v1
kind: Node
metadata:
  generateName: node-
  labels: {zone: "z{{ Mod .Index 2 }}"}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: 100m, memory: 100Mi}
"""
SCHED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 2}]
"""
ACCEPTED = """\
- workload: "Basic/.*"
  metric: SchedulingThroughput
  until: 2999-12-31
  why: "known"
"""
BIG = 2048  # bytes of an oversize file; the cases pass --max-input-size 1K
GARBAGE = bytes(range(128, 256)) * 4
# a "billion laughs": 10^9 values once its aliases are expanded, a few hundred bytes as text
LAUGHS = 'laughs: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 9))


@dataclass(frozen=True)
class Setup:
    """Where a case works: ``cfg`` the config folder (``cfg/t/``), ``run`` a finished run
    folder, ``report`` a compare report.json, ``store`` a store holding ``run``."""

    root: Path
    run: Path
    report: Path
    store: Path

    @property
    def cfg(self) -> Path:
        return self.root / "cfg"

    @property
    def t(self) -> Path:
        return self.root / "cfg" / "t"


def write_base(folder: Path) -> Path:
    """The valid workload config folder (``folder/t/...``)."""
    t = folder / "t"
    t.mkdir(parents=True, exist_ok=True)
    for name, text in (("performance-config.yaml", CONFIG), ("node.yaml", NODE),
                       ("pod.yaml", POD), ("sched.yaml", SCHED)):
        (t / name).write_text(text)
    return folder


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    failure: str
    prepare: Callable[[Setup], list[str]]  # breaks a file; returns the command's arguments
    file: str  # must appear in the error output
    field: str | None  # must appear too (a field path or the words naming the problem)
    runs: bool = False  # a workload-config case: `run` must refuse it too (and validate)
    absent: str | None = None  # a path (under the setup's root) the command must not create


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _config_case(cid: str, kind: str, failure: str, name: str, field: str | None,
                 change: Callable[[Path], None]) -> Case:
    def prepare(s: Setup) -> list[str]:
        change(s.t)
        return ["validate", str(s.cfg)]

    return Case(cid, kind, failure, prepare, name, field, runs=True)


def _write(name: str, data: bytes | str) -> Callable[[Path], None]:
    def change(t: Path) -> None:
        (t / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return change


def _sub(name: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda t: _edit(t / name, old, new)


def _fifo(name: str) -> Callable[[Path], None]:
    def change(t: Path) -> None:
        (t / name).unlink()
        os.mkfifo(t / name)
    return change


def _loop(name: str) -> Callable[[Path], None]:
    def change(t: Path) -> None:
        (t / name).unlink()
        (t / name).symlink_to(t / f"{name}.2")
        (t / f"{name}.2").symlink_to(t / name)
    return change


def _folder(name: str) -> Callable[[Path], None]:
    def change(t: Path) -> None:
        (t / name).unlink()
        (t / name).mkdir()
    return change


def _big(name: str) -> Callable[[Path], None]:
    def change(t: Path) -> None:
        text = (t / name).read_text()
        (t / name).write_text(text + "#" * BIG + "\n")
    return change


def _oversize(case: Case) -> Case:
    """The case run with ``--max-input-size 1K``."""
    def prepare(s: Setup) -> list[str]:
        return ["--max-input-size", "1K", *case.prepare(s)]
    return Case(case.id, case.kind, case.failure, prepare, case.file, case.field, case.runs,
                case.absent)


CFG, TPL, MAN, SCH = KINDS[:4]
_C = "performance-config.yaml"


def _config_cases() -> list[Case]:
    c = _config_case
    return [
        c("config-binary", CFG, "unreadable bytes", _C, "not UTF-8", _write(_C, GARBAGE)),
        c("config-empty", CFG, "unreadable bytes", _C, "no test cases defined", _write(_C, "")),
        c("config-syntax", CFG, "syntax", _C, "invalid YAML", _sub(_C, "labels: [corpus]",
                                                                  "labels: [corpus")),
        c("config-unknown-field", CFG, "unknown field", _C, "bogus",
          _sub(_C, "  labels: [corpus]", "  labels: [corpus]\n  bogus: 1")),
        c("config-missing-field", CFG, "missing field", _C, "name",
          _sub(_C, "  - name: small\n", "  - labels: [x]\n")),
        c("config-wrong-type", CFG, "wrong type", _C, "collectMetrics",
          _sub(_C, "collectMetrics: true", "collectMetrics: [yes]")),
        c("config-undefined-param", CFG, "missing field", _C, "$pods",
          _sub(_C, "pods: 6", "podz: 6")),
        c("config-negative-count", CFG, "out-of-range value", _C, "countParam",
          _sub(_C, "nodes: 4", "nodes: -4")),
        c("config-overflow", CFG, "out-of-range value", _C, "countParam",
          _sub(_C, "nodes: 4", "nodes: 100000000000000000000000")),
        c("config-impossible-size", CFG, "out-of-range value", _C, "parameter $nodes",
          _sub(_C, "nodes: 4", "nodes: 1000000000000000")),
        c("config-missing-template-file", CFG, "missing file", _C, "nodeTemplatePath",
          lambda t: (t / "node.yaml").unlink()),
        c("config-missing-scheduler-config", CFG, "missing file", _C, "schedulerConfigPath",
          lambda t: (t / "sched.yaml").unlink()),
        c("config-fifo", CFG, "special file", _C, "FIFO", _fifo(_C)),
        c("config-symlink-loop", CFG, "special file", _C, "symlink loop", _loop(_C)),
        _oversize(c("config-oversize", CFG, "oversize", _C, "input size cap", _big(_C))),
        c("config-alias-bomb", CFG, "oversize", _C, "aliases expand to more than",
          _sub(_C, "    params: {nodes: 4, pods: 6}", "    params:\n      nodes: 4\n"
               "      pods: 6\n" + "".join("      " + line + "\n"
                                           for line in LAUGHS.splitlines()))),
    ]


def _template_cases() -> list[Case]:
    c = _config_case
    return [
        c("template-binary", TPL, "unreadable bytes", "node.yaml", "not UTF-8",
          _write("node.yaml", GARBAGE)),
        c("template-empty", TPL, "unreadable bytes", "node.yaml", "empty file",
          _write("node.yaml", "")),
        c("template-unclosed-action", TPL, "syntax", "node.yaml", "workloadTemplate[0]",
          _sub("node.yaml", "{{ Mod .Index 2 }}", "{{ Mod .Index 2 ")),
        c("template-unknown-function", TPL, "unknown field", "node.yaml", "Nope",
          _sub("node.yaml", "{{ Mod .Index 2 }}", "{{ Nope .Index }}")),
        c("template-undefined-parameter", TPL, "missing field", "node.yaml", "nope",
          _sub("node.yaml", "{{ Mod .Index 2 }}", "{{ .nope }}")),
        c("template-wrong-argument-type", TPL, "wrong type", "node.yaml", "Mod",
          _sub("node.yaml", "{{ Mod .Index 2 }}", '{{ Mod .Index "x" }}')),
        c("template-division-by-zero", TPL, "out-of-range value", "node.yaml",
          "workloadTemplate[0]", _sub("node.yaml", "{{ Mod .Index 2 }}", "{{ Mod .Index 0 }}")),
        c("template-missing", TPL, "missing file", _C, "podTemplatePath",
          lambda t: (t / "pod.yaml").unlink()),
        c("template-is-a-folder", TPL, "special file", "node.yaml", "folder",
          _folder("node.yaml")),
        c("template-fifo", TPL, "special file", "node.yaml", "FIFO", _fifo("node.yaml")),
        _oversize(c("template-oversize", TPL, "oversize", "node.yaml", "input size cap",
                    _big("node.yaml"))),
    ]


_PC = "priorityclass.yaml"
PRIORITY_CLASS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
"""


def _any(change: Callable[[Path], None]) -> Callable[[Path], None]:
    """The config with a first op ``createAny`` of ``priorityclass.yaml``, then ``change``."""
    def both(t: Path) -> None:
        _edit(t / _C, "  workloadTemplate:\n",
              f"  workloadTemplate:\n  - opcode: createAny\n    templatePath: {_PC}\n")
        (t / _PC).write_text(PRIORITY_CLASS)
        change(t)
    return both


def _manifest_cases() -> list[Case]:
    c = _config_case
    return [
        c("manifest-yaml-syntax", MAN, "syntax", "pod.yaml", "invalid YAML",
          _sub("pod.yaml", "  - name: c", "  - name: [c")),
        c("manifest-unknown-field", MAN, "unknown field", "pod.yaml", "spec.containers[0].bogus",
          _sub("pod.yaml", "    image: x", "    image: x\n    bogus: 1")),
        c("manifest-missing-values", MAN, "missing field", "pod.yaml", "values",
          _sub("pod.yaml", "spec:\n", "spec:\n  affinity: {nodeAffinity: "
               "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
               "[{matchExpressions: [{key: zone, operator: In}]}]}}}\n")),
        c("manifest-wrong-type", MAN, "wrong type", "node.yaml", "status.capacity",
          _sub("node.yaml", 'capacity: {cpu: "4",', "capacity: {cpu: [4],")),
        c("manifest-bad-quantity", MAN, "out-of-range value", "node.yaml",
          "status.capacity.cpu", _sub("node.yaml", 'cpu: "4"', 'cpu: "4x"')),
        c("manifest-bad-operator", MAN, "out-of-range value", "pod.yaml", "operator",
          _sub("pod.yaml", "spec:\n", "spec:\n  tolerations: [{key: a, operator: Foo}]\n")),
        c("manifest-wrong-kind", MAN, "wrong type", "node.yaml", 'expected kind "Node"',
          _sub("node.yaml", "kind: Node", "kind: Service")),
        # the file a createAny op's templatePath names (a PriorityClass), not a pod or node
        # template: read by the op's own preparation, found by the config's file check
        c("manifest-any-binary", MAN, "unreadable bytes", _PC, "not UTF-8",
          _any(_write(_PC, GARBAGE))),
        c("manifest-any-missing", MAN, "missing file", _C, "workloadTemplate[0].templatePath",
          _any(lambda t: (t / _PC).unlink())),
        c("manifest-any-fifo", MAN, "special file", _C, "FIFO", _any(_fifo(_PC))),
        _oversize(c("manifest-any-oversize", MAN, "oversize", _PC, "input size cap",
                    _any(_big(_PC)))),
    ]


_S = "sched.yaml"


def _scheduler_cases() -> list[Case]:
    c = _config_case
    return [
        c("scheduler-binary", SCH, "unreadable bytes", _S, "not UTF-8", _write(_S, GARBAGE)),
        c("scheduler-empty", SCH, "unreadable bytes", _S, "empty file", _write(_S, "")),
        c("scheduler-syntax", SCH, "syntax", _S, "invalid YAML",
          _sub(_S, "profiles:", "profiles: [")),
        c("scheduler-unknown-field", SCH, "unknown field", _S, "profiles[0].bogus",
          _sub(_S, "- schedulerName", "- bogus: 1\n  schedulerName")),
        c("scheduler-unknown-plugin", SCH, "unknown field", _S, "NoSuchPlugin",
          _sub(_S, "name: NodeResourcesFit", "name: NoSuchPlugin")),
        c("scheduler-missing-plugin-name", SCH, "missing field", _S, "profiles[0].plugins",
          _sub(_S, "{name: NodeResourcesFit, weight: 2}", "{weight: 2}")),
        c("scheduler-wrong-type", SCH, "wrong type", _S, "weight",
          _sub(_S, "weight: 2", "weight: heavy")),
        c("scheduler-out-of-range", SCH, "out-of-range value", _S, "percentageOfNodesToScore",
          _sub(_S, "profiles:", "percentageOfNodesToScore: 500\nprofiles:")),
        c("scheduler-plugin-import", SCH, "missing file", _S, "pluginRegistry.Mine",
          _sub(_S, "profiles:", 'pluginRegistry: {Mine: "no_such_module_x:Plugin"}\nprofiles:')),
        c("scheduler-fifo", SCH, "special file", _S, "FIFO", _fifo(_S)),
        _oversize(c("scheduler-oversize", SCH, "oversize", _S, "input size cap", _big(_S))),
        c("scheduler-alias-bomb", SCH, "oversize", _S, "aliases expand to more than",
          lambda t: (t / _S).write_text(SCHED + "x-" + LAUGHS.replace("\nl", "\nx-l"))),
    ]


def _compare_config_case(cid: str, failure: str, field: str,
                         change: Callable[[Path], None]) -> Case:
    """``schedperf compare --base-config sched.yaml --head-config head.yaml`` (the test case's
    own schedulerConfigPath dropped, so the flags apply) with ``head.yaml`` broken: refused by
    the deep check before anything is measured (no output folder)."""
    def prepare(s: Setup) -> list[str]:
        _edit(s.t / _C, "  schedulerConfigPath: sched.yaml\n", "")
        head = s.t / "head.yaml"
        head.write_text(SCHED)
        change(head)
        none = s.root / "none.yaml"
        none.write_text("[]\n")
        return ["compare", "--base-config", str(s.t / _S), "--head-config", str(head),
                "--config", str(s.cfg), "--label", "", "--time-label", "", "--measure",
                "time", "--repeat", "1", "--out", str(s.root / "cmp-cfg"), "--accepted",
                str(none)]
    return Case(cid, SCH, failure, prepare, "head.yaml", field, absent="cmp-cfg")


def _compare_config_cases() -> list[Case]:
    def sub(old: str, new: str) -> Callable[[Path], None]:
        return lambda p: _edit(p, old, new)

    def fifo(p: Path) -> None:
        p.unlink()
        os.mkfifo(p)

    c = _compare_config_case
    return [
        c("scheduler-compare-unknown-plugin", "unknown field",
          'profiles[0].plugins.score: unknown plugin "NoSuchPlugin"',
          sub("name: NodeResourcesFit", "name: NoSuchPlugin")),
        c("scheduler-compare-plugin-import", "missing file", "pluginRegistry.Mine",
          sub("profiles:", 'pluginRegistry: {Mine: "no_such_module_x:Plugin"}\nprofiles:')),
        c("scheduler-compare-wrong-type", "wrong type", "weight",
          sub("weight: 2", "weight: heavy")),
        c("scheduler-compare-fifo", "special file", "FIFO", fifo),
    ]


ACC = KINDS[4]


def _accepted_case(cid: str, failure: str, field: str | None,
                   write: Callable[[Path], None], *, big: bool = False) -> Case:
    def prepare(s: Setup) -> list[str]:
        path = s.root / "accepted.yaml"
        path.write_text(ACCEPTED)
        write(path)
        args = ["compare", "--base-results", str(s.run), "--head-results", str(s.run),
                "--out", str(s.root / "cmp"), "--accepted", str(path)]
        return ["--max-input-size", "1K", *args] if big else args
    return Case(cid, ACC, failure, prepare, "accepted.yaml", field)


def _accepted_cases() -> list[Case]:
    def sub(old: str, new: str) -> Callable[[Path], None]:
        return lambda p: _edit(p, old, new)

    def fifo(p: Path) -> None:
        p.unlink()
        os.mkfifo(p)

    a = _accepted_case
    return [
        a("accepted-binary", "unreadable bytes", "not UTF-8", lambda p: p.write_bytes(GARBAGE)),
        a("accepted-syntax", "syntax", "invalid YAML", sub('"known"', '"known')),
        a("accepted-unknown-field", "unknown field", "[0].reason",
          sub("  why:", "  reason: x\n  why:")),
        a("accepted-missing-field", "missing field", "[0].why", sub('  why: "known"\n', "")),
        a("accepted-wrong-type", "wrong type", "[0].why", sub('why: "known"', "why: [1, 2]")),
        a("accepted-bad-date", "out-of-range value", 'accepted.yaml:3: (file): invalid value of '
          '"until"', sub("2999-12-31", "2999-13-45")),
        a("accepted-bad-regex", "out-of-range value", "[0].workload", sub('"Basic/.*"', '"(("')),
        a("accepted-missing", "missing file", "no such file", lambda p: p.unlink()),
        a("accepted-fifo", "special file", "FIFO", fifo),
        a("accepted-oversize", "oversize", "input size cap",
          lambda p: p.write_text(ACCEPTED + "#" * BIG + "\n"), big=True),
    ]


ING, CMP, REP, STO = KINDS[5:]
_DI = "BenchmarkPerfScheduling_benchmark_t_2025-01-01T00:00:00Z.json"


def _ingest_case(cid: str, failure: str, name: str, field: str | None,
                 write: Callable[[Path], None], *, big: bool = False) -> Case:
    def prepare(s: Setup) -> list[str]:
        folder = s.root / "in"
        folder.mkdir(exist_ok=True)
        path = folder / name
        write(path)
        args = ["ingest", str(path), "--store", str(s.root / "newstore")]
        return ["--max-input-size", "1K", *args] if big else args
    return Case(cid, ING, failure, prepare, name, field)


def _dataitems(**override: object) -> str:
    doc: dict[str, object] = {"version": "v1", "dataItems": [
        {"data": {"Average": 10.0}, "unit": "pods/s",
         "labels": {"Metric": "SchedulingThroughput", "Name": "Basic/small/namespace-1"}}]}
    doc.update(override)
    return json.dumps(doc)


def _ingest_cases() -> list[Case]:
    def fifo(p: Path) -> None:
        os.mkfifo(p)

    i = _ingest_case
    return [
        i("ingest-binary", "unreadable bytes", _DI, "not UTF-8", lambda p: p.write_bytes(GARBAGE)),
        i("ingest-empty", "unreadable bytes", _DI, "empty file", lambda p: p.write_bytes(b"")),
        i("ingest-truncated-json", "syntax", _DI, "not valid JSON",
          lambda p: p.write_text(_dataitems()[:40])),
        i("ingest-unknown-format", "unknown field", "other.json", "no known results format",
          lambda p: p.write_text('{"hello": 1}')),
        i("ingest-missing-field", "missing field", _DI, "dataItems",
          lambda p: p.write_text('{"version": "v1"}')),
        i("ingest-wrong-type", "wrong type", _DI, "dataItems[0].data: expected a mapping of "
          "bucket names to numbers (e.g. {\"Average\": 12.5}), got a list",
          lambda p: p.write_text(_dataitems().replace('{"Average": 10.0}', "[10.0]"))),
        i("ingest-wrong-type-list", "wrong type", _DI, "dataItems: expected a list, got a string",
          lambda p: p.write_text(_dataitems(dataItems="many"))),
        i("ingest-wrong-type-label", "wrong type", _DI,
          "dataItems[0].labels.Metric: expected a string, got a number",
          lambda p: p.write_text(_dataitems().replace('"SchedulingThroughput"', "7"))),
        i("ingest-bad-value", "out-of-range value", _DI, "dataItems[0].data.Average",
          lambda p: p.write_text(_dataitems().replace("10.0", '"fast"'))),
        i("ingest-garbage-parquet", "unreadable bytes", "results.parquet", "Parquet",
          lambda p: p.write_bytes(b"PAR1" + GARBAGE)),
        i("ingest-missing", "missing file", "nothing.json", "no such file", lambda p: None),
        i("ingest-fifo", "special file", "pipe.json", "not a regular file", fifo),
        i("ingest-oversize", "oversize", _DI, "input size cap",
          lambda p: p.write_text(_dataitems(pad="x" * BIG)), big=True),
    ]


def _compare_case(cid: str, failure: str, name: str, field: str | None,
                  write: Callable[[Path, Path], None], *, big: bool = False) -> Case:
    def prepare(s: Setup) -> list[str]:
        folder = s.root / "bad-run"
        folder.mkdir(exist_ok=True)
        write(folder / name, s.run / name)
        accepted = s.root / "none.yaml"
        accepted.write_text("[]\n")
        args = ["compare", "--base-results", str(folder), "--head-results", str(s.run),
                "--out", str(s.root / "cmp"), "--accepted", str(accepted)]
        return ["--max-input-size", "1K", *args] if big else args
    return Case(cid, CMP, failure, prepare, name, field)


def _compare_cases() -> list[Case]:
    import polars as pl

    def columns(path: Path, good: Path) -> None:
        pl.read_parquet(good).drop("metric").write_parquet(path)

    def fifo(path: Path, good: Path) -> None:
        os.mkfifo(path)

    def text_values(path: Path, good: Path) -> None:
        pl.read_parquet(good).with_columns(pl.col("value").cast(pl.Utf8)).write_parquet(path)

    def big(path: Path, good: Path) -> None:
        path.write_bytes(good.read_bytes())

    def extra_column(path: Path, good: Path) -> None:
        pl.read_parquet(good).with_columns(pl.lit(1).alias("bogus")).write_parquet(path)

    def throughput(value: float) -> Callable[[Path, Path], None]:
        def write(path: Path, good: Path) -> None:
            df = pl.read_parquet(good)
            hit = pl.col("metric") == "SchedulingThroughput"
            assert df.filter(hit).height, "the run has throughput rows"
            df.with_columns(pl.when(hit).then(pl.lit(value)).otherwise(pl.col("value"))
                            .alias("value")).write_parquet(path)
        return write

    def column_value(column: str, value: str) -> Callable[[Path, Path], None]:
        def write(path: Path, good: Path) -> None:
            pl.read_parquet(good).with_columns(pl.lit(value).alias(column)).write_parquet(path)
        return write

    m = _compare_case
    return [
        m("compare-garbage-parquet", "unreadable bytes", "results.parquet",
          "not a readable Parquet file", lambda p, g: p.write_bytes(GARBAGE)),
        m("compare-truncated-parquet", "syntax", "results.parquet",
          "not a readable Parquet file", lambda p, g: p.write_bytes(g.read_bytes()[:200])),
        m("compare-missing-column", "missing field", "results.parquet", "metric", columns),
        m("compare-wrong-type", "wrong type", "results.parquet", "value", text_values),
        m("compare-unknown-column", "unknown field", "results.parquet",
          "unknown column bogus", extra_column),
        m("compare-negative-throughput", "out-of-range value", "results.parquet",
          "column value: SchedulingThroughput", throughput(-5.0)),
        m("compare-nan-throughput", "out-of-range value", "results.parquet",
          "column value: SchedulingThroughput", throughput(float("nan"))),
        m("compare-unknown-engine", "out-of-range value", "results.parquet",
          "column engine: 'warp-drive'", column_value("engine", "warp-drive")),
        m("compare-unknown-status", "out-of-range value", "results.parquet",
          "column status: 'maybe'", column_value("status", "maybe")),
        m("compare-no-results", "missing file", "bad-run", "neither a compare output folder",
          lambda p, g: None),
        m("compare-fifo", "special file", "results.parquet", "FIFO", fifo),
        m("compare-oversize", "oversize", "results.parquet", "input size cap", big, big=True),
    ]


def _report_case(cid: str, failure: str, field: str | None, write: Callable[[Path, Path], None],
                 *, big: bool = False) -> Case:
    def prepare(s: Setup) -> list[str]:
        path = s.root / "bad" / "report.json"
        path.parent.mkdir(exist_ok=True)
        write(path, s.report)
        args = ["report", str(path)]
        return ["--max-input-size", "1K", *args] if big else args
    return Case(cid, REP, failure, prepare, "report.json", field)


def _report_cases() -> list[Case]:
    def changed(key: str, value: object) -> Callable[[Path, Path], None]:
        def write(path: Path, good: Path) -> None:
            doc = json.loads(good.read_text())
            if value is _DELETE:
                del doc[key]
            else:
                doc[key] = value
            path.write_text(json.dumps(doc))
        return write

    def fifo(path: Path, good: Path) -> None:
        os.mkfifo(path)

    r = _report_case
    return [
        r("report-binary", "unreadable bytes", "not UTF-8", lambda p, g: p.write_bytes(GARBAGE)),
        r("report-truncated", "syntax", "not valid JSON",
          lambda p, g: p.write_text(g.read_text()[:100])),
        r("report-unknown-field", "unknown field", "bogus: unknown field",
          changed("bogus", 1)),
        r("report-missing-field", "missing field", "verdict", changed("verdict", _DELETE)),
        r("report-wrong-type", "wrong type", "results", changed("results", "many")),
        r("report-bad-verdict", "out-of-range value", "verdict", changed("verdict", "maybe")),
        r("report-missing", "missing file", "no such file", lambda p, g: None),
        r("report-fifo", "special file", "FIFO", fifo),
        r("report-oversize", "oversize", "input size cap",
          lambda p, g: p.write_text(g.read_text() + " " * 300_000), big=True),
    ]


_DELETE = object()


def _store_case(cid: str, failure: str, file: str, field: str | None,
                write: Callable[[Path], None]) -> Case:
    def prepare(s: Setup) -> list[str]:
        write(s.store)
        return ["ingest", str(s.run), "--store", str(s.store)]
    return Case(cid, STO, failure, prepare, file, field)


def _store_cases() -> list[Case]:
    led = "_ingested.json"

    def edit(fn: Callable[[dict], None]) -> Callable[[Path], None]:
        def write(store: Path) -> None:
            doc = json.loads((store / led).read_text())
            fn(doc)
            (store / led).write_text(json.dumps(doc))
        return write

    def fifo(store: Path) -> None:
        (store / led).unlink()
        os.mkfifo(store / led)

    def as_file(store: Path) -> None:
        import shutil

        shutil.rmtree(store)
        store.write_text("not a folder")

    st = _store_case
    return [
        st("store-bookkeeping-binary", "unreadable bytes", led, "not UTF-8",
           lambda s: (s / led).write_bytes(GARBAGE)),
        st("store-bookkeeping-syntax", "syntax", led, "unreadable bookkeeping",
           lambda s: (s / led).write_text('{"files": {')),
        st("store-bookkeeping-missing-field", "missing field", led, "not a schedperf store",
           edit(lambda d: d.pop("files"))),
        st("store-bookkeeping-wrong-type", "wrong type", led, "not a schedperf store",
           edit(lambda d: d.__setitem__("files", [1]))),
        st("store-bookkeeping-version", "out-of-range value", led, "store_version",
           edit(lambda d: d.__setitem__("store_version", 99))),
        st("store-bookkeeping-fifo", "special file", led, "FIFO", fifo),
        st("store-is-a-file", "special file", "store", "is a file", as_file),
        st("store-bookkeeping-unknown-key", "unknown field", led, "unknown key 'bogus'",
           edit(lambda d: d.__setitem__("bogus", 1))),
        _oversize(st("store-bookkeeping-oversize", "oversize", led, "input size cap",
                     lambda s: (s / led).write_text((s / led).read_text() + " " * BIG))),
        # a store that does not exist is an error for its readers, not an empty store
        Case("store-missing-history", STO, "missing file",
             lambda s: ["history", "--store", str(s.root / "no-store")],
             "no-store", "no such folder"),
        Case("store-missing-compare", STO, "missing file",
             lambda s: ["compare", "--base-results", "commit:abc", "--head-results",
                        str(s.run), "--store", str(s.root / "no-store"), "--out",
                        str(s.root / "cmp"), "--accepted", str(s.root / "none.yaml")],
             "no-store", "no such folder"),
    ]


CASES: list[Case] = (_config_cases() + _template_cases() + _manifest_cases()
                     + _scheduler_cases() + _compare_config_cases() + _accepted_cases()
                     + _ingest_cases() + _compare_cases() + _report_cases() + _store_cases())
