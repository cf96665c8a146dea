"""Sentences of the default rule: the splitter, its boundary regexes and a vectorised count.

A boundary is the whitespace after ``.``/``!``/``?`` (optionally followed by a closing quote
or bracket) that precedes an upper-case letter, a digit or an opening quote, unless the
period ends an initial (``J.``, ``U.S.``) or a listed abbreviation (``Dr.``).
"""

from __future__ import annotations

import re

import numpy as np

_ABBREVIATIONS = tuple(
    "Mr Mrs Ms Dr St Jr Sr Prof Gen Col Lt Capt Sgt Rev Gov Sen Rep Inc Co Corp Ltd vs etc No"  # noqa: SIM905 - a word list
    " Nos Mt Ft Vol pp ca cf e.g i.e approx".split()
)


def _grouped_lookbehinds(words) -> str:
    by_len: dict[int, list[str]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(re.escape(w))
    return "".join(rf"(?<!\b(?:{'|'.join(v)})\.)" for _, v in sorted(by_len.items()))


_NOT_AFTER = _grouped_lookbehinds(_ABBREVIATIONS)
#: A sentence boundary (see the module docstring); group 1 is its whitespace.
BOUNDARY = re.compile(
    r"[.!?](?:(?<=[^A-Za-z][.!?])|(?<!\b[A-Z]\.)"
    + _NOT_AFTER
    + r")"
    + r"[\"'”’)\]]?(\s+)(?=[\"'“‘(\[]*[A-Z0-9])"
)
#: The same boundary, never crossing a line break (for counting over joined lines).
BOUNDARY_NL = re.compile(BOUNDARY.pattern.replace(r"(\s+)", r"([^\S\n]+)"))
#: A WikiText heading line (``= = Title = =``).
HEADING = re.compile(r"^\s*=.*=\s*$")


def _class_table(chars: str) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    t[list(chars.encode("ascii"))] = True
    return t


_T_ALPHA = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_T_UPPER = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_T_WORD = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_T_CAP_DIGIT = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_T_OPEN = _class_table("\"'([")  # ASCII part of the look-ahead's quotes
_T_CLOSE = _class_table("\"')]")  # ASCII part of the optional closer
_T_SPACE = _class_table(" \t\x0b\x0c\r\x1c\x1d\x1e\x1f")  # ASCII \s other than \n
_T_HIGH = np.arange(256) >= 128  # a byte of a non-ASCII character
_T_UNSURE_LEAD = _T_SPACE | _T_HIGH | _T_OPEN  # after "<mark> ": more to look at
_T_UNSURE_NEXT = (_T_SPACE & ~_class_table(" ")) | _T_HIGH
# the abbreviations as little-endian integer keys of their bytes, by length
_ABBREVIATION_KEYS: dict[int, np.ndarray] = {}
for _length in sorted({len(w) for w in _ABBREVIATIONS}):
    _ABBREVIATION_KEYS[_length] = np.array(
        [int.from_bytes(w.encode(), "little") for w in _ABBREVIATIONS if len(w) == _length],
        dtype=np.uint64,
    )


def _bytes_at(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]``, with ``\\n`` where ``idx`` is outside ``a``."""
    out = a.take(idx, mode="clip")
    out[(idx < 0) | (idx >= a.size)] = 10
    return out


def _decide_before(a: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(no, unsure) of the look-behinds (an initial or an abbreviation) at each mark."""
    no = np.zeros(pos.size, dtype=bool)
    unsure = np.zeros(pos.size, dtype=bool)
    idx = np.flatnonzero((a[pos] == 46) & _T_ALPHA[_bytes_at(a, pos - 1)])
    if not idx.size:
        return no, unsure
    p = pos[idx]
    spans = [(1, _T_UPPER[a[p - 1]])]
    for length, keys in _ABBREVIATION_KEYS.items():
        key = np.zeros(p.size, dtype=np.uint64)
        for i in range(length):
            key |= _bytes_at(a, p - length + i).astype(np.uint64) << np.uint64(8 * i)
        spans.append((length, np.isin(key, keys) & (p >= length)))
    for length, hit in spans:
        before = _bytes_at(a, p - length - 1)
        no[idx[hit & ~_T_WORD[before] & ~_T_HIGH[before]]] = True
        unsure[idx[hit & _T_HIGH[before]]] = True
    return no, unsure & ~no


def _decide_after(a: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(yes, unsure) of the optional closer, the whitespace and the look-ahead."""
    n1, n2, n3, n4 = (_bytes_at(a, pos + k) for k in (1, 2, 3, 4))
    space = n1 == 32
    close = _T_CLOSE[n1]
    # "<mark> X" or "<mark><closer> X", X = an upper-case letter or digit, or a quote then one
    gap = space | (close & (n2 == 32))
    lead = np.where(space, n2, n3)
    tail = np.where(space, n3, n4)
    yes = gap & (_T_CAP_DIGIT[lead] | (_T_OPEN[lead] & _T_CAP_DIGIT[tail]))
    # more spaces, non-ASCII, or a quote followed by a quote or a non-ASCII byte
    open_no = _T_OPEN[lead] & ~_T_OPEN[tail] & ~_T_HIGH[tail] & ~_T_CAP_DIGIT[tail]
    unsure = gap & ~yes & _T_UNSURE_LEAD[lead] & ~open_no
    unsure |= _T_UNSURE_NEXT[n1] | (close & _T_UNSURE_NEXT[n2])
    return yes, unsure & ~yes


def _decide(a: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(marks among ``pos`` that are boundaries, marks that need the regex)."""
    if pos.size == 0:
        return pos, pos
    no, unsure_before = _decide_before(a, pos)
    yes, unsure_after = _decide_after(a, pos)
    sure = yes & ~no & ~unsure_before
    unsure = ~no & ~sure & (yes | unsure_after)
    return pos[sure], pos[unsure]


def boundary_gaps(buf, skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)``: byte offsets of the whitespace between two sentences (group 1 of
    :data:`BOUNDARY_NL`) in a :class:`~biasamp.corpus._rule_base.Buffer`, sorted, the ``skip``
    lines left out. Most marks are decided in numpy, the others by the regex on their line.

    >>> from biasamp.corpus._rule_base import Buffer
    >>> [a.tolist() for a in boundary_gaps(Buffer(b'It rained. "Yes." Mr. X. ok. 2 left'))]
    [[10, 17, 28], [11, 18, 29]]
    """
    a = buf.a
    pos = np.flatnonzero((a == 46) | (a == 33) | (a == 63))  # the marks . ! ?
    if skip is not None and pos.size and skip.any():
        pos = pos[~skip[buf.line_of(pos)]]
    sure, cpos = _decide(a, pos)
    starts = sure + 1 + (a[sure + 1] != 32)  # "<mark> " or "<mark><closer> "
    if not cpos.size:
        return starts, starts + 1
    extra_s, extra_e = [], []
    match, b = BOUNDARY_NL.match, buf.b
    lines = buf.line_of(cpos).tolist()
    k = 0
    while k < len(lines):
        li = lines[k]
        start, end = buf.span(li)
        raw = b[start:end]
        text = raw.decode("utf-8", "replace")
        aligned = len(text) == len(raw)  # one byte per character
        while k < len(lines) and lines[k] == li:
            off = int(cpos[k]) - start
            c = off if aligned else len(raw[:off].decode("utf-8", "replace"))
            m = match(text, c)
            if m is not None:  # the closer and the spaces are whole characters: re-encode
                gap = int(cpos[k]) + 1 + len(text[c + 1 : m.start(1)].encode("utf-8"))
                extra_s.append(gap)
                extra_e.append(gap + len(m.group(1).encode("utf-8")))
            k += 1
    order = np.argsort(np.concatenate((starts, extra_s)), kind="stable")
    return (
        np.concatenate((starts, extra_s)).astype(np.int64)[order],
        np.concatenate((starts + 1, extra_e)).astype(np.int64)[order],
    )


def split_sentences(text: str) -> list[str]:
    """The sentences of one paragraph (a line of the corpus), stripped.

    Examples
    --------
    >>> split_sentences("The cook left . He was late .")
    ['The cook left .', 'He was late .']
    >>> split_sentences("Dr. Smith met J. R. Doe in the U.S. Army. It rained.")
    ['Dr. Smith met J. R. Doe in the U.S. Army.', 'It rained.']
    """
    return [text[s:e] for s, e in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text.strip()`` in ``text`` (as split_sentences).

    >>> t = " The cook left . He was late . "
    >>> [t[s:e] for s, e in sentence_spans(t)] == split_sentences(t)
    True
    """
    stripped = text.strip()
    if not stripped:
        return []
    lead = len(text) - len(text.lstrip())
    out, start = [], 0
    for m in BOUNDARY.finditer(stripped):
        out.append((lead + start, lead + m.start(1)))
        start = m.end(1)
    out.append((lead + start, lead + len(stripped)))
    return out
