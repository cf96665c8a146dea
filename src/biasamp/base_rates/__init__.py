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

Modules: ``_table`` (the table, the source interface, shared helpers), ``_winobias``
(WinoBias groups), ``_uniform``, ``_labor``, ``_text`` (wikitext103, bergsma), ``_compat``
(every ``*-wang2021`` construction), ``_file`` (user CSVs), ``_registry``.
"""

from .._errors import ZeroRowWarning
from ._compat import COMPAT_SOURCES, EPS_WANG2021
from ._file import read_table_csv
from ._registry import SOURCES, get_source, list_sources
from ._table import (
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    derive_association,
)
from ._text import WIKITEXT_VOCABULARIES
from ._winobias import winobias_groups

__all__ = [
    "BaseRateSource",
    "BaseRateTable",
    "COMPAT_SOURCES",
    "EPS_WANG2021",
    "MissingEntriesError",
    "SOURCES",
    "WIKITEXT_VOCABULARIES",
    "ZeroRowWarning",
    "derive_association",
    "get_source",
    "list_sources",
    "read_table_csv",
    "winobias_groups",
]
