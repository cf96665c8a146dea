"""Scoring sentence pairs with a masked or a causal language model: :func:`score_pairs`."""

from __future__ import annotations

import datetime as _dt
import platform

import numpy as np
import pandas as pd

from .._conventions import CONFIDENCE, MODEL_TYPES, N_RESAMPLES
from .._errors import BiasampError
from .._memory import check_memory
from .._schema import ModelInfo, ScorerInfo
from .._validation import (
    Integer,
    Interval,
    NonEmptyStr,
    OneOf,
    Optional,
    PositiveInt,
    validate_params,
)
from ._io import PairsBootstrap, PairsProvenance, load_pairs
from ._metric import SCORE_COLUMNS, PairResult, pair_summary, preferences

__all__ = ["score_pairs"]


#: What the scores of each model type are (``provenance.scorer.estimator``).
ESTIMATORS = {
    "masked": "pseudo-log-likelihood of the shared tokens, one mask at a time "
    "(Nangia et al. 2020); scores rounded to 3 decimals to compare",
    "causal": "log-likelihood of the whole sentence after the context token, every token "
    "summed (lm-evaluation-harness' crows_pairs); scores rounded to 3 decimals to compare "
    "for the metric score, unrounded for pct_stereotype",
}


@validate_params(
    {
        "n_resamples": PositiveInt,
        "seed": Integer(0),
        "confidence": Interval(0.0, 1.0),
        "max_pairs": Optional(PositiveInt),
        "model_type": OneOf(MODEL_TYPES),
        "context_token": Optional(NonEmptyStr),
    }
)
def score_pairs(
    pairs,
    model,
    *,
    bias_types=None,
    max_pairs: int | None = None,
    options=None,
    model_type: str = "auto",
    context_token: str | None = None,
    progress=False,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> PairResult:
    """Score sentence pairs as CrowS-Pairs does and summarise them.

    A masked LM (Nangia et al. 2020): each sentence is scored by the pseudo-log-likelihood of
    the tokens the two sentences of its pair share, masked one at a time
    (:meth:`biasamp.scoring.MaskedLMScorer.score_pairs`). A causal LM (as
    lm-evaluation-harness' ``crows_pairs`` tasks): by the log-likelihood of the whole sentence
    after the context token (:meth:`biasamp.scoring.CausalLMScorer.score_sentences`), and the
    summary adds the harness's ``pct_stereotype`` and ``likelihood_diff``. Either way the model
    prefers the more stereotypical sentence when its score is higher (both rounded to 3
    decimals).

    Parameters
    ----------
    pairs : str, path-like or PairSet
        ``"crows-pairs"``, a CSV/TSV/JSON/JSONL file (see :func:`load_pairs`) or pairs.
    model : str, path-like, MaskedLMScorer or CausalLMScorer
        A language model (hub id or folder) or a scorer already loaded.
    bias_types : list of str, optional
        Only these bias types.
    max_pairs : int, optional
        Only the first pairs (quick runs).
    options : biasamp.scoring.LoadOptions, optional
        How the model is loaded (:func:`biasamp.scoring.load_scorer`; ignored for a scorer).
    model_type : {"auto", "masked", "causal"}
        ``auto``: from the model's ``config.json`` (a scorer's own type, if given, must be it).
    context_token : str, optional
        Causal LMs: the token read before each sentence (default: the model's document
        start, :func:`biasamp.scoring.choose_context`); not with a scorer (it has its own).
    progress : bool or biasamp._progress.Progress
        Where the stages (``scoring pairs``, ``bootstrap``) and their counts are reported:
        a reporter, True for the standard display on stderr, False (default) for none. A
        scorer given keeps its own.
    n_resamples, seed, confidence
        Percentile bootstrap over pairs for every share.

    Returns
    -------
    PairResult
    """
    pset = load_pairs(pairs).select(bias_types=bias_types, max_pairs=max_pairs)
    # the bootstrap of the largest group (all pairs): drawn indices, values and the mean's
    # temporaries, about 14.5 bytes per (replicate, pair) measured; checked before the model
    check_memory(
        16 * n_resamples * len(pset.pairs),
        "n_resamples",
        n_resamples,
        f"for the bootstrap over {len(pset.pairs)} pairs",
    )
    scorer = _scorer(
        model, options, model_type=model_type, context_token=context_token, progress=progress
    )
    df = pset.pairs
    more, less = df["sent_more"].tolist(), df["sent_less"].tolist()
    causal = scorer.model_type == "causal"
    if causal:
        s_more, s_less, n_shared, n_contexts, n_run = _score_causal(scorer, more, less)
    else:
        anti = (df["direction"] == "antistereo").to_numpy()
        s_more, s_less, n_shared, n_contexts, n_run = _score_masked(scorer, more, less, anti)
    pref, neutral = preferences(s_more, s_less)
    scores = pd.DataFrame(
        {
            "pair_id": df["pair_id"],
            "bias_type": df["bias_type"],
            "direction": df["direction"],
            "sent_more": more,
            "sent_less": less,
            "score_more": s_more,
            "score_less": s_less,
            "n_shared": n_shared,
            "more_preferred": pref,
            "neutral": neutral,
        },
        columns=list(SCORE_COLUMNS),
    )
    summary = pair_summary(
        scores,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        log_likelihoods=causal,
        progress=scorer.progress,
    )
    if progress is True and scorer is not model:  # the display made here
        scorer.progress.close()
    sprov = dict(scorer.provenance)
    prov = PairsProvenance(
        model=ModelInfo.of_scorer(sprov, name=sprov["model"]),
        scorer=ScorerInfo.of_scorer(sprov, estimator=ESTIMATORS[scorer.model_type]),
        pairs=pset.provenance,
        bootstrap=PairsBootstrap(
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
            method="percentile bootstrap over the pairs of each group",
        ),
        n_contexts=n_contexts,
        n_contexts_run=n_run,
        forward_calls=scorer.n_forward_calls,
        versions=sprov["versions"],
        platform=platform.platform(),
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    return PairResult(scores, summary, prov)


def _scorer(model, options, *, model_type, context_token, progress):
    """The scorer given, or the model's (masked or causal), loaded with ``options``."""
    from ..scoring import CausalLMScorer, MaskedLMScorer, load_scorer, resolve_model

    if isinstance(model, (MaskedLMScorer, CausalLMScorer)):
        if context_token is not None or model_type not in ("auto", model.model_type):
            raise BiasampError(
                f"model is a {model.model_type} scorer already loaded: its type and context "
                f"token are its own; got model_type {model_type!r}, context_token "
                f"{context_token!r}"
            )
        return model
    resolved = resolve_model(model, model_type, options=options)
    extra = {}
    if resolved.model_type == "causal":
        extra = {"context_token": context_token}
    elif context_token is not None:
        raise BiasampError(
            f"context_token is for causal language models; model {str(model)!r} is a "
            f"{resolved.model_type} language model ({resolved.evidence})"
        )
    return load_scorer(resolved, options, progress=progress, **extra)


def _score_masked(scorer, more, less, anti):
    """Nangia et al.'s scores: the shared tokens' pseudo-log-likelihood in each sentence."""
    # Nangia et al. align from the stereotypical sentence: sent_more of a stereo pair,
    # sent_less of an antistereo pair
    first = [b if a else m for m, b, a in zip(more, less, anti)]
    second = [m if a else b for m, b, a in zip(more, less, anti)]
    n_run = scorer.count_pair_contexts(first, second)  # the total before the first step
    scorer.progress.stage("scoring pairs", n_run, "ctx")
    s, n_shared = scorer.score_pairs(first, second)
    s_more = np.where(anti, s[:, 1], s[:, 0])
    s_less = np.where(anti, s[:, 0], s[:, 1])
    return s_more, s_less, n_shared, int(2 * n_shared.sum()), int(n_run)


def _score_causal(scorer, more, less):
    """Whole-sentence log-likelihoods after the context token (lm-evaluation-harness'
    crows_pairs); ``n_shared`` is a masked LM's (missing here)."""
    texts = more + less
    n_run = scorer.count_sentences(texts)
    scorer.progress.stage("scoring pairs", n_run, scorer.count_unit)
    ll = scorer.score_sentences(texts)
    n = len(more)
    return ll[:n], ll[n:], pd.array([pd.NA] * n, dtype="Int64"), len(texts), int(n_run)
