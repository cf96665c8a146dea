"""MaskedLMScorer, its sentence pairs (CrowS-Pairs) and its engine: each estimator a set of queries
``log P(target id | masked context, position)``, each distinct context run once."""

from __future__ import annotations

import difflib
import logging

import numpy as np
import torch

from .._errors import BiasampError
from ._base import BaseScorer
from ._load import lm_head_fn, transformers_logs_propagate
from ._spans import encode, locate_spans, pad_right

log = logging.getLogger(__name__)

PAIR_CHUNK = 512  # pairs whose contexts are built and run together (bounds memory)


class MaskedLMScorer(BaseScorer):
    """Score candidate fillers of a blank with a masked language model (docs/scoring.md).

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"bert-base-uncased"``) or local folder.
    options : LoadOptions, optional
        How the model is loaded and run, or its fields as keywords (``device="cpu"``).
    progress : bool or biasamp._progress.Progress
        Where the contexts run are reported: a reporter, True for the standard display.
    chunk_size : int
        Prompts tokenised and run together (memory does not grow beyond one chunk).
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
        self._split = {}

    def _check_tokenizer(self):
        if self.tokenizer.mask_token_id is None:
            raise BiasampError(
                f"model {self.model_name!r}: its tokenizer has no mask token; "
                "a masked language model is needed"
            )

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
        flat = np.zeros(len(rows))
        np.add.at(flat, np.asarray(qs.q_out, dtype=np.int64), self._run(qs, on_batch))
        return flat

    def _run(self, qs, on_batch):
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
        """Pseudo-log-likelihood of the tokens each pair of sentences shares (CrowS-Pairs, Nangia
        et al. 2020: each shared token masked in turn, the differing words never masked).

        Parameters
        ----------
        first, second : sequence of str, length n
            The two sentences of each pair; difflib aligns ``second`` to ``first``.
        chunk_size : int
            Pairs whose masked contexts are run together.

        Returns
        -------
        scores, n_shared : ndarrays of shape (n, 2) and (n,)
            The summed natural-log probabilities of the shared tokens in each sentence, and
            how many tokens each pair shares.
        """
        first, second = list(first), list(second)
        n = len(first)
        scores = np.zeros(2 * n)
        n_shared = np.zeros(n, dtype=np.int64)
        for qs, shared in _pair_chunks(self, first, second, chunk_size):
            n_shared[list(shared)] = list(shared.values())
            if len(qs):
                np.add.at(
                    scores, np.asarray(qs.q_out, dtype=np.int64), self._run(qs, self._on_batch)
                )
        return scores.reshape(n, 2), n_shared

    @transformers_logs_propagate()
    def count_pair_contexts(self, first, second, *, chunk_size: int = PAIR_CHUNK) -> int:
        """How many distinct masked contexts :meth:`score_pairs` runs; nothing is run."""
        return sum(len(qs.contexts) for qs, _ in _pair_chunks(self, first, second, chunk_size))


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
    enc = encode(tokenizer, sentences)
    for i, ids in enumerate(enc["input_ids"]):
        if len(ids) > max_length:
            raise BiasampError(
                f"{what}[{i}] is {len(ids)} tokens long; the model accepts at most "
                f"{max_length}: {sentences[i][:60]!r}"
            )
    return enc["input_ids"], enc["special_tokens_mask"]


def _pair_chunks(scorer, first, second, chunk_size):
    """``(QuerySet, {pair: n_shared})`` of each chunk of pairs: a masked context per shared token."""
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


class QuerySet:
    """Distinct contexts, distinct (context, position) sites, and the queries on them."""

    def __init__(self):
        self.contexts, self.sites = {}, {}  # context -> index, (context index, position) -> index
        self.q_site, self.q_tgt, self.q_out = [], [], []

    def add(self, ctx, pos, tgt, out):
        c = self.contexts.setdefault(ctx, len(self.contexts))
        self.q_site.append(self.sites.setdefault((c, pos), len(self.sites)))
        self.q_tgt.append(tgt)
        self.q_out.append(out)

    def __len__(self):
        return len(self.q_site)


def build_queries(mode, spans, mask_id, special_ids=frozenset()):
    """The :class:`QuerySet` of ``spans`` (one per output cell): ``first-piece``, the first
    piece at one mask; ``word``, piece ``t`` of ``m`` with the pieces before it filled; ``pll``,
    every non-special token."""
    qs = QuerySet()
    for out, sp in enumerate(spans):
        ids, s, e = sp.ids, sp.start, sp.end
        if mode == "first-piece":
            qs.add(ids[:s] + (mask_id,) + ids[e:], s, ids[s], out)
        elif mode == "word":
            m = e - s
            suffix = ids[e:]
            for t in range(m):
                qs.add(ids[: s + t] + (mask_id,) * (m - t) + suffix, s + t, ids[s + t], out)
        else:  # pll (the estimator was checked where it entered)
            for u, tok in enumerate(ids):
                if tok not in special_ids:
                    qs.add(ids[:u] + (mask_id,) + ids[u + 1 :], u, tok, out)
    return qs


def run_queries(qs, *, model, head, device, batch_size, pad_id, on_batch=lambda n: None):
    """The float64 log probability of every query of ``qs`` (``head``: ``lm_head_fn``'s, None
    for the full model); ``on_batch(n_contexts)`` after each encoder batch."""
    contexts = list(qs.contexts)
    n_ctx = len(contexts)
    if n_ctx == 0:
        return np.zeros(0)
    lengths = np.fromiter((len(c) for c in contexts), dtype=np.int64, count=n_ctx)
    order = np.argsort(-lengths, kind="stable")  # longest first: padding is small in each batch
    rank = np.argsort(order)  # each context's place in that order
    ctx_batch, ctx_local = rank // batch_size, rank % batch_size
    site_ctx, site_pos = np.array(list(qs.sites), dtype=np.int64).reshape(-1, 2).T
    q_site = np.asarray(qs.q_site, dtype=np.int64)
    q_tgt = np.asarray(qs.q_tgt, dtype=np.int64)
    site_batch = ctx_batch[site_ctx]
    q_batch = site_batch[q_site]
    site_order = np.argsort(site_batch, kind="stable")
    site_bounds = np.searchsorted(site_batch[site_order], np.arange(ctx_batch.max() + 2))
    q_order = np.argsort(q_batch, kind="stable")
    q_bounds = np.searchsorted(q_batch[q_order], np.arange(ctx_batch.max() + 2))
    site_local = np.empty(len(site_ctx), dtype=np.int64)
    result = np.empty(len(q_site), dtype=np.float64)
    pad = 0 if pad_id is None else int(pad_id)

    with torch.inference_mode():
        for b in range(int(ctx_batch.max()) + 1):
            members = order[b * batch_size : (b + 1) * batch_size]
            width = int(lengths[members[0]])
            ids, att = pad_right([contexts[c] for c in members], width, pad)
            input_ids = torch.from_numpy(ids).to(device)
            attention = torch.from_numpy(att).to(device)
            sites = site_order[site_bounds[b] : site_bounds[b + 1]]
            site_local[sites] = np.arange(len(sites))
            rows = torch.from_numpy(ctx_local[site_ctx[sites]]).to(device)
            cols = torch.from_numpy(site_pos[sites]).to(device)
            if head is not None:
                encoder, head_fn = head
                hidden = encoder(input_ids=input_ids, attention_mask=attention)[0]
                logits = head_fn(hidden[rows, cols])
            else:
                logits = model(input_ids=input_ids, attention_mask=attention).logits[rows, cols]
            if logits.device.type == "mps":  # no float64 on MPS: the few scored rows go to CPU
                logits = logits.cpu()
            # float64: the candidates' probabilities are an exact softmax of these logits to
            # ~1e-15 (float32 would be off by ~4e-7)
            logp = torch.log_softmax(logits.double(), dim=-1)
            qsel = q_order[q_bounds[b] : q_bounds[b + 1]]
            li = torch.from_numpy(site_local[q_site[qsel]]).to(device)
            ti = torch.from_numpy(q_tgt[qsel]).to(device)
            result[qsel] = logp[li, ti].double().cpu().numpy()
            on_batch(len(members))
    return result
