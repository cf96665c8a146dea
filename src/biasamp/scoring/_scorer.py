"""MaskedLMScorer: batched candidate scoring with a Hugging Face masked LM, and its sentence
pairs (CrowS-Pairs, :meth:`MaskedLMScorer.score_pairs`)."""

from __future__ import annotations

import difflib
import logging

import numpy as np

from .._errors import BiasampError
from ._base import BaseScorer
from ._engine import QuerySet, build_queries, run_queries
from ._load import lm_head_fn, transformers_logs_propagate
from ._spans import locate_spans

log = logging.getLogger(__name__)

__all__ = ["MaskedLMScorer", "shared_positions"]

#: Pairs whose contexts are built and run together (bounds memory, keeps batches full).
PAIR_CHUNK = 512


class MaskedLMScorer(BaseScorer):
    """Score candidate fillers of a blank with a masked language model.

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"bert-base-uncased"``) or local folder, loaded with
        ``AutoModelForMaskedLM`` / ``AutoTokenizer`` (fast tokenizer needed). Its config must
        not say it is a causal LM (use :class:`CausalLMScorer`).
    options : LoadOptions, optional
        How the model is loaded and run (:class:`~biasamp.scoring.LoadOptions`: revision,
        device, dtype, ``batch_size`` = distinct masked contexts per encoder call, score cache,
        ...), or its fields as keywords (``device="cpu"``). The log-softmax at the scored
        positions is always taken in float64.
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
        r.prob  # (1, 2), rows sum to 1

    >>> MaskedLMScorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """

    model_type = "masked"

    def __init__(self, model, options=None, **kwargs):
        super().__init__(model, options, **kwargs)
        self._head = lm_head_fn(self.model)
        if self._head is None:
            log.info(
                "no known LM head split for %s; scoring with full-model logits",
                type(self.model).__name__,
            )
        self.max_length = self._max_length()
        self._special_ids = frozenset(self.tokenizer.all_special_ids)
        self._split = {}

    def _check_tokenizer(self):
        if self.tokenizer.mask_token_id is None:
            raise BiasampError(
                f"model {self.model_name!r}: its tokenizer has no mask token; "
                "a masked language model is needed"
            )

    def _max_length(self):
        tok_max = getattr(self.tokenizer, "model_max_length", None) or 10**9
        cfg = self.model.config
        pos = getattr(cfg, "max_position_embeddings", None)
        if pos is not None and type(self.model).__name__.startswith(
            ("Roberta", "XLMRoberta", "Camembert")
        ):
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
        vals = self._run(qs, lambda n_ctx, n_tok: on_batch(n_ctx))
        flat = np.zeros(len(rows))
        np.add.at(flat, np.asarray(qs.q_out, dtype=np.int64), vals)
        return flat

    def _run(self, qs, on_batch):
        """The masked queries ``qs`` through the model: one value per query."""
        return run_queries(
            qs,
            model=self.model,
            head=self._head,
            device=self.device,
            batch_size=self.batch_size,
            pad_id=self.tokenizer.pad_token_id,
            on_batch=on_batch,
        )

    def _after_score(self, mode):
        if self._split:
            log.warning(
                "first-piece scoring of %d split candidate(s) uses only their first piece: %s",
                len(self._split),
                ", ".join(f"{c!r} -> {' '.join(p)}" for c, p in self._split.items()),
            )
            self._split = {}

    @transformers_logs_propagate()
    def score_pairs(self, first, second, *, chunk_size: int = PAIR_CHUNK):
        """Pseudo-log-likelihood of the tokens each pair of sentences shares (CrowS-Pairs).

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
        first, second = list(first), list(second)
        n = len(first)
        scores = np.zeros(2 * n)
        n_shared = np.zeros(n, dtype=np.int64)

        def on_batch(n_ctx, n_tok):
            self.n_forward_calls += 1
            self.progress.advance(n_ctx)

        for qs, shared in _pair_chunks(self, first, second, chunk_size):
            for i, m in shared.items():
                n_shared[i] = m
            vals = self._run(qs, on_batch)
            if len(qs):
                np.add.at(scores, np.asarray(qs.q_out, dtype=np.int64), vals)
        return scores.reshape(n, 2), n_shared

    @transformers_logs_propagate()
    def count_pair_contexts(self, first, second, *, chunk_size: int = PAIR_CHUNK) -> int:
        """How many distinct masked contexts :meth:`score_pairs` runs through the model for
        these arguments (the units it reports to ``progress``): the masked contexts of the
        shared tokens, one repeated within a chunk of pairs (a sentence in two pairs, a pair
        listed twice) counted once. The sentences are tokenised and aligned, nothing is run.

        Returns
        -------
        int
        """
        return sum(len(qs.contexts) for qs, _ in _pair_chunks(self, first, second, chunk_size))


# -------------------- pairs
# Nangia et al. (2020) mask, one at a time, each token two minimally different sentences share
# (difflib's ``equal`` blocks over the token ids, special tokens left out) and sum
# ``log P(token | rest of the sentence)``; the group words are never masked. Every masked
# context is a query of the batched engine (:mod:`._engine`): identical contexts run once.


def shared_positions(ids1, ids2, special1, special2) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two sequences share (difflib ``equal`` blocks, as in
    Nangia et al.'s ``get_span``), special tokens left out.

    >>> shared_positions([101, 7, 8, 9, 102], [101, 7, 5, 9, 102], [1, 0, 0, 0, 1], [1, 0, 0, 0, 1])
    ([1, 3], [1, 3])
    """
    matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    p1, p2 = [], []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            for i, j in zip(range(a0, a1), range(b0, b1)):
                if not special1[i] and not special2[j]:
                    p1.append(i)
                    p2.append(j)
    return p1, p2


def _encode(tokenizer, sentences, max_length, what):
    enc = tokenizer(
        list(sentences),
        add_special_tokens=True,
        return_special_tokens_mask=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        truncation=False,
    )
    for i, ids in enumerate(enc["input_ids"]):
        if max_length is not None and len(ids) > max_length:
            raise BiasampError(
                f"{what}[{i}] is {len(ids)} tokens long; the model accepts at most "
                f"{max_length}: {sentences[i][:60]!r}"
            )
    return enc["input_ids"], enc["special_tokens_mask"]


def _pair_chunks(scorer, first, second, chunk_size):
    """``(QuerySet, {pair: n_shared})`` of each chunk of pairs: every masked context of a
    shared token of either sentence, identical contexts of the chunk run once."""
    first, second = list(first), list(second)
    if len(first) != len(second):
        raise BiasampError(
            f"first and second must have the same length; got {len(first)} and {len(second)}"
        )
    tok = scorer.tokenizer
    ids1, sp1 = _encode(tok, first, scorer.max_length, "first")
    ids2, sp2 = _encode(tok, second, scorer.max_length, "second")
    mask_id = tok.mask_token_id
    for c0 in range(0, len(first), chunk_size):
        qs, shared = QuerySet(), {}
        for i in range(c0, min(len(first), c0 + chunk_size)):
            p1, p2 = shared_positions(ids1[i], ids2[i], sp1[i], sp2[i])
            shared[i] = len(p1)
            for out, ids, positions in (
                (2 * i, tuple(ids1[i]), p1),
                (2 * i + 1, tuple(ids2[i]), p2),
            ):
                for pos in positions:
                    qs.add(ids[:pos] + (mask_id,) + ids[pos + 1 :], pos, ids[pos], out)
        yield qs, shared
