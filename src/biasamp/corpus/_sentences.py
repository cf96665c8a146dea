"""Sentences of the default rule: the splitter, its boundary regexes and a vectorised count.

A boundary is the whitespace after ``.``/``!``/``?`` (optionally followed by a closing quote
or bracket) that precedes an upper-case letter, a digit or an opening quote, unless the
period ends an initial (``J.``, ``U.S.``) or a listed abbreviation (``Dr.``).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["BOUNDARY", "BOUNDARY_NL", "HEADING", "count_boundaries", "count_sentences",
           "split_sentences"]

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
BOUNDARY = re.compile(
    r"[.!?](?:(?<=[^A-Za-z][.!?])|(?<!\b[A-Z]\.)" + _NOT_AFTER + r")"
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


_T_PUNCT = _class_table(".!?")
_T_ALPHA = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_T_CAP_DIGIT = _class_table("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# bytes after "<punct> " that need the full regex: quotes/brackets, more whitespace, non-ASCII
_T_COMPLEX_AFTER_SPACE = _class_table("\"'([ \t\x0b\x0c\r") | (np.arange(256) >= 128)
# bytes right after the punctuation that may start the regex's tail: closing quotes or
# brackets, whitespace other than a plain space or newline, or non-ASCII (Unicode quotes/spaces)
_T_COMPLEX_NEXT = _class_table("\"')]\t\x0b\x0c\r\x1c\x1d\x1e\x1f") | (np.arange(256) >= 128)


def count_boundaries(text: str, b: bytes) -> int:
    """``len(BOUNDARY_NL.findall(text))``, vectorised (``b`` = ``text`` in UTF-8).

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
        match = BOUNDARY_NL.match
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
    for m in BOUNDARY.finditer(text):
        out.append(text[start:m.start(1)])
        start = m.end(1)
    out.append(text[start:])
    return out


def count_sentences(text: str) -> int:
    """``len(split_sentences(text))`` without building the sentences."""
    text = text.strip()
    if not text:
        return 0
    return 1 + len(BOUNDARY.findall(text))
