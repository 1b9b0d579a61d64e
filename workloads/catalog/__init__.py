"""Choosing workloads from a catalog of ``performance-config.yaml`` files (the built-in one is
``workloads/configs/``, package data): upstream's label filter and name patterns (selection),
and whether a workload can run at all (support).
"""
