"""The rule schedperf's extender server applies: TierGate, chosen so that the very same logic
can also run as an in-process plugin (``workloads.example_plugins.tier_gate``), per node or
vectorised, and the cost of each way of extending the scheduler can be compared.

* Filter: a node labelled ``example.com/tier: excluded`` is rejected, with
  :data:`REJECT_MESSAGE`.
* Prioritize (extender scale 0-10): ``gold`` 10, ``silver`` 5, anything else 0. The scheduler
  multiplies an extender's score by its weight and by 10, so the plugin form scores 100 / 50 / 0.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXCLUDED", "REJECT_MESSAGE", "TIER_LABEL", "TIER_SCORES", "node_passes",
           "node_score"]

TIER_LABEL = "example.com/tier"
EXCLUDED = "excluded"
REJECT_MESSAGE = "node(s) excluded by the tier rule"
TIER_SCORES = {"gold": 10, "silver": 5}


def node_passes(labels: dict[str, Any]) -> bool:
    return labels.get(TIER_LABEL) != EXCLUDED


def node_score(labels: dict[str, Any]) -> int:
    """0-10, the extender scale."""
    return TIER_SCORES.get(str(labels.get(TIER_LABEL, "")), 0)
