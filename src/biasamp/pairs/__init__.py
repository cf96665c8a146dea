"""Sentence-pair benchmarks (CrowS-Pairs): which of two minimally different sentences a
masked or causal language model prefers.

CrowS-Pairs (Nangia et al. 2020) pairs a sentence about a historically disadvantaged group with
a minimal edit about a contrasting group; one of the two is the more stereotypical
(``sent_more``). A masked LM scores a sentence by the pseudo-log-likelihood of the tokens the
two share, a causal LM by its whole log-likelihood after the document-start token (as
lm-evaluation-harness' ``crows_pairs``); the model prefers the stereotype when ``sent_more``
scores higher. The metric score is the share of pairs where it does (50%: no preference),
overall, per direction and per bias type, each with a bootstrap CI over pairs; a causal LM's
summary adds the harness's ``pct_stereotype`` and ``likelihood_diff``. No base rate, no
amplification: a different measurement from BiasAmp->.

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
from ._run import PairResult, pair_summary, score_pairs

__all__ = ["PairResult", "PairSet", "list_pair_sets", "load_pairs", "pair_summary", "score_pairs"]
