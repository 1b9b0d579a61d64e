"""Writers for what a ``schedperf run`` produced.

    write_dataitems(results, out_dir, topic, when=None) -> Path   perf-dash DataItems JSON
    write_results_parquet(path, results, env, run_id=..., timestamp=...)   tidy metric rows
    write_placements_parquet(path, results)                       one row per pod
    write_decisions_parquet(path, results) -> Path | None         when decisions were recorded
    write_progress_files(results, out_dir, when=None) -> [Path]   upstream-style .dat progress
    environment_fingerprint(clock=..., seed=...) -> dict          machine, git, BLAS, threads
    RunWriter(out, env=..., run_id=..., started=...).add(round, result)   the folder as
                                                                  workloads finish

Every file is written atomically (a temporary file in the same folder, then ``os.replace``).
The columns are documented in ``docs/results-schema.md``.
"""

from __future__ import annotations

from workloads.output.dataitems import (
    atomic_write_bytes,
    dataitems_file_name,
    dataitems_payload,
    write_dataitems,
)
from workloads.output.environment import (
    CoreOrigin,
    core_origin,
    environment_fingerprint,
    git_info,
    measured_code_warning,
    named_checkout,
)
from workloads.output.incremental import RunWriter
from workloads.output.parquet import (
    RESULTS_SCHEMA_VERSION,
    placement_rows,
    result_rows,
    write_decisions_parquet,
    write_placements_parquet,
    write_results_parquet,
)
from workloads.output.progress import progress_file_stem, progress_lines, write_progress_files

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "CoreOrigin",
    "RunWriter",
    "atomic_write_bytes",
    "core_origin",
    "dataitems_file_name",
    "dataitems_payload",
    "environment_fingerprint",
    "git_info",
    "measured_code_warning",
    "named_checkout",
    "placement_rows",
    "progress_file_stem",
    "progress_lines",
    "result_rows",
    "write_dataitems",
    "write_decisions_parquet",
    "write_placements_parquet",
    "write_progress_files",
    "write_results_parquet",
]
