"""Checks of the public numeric functions' arguments, once, where they enter (scikit-learn's
``validate_params``): a constraint raises the house's one line for a bad value, and its
``normalise`` is the one conversion of an accepted value; :func:`check` does both.

>>> check(3, PositiveInt, "batch_size")
3
>>> check(0, PositiveInt, "batch_size")
Traceback (most recent call last):
...
biasamp._errors.BiasampError: batch_size must be a positive integer; got 0
>>> check("jsn", OneOf(("md", "json")), "format")
Traceback (most recent call last):
...
biasamp._errors.BiasampError: format must be one of 'md', 'json'; got 'jsn' (did you mean 'json'?)
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
import numbers
import unicodedata
from collections.abc import Callable, Iterable

from ._conventions import canonical_direction
from ._errors import BiasampError, UnknownNameError
from ._registry import Registry, did_you_mean

_SKIP = contextvars.ContextVar("biasamp_skip_validation", default=False)


class Constraint:
    """Base class: ``__call__(value, name)`` raises for a bad value; :meth:`normalise` gives
    the normal form of an accepted one (default: the value)."""

    def __call__(self, value, name: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def normalise(self, value):
        return value

    def fail(self, value, name: str, what: str, hint: str = ""):
        raise BiasampError(f"{name} must be {what}; got {value!r}{hint}")


class Integer(Constraint):
    """An integer (not a bool) ``>= low``."""

    def __init__(self, low: int):
        self.low = low

    def describe(self) -> str:
        words = {0: "a non-negative integer", 1: "a positive integer"}
        return words.get(self.low, f"an integer >= {self.low}")

    def __call__(self, value, name):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < self.low:
            self.fail(value, name, self.describe())

    def normalise(self, value):
        return int(value)


PositiveInt = Integer(1)


class Interval(Constraint):
    """A real number in an interval; ``closed`` is "neither", "left", "right" or "both"."""

    def __init__(self, low: float, high: float, closed: str = "neither"):
        self.low, self.high, self.closed = low, high, closed

    def describe(self) -> str:
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        return f"a number in {left}{self.low:g}, {self.high:g}{right}"

    def __call__(self, value, name):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self.fail(value, name, self.describe())
        v = float(value)
        ok_low = v >= self.low if self.closed in ("left", "both") else v > self.low
        ok_high = v <= self.high if self.closed in ("right", "both") else v < self.high
        if math.isnan(v) or not (ok_low and ok_high):
            self.fail(value, name, self.describe())

    def normalise(self, value):
        return float(value)


class OneOf(Constraint):
    """One of fixed choices, or one of a :class:`Registry`'s names (with "did you mean")."""

    def __init__(self, choices: Iterable[str] | Registry):
        self._choices = choices

    @property
    def choices(self) -> list:
        c = self._choices
        return c.names() if isinstance(c, Registry) else list(c)

    def __call__(self, value, name):
        choices = self.choices
        if value in choices and not isinstance(value, bool):
            return
        text = (
            f"{name} must be one of {', '.join(repr(c) for c in choices)}; got {value!r}"
            f"{did_you_mean(str(value), [str(c) for c in choices])}"
        )
        # an unknown registered name is an UnknownNameError (a BiasampError and a KeyError)
        raise (UnknownNameError if isinstance(self._choices, Registry) else BiasampError)(text)


class SubsetOf(OneOf):
    """A list (or comma-separated string) of at least ``min_size`` distinct choices."""

    def __init__(self, choices, min_size: int = 1):
        super().__init__(choices)
        self.min_size = min_size

    def __call__(self, value, name):
        Names(min_size=0, what="name")(value, name)
        items, choices = self.normalise(value), self.choices
        if len(items) < self.min_size:
            raise BiasampError(
                f"{name} must name at least {self.min_size} of "
                f"{', '.join(repr(c) for c in choices)}; got {value!r}"
            )
        for v in items:
            if v not in choices:
                raise BiasampError(
                    f"{name} must be some of {', '.join(repr(c) for c in choices)}; got {v!r}"
                    f"{did_you_mean(v, [str(c) for c in choices])}"
                )

    def normalise(self, value):
        return Names(min_size=0).normalise(value)


class Names(Constraint):
    """Distinct non-empty strings, from a list or a comma-separated string; ``what`` names an
    item in messages ("attribute")."""

    def __init__(self, min_size: int = 1, what: str = "name"):
        self.min_size, self.what = min_size, what

    def __call__(self, value, name):
        texts = [value] if isinstance(value, str) else value
        if (
            not isinstance(texts, Iterable)
            or isinstance(texts, (bytes, dict))
            or not all(isinstance(v, str) for v in texts)
        ):
            self.fail(value, name, "a list of strings or a comma-separated string")
        items = self.normalise(value)
        if "" in items:
            raise BiasampError(
                f"{name} must not hold an empty {self.what}; got {value!r} "
                f"(name {items.index('') + 1} is empty)"
            )
        dup = sorted({v for v in items if items.count(v) > 1})
        if dup:
            article = "an" if self.what[:1] in "aeiou" else "a"
            raise BiasampError(
                f"{name} must not repeat {article} {self.what}; got {value!r} ({dup[0]!r} repeats)"
            )
        if len(items) < self.min_size:
            n = "one" if self.min_size == 1 else str(self.min_size)
            raise BiasampError(
                f"{name} must name at least {n} {self.what}"
                f"{'' if self.min_size == 1 else 's'}; got {value!r}"
            )

    def normalise(self, value):
        """The names, stripped, from each string split at its commas; one trailing comma is
        allowed (``"a,"``), a blank string alone is no names, any other empty name stays
        ``""`` (for the check to refuse)."""
        if isinstance(value, str) and not value.strip():
            return []
        items = []
        for text in [value] if isinstance(value, str) else value:
            parts = [v.strip() for v in text.split(",")]
            items.extend(parts[:-1] if len(parts) > 1 and not parts[-1] else parts)
        return items


class _Is(Constraint):
    """A value ``test`` accepts, ``what`` in the message."""

    def __init__(self, test: Callable, what: str):
        self.test, self.what = test, what

    def __call__(self, value, name):
        if not self.test(value):
            self.fail(value, name, self.what)


NonEmptyStr = _Is(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string")
Bool = _Is(lambda v: isinstance(v, bool), "True or False")


class _Direction(Constraint):
    def __call__(self, value, name):
        canonical_direction(value, name)

    def normalise(self, value):
        return canonical_direction(value, "direction")


Direction = _Direction()


class Optional(Constraint):
    """``None`` or what ``inner`` accepts."""

    def __init__(self, inner: Constraint):
        self.inner = inner

    def __call__(self, value, name):
        if value is not None:
            self.inner(value, name)

    def normalise(self, value):
        return None if value is None else self.inner.normalise(value)


def check(value, constraint: Constraint, name: str):
    """Check one value against a constraint, then return its normal form."""
    constraint(value, name)
    return constraint.normalise(value)


def normalised(constraints: dict[str, Constraint], **values):
    """The normal form of each value (by the constraint of its name), in the order given;
    one value alone is returned as itself.

    >>> normalised({"tasks": Names(), "n": PositiveInt}, tasks="nurse, cook", n=3.0)
    (['nurse', 'cook'], 3)
    """
    out = tuple(constraints[k].normalise(v) for k, v in values.items())
    return out[0] if len(out) == 1 else out


#: Every function decorated with :func:`validate_params` (for the common test of messages).
VALIDATED: list[Callable] = []


def validate_params(constraints: dict[str, Constraint]) -> Callable:
    """Check a public function's arguments once, on entry (never rewritten: the function
    takes their normal form with :func:`normalised`); validated functions it calls skip
    theirs. The constraints are kept as ``__constraints__``."""

    def deco(fn):
        sig = inspect.signature(fn)
        unknown = set(constraints) - set(sig.parameters)
        if unknown:  # pragma: no cover - programming error
            raise TypeError(f"{fn.__name__}: constraints for unknown parameters {unknown}")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _SKIP.get():
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            for pname, constraint in constraints.items():
                if pname in bound.arguments:
                    constraint(bound.arguments[pname], pname)
            token = _SKIP.set(True)
            try:
                return fn(*args, **kwargs)
            finally:
                _SKIP.reset(token)

        wrapper.__constraints__ = dict(constraints)
        VALIDATED.append(wrapper)
        return wrapper

    return deco


def check_visible(text: str, where: str) -> None:
    """Refuse an invisible (format) character such as a zero-width space: a tokenizer turns it
    into pieces the reader never sees."""
    bad = next(((i, c) for i, c in enumerate(text) if unicodedata.category(c) == "Cf"), None)
    if bad is not None:
        i, c = bad
        name = unicodedata.name(c, "a format character")
        raise BiasampError(
            f"{where} holds an invisible character (U+{ord(c):04X} {name}, at position "
            f"{i + 1}) in {text!r}; remove it"
        )
