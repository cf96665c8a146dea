"""Base-rate sources: the (task, attribute) joint table a model is compared with
(``source.table(tasks, attributes, *, direction=None)``; the sources: docs/probing.md)."""

from __future__ import annotations

from .._errors import BiasampError, ZeroRowWarning
from .._registry import unknown_name
from .._validation import NonEmptyStr, check
from . import _groups  # noqa: F401 - its sources register themselves, as those of _file, _winobias
from ._file import FileSource
from ._table import SOURCES, BaseRateSource, BaseRateTable, MissingEntriesError
from ._winobias import UniformSource

__all__ = [
    "BaseRateSource",
    "BaseRateTable",
    "COMPAT_SOURCES",
    "MissingEntriesError",
    "SOURCES",
    "ZeroRowWarning",
    "get_source",
    "list_sources",
]

#: compat mode -> {plain source: its paper-compatible construction (``fit_sentences.py``, bit
#: for bit, with the paper's metric settings)}.
COMPAT_SOURCES = {
    "wang2021": {
        "uniform": "uniform-wang2021",
        "labor-2016": "labor-2016-wang2021",
        "wikipedia": "wikitext103-valtest-wang2021",
    }
}


def list_sources() -> list[str]:
    """Names of the registered sources, sorted (``file:`` and ``uniform:`` forms aside).

    Examples
    --------
    >>> "labor-2016" in list_sources()
    True
    """
    return sorted(SOURCES.names())


def get_source(name: str) -> BaseRateSource:
    """Look up a base-rate source by name.

    Parameters
    ----------
    name : str
        A registered name, ``uniform:SOURCE`` or ``file:PATH.csv``.

    Returns
    -------
    BaseRateSource

    Examples
    --------
    >>> t = get_source("labor-2016").table(["nurse", "janitor"], ["he", "she"])
    >>> t.joint.round(2).to_numpy().tolist()
    [[310.2, 2791.8], [1502.16, 773.84]]
    """
    name = check(name, NonEmptyStr, "base-rate source name").strip()
    if name.startswith(("file:", "uniform:file:")) and not name.partition("file:")[2].strip():
        raise BiasampError(  # not the current folder
            f"base-rate source {name!r} names no file; give {name}PATH.csv (a CSV table)"
        )
    if name.startswith("file:"):
        return FileSource(name[len("file:") :])
    if name.startswith("uniform:"):
        inner = name[len("uniform:") :]
        if inner == "winobias":  # the default association, spelled out
            return UniformSource()
        if inner not in SOURCES and not inner.startswith("file:"):
            raise unknown_name("base-rate source", inner, list_sources())
        return UniformSource(inner)
    return SOURCES.get(name)()
