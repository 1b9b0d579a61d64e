"""Reports over schedperf results.

    reports.store   the results store: one tidy Parquet dataset of every ingested result
                    (``schedperf run`` folders, asv results, pytest-benchmark JSON, upstream
                    DataItems JSON), its bookkeeping and the history query (docs/store.md)

The other sub-packages document themselves. Data flows one way:
workloads -> scheduler_core -> bench -> reports.
"""
