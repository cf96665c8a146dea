"""Scoring sentence pairs (:func:`score_pairs`) and the CrowS-Pairs metric from the scores
(:func:`pair_summary`, :class:`PairResult`); docs/pairs-and-qwen.md explains the metric."""

from __future__ import annotations

import datetime as _dt
import logging
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import CONFIDENCE, MODEL_TYPES, N_RESAMPLES
from .._errors import BiasampError
from .._memory import check_memory
from .._output import OutputFolder
from .._progress import as_progress
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
from ..metrics import bootstrap_ci
from ._io import (
    LM_EVAL_KEYS,
    PairsBootstrap,
    PairsProvenance,
    PairSummaryRow,
    load_pairs,
    read_pairs_json,
    write_pairs_json,
)

#: Columns of :attr:`PairResult.scores`.
SCORE_COLUMNS = (
    "pair_id",
    "bias_type",
    "direction",
    "sent_more",
    "sent_less",
    "score_more",
    "score_less",
    "n_shared",
    "more_preferred",
    "neutral",
)
#: Columns of :attr:`PairResult.summary` (a causal LM's add :data:`LM_EVAL_KEYS`).
SUMMARY_COLUMNS = tuple(c for c in PairSummaryRow.model_fields if c not in LM_EVAL_KEYS)


def preferences(score_more, score_less, digits: int = 3):
    """(more_preferred, neutral) per pair, comparing scores rounded as Nangia et al.'s ``metric.py``.

    >>> preferences([-10.0004, -3.2], [-10.0001, -3.1])
    (array([False, False]), array([ True, False]))
    """
    a = np.array([round(float(x), digits) for x in score_more])
    b = np.array([round(float(x), digits) for x in score_less])
    return a > b, a == b


def pair_summary(
    scores: pd.DataFrame,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    log_likelihoods: bool = False,
    progress=None,
) -> pd.DataFrame:
    """The share of pairs whose more stereotypical sentence the model prefers, per group.

    Parameters
    ----------
    scores
        One row per pair as :attr:`PairResult.scores` (``bias_type``, ``direction``, ``neutral``...).
    n_resamples, seed, confidence
        Percentile bootstrap over the pairs of each group.
    log_likelihoods
        The scores are whole-sentence log-likelihoods (a causal LM): add :data:`LM_EVAL_KEYS`.
    progress
        A ``biasamp._progress.Progress`` told the ``bootstrap`` stage, one step per group.

    Returns
    -------
    DataFrame
        :data:`SUMMARY_COLUMNS` (+ the LM_EVAL_KEYS) for ``all``, each direction and bias type.
    """
    if scores.empty:
        raise BiasampError("scores must hold at least one pair; got none")
    groups = [("all", "all", np.ones(len(scores), dtype=bool))]
    for kind in ("direction", "bias_type"):
        for g in dict.fromkeys(scores[kind]):
            if g:
                groups.append((g, kind, (scores[kind] == g).to_numpy()))
    pref = scores["more_preferred"].to_numpy(dtype=float)
    neutral = scores["neutral"].to_numpy(dtype=bool)
    if log_likelihoods:
        ll_more = scores["score_more"].to_numpy(dtype=float)
        ll_less = scores["score_less"].to_numpy(dtype=float)
        higher, gap = (ll_more > ll_less).astype(float), np.abs(ll_more - ll_less)
    rows = []
    progress = as_progress(progress)
    progress.stage("bootstrap", len(groups), "groups")
    for g, kind, m in groups:
        lo, hi = bootstrap_ci(pref[m], n_resamples=n_resamples, seed=seed, confidence=confidence)
        progress.advance()
        kept = m & ~neutral
        rows.append(
            (
                g,
                kind,
                int(m.sum()),
                int((m & neutral).sum()),
                float(pref[m].mean()),
                lo,
                hi,
                float(pref[kept].mean()) if kept.any() else float("nan"),
                *((float(higher[m].mean()), float(gap[m].mean())) if log_likelihoods else ()),
            )
        )
    columns = SUMMARY_COLUMNS + (LM_EVAL_KEYS if log_likelihoods else ())
    return pd.DataFrame(rows, columns=list(columns))


@dataclass
class PairResult:
    """A sentence-pair run: ``scores`` (one row per pair, :data:`SCORE_COLUMNS`; ``n_shared``
    missing for a causal LM), ``summary`` (:func:`pair_summary`) and ``provenance``."""

    scores: pd.DataFrame
    summary: pd.DataFrame
    provenance: PairsProvenance

    def save(self, out: str | os.PathLike | OutputFolder, *, overwrite: bool = False) -> Path:
        """Write ``pairs.json``, ``pair_scores.csv`` and ``pair_summary.csv`` into the new
        folder ``out`` (or an ``OutputFolder`` already checked) as one transaction; return it."""
        if not isinstance(out, OutputFolder):
            out = OutputFolder(out, kind="pairs", overwrite=overwrite)
        with out as d:
            self.scores.to_csv(d / "pair_scores.csv", index=False)
            self.summary.to_csv(d / "pair_summary.csv", index=False)
            write_pairs_json(d / "pairs.json", self.summary, self.provenance)
        return out.named

    @classmethod
    def load(cls, path: str | os.PathLike) -> PairResult:
        """Read a folder written by :meth:`save`."""
        d = Path(path)
        f = d / "pairs.json"
        if not f.is_file() or not (d / "pair_scores.csv").is_file():
            raise BiasampError(
                f"{str(path)!r} is not a pairs result folder (no pairs.json or pair_scores.csv)"
            )
        summary, provenance = read_pairs_json(f)
        scores = pd.read_csv(
            d / "pair_scores.csv",
            dtype={"pair_id": str, "bias_type": str, "direction": str},
            keep_default_na=False,
        )
        return cls(scores, summary, provenance)


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
    """Score sentence pairs as CrowS-Pairs does and summarise them (docs/pairs-and-qwen.md).

    Parameters
    ----------
    pairs
        ``"crows-pairs"``, a pairs file (see :func:`load_pairs`) or a PairSet.
    model
        A language model (hub id or folder) or a scorer already loaded.
    bias_types
        Only these bias types.
    max_pairs
        Only the first pairs (quick runs).
    options
        A ``biasamp.scoring.LoadOptions``: how the model is loaded (ignored for a scorer).
    model_type
        ``auto``: from the model's ``config.json`` (a scorer's own type, if given, must be it).
    context_token
        Causal LMs: the token before each sentence (default: document start); not with a scorer.
    progress
        A reporter, True for the display on stderr, False for none (a scorer keeps its own).
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
        model, options, pset, model_type=model_type, context_token=context_token, progress=progress
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
    scores = df.assign(
        score_more=s_more,
        score_less=s_less,
        n_shared=n_shared,
        more_preferred=pref,
        neutral=neutral,
    )[list(SCORE_COLUMNS)]
    boot = dict(n_resamples=n_resamples, seed=seed, confidence=confidence)
    summary = pair_summary(scores, **boot, log_likelihoods=causal, progress=scorer.progress)
    if progress is True and scorer is not model:  # the display made here
        scorer.progress.close()
    sprov = dict(scorer.provenance)
    prov = PairsProvenance(
        model=ModelInfo.of_scorer(sprov, name=sprov["model"]),
        scorer=ScorerInfo.of_scorer(sprov, estimator=ESTIMATORS[scorer.model_type]),
        pairs=pset.provenance,
        bootstrap=PairsBootstrap(
            **boot, method="percentile bootstrap over the pairs of each group"
        ),
        n_contexts=n_contexts,
        n_contexts_run=n_run,
        forward_calls=scorer.n_forward_calls,
        versions=sprov["versions"],
        platform=platform.platform(),
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    return PairResult(scores, summary, prov)


def _scorer(model, options, pset, *, model_type, context_token, progress):
    """The scorer given, or the model's (masked or causal) after the early checks."""
    from ..scoring import CausalLMScorer, LoadOptions, MaskedLMScorer, load_scorer, preflight

    if isinstance(model, (MaskedLMScorer, CausalLMScorer)):
        if context_token is not None or model_type not in ("auto", model.model_type):
            raise BiasampError(
                f"model is a {model.model_type} scorer already loaded: its type and context "
                f"token are its own; got model_type {model_type!r}, context_token "
                f"{context_token!r}"
            )
        return model
    ((resolved, _),) = preflight(
        [model],
        options or LoadOptions(),
        model_type=model_type,
        context_token=context_token,
        check_scoring=False,
    ).values()
    _say_same_pairs(pset, resolved)
    extra = {"context_token": context_token} if resolved.model_type == "causal" else {}
    return load_scorer(resolved, options, progress=progress, **extra)


def _say_same_pairs(pset, resolved) -> None:
    """Warn once of pairs that differ only in what the model's tokenizer normalises away."""
    from ..scoring import normalizer

    if (norm := normalizer(resolved)) is None:
        return
    df = pset.pairs
    same = df["pair_id"][df["sent_more"].map(norm) == df["sent_less"].map(norm)].tolist()
    if same:
        logging.getLogger(__name__).warning(
            "%d pair(s) (pair %s%s) differ only in what the tokenizer of model %r normalises away "
            "(case, for an uncased model): the model reads one sentence twice, a tie",
            len(same),
            same[0],
            ", ..." if len(same) > 1 else "",
            resolved.name,
        )


def _score_masked(scorer, more, less, anti):
    """Nangia et al.'s shared tokens' pseudo-log-likelihoods, aligned from the stereotypical
    sentence (sent_more of a stereo pair, sent_less of an antistereo pair)."""
    first = [b if a else m for m, b, a in zip(more, less, anti)]
    second = [m if a else b for m, b, a in zip(more, less, anti)]
    n_run = scorer.count_pair_contexts(first, second)  # the total before the first step
    scorer.progress.stage("scoring pairs", n_run, "ctx")
    s, n_shared = scorer.score_pairs(first, second)
    s_more = np.where(anti, s[:, 1], s[:, 0])
    s_less = np.where(anti, s[:, 0], s[:, 1])
    return s_more, s_less, n_shared, int(2 * n_shared.sum()), int(n_run)


def _score_causal(scorer, more, less):
    """Whole-sentence log-likelihoods after the context token; ``n_shared`` missing."""
    texts = more + less
    n_run = scorer.count_sentences(texts)
    scorer.progress.stage("scoring pairs", n_run, scorer.count_unit)
    ll = scorer.score_sentences(texts)
    n = len(more)
    return ll[:n], ll[n:], pd.array([pd.NA] * n, dtype="Int64"), len(texts), int(n_run)
