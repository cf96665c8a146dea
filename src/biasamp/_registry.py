"""Small helpers shared by the name registries (template sets, base-rate sources, ...)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ._errors import UnknownNameError

__all__ = ["did_you_mean", "unknown_name"]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``.

    >>> did_you_mean("wikipdia", ["uniform", "wikipedia"])
    " (did you mean 'wikipedia'?)"
    """
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> UnknownNameError:
    """Build the error for an unknown registry name, listing what exists.

    >>> str(unknown_name("template set", "wang", ["wang2021", "lu2019"]))
    "unknown template set 'wang' (did you mean 'wang2021'?); available: lu2019, wang2021"
    """
    choices = sorted(choices)
    return UnknownNameError(
        f"unknown {kind} {name!r}{did_you_mean(name, choices)}; available: {', '.join(choices)}"
    )
