"""schedperf's scheduler extender server: a real HTTP server (werkzeug) speaking
kube-scheduler's extender protocol over the TierGate rule, started on a loopback port for a
workload (``ExtenderProcess``) or by hand (``python -m workloads.extender_server``)."""

from workloads.extender_server.app import MODES, ExtenderApp
from workloads.extender_server.server import ExtenderProcess, ExtenderServerError

__all__ = ["MODES", "ExtenderApp", "ExtenderProcess", "ExtenderServerError"]
