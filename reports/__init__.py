"""Reports over schedperf results.

    reports.store   the results store: one tidy Parquet dataset of every ingested result
                    (``schedperf run`` folders, asv results, pytest-benchmark JSON, upstream
                    DataItems JSON), its bookkeeping and the history query (docs/store.md)
    reports.render  comparison reports as Markdown (PR comments), self-contained HTML with
                    plots, and JSON (docs/reports.md)
    reports.stats   the statistics that decide what regressed: ratios with confidence
                    intervals, Benjamini-Hochberg, verdicts, attribution, change points
                    (docs/statistics.md)
    reports.accepted  the accepted-regressions file

The other sub-packages document themselves. Data flows one way:
workloads -> scheduler_core -> bench -> reports.
"""
