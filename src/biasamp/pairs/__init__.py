"""Sentence-pair benchmarks (CrowS-Pairs): the share of pairs whose more stereotypical
sentence (``sent_more``) a masked or causal language model prefers (50%: no preference),
overall, per direction and per bias type, with bootstrap CIs over pairs. No base rate, no
amplification: a different measurement from BiasAmp-> (docs/pairs-and-qwen.md).

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

from ._io import DEFAULT_COLUMNS as DEFAULT_COLUMNS  # for `biasamp pairs`; not public API
from ._io import PairSet, list_pair_sets, load_pairs
from ._run import PairResult, pair_summary, score_pairs

__all__ = ["PairResult", "PairSet", "list_pair_sets", "load_pairs", "pair_summary", "score_pairs"]
