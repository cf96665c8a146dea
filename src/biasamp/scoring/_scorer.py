"""MaskedLMScorer: batched candidate scoring with a Hugging Face masked LM."""

from __future__ import annotations

import logging

import numpy as np

from .._errors import BiasampError
from ._base import BaseScorer
from ._engine import build_queries, run_queries
from ._load import lm_head_fn
from ._pairs import PAIR_CHUNK, count_pair_contexts, score_sentence_pairs
from ._spans import locate_spans

log = logging.getLogger(__name__)

__all__ = ["MaskedLMScorer"]


class MaskedLMScorer(BaseScorer):
    """Score candidate fillers of a blank with a masked language model.

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"bert-base-uncased"``) or local folder, loaded with
        ``AutoModelForMaskedLM`` / ``AutoTokenizer`` (fast tokenizer needed). Its config must
        not say it is a causal LM (use :class:`CausalLMScorer`).
    revision : str, optional
        Hub revision (branch, tag or commit) to pin.
    device : {"auto", "cpu", "cuda", "cuda:N"}
        ``"auto"``: CUDA if available, else CPU.
    dtype : {"float32", "bfloat16", "float16"}
        Weight dtype. ``float16`` needs CUDA; ``bfloat16`` also runs on CPU (slowly on most
        CPUs). The log-softmax at the scored positions is always taken in float64.
    trust_remote_code : bool
        Passed to ``from_pretrained``; off by default.
    batch_size : int
        Distinct masked contexts per encoder call.
    score_cache : str or path-like, optional
        Folder for an on-disk score cache (sqlite, one file per model/tokenizer/estimator/dtype);
        cached prompts never reach the model.
    hf_cache_dir : str or path-like, optional
        Hugging Face download cache (``from_pretrained(cache_dir=...)``); default: the
        library's (``HF_HOME``).
    allow_missing_weights : bool
        Load a checkpoint that lacks weights of the model class (transformers initialises them
        at random; e.g. a ``BertModel`` folder without the masked-LM head). Off: that is an
        error naming them; on: a :class:`~biasamp._errors.MissingWeightsWarning` and
        ``provenance["missing_weights"]``.
    progress : bool or biasamp._progress.Progress
        Where :meth:`score` and :meth:`score_pairs` report the contexts they run (counted
        beforehand by :meth:`count_contexts`): a reporter, True for the standard display on
        stderr, False (default) for none. The caller announces the stage.
    chunk_size : int
        Prompts tokenised and run together; memory does not grow with the number of prompts
        beyond one chunk (plus the (n, k) result arrays).

    Examples
    --------
    Doctests cannot download a model; see ``tests/scoring/test_scoring.py`` and the README::

        scorer = MaskedLMScorer("bert-base-uncased")
        r = scorer.score(["[BLANK] is a nurse."], ["he", "she"], scoring="first-piece")
        r.prob      # (1, 2), rows sum to 1

    >>> MaskedLMScorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """

    model_type = "masked"

    def __init__(self, model, **kwargs):
        super().__init__(model, **kwargs)
        self._head = lm_head_fn(self.model)
        if self._head is None:
            log.info("no known LM head split for %s; scoring with full-model logits",
                     type(self.model).__name__)
        self.max_length = self._max_length()
        self._special_ids = frozenset(self.tokenizer.all_special_ids)
        self._split = {}

    def _check_tokenizer(self):
        if self.tokenizer.mask_token_id is None:
            raise BiasampError(f"model {self.model_name!r}: its tokenizer has no mask token; "
                               "a masked language model is needed")

    def _max_length(self):
        tok_max = getattr(self.tokenizer, "model_max_length", None) or 10 ** 9
        cfg = self.model.config
        pos = getattr(cfg, "max_position_embeddings", None)
        if pos is not None and type(self.model).__name__.startswith(
                ("Roberta", "XLMRoberta", "Camembert")):
            pos = pos - (cfg.pad_token_id or 0) - 1  # positions start after the padding index
        return int(min(tok_max, pos or tok_max))

    def _queries(self, mode, rows):
        spans = locate_spans(self.tokenizer, rows, max_length=self.max_length)
        return spans, build_queries(mode, spans, self.tokenizer.mask_token_id, self._special_ids)

    def _count_rows(self, mode, rows):
        return len(self._queries(mode, rows)[1].contexts)

    def _score_rows(self, mode, rows, on_batch):
        spans, qs = self._queries(mode, rows)
        if mode == "first-piece":
            for (_, _, _, _, c), sp in zip(rows, spans):
                if sp.end - sp.start > 1 and c not in self._split:
                    self._split[c] = self.tokenizer.convert_ids_to_tokens(list(sp.pieces))
        vals = run_queries(qs, model=self.model, head=self._head, device=self.device,
                           batch_size=self.batch_size, pad_id=self.tokenizer.pad_token_id,
                           on_batch=lambda n_ctx, n_tok: on_batch(n_ctx))
        flat = np.zeros(len(rows))
        np.add.at(flat, np.asarray(qs.q_out, dtype=np.int64), vals)
        return flat

    def _after_score(self, mode):
        if self._split:
            log.warning("first-piece scoring of %d split candidate(s) uses only their first "
                        "piece: %s", len(self._split),
                        ", ".join(f"{c!r} -> {' '.join(p)}" for c, p in self._split.items()))
            self._split = {}

    def score_pairs(self, first, second, *, chunk_size: int = PAIR_CHUNK):
        """Pseudo-log-likelihood of the tokens each pair of sentences shares (CrowS-Pairs;
        :mod:`biasamp.scoring._pairs`).

        Parameters
        ----------
        first, second : sequence of str, length n
            The two sentences of each pair; ``first`` is the one difflib aligns from (Nangia
            et al.: the more stereotypical sentence of a ``stereo`` pair, the less
            stereotypical one of an ``antistereo`` pair).
        chunk_size : int
            Pairs whose masked contexts are run together.

        Returns
        -------
        scores : ndarray of shape (n, 2)
            Summed log probabilities (natural log) of the shared tokens in each sentence.
        n_shared : ndarray of shape (n,)
            How many tokens each pair shares.
        """
        return score_sentence_pairs(self, first, second, chunk_size=chunk_size)

    def count_pair_contexts(self, first, second, *, chunk_size: int = PAIR_CHUNK) -> int:
        """How many distinct masked contexts :meth:`score_pairs` runs through the model for
        these arguments (the units it reports to ``progress``): the masked contexts of the
        shared tokens, one repeated within a chunk of pairs (a sentence in two pairs, a pair
        listed twice) counted once. The sentences are tokenised and aligned, nothing is run.

        Returns
        -------
        int
        """
        return count_pair_contexts(self, first, second, chunk_size=chunk_size)
