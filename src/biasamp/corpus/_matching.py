"""Occupation surface forms, trie regexes and the exact numpy multi-substring prefilter."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["KeyIndex", "occupation_forms", "trie_pattern"]

_IRREGULAR_TAILS = (("person", ("people", "persons")), ("woman", ("women",)), ("man", ("men",)),
                    ("child", ("children",)))


def occupation_forms(name: str, *, plurals: bool = True) -> list[str]:
    """Surface forms of an occupation for the default rule (lower case).

    The plural is formed on the last word: ``-s``; ``-es`` after s/x/z/ch/sh;
    consonant + ``y`` -> ``-ies``; ``person``/``man``/``woman``/``child`` endings are
    irregular (``salespeople``, ``chairmen``).

    Parameters
    ----------
    name : str
        Occupation, possibly several words (``"construction worker"``).
    plurals : bool, default True
        Add the plural forms.

    Returns
    -------
    list of str
        The singular first, then plurals.

    Examples
    --------
    >>> occupation_forms("nurse")
    ['nurse', 'nurses']
    >>> occupation_forms("salesperson")
    ['salesperson', 'salespeople', 'salespersons']
    >>> occupation_forms("Construction Worker")
    ['construction worker', 'construction workers']
    """
    base = " ".join(str(name).lower().split())
    forms = [base]
    if not plurals:
        return forms
    for tail, repl in _IRREGULAR_TAILS:
        if base.endswith(tail):
            forms += [base[: -len(tail)] + r for r in repl]
            return forms
    if re.search(r"(?:s|x|z|ch|sh)$", base):
        forms.append(base + "es")
    elif re.search(r"[^aeiou]y$", base):
        forms.append(base[:-1] + "ies")
    else:
        forms.append(base + "s")
    return forms


def trie_pattern(words: Iterable[str]) -> str:
    """A regex alternation factored as a trie (much faster in ``re`` than a flat one).

    >>> trie_pattern(["cook", "cooks", "coach"])
    'co(?:ach|ok(?:s)?)'
    """
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        end = "" in node
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch != ""]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if end:
            return "(?:" + body + ")?" if len(alts) == 1 else body + "?"
        return body

    return build(trie)


_HASH_MULT = np.uint32(2654435761)
_ASCII_WORD = [(bytes([i]).isalnum() and i < 128) or i == 95 for i in range(256)]


class KeyIndex:
    """Exact multi-substring prefilter in numpy.

    Each pattern is represented by one of its 4-byte substrings (the rarest in a sample
    of the corpus) or, when shorter than 4 bytes, by itself. :meth:`find` returns the
    byte positions of every key occurrence, so every occurrence of every pattern is
    covered (keys are substrings of the patterns); callers verify candidates exactly.

    >>> KeyIndex([b"cook", b"he"], b"").find(b"the cook said he").tolist()
    [1, 4, 14]
    """

    def __init__(self, patterns: Sequence[bytes], sample: bytes):
        self.patterns = list(patterns)
        # word_bounded applies on a side only where the pattern's edge is a word character
        self.edges = [(_ASCII_WORD[p[0]], _ASCII_WORD[p[-1]]) for p in self.patterns]
        owners: dict[bytes, list[tuple[int, int]]] = {}
        for pi, pat in enumerate(self.patterns):
            if len(pat) < 4:
                owners.setdefault(pat, []).append((pi, 0))
                continue
            grams = sorted({pat[i:i + 4] for i in range(len(pat) - 3)})
            key = min(grams, key=sample.count)
            owners.setdefault(key, []).append((pi, pat.index(key)))
        # a pattern may also contain another pattern's key at other offsets: that is
        # harmless (hits are verified against the key's own owners only)
        self.owners = {int.from_bytes(k, "little") if len(k) == 4 else k: v
                       for k, v in owners.items()}
        self.short = sorted(k for k in owners if len(k) < 4)
        self.keys = np.array(sorted(k for k in self.owners if isinstance(k, int)),
                             dtype=np.uint32)
        self.table = np.zeros(1 << 16, dtype=bool)
        if len(self.keys):
            self.table[(self.keys * _HASH_MULT) >> np.uint32(16)] = True

    def find(self, b: bytes, *, word_bounded: bool = False) -> np.ndarray:
        """Start positions of verified pattern occurrences (sorted, may repeat).

        ``word_bounded``: drop occurrences with an ASCII word character right before or
        after a word-character edge of the pattern (they cannot match ``\\b...\\b``;
        non-ASCII neighbours are kept).
        """
        return self.find_ids(b, word_bounded=word_bounded)[0]

    def find_ids(self, b: bytes, *, word_bounded: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(starts, pattern indices) of every occurrence, sorted by (start, index).

        >>> [a.tolist() for a in KeyIndex([b"cook", b"oo"], b"").find_ids(b"a cook")]
        [[2, 3], [0, 1]]
        """
        hits: list[tuple[int, object]] = []
        if len(self.keys):
            for off in range(4):
                n = (len(b) - off) // 4
                if n <= 0:
                    continue
                v = np.frombuffer(b, dtype="<u4", count=n, offset=off)
                idx = np.flatnonzero(self.table[(v * _HASH_MULT) >> np.uint32(16)])
                if idx.size:
                    keep = np.isin(v[idx], self.keys)
                    hits += zip((idx[keep] * 4 + off).tolist(), v[idx[keep]].tolist())
        for key in self.short:
            pos = b.find(key)
            while pos >= 0:
                hits.append((pos, key))
                pos = b.find(key, pos + 1)
        out = []
        pats, edges, nb = self.patterns, self.edges, len(b)
        for pos, key in hits:
            for pi, off in self.owners[key]:
                start = pos - off
                pat = pats[pi]
                end = start + len(pat)
                if start < 0 or b[start:end] != pat:
                    continue
                left, right = edges[pi]
                if word_bounded and ((left and start > 0 and _ASCII_WORD[b[start - 1]])
                                     or (right and end < nb and _ASCII_WORD[b[end]])):
                    continue
                out.append((start, pi))
        out.sort()
        return (np.array([s for s, _ in out], dtype=np.int64),
                np.array([i for _, i in out], dtype=np.int64))
