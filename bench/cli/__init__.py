"""The ``schedperf`` command line: one module per subcommand, a tiny entry point."""
