"""The ``RULES`` registry: counting-rule name -> :class:`CountingRule` subclass."""

from __future__ import annotations

from .._registry import Registry
from ._default import DefaultRule
from ._rule_base import CountingRule, Counts
from ._wang2021 import Wang2021Rule

__all__ = ["Counts", "CountingRule", "DefaultRule", "RULES", "Wang2021Rule"]

#: The counting rules: name -> :class:`CountingRule` subclass (see :mod:`biasamp.corpus`).
RULES = Registry("counting rule")
RULES.register("default", DefaultRule, description="case-insensitive whole words per sentence, "
               "plurals and multi-word occupations")
RULES.register("wang2021", Wang2021Rule, description="the BiasAmp-> paper's read_wiki2.py rule, "
               "exactly (substrings, case-sensitive words, '.'-pieces)")
