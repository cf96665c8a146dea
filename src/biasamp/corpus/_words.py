"""The attribute word groups and the checks of the words given to the counters."""

from __future__ import annotations

from collections.abc import Mapping

from .._errors import BiasampError
from .._validation import Constraint

__all__ = ["DEFAULT_WORD_GROUPS", "THEY_WORDS", "TaskList", "WANG2021_WORD_GROUPS",
           "WordGroups"]

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


class _TaskList(Constraint):
    """Distinct, non-blank occupation names (returned as a list of str)."""

    def __call__(self, value, name):
        if isinstance(value, str):
            raise BiasampError(
                f"{name} must be a list of occupation names, not a string; got {value!r}")
        try:
            tasks = [str(t) for t in value]
        except TypeError:
            raise BiasampError(f"{name} must be a list of occupation names; got {value!r}"
                               ) from None
        if not tasks:
            raise BiasampError(f"{name} must not be empty; got []")
        dup = sorted({t for t in tasks if tasks.count(t) > 1})
        if dup:
            raise BiasampError(f"{name} must be unique; got duplicates {dup}")
        if any(not t.strip() for t in tasks):
            raise BiasampError(f"{name} must be non-empty words; got {tasks!r}")
        return tasks

    def normalise(self, value):
        return [str(t) for t in value]


class _WordGroups(Constraint):
    """A non-empty mapping attribute -> non-empty words (returned as dict str -> tuple)."""

    def __call__(self, value, name):
        if not isinstance(value, Mapping) or not value:
            raise BiasampError(
                f"{name} must be a non-empty mapping attribute -> words; got {value!r}")
        groups = {}
        for attr, words in value.items():
            if isinstance(words, str) or not words or not all(str(w).strip() for w in words):
                raise BiasampError(
                    f"{name}[{attr!r}] must be a non-empty list of words; got {words!r}")
            groups[str(attr)] = tuple(str(w) for w in words)
        return groups

    def normalise(self, value):
        return {str(a): tuple(str(w) for w in words) for a, words in value.items()}


TaskList = _TaskList()
WordGroups = _WordGroups()
