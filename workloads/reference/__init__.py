"""The real kube-scheduler as a decision oracle: the client side of ``reference_scheduler/``.

* ``build``: build the Go module once per distinct input into a cache
  (``ensure_built() -> ReferenceBinary``: path, key, SHA-256, build seconds);
* ``client``: ``ReferenceClient``, one reference process spoken to over protocol 1
  (docs/reference-scheduler.md): config, apply, delete, bind, evaluate;
* ``model``: the typed replies (``Evaluation`` and its parts);
* ``core``: the same evaluation of a pending pod by scheduler_core, for comparisons;
* ``errors``: what can go wrong, each with a message naming the cause.

Layer: below ``bench`` (its ``schedperf reference`` commands), above ``scheduler_core``.
"""

from workloads.reference.build import ReferenceBinary, ensure_built
from workloads.reference.client import ReferenceClient
from workloads.reference.errors import (
    GoToolMissing,
    ReferenceBuildError,
    ReferenceProcessError,
    ReferenceRequestError,
    ReferenceSchedulerError,
    ReferenceSourceMissing,
)
from workloads.reference.model import Evaluation

__all__ = [
    "Evaluation",
    "GoToolMissing",
    "ReferenceBinary",
    "ReferenceBuildError",
    "ReferenceClient",
    "ReferenceProcessError",
    "ReferenceRequestError",
    "ReferenceSchedulerError",
    "ReferenceSourceMissing",
    "ensure_built",
]
