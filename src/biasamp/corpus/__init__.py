"""Count (task, attribute) co-occurrences per sentence in a text corpus.

Two counting rules (:data:`RULES`):

``"default"``
    Case-insensitive, whole-word matching. Each line is one paragraph; WikiText
    heading lines (``= = Title = =``) and blank lines are skipped; a line is split into
    sentences by :func:`split_sentences` (a regex splitter that handles WikiText's
    ``" . "`` tokenisation, initials and common abbreviations). Occupations match as
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

Work is spread over a process pool in chunks of lines, with a bounded number of
chunks in flight, so memory does not grow with the corpus size.

Modules: ``_sentences`` (the default rule's splitter), ``_matching`` (occupation forms,
trie regexes, the numpy prefilter), ``_words`` (word groups and their checks), ``_rules``
(one class per rule, the ``RULES`` registry), ``_readers`` (files, byte ranges, datasets),
``_driver`` (the entry points, the process pool, provenance, the CSV writer).
"""

from ._driver import CorpusCounts, count_cooccurrences, count_text, write_counts_csv
from ._matching import occupation_forms
from ._rules import RULES
from ._sentences import split_sentences
from ._words import DEFAULT_WORD_GROUPS, THEY_WORDS, WANG2021_WORD_GROUPS

__all__ = [
    "CorpusCounts",
    "DEFAULT_WORD_GROUPS",
    "RULES",
    "THEY_WORDS",
    "WANG2021_WORD_GROUPS",
    "count_cooccurrences",
    "count_text",
    "occupation_forms",
    "split_sentences",
    "write_counts_csv",
]
