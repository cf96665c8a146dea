"""The ``wang2021`` rule: the BiasAmp-> paper's ``read_wiki2.py``, reproduced exactly."""

from __future__ import annotations

import re

import numpy as np

from ._buffer import Buffer, encode_text
from ._matching import make_scanner, trie_pattern
from ._rule_base import WANG2021_WORD_GROUPS, CountingRule, tally

#: Bytes per ``=`` line above which their ``.`` are counted per line (bytes.count), not in
#: numpy (one pass over the chunk); both count the same.
_BYTES_PER_LINE = 1000


class Wang2021Rule(CountingRule):
    """Skip lines with ``=``; ``.``-pieces; substring occupations; case-sensitive words.

    The engine (:meth:`count_bytes`): lines, ``.`` and ``=`` are counted in numpy; the
    scanner finds every occurrence of every occupation; the piece around an occurrence (on
    a line without ``=``) is cut out of the bytes, and the occupations that occur whole in
    it are exactly those ``occ in piece`` finds, so the paper's choice (the last of an odd
    number, in vocabulary order) is made from them; the piece is decoded for its words. A
    piece without an occurrence cannot be counted, so no other piece is looked at.
    """

    default_groups = WANG2021_WORD_GROUPS
    newline_matters = True  # the line's last piece keeps its "\n" ("he\n" is not "he")

    def __init__(self, tasks, groups, plurals=True, matcher=None):
        super().__init__(tasks, groups, plurals, matcher)
        # plain path only: a piece with no regex hit contains no occupation substring
        self.occ_re = re.compile(trie_pattern(sorted(set(self.tasks))))
        self.group_sets = [frozenset(v) for v in self.groups.values()]
        patterns = [encode_text(t) for t in self.tasks]
        self.scanner = make_scanner(matcher, patterns)
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
        eq_lines = buf.lines_with(61)
        n_sent = int(np.count_nonzero(a == 46)) + buf.n_lines
        if eq_lines.size:
            n_sent -= eq_lines.size + self._dots_in(buf, eq_lines)
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

    @staticmethod
    def _dots_in(buf: Buffer, lines: np.ndarray) -> int:
        """Number of ``.`` in the given lines."""
        starts, ends = buf.starts[lines], buf.ends[lines]
        if lines.size * _BYTES_PER_LINE <= len(buf.b):
            count = buf.b.count
            return sum(count(b".", s, e) for s, e in zip(starts.tolist(), ends.tolist()))
        dots = np.flatnonzero(buf.a == 46)
        return int((np.searchsorted(dots, ends) - np.searchsorted(dots, starts)).sum())
