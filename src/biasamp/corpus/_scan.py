"""Multi-pattern scanners: where any of many byte patterns occurs in a buffer.

A scanner returns the start offsets of pattern occurrences in a UTF-8 buffer (``find``), or
those and the index of the pattern found there (``find_ids``). It may return
*more* offsets than the rule in the end counts (``word_bounded`` checks only ASCII word
characters; the rules verify every candidate with their exact Python matcher), never fewer:
the rules' counts do not depend on the scanner, only their speed does.

``"hyperscan"`` (the default when the ``hyperscan`` package imports) compiles the patterns
into one Hyperscan database (SIMD literal matching, about 1 GB/s per core on WikiText).
``"numpy"`` is the exact numpy prefilter :class:`~biasamp.corpus._matching.KeyIndex`
(no compiled dependency; 5 to 10 times slower). Chosen by measurement
(``benchmarks/bench_corpus.py --matchers``): Hyperscan 0.9 ms/MB, ahocorasick-rs (bytes)
1.9 ms/MB, google-re2 2.3 ms/MB, polars ``str.contains_any`` 2.0 ms/MB, pyahocorasick (str)
19 ms/MB, numpy prefilter 5 to 10 ms/MB, on the winobias32 occupations over WikiText-103.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

import numpy as np

from .._errors import MissingDependencyError
from .._registry import Registry
from ._matching import KeyIndex

__all__ = ["MATCHERS", "default_matcher", "make_scanner"]

_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _hs_literal(pattern: bytes, word_bounded: bool) -> bytes:
    r"""A Hyperscan expression for a literal (every byte as ``\xHH``).

    ``\b`` is added only on a side whose edge byte is an ASCII word character: Hyperscan's
    ``\b`` is ASCII, so there it is implied by Python's Unicode ``\b`` (a superset of hits);
    next to a non-ASCII or non-word edge it would not be, so it is left out.
    """
    body = b"".join(b"\\x%02x" % c for c in pattern)
    if word_bounded and pattern[0] in _WORD:
        body = b"\\b" + body
    if word_bounded and pattern[-1] in _WORD:
        body = body + b"\\b"
    return body


class HyperscanScanner:
    """Start offsets of literal patterns, found by one compiled Hyperscan database.

    >>> HyperscanScanner([b"cook", b"he"]).find(b"the cook said he").tolist()
    [1, 4, 14]
    >>> HyperscanScanner([b"cook"], word_bounded=True).find(b"cookie cook").tolist()
    [7]
    >>> HyperscanScanner([b"cook"], caseless=True).find(b"Cook COOK").tolist()
    [0, 5]
    """

    def __init__(self, patterns: Sequence[bytes], *, word_bounded: bool = False,
                 caseless: bool = False):
        try:
            import hyperscan
        except ImportError as exc:  # pragma: no cover - hyperscan is a dependency
            raise MissingDependencyError("matcher 'hyperscan' needs `pip install hyperscan`; "
                                         "got ImportError") from exc
        self._hs = hyperscan
        self.patterns = list(patterns)
        self.lengths = [len(p) for p in self.patterns]
        self.word_bounded = word_bounded
        self.caseless = caseless
        self._db = None
        self._local = threading.local()   # a scratch space per thread

    def _database(self):
        if self._db is None:
            hs = self._hs
            db = hs.Database(mode=hs.HS_MODE_BLOCK)
            exprs = [_hs_literal(p, self.word_bounded) for p in self.patterns]
            db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs),
                       flags=hs.HS_FLAG_CASELESS if self.caseless else 0)
            self._db = db
        return self._db

    def find(self, b: bytes) -> np.ndarray:
        """Sorted start offsets of every occurrence (with repeats for equal starts)."""
        return self.find_ids(b)[0]

    def find_ids(self, b: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(starts, pattern indices) of every occurrence, sorted by (start, index)."""
        db = self._database()
        if not b:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hs.Scratch(db)
        out: list[tuple[int, int]] = []
        lengths = self.lengths
        db.scan(b, match_event_handler=lambda i, _f, to, _fl, _c: out.append(
            (to - lengths[i], i)), scratch=scratch)
        out.sort()
        return (np.array([s for s, _ in out], dtype=np.int64),
                np.array([i for _, i in out], dtype=np.int64))


class NumpyScanner:
    """:class:`KeyIndex` behind the scanner interface (keys sampled from the first buffer).

    >>> NumpyScanner([b"cook", b"he"]).find(b"the cook said he").tolist()
    [1, 4, 14]
    >>> NumpyScanner([b"cook"], caseless=True).find(b"Cook COOK").tolist()
    [0, 5]
    """

    def __init__(self, patterns: Sequence[bytes], *, word_bounded: bool = False,
                 caseless: bool = False):
        self.caseless = caseless
        self.patterns = [p.lower() for p in patterns] if caseless else list(patterns)
        self.word_bounded = word_bounded
        self._index: KeyIndex | None = None

    def find(self, b: bytes) -> np.ndarray:
        """Sorted start offsets of every occurrence (with repeats for equal starts)."""
        return self.find_ids(b)[0]

    def find_ids(self, b: bytes) -> tuple[np.ndarray, np.ndarray]:
        """(starts, pattern indices) of every occurrence, sorted by (start, index)."""
        if self.caseless:
            b = b.lower()
        if self._index is None:
            self._index = KeyIndex(self.patterns, b[: 1 << 18])
        return self._index.find_ids(b, word_bounded=self.word_bounded)


#: Scanner implementations: name -> class taking ``(patterns, *, word_bounded, caseless)``
#: (``caseless``: ASCII letters match either case, as ``bytes.lower()`` on both sides).
MATCHERS = Registry("matcher")
MATCHERS.register("hyperscan", HyperscanScanner,
                  description="Hyperscan (compiled SIMD multi-literal matching; the default)")
MATCHERS.register("numpy", NumpyScanner,
                  description="numpy 4-byte-key prefilter (no compiled dependency)")


@functools.lru_cache(maxsize=1)
def default_matcher() -> str:
    """``"hyperscan"`` when the package imports (and runs on this CPU), else ``"numpy"``."""
    try:
        HyperscanScanner([b"ab"]).find(b"xab")
    except Exception:  # noqa: BLE001 - missing package, unsupported CPU: fall back
        return "numpy"
    return "hyperscan"


def make_scanner(name: str | None, patterns: Sequence[bytes], *, word_bounded: bool = False,
                 caseless: bool = False):
    """Build the scanner ``name`` (None = :func:`default_matcher`) for ``patterns``."""
    return MATCHERS.get(name or default_matcher())(patterns, word_bounded=word_bounded,
                                                   caseless=caseless)
