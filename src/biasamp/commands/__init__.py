"""Subcommands of the ``biasamp`` CLI, one module each, each with ``register(subparsers)``."""
