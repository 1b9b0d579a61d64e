"""Measurement: collectors, results writing, the ``schedperf`` CLI and benchmark suites."""
