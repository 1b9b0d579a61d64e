"""One scheduling attempt's algorithm (see ``scheduler_core.scheduler``)."""
