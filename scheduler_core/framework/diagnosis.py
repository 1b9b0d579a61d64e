"""What a failed scheduling cycle learned: per node statuses, rejecting plugins, FitError text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from scheduler_core.framework.interface import Code, Status

__all__ = ["NO_NODES_AVAILABLE", "Diagnosis", "FitError"]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
_PENDING = Code.PENDING
# the default for slots / status_index, shared (read-only; a Diagnosis is made every cycle)
_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.flags.writeable = False


@dataclass
class Diagnosis:
    """kube's framework.Diagnosis with a vectorised NodeToStatus.

    ``slots[i]`` was examined and rejected with ``statuses[status_index[i]]``. Nodes never
    examined (outside a PreFilterResult, or every node when PreFilter rejected) carry
    ``absent_status``.
    """

    num_all_nodes: int
    slots: np.ndarray = field(default_factory=lambda: _EMPTY)
    status_index: np.ndarray = field(default_factory=lambda: _EMPTY)
    statuses: list[Status] = field(default_factory=list)
    absent_status: Status | None = None
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)

    @classmethod
    def rejected_by(cls, status: Status) -> Diagnosis:
        """What a Reserve, Permit or Bind failure of a pod placed on one node tells the queue:
        the plugin of a rejecting ``status`` (none for an error)."""
        d = cls(1)
        if status.is_rejected and status.plugin:
            d.unschedulable_plugins.add(status.plugin)
        return d

    def reject_everywhere(self, status: Status) -> None:
        """PreFilter rejected the pod: ``status`` stands for every node."""
        self.absent_status = status
        self.pre_filter_msg = status.message
        self.add_plugin_status(status)

    def narrow(self, plugins: set[str] | frozenset[str]) -> None:
        """A PreFilterResult named the only candidates: every other node was ruled out by
        ``plugins``."""
        self.absent_status = Status.unresolvable(
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]")
        self.unschedulable_plugins.update(plugins)

    def record_rejections(self, slots: np.ndarray, status_index: np.ndarray,
                          statuses: list[Status]) -> None:
        """``slots[i]`` was rejected with ``statuses[status_index[i]]``."""
        self.slots = slots
        self.status_index = status_index
        self.statuses = statuses
        for s in statuses:
            self.add_plugin_status(s)

    def add_rejections(self, slots: np.ndarray, statuses: list[Status]) -> None:
        """Also rejected: ``slots[i]`` with ``statuses[i]`` (the nodes an extender failed)."""
        base = len(self.statuses)
        self.slots = np.concatenate((self.slots, slots.astype(np.int64)))
        self.status_index = np.concatenate(
            (self.status_index, np.arange(base, base + len(statuses), dtype=np.int64)))
        self.statuses = [*self.statuses, *statuses]

    def add_plugin_status(self, status: Status) -> None:
        """Note the plugin that gave a rejecting ``status`` (kube's AddPluginStatus): in
        ``pending_plugins`` when Pending, else in ``unschedulable_plugins``."""
        if status.plugin:
            (self.pending_plugins if status.code == _PENDING
             else self.unschedulable_plugins).add(status.plugin)

    def codes(self) -> np.ndarray:
        """Per examined slot, its status code (int8)."""
        if not self.statuses:
            return np.zeros(len(self.slots), dtype=np.int8)
        table = np.array([int(s.code) for s in self.statuses], dtype=np.int8)
        return table[self.status_index]

    def status_of(self, slot: int) -> Status | None:
        hit = np.flatnonzero(self.slots == slot)
        if len(hit):
            return self.statuses[int(self.status_index[hit[0]])]
        return self.absent_status

    def reason_histogram(self) -> Counter[str]:
        counts = np.bincount(self.status_index, minlength=len(self.statuses)) \
            if len(self.status_index) else np.zeros(len(self.statuses), dtype=np.int64)
        hist: Counter[str] = Counter()
        for status, count in zip(self.statuses, counts, strict=True):
            if count:
                for reason in status.reasons:
                    hist[reason] += int(count)
        absent = self.num_all_nodes - len(self.slots)
        if absent > 0 and self.absent_status is not None:
            for reason in self.absent_status.reasons:
                hist[reason] += absent
        return hist


class FitError(Exception):
    """No node fits the pod. ``str()`` is upstream's "0/N nodes are available: ..." text."""

    def __init__(self, pod_key: str, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.diagnosis = diagnosis
        super().__init__(self.message)

    @property
    def message(self) -> str:
        d = self.diagnosis
        msg = f"0/{d.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            parts = sorted(f"{count} {reason}" for reason, count in d.reason_histogram().items())
            if parts:
                msg += f" {', '.join(parts)}."
        if d.post_filter_msg:  # v1.34 adds no period of its own (v1.33 did)
            msg += f" {d.post_filter_msg}"
        return msg
