"""Whether a workload can run, known before running it.

``schedperf list`` shows it. It is decided by the same code the runner uses: a :class:`Run` is
set up and every op prepared (templates parsed, kinds and volume fields checked), which builds
no nodes and schedules nothing.
"""

from __future__ import annotations

from workloads.config import TestCase, Workload, resolve
from workloads.ops.errors import UnsupportedWorkload
from workloads.runner.options import RunOptions
from workloads.runner.run import Run

__all__ = ["support_reason"]


def support_reason(test_case: TestCase, workload: Workload) -> str | None:
    """None when the workload is supported, else why not (as its run would report it).

    Errors that only a run can show (bad templates, scheduler config problems) are left to
    the run: this answers "unsupported or not", never "will it fail"."""
    if test_case.unsupported_reason:
        return test_case.unsupported_reason
    try:
        ops = resolve(test_case, workload)
        Run(test_case, workload, ops, RunOptions()).prepare()
    except UnsupportedWorkload as exc:
        return str(exc)
    except Exception:
        return None
    return None
