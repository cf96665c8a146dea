"""The counting machinery: text as UTF-8 bytes with its line structure (:class:`Buffer`), the
protocol of a counting rule, the attribute word groups and the checks of the words."""

from __future__ import annotations

import abc
import codecs
import functools
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from .._errors import BiasampError
from .._validation import Constraint


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


# UTF-8 is self-synchronising: finding bytes and patterns on the bytes equals doing it on the text
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


#: ``(counts of shape (n_tasks, n_groups), n_lines, n_sentences, n_kept)``
Counts = tuple[np.ndarray, int, int, int]


class ByteTicker:
    """Tells ``on_bytes(n)`` (if not None) how far a count has gone in a chunk of ``size``
    bytes: at most once per ``step`` bytes (:meth:`at`), the rest at the end (:meth:`done`).

    >>> got = []
    >>> tick = ByteTicker(got.append, 10, step=4)
    >>> for pos in (1, 5, 6, 9):
    ...     tick.at(pos)
    >>> tick.done()
    >>> got
    [5, 4, 1]
    """

    def __init__(self, on_bytes, size: int, *, step: int = 1 << 20):
        self.on_bytes, self.size, self.step, self.sent = on_bytes, size, step, 0

    def at(self, pos: int) -> None:
        if self.on_bytes is not None and pos - self.sent >= self.step:
            self.on_bytes(pos - self.sent)
            self.sent = pos

    def done(self) -> None:
        if self.on_bytes is not None and self.size > self.sent:
            self.on_bytes(self.size - self.sent)
            self.sent = self.size


def _rebuild(cls, tasks, groups, plurals, matcher):  # noqa: PLR0917 - pickle: CountingRule.__reduce__'s arguments
    """The rule, built once per process and configuration (Dask tasks unpickle it often)."""
    return _built(
        cls, tuple(tasks), tuple((k, tuple(v)) for k, v in groups.items()), plurals, matcher
    )


@functools.lru_cache(maxsize=16)
def _built(cls, tasks, groups, plurals, matcher):  # noqa: PLR0917 - _rebuild's, hashable
    return cls(list(tasks), dict(groups), plurals, matcher)


class CountingRule(abc.ABC):
    """Compiled matchers of one rule for checked ``tasks`` (rows), word ``groups`` (columns),
    ``plurals`` (rules with ``uses_plurals`` only) and ``matcher`` (speed only)."""

    #: Word groups used when none are given.
    default_groups: ClassVar[Mapping[str, tuple[str, ...]]]
    #: Whether ``plurals`` changes what the rule counts (recorded in the provenance).
    uses_plurals: ClassVar[bool] = False
    #: Whether a line's final newline is part of what the rule sees (wang2021's last piece).
    newline_matters: ClassVar[bool] = False

    def __init__(
        self,
        tasks: Sequence[str],
        groups: Mapping[str, Sequence[str]],
        plurals: bool = True,
        matcher: str | None = None,
    ):
        self.tasks = list(tasks)
        self.groups = {k: tuple(v) for k, v in groups.items()}
        self.plurals = plurals
        self.matcher = matcher
        self.n_tasks, self.n_groups = len(self.tasks), len(self.groups)

    def __reduce__(self):  # rebuilt (recompiled) where unpickled, once per process
        return (_rebuild, (type(self), self.tasks, self.groups, self.plurals, self.matcher))

    def count(self, lines: Sequence[str], *, fast: bool = True) -> Counts:
        """(counts, n_lines, n_sentences, n_kept) of a list of lines, used as given: through
        :meth:`count_bytes` when joining them loses nothing, else (or with ``fast=False``)
        through the plain line-by-line reference."""
        lines = list(lines)
        joined = self._joined(lines) if fast and lines else None
        if joined is None:
            return self._count_plain(lines)
        return self.count_bytes(joined)

    def _joined(self, lines: list[str]) -> bytes | None:
        """The lines as one UTF-8 text whose lines are exactly them, or None."""
        last = len(lines) - 1
        parts = []
        for i, line in enumerate(lines):
            body = line[:-1] if line.endswith("\n") else line
            if "\n" in body or "\r" in body:
                return None
            if not line.endswith("\n"):
                if self.newline_matters and (i != last or not line):
                    return None
                line = line + "\n" if not self.newline_matters else line
            parts.append(line)
        try:
            return "".join(parts).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: only the plain path sees them as they are
            return None

    def count_bytes(self, b: bytes, on_bytes=None) -> Counts:
        """Count a chunk of raw UTF-8 text; ``on_bytes(n)``, when given, is told the bytes as
        the count passes them (:class:`ByteTicker`)."""
        buf, tick, counts = Buffer(b), ByteTicker(on_bytes, len(b)), self._zeros()
        n_sent, kept = self._count_buffer(buf, counts, tick) if buf.n_lines else (0, 0)
        tick.done()
        return counts, buf.n_lines, n_sent, kept

    @abc.abstractmethod
    def _count_buffer(self, buf: Buffer, counts: np.ndarray, tick: ByteTicker) -> tuple[int, int]:
        """Add the counts of a buffer of at least one line; return (n_sentences, n_kept)."""

    @abc.abstractmethod
    def match(self, sentence: str) -> tuple[int, int] | None:
        """(task index, group index) of one sentence, or None when it is not counted."""

    @abc.abstractmethod
    def _count_plain(self, lines: list[str]) -> Counts:
        """Count line by line (the reference implementation)."""

    def _zeros(self) -> np.ndarray:
        return np.zeros((self.n_tasks, self.n_groups), dtype=np.int64)


def tally(counts: np.ndarray, pair: tuple[int, int] | None) -> int:
    """Count a decided sentence's (task, group) ``pair`` (None: not counted); 1 if counted."""
    if pair is None:
        return 0
    counts[pair] += 1
    return 1


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


class _TaskList(Constraint):
    """Distinct, non-blank occupation names (normal form: a list of str)."""

    def __call__(self, value, name):
        if isinstance(value, str):
            self.fail(value, name, "a list of occupation names, not a string")
        try:
            tasks = self.normalise(value)
        except TypeError:
            raise BiasampError(
                f"{name} must be a list of occupation names; got {value!r}"
            ) from None
        if not tasks:
            raise BiasampError(f"{name} must not be empty; got []")
        dup = sorted({t for t in tasks if tasks.count(t) > 1})
        if dup:
            raise BiasampError(f"{name} must be unique; got duplicates {dup}")
        if any(not t.strip() for t in tasks):
            raise BiasampError(f"{name} must be non-empty words; got {tasks!r}")

    def normalise(self, value):
        return [str(t) for t in value]


class _WordGroups(Constraint):
    """A non-empty mapping attribute -> non-empty words (normal form: dict str -> tuple)."""

    def __call__(self, value, name):
        if not isinstance(value, Mapping) or not value:
            self.fail(value, name, "a non-empty mapping attribute -> words")
        for attr, words in value.items():
            if isinstance(words, str) or not words or not all(str(w).strip() for w in words):
                self.fail(words, f"{name}[{attr!r}]", "a non-empty list of words")

    def normalise(self, value):
        return {str(a): tuple(str(w) for w in words) for a, words in value.items()}


TaskList = _TaskList()
WordGroups = _WordGroups()
