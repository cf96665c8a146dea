"""Base-rate sources: the (task, attribute) joint table a model is compared with.

Every source answers ``source.table(tasks, attributes, *, direction=None)`` with a
:class:`BaseRateTable`: a non-negative ``joint`` DataFrame (rows = tasks in the requested
order, columns = attributes in the requested order), an optional explicit
``association`` (-1/0/1; ``None`` = the metric derives ``sign(P(T|A) - P(T))`` from the
joint), the ``direction`` it was built for (``None`` = one table for both), the metric
settings it needs (``tie_tol`` and ``undefined``; ``None`` = the metric's defaults,
``0.0`` and ``"tie"`` for the paper-compatible sources) and a ``provenance`` dict.

Registered sources (``list_sources()``)::

    uniform               equal joint, association from the WinoBias groups
    uniform:SOURCE        equal joint, association = signs of SOURCE (e.g. uniform:labor-2016;
                          uniform:winobias = uniform)
    uniform-wang2021      the paper's +-1e-7 construction (compat; needs direction)
    labor-2016            employed x share (32 WinoBias occupations, c. 2015-2017 CPS)
    labor-2016-shares     [1 - pct_female, pct_female] per occupation (40), P(T) uniform
    labor-2016-wang2021   the paper's direction-specific labor construction (compat)
    labor-2022            BLS CPS 2022 Table 11 via the WinoBias -> BLS mapping
    labor-2022-race       the same rows: White / Black / Asian shares (groups white, black, asian)
    labor-2022-ethnicity  the same rows: Hispanic or Latino (any race) vs not
    labor-2022-gender-race-independent   gender x race ASSUMING independence (warned)
    bergsma               Bergsma & Lin (2006) text pronoun shares (60 Winogender occupations)
    wikitext103-valtest   counts by biasamp.corpus (default rule) of WikiText-103 valid+test
                          (about 100 sentences: a demonstration, not a base rate to rely on)
    wikitext103-valtest-wang2021   the same text counted with the paper's rule (compat)
    file:PATH.csv         the user's own table (schema in base_rates/README.md)

Missing tasks or attributes raise :class:`MissingEntriesError` listing what is missing
and what the source has. :data:`COMPAT_SOURCES` maps each plain source to its
paper-compatible construction. Count-based tables keep their counts (``table.counts``) so
that the probe can propagate their sampling error; every table says what it is
(``provenance["kind"]``, ``["about"]``).

Modules: ``_table`` (the table, the source interface, shared helpers), ``_labor`` (labor
statistics and the WinoBias groups), ``_uniform``, ``_file`` (user CSVs; wikitext103,
bergsma), ``_compat`` (every ``*-wang2021`` construction), ``_groups`` (Table 11 for race, ethnicity
and the independence construction); the registry is here.
"""

from __future__ import annotations

from .._errors import BiasampError, ZeroRowWarning
from .._registry import Registry, unknown_name
from .._validation import NonEmptyStr, check
from ._compat import (
    COMPAT_SOURCES,
    Labor2016Wang2021Source,
    UniformWang2021Source,
    WikiText103Wang2021Source,
)
from ._file import BergsmaSource, FileSource, WikiText103Source
from ._groups import Labor2022EthnicitySource, Labor2022GenderRaceSource, Labor2022RaceSource
from ._labor import Labor2016SharesSource, Labor2016Source, Labor2022Source
from ._table import BaseRateSource, BaseRateTable, MissingEntriesError
from ._uniform import UniformSource

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

#: Registered sources: name -> source class (called with no argument), with descriptions.
#: ``uniform:SOURCE`` and ``file:PATH.csv`` are forms of :func:`get_source`, not entries.
SOURCES = Registry("base-rate source", extra_names=("file:PATH.csv", "uniform:SOURCE"))

for _cls in (
    UniformSource,
    UniformWang2021Source,
    Labor2016Source,
    Labor2016SharesSource,
    Labor2016Wang2021Source,
    Labor2022Source,
    Labor2022RaceSource,
    Labor2022EthnicitySource,
    Labor2022GenderRaceSource,
    BergsmaSource,
    WikiText103Source,
    WikiText103Wang2021Source,
):
    SOURCES.register(_cls.name, _cls, description=_cls.description)
del _cls


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
