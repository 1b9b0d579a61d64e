"""Columnar numpy node state read by scheduling cycles, and its vector matchers."""

from scheduler_core.nodetable.table import ZONE_LABEL, NodeTable, zone_key

__all__ = ["ZONE_LABEL", "NodeTable", "zone_key"]
