"""Estimators as *queries* on masked contexts, and the batched runner that answers them.

A query asks for ``log P(target id | context, at position pos)``. Each estimator turns the
(prompt, candidate) spans into queries whose answers sum to the candidate's log probability;
identical contexts are stored once, so the encoder runs once per distinct masked context (for
``word``, all single-piece candidates of a prompt share one context; candidates with the same
number of pieces share their first step). The runner sorts distinct contexts by length, runs the
encoder batch by batch, gathers the hidden states only at the queried positions and applies the
LM head there, then takes the log-softmax in float64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["QuerySet", "build_queries", "run_queries"]


class QuerySet:
    """Distinct contexts, distinct (context, position) sites, and the queries on them."""

    def __init__(self):
        self._ctx = {}
        self.contexts = []
        self._site = {}
        self.site_ctx = []
        self.site_pos = []
        self.q_site = []
        self.q_tgt = []
        self.q_out = []

    def add(self, ctx, pos, tgt, out):
        c = self._ctx.get(ctx)
        if c is None:
            c = self._ctx[ctx] = len(self.contexts)
            self.contexts.append(ctx)
        s = self._site.get((c, pos))
        if s is None:
            s = self._site[(c, pos)] = len(self.site_ctx)
            self.site_ctx.append(c)
            self.site_pos.append(pos)
        self.q_site.append(s)
        self.q_tgt.append(tgt)
        self.q_out.append(out)

    def __len__(self):
        return len(self.q_site)


def build_queries(mode, spans, mask_id, special_ids=frozenset()):
    """Turn spans (one per output cell, in flat order) into a :class:`QuerySet`.

    ``first-piece``: one query per span (first piece at a single mask).
    ``word``: ``m`` queries for ``m`` pieces, step ``t`` with pieces ``< t`` filled.
    ``pll``: one query per non-special token of the filled sentence.
    """
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
        elif mode == "pll":
            for u, tok in enumerate(ids):
                if tok in special_ids:
                    continue
                qs.add(ids[:u] + (mask_id,) + ids[u + 1 :], u, tok, out)
        else:  # pragma: no cover - validated by the caller
            raise ValueError(mode)
    return qs


def run_queries(qs, *, model, head, device, batch_size, pad_id, on_batch=None):
    """Answer every query of ``qs``; return float64 array of log probabilities (len(qs),).

    Parameters
    ----------
    model : transformers masked LM (eval mode, on ``device``)
    head : (encoder, head_fn) or None
        From :func:`biasamp.scoring._load.lm_head_fn`; None runs the full model.
    on_batch : callable(n_contexts, n_tokens) or None
        Called after each encoder batch (progress bar, call counting).
    """
    import torch

    n_ctx = len(qs.contexts)
    if n_ctx == 0:
        return np.zeros(0)
    lengths = np.fromiter((len(c) for c in qs.contexts), dtype=np.int64, count=n_ctx)
    order = np.argsort(-lengths, kind="stable")  # longest first: padding is small in each batch
    rank = np.empty(n_ctx, dtype=np.int64)
    rank[order] = np.arange(n_ctx)
    ctx_batch, ctx_local = rank // batch_size, rank % batch_size
    site_ctx = np.asarray(qs.site_ctx, dtype=np.int64)
    site_pos = np.asarray(qs.site_pos, dtype=np.int64)
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
            ids = np.full((len(members), width), pad, dtype=np.int64)
            att = np.zeros((len(members), width), dtype=np.int64)
            for r, c in enumerate(members):
                ctx = qs.contexts[c]
                ids[r, : len(ctx)] = ctx
                att[r, : len(ctx)] = 1
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
            if on_batch is not None:
                on_batch(len(members), int(att.sum()))
    return result
