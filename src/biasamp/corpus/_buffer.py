"""A chunk of corpus text as UTF-8 bytes with its line structure (numpy, no decoding).

UTF-8 is self-synchronising, so counting ``.``/``=``/newlines and finding patterns on the
bytes equals doing it on the text.
"""

from __future__ import annotations

import codecs

import numpy as np


def _to_replacement_char(exc: UnicodeEncodeError):
    return b"\xef\xbf\xbd", exc.end  # U+FFFD (the encoder takes bytes, not non-ASCII str)


codecs.register_error("biasamp.replace", _to_replacement_char)


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of a text; lone surrogates (from JSON escapes) become U+FFFD.

    >>> encode_text("caf\\u00e9 \\ud800.")
    b'caf\\xc3\\xa9 \\xef\\xbf\\xbd.'
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "biasamp.replace")


# bytes for which str.isspace() is true (ASCII); non-ASCII bytes are decided on the text
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


class Buffer:
    """Newline-normalised bytes ``b`` (``\\r\\n`` / ``\\r`` -> ``\\n``), their uint8 view
    ``a`` and ``ends``: the offset of each line's ``\\n`` (``len(b)`` for a last line without).

    Examples
    --------
    >>> buf = Buffer(b"a=b\\r\\n\\ncd")
    >>> buf.b, buf.ends.tolist(), buf.n_lines, buf.line(2)
    (b'a=b\\n\\ncd', [3, 4, 7], 3, 'cd')
    >>> buf.lines_with(ord("=")).tolist(), buf.blank_lines().tolist()
    ([0], [False, True, False])
    """

    def __init__(self, b: bytes):
        if b"\r" in b:
            b = b.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.b = b
        self.a = np.frombuffer(b, dtype=np.uint8)
        ends = np.flatnonzero(self.a == 10)
        if b and b[-1] != 10:
            ends = np.append(ends, len(b))
        self.ends = ends
        self.n_lines = int(ends.size)

    @property
    def starts(self) -> np.ndarray:
        """Offset of each line's first byte, shape (n_lines,)."""
        return np.concatenate(([0], self.ends[:-1] + 1)) if self.n_lines else self.ends

    def line_of(self, pos: np.ndarray) -> np.ndarray:
        """Line index of each offset (a line's ``\\n`` belongs to it)."""
        return np.searchsorted(self.ends, pos)

    def span(self, i: int) -> tuple[int, int]:
        """``(start, end)`` of line ``i`` without its newline."""
        return (int(self.ends[i - 1]) + 1 if i else 0), int(self.ends[i])

    def line(self, i: int) -> str:
        """Line ``i`` decoded (with its ``\\n`` when it has one)."""
        start, end = self.span(i)
        return self.b[start : end + 1].decode("utf-8", "replace")

    def lines_with(self, byte: int) -> np.ndarray:
        """Sorted indices of the lines containing ``byte`` (an ASCII code)."""
        lines = self.line_of(np.flatnonzero(self.a == byte))  # sorted, with repeats
        return lines[np.concatenate(([True], lines[1:] != lines[:-1]))] if lines.size else lines

    def stripped_edges(self, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first, last, sure) of non-blank lines: offsets of the first and last non-space
        byte; ``sure`` False where a non-ASCII byte or a long run of spaces came first.

        >>> buf = Buffer(b" = T = \\n\\t=\\n\\xc2\\xa0= =\\n")
        >>> [x.tolist() for x in buf.stripped_edges(np.arange(3))]
        [[1, 9, 11], [5, 9, 15], [True, True, False]]
        """
        sure = np.ones(lines.size, dtype=bool)
        edges = []
        for step, pos in ((1, self.starts[lines]), (-1, self.ends[lines] - 1)):
            pos = pos.copy()
            todo = np.arange(lines.size)
            for _ in range(8):
                c = self.a[pos[todo]]
                sure[todo[c >= 128]] = False
                todo = todo[_ASCII_SPACE[c]]
                if not todo.size:
                    break
                pos[todo] += step
            sure[todo] = False
            edges.append(pos)
        return edges[0], edges[1], sure

    def blank_lines(self) -> np.ndarray:
        """Boolean (n_lines,): the line has only whitespace (``not line.strip()``); a line
        starting with a non-ASCII byte or a long run of spaces is decided on its text."""
        starts, ends = self.starts, self.ends
        blank = ends == starts
        todo = np.flatnonzero(~blank)
        on_text = []
        for k in range(8):
            if not todo.size:
                break
            pos = starts[todo] + k
            at_end = pos >= ends[todo]
            blank[todo[at_end]] = True
            todo, pos = todo[~at_end], pos[~at_end]
            c = self.a[pos]
            on_text.append(todo[c >= 128])
            todo = todo[_ASCII_SPACE[c]]  # spaces so far; an ASCII non-space decides
        on_text.append(todo)
        for i in np.concatenate(on_text).tolist():
            blank[i] = not self.line(i).strip()
        return blank
