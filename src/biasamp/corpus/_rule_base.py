"""The protocol of a counting rule, the attribute word groups, and the checks of the words."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from .._errors import BiasampError
from .._validation import Constraint
from ._buffer import Buffer

#: ``(counts of shape (n_tasks, n_groups), n_lines, n_sentences, n_kept)``
Counts = tuple[np.ndarray, int, int, int]

_BUILT: dict = {}


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
    key = (cls, tuple(tasks), tuple((k, tuple(v)) for k, v in groups.items()), plurals, matcher)
    rule = _BUILT.get(key)
    if rule is None:
        if len(_BUILT) > 16:
            _BUILT.clear()
        rule = _BUILT[key] = cls(tasks, groups, plurals, matcher)
    return rule


class CountingRule(abc.ABC):
    """Compiled matchers of one rule for checked ``tasks`` (rows), word ``groups`` (columns),
    ``plurals`` (rules with ``uses_plurals`` only) and ``matcher`` (a :data:`MATCHERS` name;
    speed only)."""

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
            raise BiasampError(
                f"{name} must be a list of occupation names, not a string; got {value!r}"
            )
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
            raise BiasampError(
                f"{name} must be a non-empty mapping attribute -> words; got {value!r}"
            )
        for attr, words in value.items():
            if isinstance(words, str) or not words or not all(str(w).strip() for w in words):
                raise BiasampError(
                    f"{name}[{attr!r}] must be a non-empty list of words; got {words!r}"
                )

    def normalise(self, value):
        return {str(a): tuple(str(w) for w in words) for a, words in value.items()}


TaskList = _TaskList()
WordGroups = _WordGroups()
