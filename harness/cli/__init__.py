"""The ``harness`` command line. Each subcommand lives in its own module."""
