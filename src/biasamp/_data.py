"""Locate the data folders (``templates/``, ``base_rates/``, ``pairs/``) in a wheel or a
checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["data_dir"]

_NAMES = ("templates", "base_rates", "pairs")


@cache
def data_dir(name: str) -> Path:
    """Return the folder holding biasamp's ``templates``, ``base_rates`` or ``pairs`` data.

    An installed wheel carries them as ``biasamp/_data/<name>``; a source checkout
    (or an editable install) has them at the repository root.

    >>> data_dir("templates").name
    'templates'
    """
    if name not in _NAMES:
        raise ValueError(f"name must be one of {_NAMES}; got {name!r}")
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / name, here.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"biasamp data folder {name!r} not found next to {here} (broken installation?)"
    )
