"""Count (task, attribute) co-occurrences per sentence in a text corpus.

Two counting rules (:data:`RULES`): ``"default"`` (case-insensitive whole words, plurals and
multi-word occupations, in the sentences of a regex splitter; WikiText heading and blank lines
skipped; a sentence counts when exactly one occupation and one attribute word group occur in
it) and ``"wang2021"`` (the BiasAmp-> paper's ``read_wiki2.py`` rule exactly: substrings,
case-sensitive words, ``.``-pieces; reference-semantics §4). Both count raw UTF-8 bytes: numpy
finds the line structure, a multi-pattern scanner (:data:`MATCHERS`) the occupations, and only
the pieces holding one are decided in Python by the rule's exact logic, so the counts equal
the plain line-by-line implementations.

Corpora (:data:`FORMATS`): plain text, JSON Lines, Parquet and Wikipedia XML dumps, optionally
compressed, local or behind any fsspec URL, globs; ``datasets`` corpora. They are cut into
shards that the workers of an engine (:data:`ENGINES`: ``local``, ``dask``) count in bounded
memory.
"""

from ._driver import (
    RULES,
    CorpusCounts,
    count_cooccurrences,
    count_text,
    counts_output,
    write_counts_csv,
)
from ._engines import ENGINES
from ._inputs import FORMATS, resolve_inputs
from ._matching import MATCHERS
from ._rule_base import DEFAULT_WORD_GROUPS, WANG2021_WORD_GROUPS

__all__ = [
    "CorpusCounts",
    "DEFAULT_WORD_GROUPS",
    "ENGINES",
    "FORMATS",
    "MATCHERS",
    "RULES",
    "WANG2021_WORD_GROUPS",
    "count_cooccurrences",
    "count_text",
    "counts_output",
    "resolve_inputs",
    "write_counts_csv",
]
