"""Scoring sentence pairs with a masked language model: :func:`score_pairs`."""

from __future__ import annotations

import datetime as _dt
import platform

import numpy as np
import pandas as pd

from .._conventions import CONFIDENCE, N_RESAMPLES
from .._memory import check_memory
from .._schema import ModelInfo, ScorerInfo
from .._validation import Integer, Interval, Optional, PositiveInt, validate_params
from ._io import PairsBootstrap, PairsProvenance, load_pairs
from ._metric import SCORE_COLUMNS, PairResult, pair_summary, preferences

__all__ = ["score_pairs"]


@validate_params(
    {
        "n_resamples": PositiveInt,
        "seed": Integer(0),
        "confidence": Interval(0.0, 1.0),
        "max_pairs": Optional(PositiveInt),
    }
)
def score_pairs(
    pairs,
    model,
    *,
    bias_types=None,
    max_pairs: int | None = None,
    options=None,
    progress=False,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> PairResult:
    """Score sentence pairs as CrowS-Pairs does (Nangia et al. 2020) and summarise them.

    Each sentence is scored by the pseudo-log-likelihood of the tokens the two sentences of
    its pair share, masked one at a time (:meth:`biasamp.scoring.MaskedLMScorer.score_pairs`);
    the model prefers the more stereotypical sentence when its score is higher (both
    rounded to 3 decimals).

    Parameters
    ----------
    pairs : str, path-like or PairSet
        ``"crows-pairs"``, a CSV/TSV/JSON/JSONL file (see :func:`load_pairs`) or pairs.
    model : str, path-like or MaskedLMScorer
        A masked LM (hub id or folder) or a scorer already loaded.
    bias_types : list of str, optional
        Only these bias types.
    max_pairs : int, optional
        Only the first pairs (quick runs).
    options : biasamp.scoring.LoadOptions, optional
        How the model is loaded (:func:`biasamp.scoring.load_scorer`; ignored for a scorer).
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
    from ..scoring import MaskedLMScorer, load_scorer

    scorer = (
        model
        if isinstance(model, MaskedLMScorer)
        else load_scorer(model, options, model_type="masked", progress=progress)
    )
    df = pset.pairs
    anti = (df["direction"] == "antistereo").to_numpy()
    more, less = df["sent_more"].tolist(), df["sent_less"].tolist()
    # Nangia et al. align from the stereotypical sentence: sent_more of a stereo pair,
    # sent_less of an antistereo pair
    first = [b if a else m for m, b, a in zip(more, less, anti)]
    second = [m if a else b for m, b, a in zip(more, less, anti)]
    n_run = scorer.count_pair_contexts(first, second)  # the total before the first step
    scorer.progress.stage("scoring pairs", n_run, "ctx")
    s, n_shared = scorer.score_pairs(first, second)
    s_more = np.where(anti, s[:, 1], s[:, 0])
    s_less = np.where(anti, s[:, 0], s[:, 1])
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
        scores, n_resamples=n_resamples, seed=seed, confidence=confidence, progress=scorer.progress
    )
    if progress is True and scorer is not model:  # the display made here
        scorer.progress.close()
    sprov = dict(scorer.provenance)
    prov = PairsProvenance(
        model=ModelInfo.of_scorer(sprov, name=sprov["model"]),
        scorer=ScorerInfo.of_scorer(
            sprov,
            estimator="pseudo-log-likelihood of the shared tokens, one mask at a time "
            "(Nangia et al. 2020); scores rounded to 3 decimals to compare",
        ),
        pairs=pset.provenance,
        bootstrap=PairsBootstrap(
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
            method="percentile bootstrap over the pairs of each group",
        ),
        n_contexts=int(2 * n_shared.sum()),
        n_contexts_run=int(n_run),
        forward_calls=scorer.n_forward_calls,
        versions=sprov["versions"],
        platform=platform.platform(),
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    return PairResult(scores, summary, prov)
