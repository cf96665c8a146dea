"""Exceptions and warnings of biasamp: every input error is a :class:`BiasampError` (a
:class:`ValueError`); each warned condition has one class, warned once where it arises.
A message names an option as the user gave it (:func:`option`): ``--device cpu`` on the
command line, ``device='cpu'`` in Python."""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from types import MappingProxyType

#: How a message names an option: field -> its flag while the command line runs a command
#: (:func:`biasamp.cli.main`), or its key while a config file is read; empty (Python): the field.
OPTION_NAMES: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "option_names", default=MappingProxyType({})
)
_NAME = object()


def shorten(text, limit: int = 80) -> str:
    """``text`` as a string of at most ``limit`` characters (cut with ``...``), for a message."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def option(name: str, value=_NAME) -> str:
    """An option, or an option with a value, as the user spells it (:data:`OPTION_NAMES`).

    Examples
    --------
    >>> option("device"), option("device", "cpu"), option("trust_remote_code", True)
    ('device', "device='cpu'", 'trust_remote_code=True')
    >>> token = OPTION_NAMES.set({"device": "--device", "trust_remote_code": "--trust-remote-code"})
    >>> option("device"), option("device", "cpu"), option("trust_remote_code", True)
    ('--device', '--device cpu', '--trust-remote-code')
    >>> OPTION_NAMES.reset(token)
    """
    shown = OPTION_NAMES.get().get(name, name)
    if value is _NAME:
        return shown
    if not shown.startswith("-"):  # a keyword, or a config file's key
        return f"{shown}={value!r}"
    return shown if value is True else f"{shown} {value}"  # a switch is given bare


class BiasampError(ValueError):
    """Base class of all input errors raised by biasamp."""


class UnknownNameError(BiasampError, KeyError):
    """A name (template set, base-rate source, scoring mode, ...) is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingDependencyError(BiasampError, ImportError):
    """An optional dependency is needed for the requested feature."""


class BiasampWarning(UserWarning):
    """Base class of biasamp's warnings."""


class UndefinedCellsWarning(BiasampWarning, RuntimeWarning):
    """Some (task, attribute) cells of BiasAmp-> are undefined and left out of the value."""


class UndefinedTrialsWarning(BiasampWarning, RuntimeWarning):
    """Some attacker trials of leakage / DPA are undefined and left out of the mean."""


class UnavailableCIWarning(BiasampWarning):
    """A confidence interval needs two resampling units at least: it is NaN, not zero-wide."""


class ZeroRowWarning(BiasampWarning):
    """Some requested tasks have an all-zero row in a base-rate table (P(A|T) undefined)."""


class IndependenceAssumptionWarning(BiasampWarning):
    """A base table is assumed, not measured (``labor-2022-gender-race-independent``)."""


class MissingWeightsWarning(BiasampWarning):
    """Weights missing from a checkpoint were initialised at random (``allow_missing_weights``)."""


class ChatModelWarning(BiasampWarning):
    """A chat model is probed as a plain language model, not inside a chat turn."""


class HubUnreachableWarning(BiasampWarning):
    """The Hugging Face hub did not answer; the model was loaded from the local cache."""


class DamagedCacheWarning(BiasampWarning):
    """An unreadable score-cache file was moved aside and a fresh cache started."""


class FewResamplesWarning(BiasampWarning):
    """The bootstrap resamples 2 or 3 units: the percentile CI is given, and is rough."""
