"""Masked-LM scoring: probabilities of candidate fillers for a blank in a prompt.

This subpackage is the only part of biasamp that imports torch and transformers, and it does so
lazily: ``import biasamp.scoring`` is light; torch is imported when a :class:`MaskedLMScorer` is
built (or :func:`audit_candidates` loads a tokenizer).

Estimators (``scoring=``, see :data:`SCORING_MODES`):

``"word"`` (default)
    All word pieces of a candidate. A candidate of ``m`` pieces replaces the blank by ``m`` mask
    tokens and is scored left to right by the chain rule,
    ``log P = sum_t log P(piece_t | context, pieces < t filled, pieces > t masked)``.
``"first-piece"``
    FitBERT 0.10.0 ``rank``: one mask token, softmax over the vocabulary at the mask, each
    candidate scored by its first piece (a warning names split candidates).
``"pll"``
    Pseudo-log-likelihood of the whole filled sentence (Salazar et al. 2020): every token masked
    in turn, log probabilities summed.

References
----------
Wang & Russakovsky (2021), "Directional Bias Amplification", ICML (FitBERT probing, section 5).
Salazar, Liang, Nguyen & Kirchhoff (2020), "Masked Language Model Scoring", ACL.

Examples
--------
>>> from biasamp.scoring import SCORING_MODES
>>> SCORING_MODES
('word', 'first-piece', 'pll')
"""

from __future__ import annotations

import importlib

from .._registry import Registry

#: The estimators accepted by ``MaskedLMScorer.score(..., scoring=...)``.
ESTIMATORS = Registry("scoring mode")
ESTIMATORS.register("word", "masked", description="all word pieces, chain rule left to right")
ESTIMATORS.register("first-piece", "masked",
                    description="FitBERT: the first piece at a single mask (compat)")
ESTIMATORS.register("pll", "masked",
                    description="pseudo-log-likelihood of the filled sentence")
#: Names of the estimators, in order.
SCORING_MODES = tuple(ESTIMATORS.names())
#: Weight dtypes a scorer accepts, and accepted short spellings.
DTYPES = ("float32", "bfloat16", "float16")
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}


def canonical_dtype(dtype, param: str = "dtype") -> str:
    """The dtype's name in :data:`DTYPES` (``None`` -> float32; aliases such as ``bf16``).

    >>> canonical_dtype("bf16")
    'bfloat16'
    """
    from .._validation import OneOf, check

    if dtype is None:
        return "float32"
    text = str(dtype).replace("torch.", "") if not isinstance(dtype, str) else dtype
    return check(DTYPE_ALIASES.get(text, text), OneOf(DTYPES), param)


_LAZY = {
    "MaskedLMScorer": "biasamp.scoring._scorer",
    "ScoreResult": "biasamp.scoring._result",
    "audit_candidates": "biasamp.scoring._audit",
    "check_model": "biasamp.scoring._load",
    "check_score_inputs": "biasamp.scoring._spans",
    "score_sentence_pairs": "biasamp.scoring._pairs",
}

__all__ = [
    "DTYPES",
    "DTYPE_ALIASES",
    "ESTIMATORS",
    "MaskedLMScorer",
    "SCORING_MODES",
    "ScoreResult",
    "audit_candidates",
    "canonical_dtype",
    "check_model",
    "check_score_inputs",
    "score_sentence_pairs",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'biasamp.scoring' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
