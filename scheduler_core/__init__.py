"""schedperf's system under test: a minimal, faithful, vectorised kube-scheduler.

Imports only numpy, PyYAML and the standard library; knows nothing of the harness.
"""

__version__ = "0.1.0"
