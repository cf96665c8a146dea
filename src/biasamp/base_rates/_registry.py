"""The registry of base-rate sources: :data:`SOURCES`, :func:`get_source`, :func:`list_sources`."""

from __future__ import annotations

from .._errors import BiasampError
from .._registry import Registry, unknown_name
from .._validation import NonEmptyStr, check
from ._compat import (
    Labor2016Wang2021Source,
    UniformWang2021Source,
    WikiText103Wang2021Source,
)
from ._file import FileSource
from ._labor import Labor2016SharesSource, Labor2016Source, Labor2022Source
from ._table import BaseRateSource
from ._text import BergsmaSource, WikiText103Source
from ._uniform import UniformSource

__all__ = ["RETIRED", "SOURCES", "get_source", "list_sources"]

#: Registered sources: name -> source class (called with no argument), with descriptions.
#: ``uniform:SOURCE`` and ``file:PATH.csv`` are forms of :func:`get_source`, not entries.
SOURCES = Registry("base-rate source", extra_names=("file:PATH.csv", "uniform:SOURCE"))

for _cls in (UniformSource, UniformWang2021Source, Labor2016Source, Labor2016SharesSource,
             Labor2016Wang2021Source, Labor2022Source, BergsmaSource, WikiText103Source,
             WikiText103Wang2021Source):
    SOURCES.register(_cls.name, _cls, description=_cls.description)
del _cls


#: Names that no longer mean what they seem, and what to use instead.
RETIRED = {
    "wikipedia": ("no Wikipedia counts are shipped; 'wikitext103-valtest' holds co-occurrence "
                  "counts of WikiText-103 valid+test (about 100 sentences: a demonstration); "
                  "count Wikipedia with `biasamp count` and pass file:COUNTS.csv (with "
                  "--compat wang2021, 'wikipedia' is the paper's row and maps to "
                  "'wikitext103-valtest-wang2021')"),
    "wikipedia-wang2021": "renamed 'wikitext103-valtest-wang2021' (what it is: WikiText-103 "
                          "valid+test counts with the paper's rule; a demonstration)",
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
        A registered name, ``uniform:SOURCE`` (equal joint, signs of SOURCE) or
        ``file:PATH.csv``.

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
    if name.startswith("file:"):
        return FileSource(name[len("file:"):])
    if name.startswith("uniform:"):
        inner = name[len("uniform:"):]
        if inner == "winobias":  # the default association, spelled out
            return UniformSource()
        if inner not in SOURCES and not inner.startswith("file:"):
            raise unknown_name("base-rate source", inner, list_sources())
        return UniformSource(inner)
    if name in RETIRED:
        raise BiasampError(f"base-rate source {name!r}: {RETIRED[name]}")
    return SOURCES.get(name)()
