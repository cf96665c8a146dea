"""The counting rules (:data:`RULES`): ``default`` (case-insensitive whole words per sentence)
and ``wang2021`` (the BiasAmp-> paper's ``read_wiki2.py``, reproduced exactly)."""

from __future__ import annotations

import re

import numpy as np

from .._registry import Registry
from ._matching import MATCHERS, default_matcher, occupation_forms, trie_pattern
from ._rule_base import (
    DEFAULT_WORD_GROUPS,
    WANG2021_WORD_GROUPS,
    Buffer,
    CountingRule,
    encode_text,
    tally,
)
from ._sentences import HEADING, boundary_gaps, sentence_spans, split_sentences

# non-ASCII characters whose lower() is (or holds) ASCII: KELVIN SIGN, I WITH DOT ABOVE
_LOWER_TO_ASCII = (b"\xe2\x84\xaa", b"\xc4\xb0")


class DefaultRule(CountingRule):
    """Case-insensitive whole words in sentences from :func:`split_sentences`. The engine
    counts lines and sentences in numpy, and decodes and decides (:meth:`match`) only the
    sentences where the scanner (a superset of the regex's matches) finds an occupation."""

    default_groups = DEFAULT_WORD_GROUPS
    uses_plurals = True

    def __init__(self, tasks, groups, plurals=True, matcher=None):
        super().__init__(tasks, groups, plurals, matcher)
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
        forms = list(self.form_to_task)
        # ASCII forms are found on the raw bytes (caseless); others on the lower-cased text
        self.ascii_forms = all(f.isascii() for f in forms)
        # forms without sentence marks lie inside one sentence: only that one is matched
        self.in_one_sentence = not any(c in f for f in forms for c in ".!?")
        # + the characters whose lower() is ASCII: a hit there sends the chunk to lower()
        self.scanner = MATCHERS.get(matcher or default_matcher())(
            [f.encode("utf-8") for f in forms] + list(_LOWER_TO_ASCII),
            word_bounded=True,
            caseless=True,
        )

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
                n_sent += len(sentence_spans(line))
                continue
            for sent in split_sentences(line):
                n_sent += 1
                kept += tally(counts, match(sent))
        return counts, len(lines), n_sent, kept

    def _count_buffer(self, buf, counts, tick):
        skip = buf.blank_lines()
        skip[self._headings(buf, skip)] = True
        gaps = boundary_gaps(buf, skip)
        # sentences: 1 + boundaries per counted line
        n_sent = int(buf.n_lines - skip.sum()) + gaps[0].size
        kept = 0
        for end, sentence in self._candidates(buf, skip, gaps):
            tick.at(end)
            kept += tally(counts, self.match(sentence))
        return n_sent, kept

    @staticmethod
    def _headings(buf: Buffer, blank: np.ndarray) -> list[int]:
        """Lines that match :data:`HEADING`: "=" first and last once stripped, two of them."""
        lines = buf.lines_with(61)
        lines = lines[~blank[lines]]
        first, last, sure = buf.stripped_edges(lines)
        a = buf.a
        yes = sure & (a[first] == 61) & (a[last] == 61) & (first < last)
        return lines[yes].tolist() + [
            i for i in lines[~sure].tolist() if HEADING.match(buf.line(i))
        ]

    def _candidates(self, buf: Buffer, skip: np.ndarray, gaps):
        """``(end, sentence)``: the sentences where an occupation can occur, each once, in
        the order of the text (``end``: a byte offset the count has reached with it)."""
        b = buf.b
        hits = self.scanner.find(b)
        if not hits.size:
            return
        if not self.ascii_forms or (buf.a[hits] >= 128).any():
            # lower() changes the bytes (non-ASCII forms, KELVIN SIGN, I WITH DOT ABOVE):
            # find the forms on the lower-cased text, then take whole lines
            low = Buffer(b.decode("utf-8", "replace").lower().encode("utf-8"))
            lines = low.line_of(self.scanner.find(low.b))
            yield from self._line_sentences(buf, lines[~skip[lines]])
            return
        lines = buf.line_of(hits)
        keep = ~skip[lines]
        hits, lines = hits[keep], lines[keep]
        if not self.in_one_sentence:
            yield from self._line_sentences(buf, lines)
            return
        # the sentence of each hit: between the boundary gaps around it, within its line
        gap_starts, gap_ends = gaps
        gap_ends = np.concatenate(([0], gap_ends))  # sentinels: text start, end
        gap_starts = np.concatenate((gap_starts, [len(b)]))
        line_start = np.where(lines > 0, buf.ends[np.maximum(lines - 1, 0)] + 1, 0)
        start = np.maximum(gap_ends[np.searchsorted(gap_ends[1:], hits, "right")], line_start)
        end = np.minimum(
            gap_starts[np.searchsorted(gap_starts[:-1], hits, "right")], buf.ends[lines]
        )
        for s, e in sorted(set(zip(start.tolist(), end.tolist()))):
            yield e, b[s:e].decode("utf-8", "replace")

    @staticmethod
    def _line_sentences(buf: Buffer, lines: np.ndarray):
        for li in np.unique(lines).tolist():
            line, end = buf.line(li), int(buf.ends[li])
            for s, e in sentence_spans(line):
                yield end, line[s:e]


class Wang2021Rule(CountingRule):
    """Skip lines with ``=``; ``.``-pieces; substring occupations; case-sensitive words. The
    engine decides only the pieces around the scanner's occurrences: the occupations whole in
    a piece are exactly those ``occ in piece`` finds, and a piece without one never counts."""

    default_groups = WANG2021_WORD_GROUPS
    newline_matters = True  # the line's last piece keeps its "\n" ("he\n" is not "he")

    def __init__(self, tasks, groups, plurals=True, matcher=None):
        super().__init__(tasks, groups, plurals, matcher)
        # plain path only: a piece with no regex hit contains no occupation substring
        self.occ_re = re.compile(trie_pattern(sorted(set(self.tasks))))
        self.group_sets = [frozenset(v) for v in self.groups.values()]
        patterns = [encode_text(t) for t in self.tasks]
        self.scanner = MATCHERS.get(matcher or default_matcher())(patterns)
        self.lengths = np.array([len(p) for p in patterns], dtype=np.int64)

    def match(self, sentence):
        index_i = None
        for i, occ in enumerate(self.tasks):
            if occ in sentence:
                index_i = None if index_i is not None else i
        return None if index_i is None else self._pair(index_i, sentence)

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
                kept += tally(counts, match(sent))
        return counts, len(lines), n_sent, kept

    def _count_buffer(self, buf, counts, tick):
        a, b = buf.a, buf.b
        dots, eq_lines = np.flatnonzero(a == 46), buf.lines_with(61)
        # pieces: a line's "." + 1, but not on the lines with "=" (skipped)
        starts, ends = buf.starts[eq_lines], buf.ends[eq_lines]
        eq_dots = int((np.searchsorted(dots, ends) - np.searchsorted(dots, starts)).sum())
        n_sent = dots.size + buf.n_lines - eq_lines.size - eq_dots
        hits, ids = self.scanner.find_ids(b)
        keep = (a[hits] != 46) & (a[hits] != 10)  # an occurrence from a "." or "\n" is in no piece
        if eq_lines.size and hits.size:
            keep &= ~np.isin(buf.line_of(hits), eq_lines)
        hits, ids = hits[keep], ids[keep]
        ends = (hits + self.lengths[ids]).tolist()
        hits, ids = hits.tolist(), ids.tolist()
        kept, k, n = 0, 0, len(hits)
        piece_end, nl = 0, -2  # nl: the first newline at or after the last pos (-1: none)
        while k < n:
            pos = hits[k]
            tick.at(pos)
            start = max(b.rfind(b".", piece_end, pos), b.rfind(b"\n", piece_end, pos)) + 1
            if nl == -2 or 0 <= nl < pos:  # searched again only past it: a long line is
                nl = b.find(b"\n", pos)  # scanned once, not once per piece
            line_end = nl if nl >= 0 else len(b)
            dot = b.find(b".", pos, line_end)
            piece_end = dot if dot >= 0 else line_end
            # the line's last piece keeps its newline, as str.split(".") of the line does
            stop = piece_end + 1 if dot < 0 and nl >= 0 else piece_end
            found = set()  # the occupations that occur whole in the piece
            while k < n and hits[k] < piece_end:
                if ends[k] <= stop:
                    found.add(ids[k])
                k += 1
            kept += tally(counts, self._decide(found, b[start:stop].decode("utf-8", "replace")))
        return n_sent, kept

    def _decide(self, found: set, piece: str):
        """:meth:`match` given the occupations found in the piece (vocabulary order)."""
        if len(found) % 2 == 0:  # every second occupation resets the choice
            return None
        return self._pair(max(found), piece)

    def _pair(self, index_i: int, piece: str) -> tuple[int, int] | None:
        """``(index_i, the §4 choice of the gender group of the piece's words)``, as the
        published loop makes it: going through the groups in order, a group present is chosen
        when none is held, and clears a held choice unless it is the third group; None when
        nothing is held at the end."""
        words, index_j = set(piece.split(" ")), None
        for j, gset in enumerate(self.group_sets):
            if gset & words:
                if index_j is not None:
                    if j != 2:
                        index_j = None
                    continue
                index_j = j
        return None if index_j is None else (index_i, index_j)


#: The counting rules: name -> :class:`CountingRule` subclass (see :mod:`biasamp.corpus`).
RULES = Registry("counting rule")
RULES.register(
    "default",
    DefaultRule,
    description="case-insensitive whole words per sentence, plurals and multi-word occupations",
)
RULES.register(
    "wang2021",
    Wang2021Rule,
    description="the BiasAmp-> paper's read_wiki2.py rule, "
    "exactly (substrings, case-sensitive words, '.'-pieces)",
)
