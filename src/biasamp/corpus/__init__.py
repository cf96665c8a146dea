"""Count (task, attribute) co-occurrences per sentence in a text corpus.

Two counting rules (:data:`RULES`):

``"default"``
    Case-insensitive, whole-word matching. Each line is one paragraph; WikiText
    heading lines (``= = Title = =``) and blank lines are skipped; a line is split into
    sentences by a regex splitter (``_sentences.split_sentences``) that handles WikiText's
    ``" . "`` tokenisation, initials and common abbreviations. Occupations match as
    whole words, including regular plurals (``nurses``, ``salespeople``) and multi-word
    names (``construction worker``). A sentence is counted when exactly one occupation
    (any number of mentions) and exactly one attribute word group occur in it.
``"wang2021"``
    The rule of the BiasAmp-> paper's ``read_wiki2.py`` (reference-semantics §4),
    reproduced exactly: skip any line containing ``=``; split the raw line (newline
    kept) on ``.``; an occupation matches by *substring* test (``cook`` in
    ``cookie``); occupations are tested in vocabulary order and a second match resets
    the choice while a third is accepted again (so an odd number of matching
    occupations keeps the last one in vocabulary order, an even number drops the
    piece); the piece is split on single spaces and intersected with each word group
    (case-sensitive, so ``He`` is missed); the same reset logic applies to the groups,
    except that a match of the third group (index 2) never resets an earlier one.

Both rules count raw UTF-8 bytes: numpy finds lines, ``.``/``=`` and sentence boundaries, a
compiled multi-pattern scanner (Hyperscan; :data:`MATCHERS`) finds the occupations, and only
the few pieces or sentences holding one are decoded and decided in Python by the rule's
exact logic, so the counts equal the plain line-by-line implementations.

Corpora (:data:`FORMATS`): plain text, JSON Lines, Parquet and Wikipedia XML dumps, each
optionally gzip/bz2/xz/zstd-compressed, local or behind any fsspec URL, globs; ``datasets``
corpora. They are cut into shards (line-aligned byte ranges, Parquet row groups, whole
compressed files) that the workers of an engine (:data:`ENGINES`: ``local`` = this process
or a process pool, ``dask`` = a Dask distributed cluster) read and count in bounded memory.
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
