"""Count (task, attribute) co-occurrences per sentence in a text corpus.

Two counting rules:

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
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import BiasampError, MissingDependencyError

__all__ = [
    "RULES",
    "WANG2021_WORD_GROUPS",
    "DEFAULT_WORD_GROUPS",
    "THEY_WORDS",
    "CorpusCounts",
    "count_cooccurrences",
    "count_text",
    "occupation_forms",
    "split_sentences",
    "write_counts_csv",
]

log = logging.getLogger(__name__)

RULES = ("default", "wang2021")

#: The paper's word groups (read_wiki2.py), matched case-sensitively by the wang2021 rule.
WANG2021_WORD_GROUPS: dict[str, tuple[str, ...]] = {
    "he": ("he", "man", "his", "boy", "son"),
    "she": ("she", "woman", "her", "girl", "daughter"),
}
#: Default word groups: the paper's words plus the missing pronoun forms.
DEFAULT_WORD_GROUPS: dict[str, tuple[str, ...]] = {
    "he": ("he", "him", "his", "himself", "man", "boy", "son"),
    "she": ("she", "her", "hers", "herself", "woman", "girl", "daughter"),
}
#: Words for an optional ``they`` group (not in the defaults: plural *they* dominates text).
THEY_WORDS: tuple[str, ...] = ("they", "them", "their", "theirs", "themselves", "themself",
                               "person", "child", "kid")

_CHUNK_CHARS = 4 << 20  # ~4 MB of text per work item

# ---------------------------------------------------------------------------------------
# sentence splitting (default rule)

_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof", "Gen", "Col", "Lt", "Capt",
                  "Sgt", "Rev", "Gov", "Sen", "Rep", "Inc", "Co", "Corp", "Ltd", "vs", "etc",
                  "No", "Nos", "Mt", "Ft", "Vol", "pp", "ca", "cf", "e.g", "i.e", "approx")

def _grouped_lookbehinds(words) -> str:
    by_len: dict[int, list[str]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(re.escape(w))
    return "".join(rf"(?<!\b(?:{'|'.join(v)})\.)" for _, v in sorted(by_len.items()))


_NOT_AFTER = _grouped_lookbehinds(_ABBREVIATIONS)
#: A sentence boundary: group 1 is the whitespace after ``.``/``!``/``?`` (optionally followed by a
#: closing quote or bracket) that precedes an upper-case letter, a digit or an opening
#: quote, unless the period ends an initial (``J.``, ``U.S.``) or a listed abbreviation.
#: (The abbreviation look-behinds only run when a letter precedes the period.)
_BOUNDARY = re.compile(
    r"[.!?](?:(?<=[^A-Za-z][.!?])|(?<!\b[A-Z]\.)" + _NOT_AFTER + r")"
    + r"[\"'”’)\]]?(\s+)(?=[\"'“‘(\[]*[A-Z0-9])"
)
#: The same boundary, never crossing a line break (for counting over joined lines).
_BOUNDARY_NL = re.compile(_BOUNDARY.pattern.replace(r"(\s+)", r"([^\S\n]+)"))
_HEADING = re.compile(r"^\s*=.*=\s*$")


def _class_table(chars: str) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    t[list(chars.encode("ascii"))] = True
    return t


_T_PUNCT = _class_table(".!?")
_T_ALPHA = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_T_CAP_DIGIT = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# bytes after "<punct> " that need the full regex: quotes/brackets, more whitespace, non-ASCII
_T_COMPLEX_AFTER_SPACE = _class_table("\"'([ \t\x0b\x0c\r") | (np.arange(256) >= 128)
# bytes right after the punctuation that may start the regex's tail: closing quotes or
# brackets, whitespace other than a plain space or newline, or non-ASCII (Unicode quotes/spaces)
_T_COMPLEX_NEXT = _class_table("\"')]\t\x0b\x0c\r\x1c\x1d\x1e\x1f") | (np.arange(256) >= 128)


def _count_boundaries(text: str, b: bytes) -> int:
    """``len(_BOUNDARY_NL.findall(text))``, vectorised (``b`` = ``text`` in UTF-8).

    Plain cases (``" . The"`` after a non-letter, ``".x"``, ``". the"``) are decided in numpy;
    the rest (letters before the period, quotes, unusual spaces, non-ASCII) run the regex
    at that one position. Matches cannot overlap (a match holds one punctuation mark).
    """
    a = np.frombuffer(b, dtype=np.uint8)
    n = a.size
    pos = np.flatnonzero(_T_PUNCT[a])
    if pos.size == 0:
        return 0
    nxt = np.full(pos.size, 10, dtype=np.uint8)       # past the end: like a newline
    ok = pos + 1 < n
    nxt[ok] = a[pos[ok] + 1]
    nxt2 = np.full(pos.size, 10, dtype=np.uint8)
    ok2 = pos + 2 < n
    nxt2[ok2] = a[pos[ok2] + 2]
    prev = np.full(pos.size, 10, dtype=np.uint8)
    prev[pos > 0] = a[pos[pos > 0] - 1]
    space = nxt == 32
    letter_before = _T_ALPHA[prev]
    simple_yes = space & _T_CAP_DIGIT[nxt2] & ~letter_before
    complex_ = (_T_COMPLEX_NEXT[nxt]
                | (space & _T_COMPLEX_AFTER_SPACE[nxt2])
                | (space & _T_CAP_DIGIT[nxt2] & letter_before))
    count = int(simple_yes.sum())
    cpos = pos[complex_]
    if cpos.size:
        cont = np.flatnonzero((a & 0xC0) == 0x80)     # UTF-8 continuation bytes
        chars = cpos - np.searchsorted(cont, cpos)    # byte offset -> str index
        match = _BOUNDARY_NL.match
        count += sum(1 for c in chars.tolist() if match(text, c) is not None)
    return count


def split_sentences(text: str) -> list[str]:
    """Split one paragraph into sentences (no sentence spans a line break).

    Parameters
    ----------
    text : str
        A paragraph (one line of the corpus).

    Returns
    -------
    list of str
        The non-empty sentences, stripped.

    Examples
    --------
    >>> split_sentences("The cook left . He was late .")
    ['The cook left .', 'He was late .']
    >>> split_sentences("Dr. Smith met J. R. Doe in the U.S. Army. It rained.")
    ['Dr. Smith met J. R. Doe in the U.S. Army.', 'It rained.']
    """
    text = text.strip()
    if not text:
        return []
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        out.append(text[start:m.start(1)])
        start = m.end(1)
    out.append(text[start:])
    return out


def _count_sentences(text: str) -> int:
    text = text.strip()
    if not text:
        return 0
    return 1 + len(_BOUNDARY.findall(text))


# ---------------------------------------------------------------------------------------
# vocabularies

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


def _trie_pattern(words: Iterable[str]) -> str:
    """A regex alternation factored as a trie (much faster in ``re`` than a flat one)."""
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


def _check_vocab(tasks: Sequence[str], word_groups: Mapping[str, Sequence[str]]):
    if isinstance(tasks, str):
        raise BiasampError(f"tasks must be a list of occupation names, not a string; got {tasks!r}")
    tasks = [str(t) for t in tasks]
    if not tasks:
        raise BiasampError("tasks must not be empty; got []")
    dup = sorted({t for t in tasks if tasks.count(t) > 1})
    if dup:
        raise BiasampError(f"tasks must be unique; got duplicates {dup}")
    bad = [t for t in tasks if not t.strip()]
    if bad:
        raise BiasampError(f"tasks must be non-empty words; got {tasks!r}")
    if not isinstance(word_groups, Mapping) or not word_groups:
        raise BiasampError(
            f"word_groups must be a non-empty mapping attribute -> words; got {word_groups!r}")
    groups = {}
    for attr, words in word_groups.items():
        if isinstance(words, str) or not words or not all(str(w).strip() for w in words):
            raise BiasampError(
                f"word_groups[{attr!r}] must be a non-empty list of words; got {words!r}")
        groups[str(attr)] = tuple(str(w) for w in words)
    return tasks, groups


# ---------------------------------------------------------------------------------------
# the counting kernels (run in worker processes)


_HASH_MULT = np.uint32(2654435761)
_KELVIN_DOTTED_I = (b"\xe2\x84\xaa", b"\xc4\xb0")  # non-ASCII chars whose lower() is ASCII


class _KeyIndex:
    """Exact multi-substring prefilter in numpy.

    Each pattern is represented by one of its 4-byte substrings (the rarest in a sample
    of the corpus) or, when shorter than 4 bytes, by itself. :meth:`find` returns the
    byte positions of every key occurrence, so every occurrence of every pattern is
    covered (keys are substrings of the patterns); callers verify candidates exactly.
    """

    def __init__(self, patterns: Sequence[bytes], sample: bytes):
        self.patterns = list(patterns)
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
        after (they cannot match ``\\b...\\b``; non-ASCII neighbours are kept).
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
        pats, nb = self.patterns, len(b)
        for pos, key in hits:
            for pi, off in self.owners[key]:
                start = pos - off
                pat = pats[pi]
                end = start + len(pat)
                if start < 0 or b[start:end] != pat:
                    continue
                if word_bounded and ((start > 0 and _ASCII_WORD[b[start - 1]])
                                     or (end < nb and _ASCII_WORD[b[end]])):
                    continue
                out.append(start)
        return np.array(sorted(out), dtype=np.int64)


_ASCII_WORD = [bytes([i]).isalnum() and i < 128 or i == 95 for i in range(256)]


def _line_ends(a: np.ndarray) -> np.ndarray:
    return np.flatnonzero(a == 10)


class _Counter:
    """Compiled matchers for one (rule, tasks, word groups) configuration."""

    def __init__(self, rule: str, tasks: Sequence[str], groups: Mapping[str, Sequence[str]],
                 plurals: bool = True):
        self.rule = rule
        self.tasks = list(tasks)
        self.groups = {k: tuple(v) for k, v in groups.items()}
        self.plurals = plurals
        self.n_tasks, self.n_groups = len(self.tasks), len(self.groups)
        if rule == "wang2021":
            # prefilter only: a piece with no regex hit contains no occupation substring
            self.occ_re = re.compile(_trie_pattern(sorted(set(self.tasks))))
            self.group_sets = [frozenset(v) for v in self.groups.values()]
        else:
            self.form_to_task: dict[str, int] = {}
            for i, t in enumerate(self.tasks):
                for form in occupation_forms(t, plurals=plurals):
                    self.form_to_task.setdefault(form, i)
            self.occ_re = re.compile(r"\b" + _trie_pattern(self.form_to_task) + r"\b")
            self.word_to_group: dict[str, int] = {}
            for j, words in enumerate(self.groups.values()):
                for w in words:
                    self.word_to_group.setdefault(" ".join(w.lower().split()), j)
            self.group_re = re.compile(r"\b" + _trie_pattern(self.word_to_group) + r"\b")

        # the numpy prefilter needs patterns without '.'/newlines (wang2021) or ASCII ones
        if rule == "wang2021":
            self.patterns = [t.encode("utf-8") for t in self.tasks]
            self.fast = all(b"." not in t and b"\n" not in t and t for t in self.patterns)
        else:
            self.patterns = [f.encode("utf-8") for f in self.form_to_task]
            self.fast = all(f.isascii() and "\n" not in f for f in self.form_to_task)
        self._index: _KeyIndex | None = None

    def __reduce__(self):  # rebuild (recompile) in the worker
        return (_Counter, (self.rule, self.tasks, self.groups, self.plurals))

    def count(self, lines: Sequence[str], *, fast: bool | None = None
              ) -> tuple[np.ndarray, int, int, int]:
        """Return (counts, n_lines, n_sentences, n_kept) for a list of raw lines.

        ``fast=False`` forces the plain per-line implementation (used by the tests to
        check that the vectorised prefilter changes nothing).
        """
        lines = list(lines)
        if (self.fast if fast is None else fast and self.fast) and lines:
            if self.rule == "wang2021":
                return self._count_wang2021_fast(lines)
            return self._count_default_fast(lines)
        if self.rule == "wang2021":
            return self._count_wang2021(lines)
        return self._count_default(lines)

    def _joined_bytes(self, lines, lower: bool) -> bytes:
        """Lines joined, each ending in exactly one newline, UTF-8 (optionally lower-cased)."""
        parts = lines if all(s.endswith("\n") for s in lines) else \
            [s if s.endswith("\n") else s + "\n" for s in lines]
        text = "".join(parts)
        b = text.encode("utf-8")
        self._last_text, self._last_bytes = text, b
        if lower:
            if any(ch in b for ch in _KELVIN_DOTTED_I):
                b = text.lower().encode("utf-8")
            else:
                b = b.lower()
        if self._index is None:
            self._index = _KeyIndex(self.patterns, b[: 1 << 18])
        return b

    def _wang2021_piece(self, sent: str):
        index_i = None
        for i, occ in enumerate(self.tasks):
            if occ in sent:
                index_i = None if index_i is not None else i
        if index_i is None:
            return None
        words = set(sent.split(" "))
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

    def _default_piece(self, sent: str):
        """(task, group) of one sentence under the default rule, or None when it is not counted."""
        s = sent.lower()
        occs = {self.form_to_task[m.group()] for m in self.occ_re.finditer(s)}
        if len(occs) != 1:
            return None
        grps = {self.word_to_group[m.group()] for m in self.group_re.finditer(s)}
        if len(grps) != 1:
            return None
        return occs.pop(), grps.pop()

    def _count_wang2021_fast(self, lines):
        counts = np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)
        b = self._joined_bytes(lines, lower=False)
        a = np.frombuffer(b, dtype=np.uint8)
        ends = _line_ends(a)
        n = len(lines)
        if ends.size != n:  # a record with an inner newline: use the plain path
            return self._count_wang2021(lines)
        starts = np.concatenate(([0], ends[:-1] + 1))
        dots = np.flatnonzero(a == 46)
        dots_per_line = np.diff(np.searchsorted(dots, np.concatenate(([0], ends + 1))))
        eq_lines = np.zeros(n, dtype=bool)
        eq_lines[np.searchsorted(ends, np.flatnonzero(a == 61))] = True
        n_sent = int((dots_per_line[~eq_lines] + 1).sum())
        hits = self._index.find(b)
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
                r = self._wang2021_piece(lines[li].split(".")[pi])
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, n, n_sent, kept

    def _count_default_fast(self, lines):
        counts = np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)
        b = self._joined_bytes(lines, lower=True)
        a = np.frombuffer(b, dtype=np.uint8)
        ends = _line_ends(a)
        n = len(lines)
        if ends.size != n:  # a record with an inner newline: use the plain path
            return self._count_default(lines)
        # sentences: non-blank, non-heading lines count 1 + their boundaries
        skip = np.zeros(n, dtype=bool)
        heading = _HEADING.match
        for li in np.unique(np.searchsorted(ends, np.flatnonzero(a == 61))).tolist():
            skip[li] = heading(lines[li]) is not None
        n_sent = 0
        for li, line in enumerate(lines):
            if skip[li] or not line.strip():
                skip[li] = True
            else:
                n_sent += 1
        text, orig = self._last_text, self._last_bytes
        n_sent += _count_boundaries(text, orig)
        for li in np.flatnonzero(skip).tolist():
            if lines[li].strip():
                n_sent -= len(_BOUNDARY_NL.findall(lines[li]))
        hits = self._index.find(b, word_bounded=True)
        kept = 0
        if hits.size:
            piece = self._default_piece
            for li in np.unique(np.searchsorted(ends, hits)).tolist():
                if skip[li]:
                    continue
                for sent in split_sentences(lines[li]):
                    r = piece(sent)
                    if r is not None:
                        counts[r] += 1
                        kept += 1
        return counts, n, n_sent, kept

    def _count_wang2021(self, lines):
        counts = np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)
        n_sent = kept = 0
        search, piece = self.occ_re.search, self._wang2021_piece
        for line in lines:
            if "=" in line:
                continue
            n_sent += line.count(".") + 1
            if search(line) is None:
                continue
            for sent in line.split("."):
                if search(sent) is None:
                    continue
                r = piece(sent)
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, len(lines), n_sent, kept

    def _count_default(self, lines):
        counts = np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)
        n_sent = kept = 0
        occ_search, piece = self.occ_re.search, self._default_piece
        heading = _HEADING.match
        for line in lines:
            if not line.strip() or heading(line):
                continue
            low = line.lower()
            if occ_search(low) is None:
                n_sent += _count_sentences(line)
                continue
            for sent in split_sentences(line):
                n_sent += 1
                r = piece(sent)
                if r is not None:
                    counts[r] += 1
                    kept += 1
        return counts, len(lines), n_sent, kept


_WORKER: _Counter | None = None


def _init_worker(counter: _Counter) -> None:
    global _WORKER
    _WORKER = counter


def _work(lines: list[str]):
    return _WORKER.count(lines)


def _work_range(path: str, start: int, end: int):
    return _WORKER.count(_read_range(path, start, end))


def count_text(text: str | Sequence[str], tasks: Sequence[str], *, rule: str = "default",
               word_groups: Mapping[str, Sequence[str]] | None = None,
               plurals: bool = True) -> pd.DataFrame:
    """Count co-occurrences in an in-memory text (single process).

    Parameters
    ----------
    text : str or list of str
        The text (split into lines as a text-mode file read would: universal newlines,
        ``\\n`` kept) or its lines (used as given).
    tasks : list of str
        Occupations, in the row order wanted.
    rule : {"default", "wang2021"}
    word_groups : mapping attribute -> list of words, optional
        Defaults to :data:`DEFAULT_WORD_GROUPS` (default rule) or
        :data:`WANG2021_WORD_GROUPS` (wang2021 rule).
    plurals : bool, default True
        Default rule only: also match regular plurals of the occupations.

    Returns
    -------
    pandas.DataFrame of shape (n_tasks, n_groups)
        Integer counts; index = tasks, columns = the word-group names.

    Examples
    --------
    >>> t = "He is a cook .\\nher cookie was good .\\n"
    >>> count_text(t, ["cook"], rule="default").loc["cook"].tolist()
    [1, 0]
    >>> count_text(t, ["cook"], rule="wang2021").loc["cook"].tolist()
    [0, 1]
    """
    rule = _check_rule(rule)
    groups = _default_groups(rule) if word_groups is None else word_groups
    tasks, groups = _check_vocab(tasks, groups)
    lines = _split_lines(text) if isinstance(text, str) else list(text)
    counts, *_ = _Counter(rule, tasks, groups, plurals).count(lines)
    return pd.DataFrame(counts, index=pd.Index(tasks, name="task"),
                        columns=pd.Index(list(groups), name="attribute"))


def _check_rule(rule: str) -> str:
    if rule not in RULES:
        raise BiasampError(f"rule must be one of {set(RULES)}; got {rule!r}")
    return rule


def _default_groups(rule: str) -> dict[str, tuple[str, ...]]:
    return dict(WANG2021_WORD_GROUPS if rule == "wang2021" else DEFAULT_WORD_GROUPS)


# ---------------------------------------------------------------------------------------
# corpus readers

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _file_ranges(paths: Sequence[Path], chunk_bytes: int) -> Iterator[tuple[str, int, int]]:
    """(path, start, end) byte ranges of about chunk_bytes, each ending after a newline."""
    for path in paths:
        size = path.stat().st_size
        with open(path, "rb") as f:
            pos = 0
            while pos < size:
                end = min(pos + chunk_bytes, size)
                if end < size:
                    f.seek(end)
                    end += len(f.readline())
                yield str(path), pos, end
                pos = end


def _read_range(path: str, start: int, end: int) -> list[str]:
    """The lines of a byte range, as text-mode file iteration would give them.

    UTF-8 (undecodable bytes replaced), universal newlines (``\\r\\n`` and ``\\r`` become
    ``\\n``), lines split on ``\\n`` only and keeping it.
    """
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8", errors="replace")
    return _split_lines(text)


def _split_lines(text: str) -> list[str]:
    """Lines as text-mode file iteration gives them (universal newlines, ``\\n`` kept)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = text.split("\n")
    lines = [s + "\n" for s in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _dataset_chunks(ds, text_column: str, chunk_chars: int) -> Iterator[list[str]]:
    lines: list[str] = []
    size = 0
    for record in ds:
        if text_column not in record:
            raise BiasampError(f"text_column {text_column!r} not in the dataset's columns "
                               f"{sorted(record)}")
        text = record[text_column] or ""
        lines.append(text)
        size += len(text)
        if size >= chunk_chars:
            yield lines
            lines, size = [], 0
    if lines:
        yield lines


@dataclass
class CorpusCounts:
    """Result of :func:`count_cooccurrences`.

    Attributes
    ----------
    counts : pandas.DataFrame of shape (n_tasks, n_groups)
        Integer co-occurrence counts; rows = tasks, columns = attribute word groups.
    n_lines : int
        Lines (records) read.
    n_sentences : int
        Sentences scanned (wang2021: ``.``-separated pieces of lines without ``=``).
    n_kept : int
        Sentences that were counted (= ``counts.values.sum()``).
    provenance : dict
        Corpus name, files and sha256, rule, word groups, tasks, counts of lines and
        sentences, biasamp version.
    """

    counts: pd.DataFrame
    n_lines: int
    n_sentences: int
    n_kept: int
    provenance: dict = field(default_factory=dict)

    @property
    def zero_rows(self) -> list[str]:
        """Tasks with no counted sentence at all."""
        return [t for t, s in zip(self.counts.index, self.counts.sum(axis=1)) if s == 0]

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write a base-rate CSV readable by ``get_source("file:PATH")``."""
        return write_counts_csv(self, path)


def write_counts_csv(result: CorpusCounts, path: str | os.PathLike) -> Path:
    """Write counts as a wide base-rate CSV (``task,he,she,...``).

    The first line is ``# provenance: {json}``; :func:`biasamp.base_rates.read_table_csv`
    reads it back into the table's provenance.

    Parameters
    ----------
    result : CorpusCounts
    path : path-like

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("# provenance: " + json.dumps(result.provenance, sort_keys=True) + "\n")
        df = result.counts.copy()
        df.index.name = "task"
        df.columns.name = None
        df.to_csv(f, lineterminator="\n")
    return path


def count_cooccurrences(corpus, tasks: Sequence[str], *, rule: str = "default",
                        word_groups: Mapping[str, Sequence[str]] | None = None,
                        plurals: bool = True, dataset_config: str | None = None,
                        split: str = "train", text_column: str = "text", streaming: bool = True,
                        n_jobs: int | None = None, chunk_chars: int | None = None,
                        progress: bool = False, corpus_name: str | None = None) -> CorpusCounts:
    """Count (task, attribute-group) co-occurrences per sentence over a corpus.

    Parameters
    ----------
    corpus : path, list of paths, ``"hf:NAME"`` or a ``datasets`` dataset
        Local UTF-8 text files (read in chunks of lines), a Hugging Face dataset name
        prefixed with ``hf:`` (loaded with ``datasets.load_dataset(NAME, dataset_config,
        split=split, streaming=streaming)``), or an already loaded ``Dataset`` /
        ``IterableDataset``; each record's ``text_column`` is one line.
    tasks : list of str
        Occupations (rows of the result, in this order).
    rule : {"default", "wang2021"}, default "default"
        Counting rule (see the module docstring).
    word_groups : mapping attribute -> list of words, optional
        Attribute word groups (columns, in mapping order).
    plurals : bool, default True
        Default rule: also match plural occupations.
    dataset_config, split, text_column, streaming
        Options for ``hf:`` corpora.
    n_jobs : int, optional
        Worker processes; default all cores (``os.cpu_count()``); 1 = in-process.
    chunk_chars : int, optional
        Default: 4 MB, or less for small file corpora so that every worker gets about
        four chunks (at least 256 kB). About how much text goes to a worker at once (bytes for files, which workers
        read themselves as line-aligned byte ranges; characters for datasets); at most
        ``2 * n_jobs`` chunks are in flight, so memory does not depend on the corpus size.
    progress : bool, default False
        Show a tqdm progress bar (bytes for files, records for datasets).
    corpus_name : str, optional
        Name recorded in the provenance (default: the file names / dataset name).

    Returns
    -------
    CorpusCounts

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("The nurses said she was tired . The cook left .\\n")
    >>> r = count_cooccurrences(d / "a.txt", ["nurse", "cook"], n_jobs=1)
    >>> r.counts.loc["nurse"].tolist(), r.n_sentences, r.n_kept
    ([0, 1], 2, 1)
    """
    from . import __version__

    rule = _check_rule(rule)
    groups = _default_groups(rule) if word_groups is None else word_groups
    tasks, groups = _check_vocab(tasks, groups)
    if chunk_chars is not None and (not isinstance(chunk_chars, int) or chunk_chars < 1):
        raise BiasampError(f"chunk_chars must be a positive int; got {chunk_chars!r}")
    if n_jobs is None:
        n_jobs = os.cpu_count() or 1
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise BiasampError(f"n_jobs must be a positive int or None; got {n_jobs!r}")

    prov: dict = {"rule": rule, "word_groups": {k: list(v) for k, v in groups.items()},
                  "tasks": list(tasks), "plurals": bool(plurals) if rule == "default" else None,
                  "biasamp_version": __version__}
    total = None
    if isinstance(corpus, (str, os.PathLike)) and str(corpus).startswith("hf:"):
        name = str(corpus)[3:]
        try:
            import datasets
        except ImportError as exc:  # pragma: no cover - datasets is a dependency
            raise MissingDependencyError("hf: corpora need `pip install datasets`") from exc
        ds = datasets.load_dataset(name, dataset_config, split=split, streaming=streaming)
        chunks, ranges = _dataset_chunks(ds, text_column, chunk_chars or _CHUNK_CHARS), None
        prov["corpus"] = {"kind": "datasets", "name": name, "config": dataset_config,
                          "split": split, "streaming": streaming, "text_column": text_column,
                          "datasets_version": datasets.__version__,
                          "fingerprint": getattr(ds, "_fingerprint", None)}
        unit = "records"
    elif _is_dataset(corpus):
        chunks, ranges = _dataset_chunks(corpus, text_column, chunk_chars or _CHUNK_CHARS), None
        prov["corpus"] = {"kind": "datasets-object", "text_column": text_column,
                          "fingerprint": getattr(corpus, "_fingerprint", None),
                          "n_records": _len_or_none(corpus)}
        total = _len_or_none(corpus)
        unit = "records"
    else:
        paths = [Path(corpus)] if isinstance(corpus, (str, os.PathLike)) else \
            [Path(p) for p in corpus]
        if not paths:
            raise BiasampError("corpus must name at least one file; got []")
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise BiasampError(f"corpus file(s) not found: {missing}")
        chunks = None
        prov["corpus"] = {"kind": "files",
                          "files": [{"path": str(p), "name": p.name, "bytes": p.stat().st_size,
                                     "sha256": _sha256(p)} for p in paths]}
        total = sum(p.stat().st_size for p in paths)
        unit = "B"
        if chunk_chars is None:
            chunk_chars = min(_CHUNK_CHARS, max(1 << 18, total // (4 * n_jobs) + 1))
        ranges = _file_ranges(paths, chunk_chars)
    prov["corpus"]["name"] = corpus_name or prov["corpus"].get("name") or ", ".join(
        f["name"] for f in prov["corpus"].get("files", [])) or "dataset"

    counter = _Counter(rule, tasks, groups, plurals)
    counts = np.zeros((len(tasks), len(groups)), dtype=np.int64)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit=unit, unit_scale=True, desc=f"count ({rule})")

    def advance(item):
        if bar is not None:
            bar.update(item[2] - item[1] if ranges is not None else len(item))

    # files: workers read their own byte ranges (little IPC); datasets: lines are sent
    items = ranges if ranges is not None else chunks
    total_counts = [counts, 0, 0, 0]

    def add(res, item):
        c, nl, ns, nk = res
        total_counts[0] += c
        total_counts[1] += nl
        total_counts[2] += ns
        total_counts[3] += nk
        advance(item)

    try:
        if n_jobs == 1:
            for item in items:
                add(counter.count(_read_range(*item) if ranges is not None else item), item)
        else:
            work = _work_range if ranges is not None else _work
            with ProcessPoolExecutor(n_jobs, initializer=_init_worker,
                                     initargs=(counter,)) as pool:
                pending: deque = deque()
                for item in items:
                    fut = pool.submit(work, *item) if ranges is not None else \
                        pool.submit(work, item)
                    pending.append((fut, item))
                    while len(pending) >= 2 * n_jobs:
                        fut, done = pending.popleft()
                        add(fut.result(), done)
                while pending:
                    fut, done = pending.popleft()
                    add(fut.result(), done)
    finally:
        if bar is not None:
            bar.close()
    counts, n_lines, n_sent, n_kept = total_counts

    prov.update({"n_lines": n_lines, "n_sentences": n_sent, "n_kept": n_kept})
    df = pd.DataFrame(counts, index=pd.Index(tasks, name="task"),
                      columns=pd.Index(list(groups), name="attribute"))
    result = CorpusCounts(df, n_lines, n_sent, n_kept, prov)
    if result.zero_rows:
        log.warning("%d task(s) never counted: %s", len(result.zero_rows), result.zero_rows)
    return result


def _is_dataset(obj) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("datasets")


def _len_or_none(obj):
    try:
        return len(obj)
    except TypeError:
        return None
