"""Example out-of-tree scheduler plugins, loaded by the ``uncommon`` catalog through the
``pluginRegistry`` field of a KubeSchedulerConfiguration (``"module.path:ClassName"``)."""

from workloads.example_plugins.pod_cap import PodCapPerNode, PodCapVectorised

__all__ = ["PodCapPerNode", "PodCapVectorised"]
