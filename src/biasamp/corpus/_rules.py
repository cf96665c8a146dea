"""The counting rules: one class per rule behind a common protocol, and the ``RULES`` registry.

A rule is built from ``(tasks, groups, plurals)`` and counts a list of raw lines with
:meth:`CountingRule.count`. Each rule decides one sentence with :meth:`CountingRule.match`,
used both by its plain per-line path and by its prefiltered path (the numpy
:class:`~biasamp.corpus._matching.KeyIndex` finds the lines or pieces that can match, and only
those are split and matched), so the two paths count the same. Rules are pickled by their
constructor arguments and rebuilt (recompiled) in the worker processes.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from .._registry import Registry
from ._matching import KeyIndex, join_lines, line_ends, lower_bytes, occupation_forms, trie_pattern
from ._sentences import BOUNDARY_NL, HEADING, count_boundaries, count_sentences, split_sentences
from ._words import DEFAULT_WORD_GROUPS, WANG2021_WORD_GROUPS

__all__ = ["CountingRule", "DefaultRule", "RULES", "Wang2021Rule"]

#: ``(counts of shape (n_tasks, n_groups), n_lines, n_sentences, n_kept)``
Counts = tuple[np.ndarray, int, int, int]


class CountingRule(abc.ABC):
    """Compiled matchers of one rule for one (tasks, word groups) configuration.

    Parameters
    ----------
    tasks : list of str
        Occupations (rows), already checked.
    groups : mapping attribute -> words
        Word groups (columns, in mapping order), already checked.
    plurals : bool, default True
        Also match regular plurals (rules with ``uses_plurals`` only).

    Attributes
    ----------
    patterns : list of bytes
        What the prefilter looks for.
    fast : bool
        Whether the prefiltered path applies to these patterns.
    """

    #: Word groups used when none are given.
    default_groups: ClassVar[Mapping[str, tuple[str, ...]]]
    #: Whether ``plurals`` changes what the rule counts (recorded in the provenance).
    uses_plurals: ClassVar[bool] = False

    def __init__(self, tasks: Sequence[str], groups: Mapping[str, Sequence[str]],
                 plurals: bool = True):
        self.tasks = list(tasks)
        self.groups = {k: tuple(v) for k, v in groups.items()}
        self.plurals = plurals
        self.n_tasks, self.n_groups = len(self.tasks), len(self.groups)
        self.patterns: list[bytes] = []
        self.fast = False
        self._index: KeyIndex | None = None

    def __reduce__(self):  # rebuild (recompile) in the worker
        return (type(self), (self.tasks, self.groups, self.plurals))

    def count(self, lines: Sequence[str], *, fast: bool | None = None) -> Counts:
        """Return (counts, n_lines, n_sentences, n_kept) for a list of raw lines.

        ``fast=False`` forces the plain per-line implementation (used by the tests to
        check that the vectorised prefilter changes nothing).
        """
        lines = list(lines)
        if (self.fast if fast is None else fast and self.fast) and lines:
            return self._count_prefiltered(lines)
        return self._count_plain(lines)

    @abc.abstractmethod
    def match(self, sentence: str) -> tuple[int, int] | None:
        """(task index, group index) of one sentence, or None when it is not counted."""

    @abc.abstractmethod
    def _count_plain(self, lines: list[str]) -> Counts:
        """Count line by line."""

    @abc.abstractmethod
    def _count_prefiltered(self, lines: list[str]) -> Counts:
        """Count with the numpy prefilter (same result as :meth:`_count_plain`)."""

    def _zeros(self) -> np.ndarray:
        return np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)

    def _key_index(self, b: bytes) -> KeyIndex:
        """The prefilter, built on the first chunk seen (its keys are sampled from it)."""
        if self._index is None:
            self._index = KeyIndex(self.patterns, b[: 1 << 18])
        return self._index


class Wang2021Rule(CountingRule):
    """The rule of the BiasAmp-> paper's ``read_wiki2.py``, reproduced exactly."""

    default_groups = WANG2021_WORD_GROUPS

    def __init__(self, tasks, groups, plurals=True):
        super().__init__(tasks, groups, plurals)
        # prefilter only: a piece with no regex hit contains no occupation substring
        self.occ_re = re.compile(trie_pattern(sorted(set(self.tasks))))
        self.group_sets = [frozenset(v) for v in self.groups.values()]
        # the numpy prefilter needs patterns without '.'/newlines
        self.patterns = [t.encode("utf-8") for t in self.tasks]
        self.fast = all(b"." not in t and b"\n" not in t and t for t in self.patterns)

    def match(self, sentence):
        index_i = None
        for i, occ in enumerate(self.tasks):
            if occ in sentence:
                index_i = None if index_i is not None else i
        if index_i is None:
            return None
        words = set(sentence.split(" "))
        index_j = None
        for j, gset in enumerate(self.group_sets):
            if gset & words:
                if index_j is not None:
                    if j != 2:
                        index_j = None
                    continue
                index_j = j
        if index_j is None:
            return None
        return index_i, index_j

    def _count_plain(self, lines):
        counts = self._zeros()
        n_sent = kept = 0
        search, match = self.occ_re.search, self.match
        for line in lines:
            if "=" in line:
                continue
            n_sent += line.count(".") + 1
            if search(line) is None:
                continue
            for sent in line.split("."):
                if search(sent) is None:
                    continue
                r = match(sent)
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, len(lines), n_sent, kept

    def _count_prefiltered(self, lines):
        counts = self._zeros()
        _, b = join_lines(lines)
        a = np.frombuffer(b, dtype=np.uint8)
        ends = line_ends(a)
        index = self._key_index(b)
        n = len(lines)
        if ends.size != n:  # a record with an inner newline: use the plain path
            return self._count_plain(lines)
        starts = np.concatenate(([0], ends[:-1] + 1))
        dots = np.flatnonzero(a == 46)
        dots_per_line = np.diff(np.searchsorted(dots, np.concatenate(([0], ends + 1))))
        eq_lines = np.zeros(n, dtype=bool)
        eq_lines[np.searchsorted(ends, np.flatnonzero(a == 61))] = True
        n_sent = int((dots_per_line[~eq_lines] + 1).sum())
        hits = index.find(b)
        kept = 0
        if hits.size:
            line_of = np.searchsorted(ends, hits)
            ok = ~eq_lines[line_of]
            hits, line_of = hits[ok], line_of[ok]
            piece_of = np.searchsorted(dots, hits) - np.searchsorted(dots, starts[line_of])
            done = set()
            for li, pi in zip(line_of.tolist(), piece_of.tolist()):
                if (li, pi) in done:
                    continue
                done.add((li, pi))
                r = self.match(lines[li].split(".")[pi])
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, n, n_sent, kept


class DefaultRule(CountingRule):
    """Case-insensitive whole words in sentences from :func:`split_sentences`."""

    default_groups = DEFAULT_WORD_GROUPS
    uses_plurals = True

    def __init__(self, tasks, groups, plurals=True):
        super().__init__(tasks, groups, plurals)
        self.form_to_task: dict[str, int] = {}
        for i, t in enumerate(self.tasks):
            for form in occupation_forms(t, plurals=plurals):
                self.form_to_task.setdefault(form, i)
        self.occ_re = re.compile(r"\b" + trie_pattern(self.form_to_task) + r"\b")
        self.word_to_group: dict[str, int] = {}
        for j, words in enumerate(self.groups.values()):
            for w in words:
                self.word_to_group.setdefault(" ".join(w.lower().split()), j)
        self.group_re = re.compile(r"\b" + trie_pattern(self.word_to_group) + r"\b")
        # the numpy prefilter needs ASCII patterns without newlines
        self.patterns = [f.encode("utf-8") for f in self.form_to_task]
        self.fast = all(f.isascii() and "\n" not in f for f in self.form_to_task)

    def match(self, sentence):
        s = sentence.lower()
        occs = {self.form_to_task[m.group()] for m in self.occ_re.finditer(s)}
        if len(occs) != 1:
            return None
        grps = {self.word_to_group[m.group()] for m in self.group_re.finditer(s)}
        if len(grps) != 1:
            return None
        return occs.pop(), grps.pop()

    def _count_plain(self, lines):
        counts = self._zeros()
        n_sent = kept = 0
        occ_search, match = self.occ_re.search, self.match
        heading = HEADING.match
        for line in lines:
            if not line.strip() or heading(line):
                continue
            low = line.lower()
            if occ_search(low) is None:
                n_sent += count_sentences(line)
                continue
            for sent in split_sentences(line):
                n_sent += 1
                r = match(sent)
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, len(lines), n_sent, kept

    def _count_prefiltered(self, lines):
        counts = self._zeros()
        text, orig = join_lines(lines)
        b = lower_bytes(text, orig)
        a = np.frombuffer(b, dtype=np.uint8)
        ends = line_ends(a)
        index = self._key_index(b)
        n = len(lines)
        if ends.size != n:  # a record with an inner newline: use the plain path
            return self._count_plain(lines)
        # sentences: non-blank, non-heading lines count 1 + their boundaries
        skip = np.zeros(n, dtype=bool)
        heading = HEADING.match
        for li in np.unique(np.searchsorted(ends, np.flatnonzero(a == 61))).tolist():
            skip[li] = heading(lines[li]) is not None
        n_sent = 0
        for li, line in enumerate(lines):
            if skip[li] or not line.strip():
                skip[li] = True
            else:
                n_sent += 1
        n_sent += count_boundaries(text, orig)
        for li in np.flatnonzero(skip).tolist():
            if lines[li].strip():
                n_sent -= len(BOUNDARY_NL.findall(lines[li]))
        hits = index.find(b, word_bounded=True)
        kept = 0
        if hits.size:
            match = self.match
            for li in np.unique(np.searchsorted(ends, hits)).tolist():
                if skip[li]:
                    continue
                for sent in split_sentences(lines[li]):
                    r = match(sent)
                    if r is not None:
                        counts[r] += 1
                        kept += 1
        return counts, n, n_sent, kept


#: The counting rules: name -> :class:`CountingRule` subclass (see :mod:`biasamp.corpus`).
RULES = Registry("counting rule")
RULES.register("default", DefaultRule, description="case-insensitive whole words per sentence, "
               "plurals and multi-word occupations")
RULES.register("wang2021", Wang2021Rule, description="the BiasAmp-> paper's read_wiki2.py rule, "
               "exactly (substrings, case-sensitive words, '.'-pieces)")
