"""Exception hierarchy of biasamp.

Every error raised for bad user input subclasses :class:`BiasampError`, which is
itself a :class:`ValueError`, so callers can catch either.
"""

from __future__ import annotations

__all__ = ["BiasampError", "MissingDependencyError", "UnknownNameError"]


class BiasampError(ValueError):
    """Base class of all input errors raised by biasamp."""


class UnknownNameError(BiasampError, KeyError):
    """A name (template set, base-rate source, scoring mode, ...) is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingDependencyError(BiasampError, ImportError):
    """An optional dependency is needed for the requested feature."""
