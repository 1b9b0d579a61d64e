"""The layers stay one-way: scheduler_core < workloads < reports < bench, no import cycles.

The scan (tests/layers.py, the rule of ../shared/tools/layers.py) is first shown to catch an
upward import and a cycle in a small package tree written for the test, then run on this
checkout, where every breach must be one of the KNOWN ones below.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from pathlib import Path

from tests.layers import LayerScan, scan
from tests.shared import REPO_ROOT

# Breaches this checkout still has (issue 13 removes them). THIS LIST MUST ONLY SHRINK: a
# breach not listed fails the test; when one is fixed, delete its entry.
KNOWN_UPWARD = frozenset({
    "reports.dashboard.load imports bench.results.parquet",
    "reports.dashboard.load imports bench.results.parquet.STATUS_METRIC",
    "reports.store.bookkeeping imports bench.results.dataitems",
    "reports.store.bookkeeping imports bench.results.dataitems.atomic_write_bytes",
    "reports.store.dataset imports bench.results.dataitems",
    "reports.store.dataset imports bench.results.dataitems.atomic_write_bytes",
    "reports.store.detect imports bench.results.dataitems",
    "reports.store.detect imports bench.results.dataitems.FILE_PREFIX",
    "reports.store.ingest_dataitems imports bench.results.dataitems",
    "reports.store.ingest_dataitems imports bench.results.dataitems.FILE_PREFIX",
    "reports.store.schema imports bench.results.parquet",
    "reports.store.schema imports bench.results.parquet.RESULTS_SCHEMA",
    "reports.store.schema imports bench.results.parquet.RESULTS_SCHEMA_VERSION",
    "workloads.metrics imports bench.collectors.histograms",
    "workloads.metrics imports bench.collectors.histograms.histogram_summary",
    "workloads.metrics imports bench.collectors.recorder",
    "workloads.metrics imports bench.collectors.recorder.CollectingRecorder",
    "workloads.metrics imports bench.collectors.throughput",
    "workloads.metrics imports bench.collectors.throughput.PERCENTILES",
    "workloads.metrics imports bench.collectors.throughput.ThroughputCollector",
    "workloads.metrics imports bench.collectors.throughput.summarize",
})
# a cycle found must lie within one of these (a known cycle may shrink or split, not grow)
KNOWN_CYCLES = (
    frozenset({"bench.cli.list", "bench.cli.run", "bench.sharding"}),
    frozenset({"bench.measure.forked", "bench.measure.instructions", "bench.measure.pacing",
               "bench.measure.worker"}),
)


def new_breaches(found: LayerScan, known_upward: Set[str] = KNOWN_UPWARD,
                 known_cycles: Iterable[Set[str]] = KNOWN_CYCLES) -> list[str]:
    """The breaches of ``found`` that are not known, one line each."""
    upward = [f"UPWARD {u}" for u in sorted(found.upward - known_upward)]
    cycles = [f"CYCLE {', '.join(c)}" for c in sorted(found.cycles)
              if not any(set(c) <= known for known in known_cycles)]
    return upward + cycles


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


FAKE_TREE = {
    "scheduler_core/__init__.py": "",
    # upward: scheduler_core is below workloads
    "scheduler_core/core.py": "import os\nfrom workloads.ops import create\n",
    "workloads/__init__.py": "",
    # a cycle through a function-level import
    "workloads/ops.py": "from workloads import runner\n\ndef create():\n    pass\n",
    "workloads/runner.py": "def run():\n    from workloads.ops import create\n    create()\n",
    # imports for type checking only are not runtime imports
    "workloads/typed.py": ("from typing import TYPE_CHECKING\nimport typing\n"
                           "if TYPE_CHECKING:\n    from bench.cli import main\n"
                           "if typing.TYPE_CHECKING:\n    import reports.render\n"),
    "reports/__init__.py": "import workloads.ops\n",  # downward: fine
    "reports/render/__init__.py": "from .html import page\n",  # relative imports resolve
    "reports/render/html.py": "from .. import render\n\npage = 1\n",
    "bench/__init__.py": "",
    "bench/cli.py": "from reports.render import page\nfrom scheduler_core.core import os\n",
}


def test_scan_reports_an_upward_import_and_cycles_in_a_fake_tree(tmp_path: Path) -> None:
    write_tree(tmp_path, FAKE_TREE)
    found = scan(tmp_path)
    assert found.modules == 11
    assert found.upward == {"scheduler_core.core imports workloads.ops",
                            "scheduler_core.core imports workloads.ops.create"}
    assert found.cycles == {("workloads.ops", "workloads.runner"),
                            ("reports.render", "reports.render.html")}
    assert new_breaches(found, set(), []) == [
        "UPWARD scheduler_core.core imports workloads.ops",
        "UPWARD scheduler_core.core imports workloads.ops.create",
        "CYCLE reports.render, reports.render.html",
        "CYCLE workloads.ops, workloads.runner"]


def test_a_known_breach_is_tolerated_and_a_known_cycle_may_shrink_not_grow(
        tmp_path: Path) -> None:
    known_upward = {"workloads.metrics imports bench.collectors"}
    known_cycles = [{"bench.cli.list", "bench.cli.run", "bench.sharding"}]
    write_tree(tmp_path, {
        "workloads/__init__.py": "",
        "workloads/metrics.py": "import bench.collectors\n",
        "bench/__init__.py": "",
        "bench/collectors.py": "",
        "bench/sharding.py": "import bench.cli.run\n",
        "bench/cli/__init__.py": "",
        "bench/cli/run.py": "import bench.sharding\n",  # two of the three: tolerated
        "bench/cli/list.py": "",
        "bench/demo.py": "",
    })
    assert new_breaches(scan(tmp_path), known_upward, known_cycles) == []
    (tmp_path / "bench/sharding.py").write_text("import bench.cli.run\nimport bench.demo\n")
    (tmp_path / "bench/demo.py").write_text("import bench.sharding\n")
    assert new_breaches(scan(tmp_path), known_upward, known_cycles) == [
        "CYCLE bench.cli.run, bench.demo, bench.sharding"]


def test_scan_of_a_one_way_tree_is_clean(tmp_path: Path) -> None:
    tree = {k: v for k, v in FAKE_TREE.items()
            if k not in ("scheduler_core/core.py", "workloads/runner.py",
                         "reports/render/html.py")}
    write_tree(tmp_path, tree)
    found = scan(tmp_path)
    assert found.modules == 8
    assert found.upward == set() and found.cycles == set()


def test_no_new_upward_import_or_import_cycle_in_this_checkout() -> None:
    found = scan(REPO_ROOT)
    assert found.modules > 150  # the scan saw the four packages
    new = new_breaches(found)
    assert not new, ("a module may import only its own package and those below it "
                     "(scheduler_core < workloads < reports < bench), and no import cycle:\n"
                     + "\n".join(new))
