"""The scheduling queue's event-driven requeue: ``move_all_to_active_or_backoff`` for a
Node/Add event over 1000 / 10000 unschedulable pods (queueing hints of the default profile
asked per pod; 4 in 5 pods move, 1 in 5 stay). ``setup`` refills the pool (a fresh queue)
whenever the previous call moved pods, so ``number = 1``.
"""

from __future__ import annotations

from bench import hotpaths as _hp


class QueueRequeue:
    params = list(_hp.QUEUE_SIZES)
    param_names = ["pending_pods"]
    number = 1
    repeat = (5, 10, 6.0)  # 20-200 ms calls plus a refill of similar cost before each
    rounds = 2
    warmup_time = 0.0  # every warmup call would need a refill: the first sample warms up
    timeout = 180.0

    def setup(self, pending_pods: int) -> None:
        self.case = _hp.requeue_case(pending_pods)
        self.case.reset()

    def time_move_all_on_node_add(self, pending_pods: int) -> None:
        self.case.run()
