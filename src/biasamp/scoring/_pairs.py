"""Sentence pairs (CrowS-Pairs): pseudo-log-likelihood of the tokens two sentences share.

Nangia et al. (2020) score a pair of minimally different sentences by masking, one at a
time, each token the two sentences share (the ``equal`` blocks of
``difflib.SequenceMatcher`` over the two token-id sequences, special tokens left out) and
summing ``log P(token | rest of the sentence)``; the differing tokens (the group words)
are never masked, so the two scores compare the same words in the two contexts.

Here every masked context of every pair is a query of the batched engine
(:mod:`._engine`): identical contexts are run once, contexts are length-sorted into
batches, the LM head is applied only at the masked position. No Python loop runs the
model per pair or per token.
"""

from __future__ import annotations

import difflib

import numpy as np

from .._errors import BiasampError
from ._engine import QuerySet, run_queries
from ._load import transformers_logs_propagate

__all__ = ["count_pair_contexts", "score_sentence_pairs", "shared_positions"]

#: Pairs whose contexts are built and run together (bounds memory, keeps batches full).
PAIR_CHUNK = 512


def shared_positions(ids1, ids2, special1, special2) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two sequences share (difflib ``equal`` blocks, as in
    Nangia et al.'s ``get_span``), special tokens left out.

    >>> shared_positions([101, 7, 8, 9, 102], [101, 7, 5, 9, 102], [1, 0, 0, 0, 1],
    ...                  [1, 0, 0, 0, 1])
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
    enc = tokenizer(list(sentences), add_special_tokens=True, return_special_tokens_mask=True,
                    return_attention_mask=False, return_token_type_ids=False,
                    truncation=False)
    for i, ids in enumerate(enc["input_ids"]):
        if max_length is not None and len(ids) > max_length:
            raise BiasampError(f"{what}[{i}] is {len(ids)} tokens long; the model accepts at most "
                               f"{max_length}: {sentences[i][:60]!r}")
    return enc["input_ids"], enc["special_tokens_mask"]


def _chunks(scorer, first, second, chunk_size):
    """``(QuerySet, {pair: n_shared})`` of each chunk of pairs: every masked context of a
    shared token of either sentence, identical contexts of the chunk run once."""
    first, second = list(first), list(second)
    if len(first) != len(second):
        raise BiasampError(f"first and second must have the same length; got {len(first)} and "
                           f"{len(second)}")
    tok = scorer.tokenizer
    ids1, sp1 = _encode(tok, first, scorer.max_length, "first")
    ids2, sp2 = _encode(tok, second, scorer.max_length, "second")
    mask_id = tok.mask_token_id
    for c0 in range(0, len(first), chunk_size):
        qs, shared = QuerySet(), {}
        for i in range(c0, min(len(first), c0 + chunk_size)):
            p1, p2 = shared_positions(ids1[i], ids2[i], sp1[i], sp2[i])
            shared[i] = len(p1)
            for out, ids, positions in ((2 * i, tuple(ids1[i]), p1),
                                        (2 * i + 1, tuple(ids2[i]), p2)):
                for pos in positions:
                    qs.add(ids[:pos] + (mask_id,) + ids[pos + 1:], pos, ids[pos], out)
        yield qs, shared


@transformers_logs_propagate()
def count_pair_contexts(scorer, first, second, *, chunk_size: int = PAIR_CHUNK) -> int:
    """How many distinct masked contexts :func:`score_sentence_pairs` runs through the model
    (the units it reports to ``scorer.progress``): the masked contexts of the shared tokens,
    a context repeated within a chunk of pairs (a sentence in two pairs) counted once."""
    return sum(len(qs.contexts) for qs, _ in _chunks(scorer, first, second, chunk_size))


@transformers_logs_propagate()
def score_sentence_pairs(scorer, first, second, *, chunk_size: int = PAIR_CHUNK):
    """Pseudo-log-likelihood of the shared tokens of each pair of sentences: the body of
    :meth:`MaskedLMScorer.score_pairs <biasamp.scoring.MaskedLMScorer.score_pairs>`, the one
    entry point.

    Parameters
    ----------
    scorer : biasamp.scoring.MaskedLMScorer
        Its ``model``, ``tokenizer``, ``device``, ``batch_size`` and LM head are used; the
        contexts run are reported to its ``progress``.
    first, second : sequence of str, length n
        The two sentences of each pair; ``first`` is the one difflib aligns from (Nangia et
        al.: the more stereotypical sentence of a ``stereo`` pair, the less stereotypical
        one of an ``antistereo`` pair).
    chunk_size : int
        Pairs whose contexts are run together.

    Returns
    -------
    scores : ndarray of shape (n, 2)
        Summed log probabilities (natural log) of the shared tokens in ``first`` and in
        ``second``.
    n_shared : ndarray of shape (n,)
        How many tokens each pair shares (the number of masked contexts per sentence).
    """
    first, second = list(first), list(second)
    n = len(first)
    scores = np.zeros(2 * n)
    n_shared = np.zeros(n, dtype=np.int64)

    def on_batch(n_ctx, n_tok):
        scorer.n_forward_calls += 1
        scorer.progress.advance(n_ctx)

    for qs, shared in _chunks(scorer, first, second, chunk_size):
        for i, m in shared.items():
            n_shared[i] = m
        vals = run_queries(qs, model=scorer.model, head=scorer._head, device=scorer.device,
                           batch_size=scorer.batch_size, pad_id=scorer.tokenizer.pad_token_id,
                           on_batch=on_batch)
        if len(qs):
            np.add.at(scores, np.asarray(qs.q_out, dtype=np.int64), vals)
    return scores.reshape(n, 2), n_shared
