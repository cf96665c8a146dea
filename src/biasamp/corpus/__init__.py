"""Count (task, attribute) co-occurrences per sentence in a text corpus: the counting rules
(:data:`RULES`), corpus formats (:data:`FORMATS`), engines (:data:`ENGINES`) and scanners
(:data:`MATCHERS`). How counting works: docs/corpus-counts.md.
"""

from ._driver import (
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
from ._rules import RULES

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
