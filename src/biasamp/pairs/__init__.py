"""Sentence-pair benchmarks (CrowS-Pairs): which of two minimally different sentences a
masked or causal language model prefers.

CrowS-Pairs (Nangia et al. 2020) pairs a sentence about a historically disadvantaged group
with a minimal edit about a contrasting group; one of the two is the more stereotypical
(``sent_more``). A model is scored on a pair by the pseudo-log-likelihood of the tokens
the two sentences share (each masked in turn, the differing group words never masked), and
counts as preferring the stereotype when ``sent_more`` scores higher. The *metric score* is
the share of pairs where it does (50% for a model without that preference), overall, per
direction (``stereo``: ``sent_more`` demonstrates a stereotype; ``antistereo``:
``sent_less`` violates one) and per bias type, each with a bootstrap CI over pairs.

A causal LM scores each sentence by its whole log-likelihood after the model's document-start
token (as lm-evaluation-harness' ``crows_pairs`` tasks do), and the summary adds the harness's
``pct_stereotype`` (the share of pairs whose ``sent_more`` is strictly more likely, unrounded)
and ``likelihood_diff`` (the mean absolute difference of the two log-likelihoods).

This is a different measurement from BiasAmp->: no base rate, no amplification; the
sentences come as written in the file (CSV/TSV/JSON/JSONL; never split on commas).

Modules: ``_io`` (files: the pairs read, the shipped set, ``pairs.json``),
``_metric`` (the metric, :class:`PairResult`),
``_run`` (:func:`score_pairs`); the scoring itself is
:meth:`biasamp.scoring.MaskedLMScorer.score_pairs` or
:meth:`biasamp.scoring.CausalLMScorer.score_sentences`.

References
----------
Nangia, Vania, Bhalerao & Bowman (2020), CrowS-Pairs: A Challenge Dataset for Measuring
Social Biases in Masked Language Models, EMNLP.

Examples
--------
>>> from biasamp.pairs import list_pair_sets, load_pairs
>>> list_pair_sets()
['crows-pairs']
>>> sorted(load_pairs("crows-pairs").pairs["bias_type"].value_counts().items())[:2]
[('age', 87), ('disability', 60)]
"""

from ._io import PairSet, list_pair_sets, load_pairs
from ._metric import PairResult, pair_summary
from ._run import score_pairs

__all__ = ["PairResult", "PairSet", "list_pair_sets", "load_pairs", "pair_summary", "score_pairs"]
