"""The ``default`` rule: case-insensitive whole words in the sentences of ``split_sentences``."""

from __future__ import annotations

import re

import numpy as np

from ._buffer import Buffer
from ._matching import make_scanner, occupation_forms, trie_pattern
from ._rule_base import DEFAULT_WORD_GROUPS, CountingRule, tally
from ._sentences import HEADING, boundary_gaps, sentence_spans, split_sentences

# non-ASCII characters whose lower() is (or holds) ASCII: KELVIN SIGN, I WITH DOT ABOVE
_LOWER_TO_ASCII = (b"\xe2\x84\xaa", b"\xc4\xb0")


class DefaultRule(CountingRule):
    """Case-insensitive whole words in sentences from :func:`split_sentences`.

    The engine (:meth:`count_bytes`): blank and heading lines, and the sentences of the
    other lines (:func:`boundary_gaps`), are counted in numpy; the scanner finds
    the occupations' forms (ASCII case-insensitive, ``\\b`` checked on ASCII neighbours: a
    superset of the regex's matches); only the sentences holding such a candidate are
    decoded and decided by :meth:`match`.
    """

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
        self.scanner = make_scanner(
            matcher,
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
