"""Occupation surface forms, trie regexes, and the multi-pattern scanners (:data:`MATCHERS`).

A scanner may return *more* offsets than the rule in the end counts (``word_bounded`` checks
only ASCII word characters; the rules verify every candidate), never fewer: the counts do not
depend on the scanner, only the speed does.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Sequence

import numpy as np

from .._errors import MissingDependencyError
from .._registry import Registry

_IRREGULAR_TAILS = (
    ("person", ("people", "persons")),
    ("woman", ("women",)),
    ("man", ("men",)),
    ("child", ("children",)),
)


def occupation_forms(name: str, *, plurals: bool = True) -> list[str]:
    """Surface forms of an occupation for the default rule (lower case): the singular, then
    (``plurals``) the regular or irregular plurals of the last word.

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


class _Scanner:
    def find(self, b: bytes) -> np.ndarray:
        """Sorted start offsets of every occurrence (``find_ids`` without the pattern indices)."""
        return self.find_ids(b)[0]


class NumpyScanner(_Scanner):
    """Multi-substring search in numpy: each pattern is found through its rarest 4-byte
    substring in the first 256 KiB (or itself when shorter), every candidate verified.

    >>> NumpyScanner([b"cook", b"he"]).find(b"the cook said he").tolist()
    [1, 4, 14]
    >>> NumpyScanner([b"cook"], caseless=True).find(b"Cook COOK").tolist()
    [0, 5]
    >>> [a.tolist() for a in NumpyScanner([b"cook", b"oo"]).find_ids(b"a cook")]
    [[2, 3], [0, 1]]
    """

    def __init__(
        self, patterns: Sequence[bytes], *, word_bounded: bool = False, caseless: bool = False
    ):
        self.caseless, self.word_bounded = caseless, word_bounded
        self.patterns = [p.lower() for p in patterns] if caseless else list(patterns)
        # word_bounded applies on a side only where the pattern's edge is a word character
        self.edges = [(_ASCII_WORD[p[0]], _ASCII_WORD[p[-1]]) for p in self.patterns]
        self.keys = None

    def _index(self, sample: bytes) -> None:
        owners: dict[bytes, list[tuple[int, int]]] = {}
        for pi, pat in enumerate(self.patterns):
            if len(pat) < 4:
                owners.setdefault(pat, []).append((pi, 0))
                continue
            grams = sorted({pat[i : i + 4] for i in range(len(pat) - 3)})
            key = min(grams, key=sample.count)
            owners.setdefault(key, []).append((pi, pat.index(key)))
        self.owners = {
            int.from_bytes(k, "little") if len(k) == 4 else k: v for k, v in owners.items()
        }
        self.short = sorted(k for k in owners if len(k) < 4)
        self.keys = np.array(sorted(k for k in self.owners if isinstance(k, int)), dtype=np.uint32)
        self.table = np.zeros(1 << 16, dtype=bool)
        if len(self.keys):
            self.table[(self.keys * _HASH_MULT) >> np.uint32(16)] = True

    def find_ids(self, b: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(starts, pattern indices) of every occurrence, sorted by (start, index)."""
        if self.caseless:
            b = b.lower()
        if self.keys is None:
            self._index(b[: 1 << 18])
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
                if self.word_bounded and (
                    (left and start > 0 and _ASCII_WORD[b[start - 1]])
                    or (right and end < nb and _ASCII_WORD[b[end]])
                ):
                    continue
                out.append((start, pi))
        return _starts_ids(out)


def _starts_ids(found: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    starts, ids = zip(*sorted(found)) if found else ((), ())
    return np.array(starts, dtype=np.int64), np.array(ids, dtype=np.int64)


def _hs_literal(pattern: bytes, word_bounded: bool) -> bytes:
    r"""A Hyperscan literal (bytes as ``\xHH``), ``\b`` only beside an ASCII word byte."""
    body = b"".join(b"\\x%02x" % c for c in pattern)
    if word_bounded and _ASCII_WORD[pattern[0]]:
        body = b"\\b" + body
    if word_bounded and _ASCII_WORD[pattern[-1]]:
        body = body + b"\\b"
    return body


class HyperscanScanner(_Scanner):
    """Literal patterns found by one compiled Hyperscan database.

    >>> HyperscanScanner([b"cook", b"he"]).find(b"the cook said he").tolist()
    [1, 4, 14]
    >>> HyperscanScanner([b"cook"], word_bounded=True).find(b"cookie cook").tolist()
    [7]
    >>> HyperscanScanner([b"cook"], caseless=True).find(b"Cook COOK").tolist()
    [0, 5]
    """

    def __init__(
        self, patterns: Sequence[bytes], *, word_bounded: bool = False, caseless: bool = False
    ):
        try:
            import hyperscan
        except ImportError as exc:  # pragma: no cover - hyperscan is a dependency
            raise MissingDependencyError(
                "matcher 'hyperscan' needs `pip install hyperscan`; got ImportError"
            ) from exc
        self._hs, self.lengths = hyperscan, [len(p) for p in patterns]
        exprs = [_hs_literal(p, word_bounded) for p in patterns]
        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._db.compile(
            expressions=exprs,
            ids=list(range(len(exprs))),
            elements=len(exprs),
            flags=hyperscan.HS_FLAG_CASELESS if caseless else 0,
        )
        self._local = threading.local()  # a scratch space per thread

    def find_ids(self, b: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(starts, pattern indices) of every occurrence, sorted by (start, index)."""
        if not b:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hs.Scratch(self._db)
        out: list[tuple[int, int]] = []
        lengths = self.lengths
        self._db.scan(
            b,
            match_event_handler=lambda i, _f, to, _fl, _c: out.append((to - lengths[i], i)),
            scratch=scratch,
        )
        return _starts_ids(out)


#: Scanner implementations: name -> class taking ``(patterns, *, word_bounded, caseless)``
#: (``caseless``: ASCII letters match either case, as ``bytes.lower()`` on both sides).
MATCHERS = Registry("matcher")
MATCHERS.register(
    "hyperscan",
    HyperscanScanner,
    description="Hyperscan (compiled SIMD multi-literal matching; the default)",
)
MATCHERS.register(
    "numpy", NumpyScanner, description="numpy 4-byte-key prefilter (no compiled dependency)"
)


@functools.lru_cache(maxsize=1)
def default_matcher() -> str:
    """``"hyperscan"`` when it imports and runs on this CPU, else ``"numpy"``."""
    try:
        HyperscanScanner([b"ab"]).find(b"xab")
    except Exception:  # noqa: BLE001 - missing package, unsupported CPU: fall back
        return "numpy"
    return "hyperscan"
