"""The layers stay one-way: scheduler_core < workloads < reports < bench, no import cycles.

The scan (tests/layers.py, the rule of ../shared/tools/layers.py) is first shown to catch an
upward import and a cycle in a small package tree written for the test, then run on this
checkout, which must have none.
"""

from __future__ import annotations

from pathlib import Path

from tests.layers import LayerScan, scan
from tests.shared import REPO_ROOT


def breaches(found: LayerScan) -> list[str]:
    """Every upward import and import cycle of ``found``, one line each."""
    return ([f"UPWARD {u}" for u in sorted(found.upward)]
            + [f"CYCLE {', '.join(c)}" for c in sorted(found.cycles)])


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
    assert breaches(found) == [
        "UPWARD scheduler_core.core imports workloads.ops",
        "UPWARD scheduler_core.core imports workloads.ops.create",
        "CYCLE reports.render, reports.render.html",
        "CYCLE workloads.ops, workloads.runner"]


def test_scan_of_a_one_way_tree_is_clean(tmp_path: Path) -> None:
    tree = {k: v for k, v in FAKE_TREE.items()
            if k not in ("scheduler_core/core.py", "workloads/runner.py",
                         "reports/render/html.py")}
    write_tree(tmp_path, tree)
    found = scan(tmp_path)
    assert found.modules == 8
    assert found.upward == set() and found.cycles == set()


def test_no_upward_import_or_import_cycle_in_this_checkout() -> None:
    found = scan(REPO_ROOT)
    assert found.modules > 150  # the scan saw the four packages
    found_breaches = breaches(found)
    assert not found_breaches, ("a module may import only its own package and those below it "
                     "(scheduler_core < workloads < reports < bench), and no import cycle:\n"
                     + "\n".join(found_breaches))
