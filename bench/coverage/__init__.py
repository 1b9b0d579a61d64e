"""Coverage maps: which catalog workloads execute which scheduler_core statement lines
(docs/coverage.md).

This package's ``__init__`` imports nothing (it holds two constants):
:mod:`bench.coverage.child` is started as ``python -m bench.coverage.child`` and must start its
tracer before scheduler_core (or anything that imports it) is imported. Modules, one job each:

    statements   a source text's executable statement lines, the subset outside
                 error-raising branches, functions' header lines and bodies
    diff         the changed and added lines of ``git diff BASE...HEAD`` per file, safely
    changed      those changes as HEAD statement lines (multi-line statements, deletions)
    cover        which workloads to add for changed lines (greedy weighted set cover), blind
                 spots and where to start on each
    child        the child process that runs workloads under coverage.py, one context each
    attribute    coverage.py's data -> a CoverageMap (statement lines per workload)
    collect      start the child for a selection and build the map (never in a measuring
                 process)
"""

# the default selection of `schedperf coverage`: the catalog at integration-test sizes
DEFAULT_LABEL = "integration-test"
# the workloads `schedperf compare` measures by default (its --label)
COMPARE_LABEL = "compare"
