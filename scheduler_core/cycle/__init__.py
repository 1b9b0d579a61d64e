"""One scheduling attempt's algorithm, top-down as upstream's schedule_one.go, in parts the
Scheduler (``scheduler_core.scheduler``) mixes in:

- ``schedule_pod``: schedulePod, findNodesThatFitPod, findNodesThatPassFilters,
  prioritizeNodes, selectHost (the ``SchedulePod`` methods);
- ``diagnose``: the diagnosis of a search in which no node passed;
- ``nominated``: pass 1 of RunFilterPluginsWithNominatedPods (the ``NominatedPass`` methods);
- ``result``: ``ScheduleResult`` and the other values the steps return.
"""
