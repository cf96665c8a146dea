"""Validation (biasamp._validation): every validated public function refuses a bad value of
each checked parameter with the house message, checks never rewrite an argument, and a call
from inside another validated function (whose checks are skipped) gets the same values."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import biasamp
from biasamp import BiasampError
from biasamp._validation import (
    VALIDATED,
    Bool,
    Direction,
    Integer,
    Interval,
    Names,
    NonEmptyStr,
    OneOf,
    Optional,
    PositiveInt,
    SubsetOf,
    check,
    normalised,
    validate_params,
)

# importing the packages registers their validated functions
for _module in (
    "biasamp.pipeline",
    "biasamp.report",
    "biasamp.corpus",
    "biasamp.pairs",
    "biasamp.base_rates",
):
    importlib.import_module(_module)


def _good(constraint, name):
    """A value ``constraint`` accepts (None where it is optional)."""
    if isinstance(constraint, Optional):
        return None
    if isinstance(constraint, Integer):
        return max(constraint.low or 0, 1)
    if isinstance(constraint, Interval):
        return (constraint.low + constraint.high) / 2
    if isinstance(constraint, SubsetOf):
        return [constraint.choices[0]]
    if isinstance(constraint, OneOf):
        return constraint.choices[0]
    if constraint in (Bool,):
        return True
    if constraint is NonEmptyStr:
        return "x"
    if constraint is Direction:
        return "attribute_to_task"
    if isinstance(constraint, Names) or "tasks" in name or "attributes" in name:
        return ["nurse", "cook"]
    raise AssertionError(f"no example value for {constraint!r}")  # pragma: no cover


def _cases():
    for fn in VALIDATED:
        if fn.__module__.startswith("biasamp.") and not fn.__name__.startswith("_"):
            for name in fn.__constraints__:
                yield pytest.param(fn, name, id=f"{fn.__qualname__}-{name}")


@pytest.mark.parametrize("fn, name", list(_cases()))
def test_each_validated_function_names_the_parameter_and_the_value(fn, name):
    sig = inspect.signature(fn)
    args = {}
    for p in sig.parameters.values():
        if p.name in fn.__constraints__:
            args[p.name] = _good(fn.__constraints__[p.name], p.name)
        elif p.default is inspect.Parameter.empty and p.kind not in (
            p.VAR_POSITIONAL,
            p.VAR_KEYWORD,
        ):
            args[p.name] = None  # never read: the checks come first
    bad = object()
    args[name] = bad
    with pytest.raises(BiasampError) as err:
        fn(**args)
    message = str(err.value)
    assert message.startswith(f"{name} "), message  # the house message: the parameter first
    assert repr(bad) in message or "got" in message, message
    assert "\n" not in message


def test_the_public_functions_are_all_listed():
    names = {f.__qualname__ for f in VALIDATED}
    assert {
        "evaluate_tables",
        "BaseRateSource.table",
        "render",
        "build_report",
        "compare_dirs",
        "count_text",
        "count_cooccurrences",
        "score_pairs",
    } <= names


def test_a_check_never_rewrites_an_argument():
    seen = {}

    @validate_params({"tasks": Names(), "n": PositiveInt, "d": Optional(Direction)})
    def f(tasks, n, d=None):
        seen.update(tasks=tasks, n=n, d=d)

    f("nurse, cook", 3, d="A->T")
    assert seen == {"tasks": "nurse, cook", "n": 3, "d": "A->T"}


def test_a_nested_call_gets_the_same_values_as_an_outer_one():
    # BaseRateSource.table called from inside a validated function skips its checks; it used
    # to skip its normalisation too, and split "nurse,janitor" into single letters
    from biasamp.base_rates import get_source

    src = get_source("labor-2016")
    outside = src.table("nurse,janitor", "he,she")

    @validate_params({"n": PositiveInt})
    def outer(n):
        return src.table("nurse,janitor", "he,she", direction="A->T")

    inside = outer(1)
    assert list(inside.joint.index) == list(outside.joint.index) == ["nurse", "janitor"]
    assert list(inside.joint.columns) == ["he", "she"]
    assert inside.joint.equals(outside.joint)


@pytest.mark.parametrize(
    "constraint, value, normal",
    [
        (Names(), "a, b,", ["a", "b"]),
        (Names(), ["a,b", "c"], ["a", "b", "c"]),
        (Names(min_size=0), "", []),
        (SubsetOf(("md", "html")), "md,html", ["md", "html"]),
        (Integer(0), True.__class__(1) + 1, 2),
        (Interval(0.0, 1.0), 1 / 2, 0.5),
        (Direction, "t->a", "task_to_attribute"),
        (Optional(Direction), None, None),
        (Names(), ["a", " b ,"], ["a", "b"]),
    ],
)
def test_a_constraint_checks_and_normalise_converts(constraint, value, normal):
    assert constraint(value, "p") is None  # a predicate: it returns nothing
    assert constraint.normalise(value) == normal == check(value, constraint, "p")


@pytest.mark.parametrize(
    "value, message",
    [
        ("a,,b", r"^p must not hold an empty name; got 'a,,b' \(name 2 is empty\)$"),
        (["a", "b, "], None),  # one trailing comma is allowed
        (["a", "b,", " "], r"^p must not hold an empty name; got .* \(name 3 is empty\)$"),
        (["a", 1], r"^p must be a list of strings or a comma-separated string; got \['a', 1\]$"),
        ({"a": 1}, r"^p must be a list of strings"),
        ("a,b,a", r"^p must not repeat a name; got 'a,b,a' \('a' repeats\)$"),
        ("", r"^p must name at least one name; got ''$"),
    ],
)
def test_names_refuse_what_their_normal_form_cannot_hold(value, message):
    if message is None:
        assert check(value, Names(), "p") == ["a", "b"]
    else:
        with pytest.raises(BiasampError, match=message):
            Names()(value, "p")


def test_normalised_converts_in_the_order_given():
    assert normalised({"tasks": Names(), "n": PositiveInt}, tasks="nurse, cook", n=3) == (
        ["nurse", "cook"],
        3,
    )
    assert normalised({"d": Direction}, d="A->T") == "attribute_to_task"


def test_the_package_checks_at_the_boundary_with_one_line():
    with pytest.raises(
        BiasampError, match=re.escape("n_resamples must be a positive integer; got 0")
    ):
        biasamp.evaluate_tables(
            [[[1.0]]], [[[1.0]]], ["a", "b"], ["he", "she"], ["uniform"], n_resamples=0
        )
