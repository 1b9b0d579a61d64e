"""scheduler_perf-style workloads: config parsing, templates, ops and the runner."""
