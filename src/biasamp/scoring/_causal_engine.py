"""The causal runner: ``log P(token_t | tokens < t)`` at chosen positions of many sequences, each
shared prefix run once and its key/value cache reused for the continuations (docs/scoring.md).
"""

from __future__ import annotations

import copy
import inspect
import itertools
import logging

import numpy as np

from ._spans import pad_right

log = logging.getLogger(__name__)

_SITE_BLOCK = 512  # head + log-softmax over at most this many positions at once (memory)


def plan_splits(seqs, *, share=True, min_shared=2):
    """Split point ``p`` (1 <= p <= len - 1) of each sequence: tokens ``[0, p)`` run in the
    prefix pass, the rest on its cache. The longest prefix it shares with another (at least
    ``min_shared`` tokens), else the whole sequence (always, with ``share=False``).

    >>> plan_splits([(0, 5, 6, 7), (0, 5, 6, 8, 9), (0, 4)])
    [3, 3, 1]
    >>> plan_splits([(0, 5, 6, 7), (0, 5, 6, 8, 9)], share=False)
    [3, 4]
    """
    split = [len(s) - 1 for s in seqs]
    if not share:
        return split
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    shared = [0] * len(seqs)
    for a, b in itertools.pairwise(order):
        x, y = seqs[a], seqs[b]  # their longest common prefix:
        n = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
        shared[a], shared[b] = max(shared[a], n), max(shared[b], n)
    for i, n in enumerate(shared):
        if n >= min_shared:
            split[i] = max(1, min(n, len(seqs[i]) - 1))
    return split


def target_log_softmax(logits, rows, targets):
    """float64 ``log_softmax(logits)[rows, targets]``, ``logits`` (the caller's) overwritten.

    ``exp(logits - max)`` in place, summed by torch's cascade summation: faster and more exact
    than ``torch.log_softmax`` in float32 (docs/scoring.md).
    """
    import torch

    x = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()
    picked = x[rows, targets].double()
    top = x.amax(dim=-1, keepdim=True)
    total = x.sub_(top).exp_().sum(dim=-1)
    return picked - (top.squeeze(-1).double() + torch.log(total.double()))[rows]


_LAYERS = ("DynamicLayer", "DynamicSlidingWindowLayer")  # cache layers select_cache copies


def select_cache(cache, index):
    """A new cache holding rows ``index`` of ``cache`` (a ``DynamicCache`` or a legacy tuple of
    (key, value) pairs; left as it is); None for a cache it does not know (hybrid, quantised)."""
    if type(cache).__name__ == "DynamicCache" and hasattr(cache, "layers"):
        if not all(type(layer).__name__ in _LAYERS for layer in cache.layers):
            return None
        new = copy.copy(cache)
        new.layers = [copy.copy(layer) for layer in cache.layers]
        new.batch_select_indices(index)
        return new
    if isinstance(cache, tuple) and all(isinstance(kv, tuple) and len(kv) == 2 for kv in cache):
        return tuple((k[index], v[index]) for k, v in cache)
    return None


def cache_keyword(module):
    """The keyword of ``module.forward``'s key/value cache (``cache`` in transformers 5.2x)."""
    params = inspect.signature(module.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def sliding_window(model):
    """The smallest attention window of ``model`` (None when every layer sees everything)."""
    cfg = model.config
    cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    window = getattr(cfg, "sliding_window", None)
    types = getattr(cfg, "layer_types", None)
    if window is None or (types is not None and not any("sliding" in t for t in types)):
        return None
    return int(window)


def cache_of(out):
    """The key/value cache of a model output."""
    return out["cache"] if "cache" in out else out.past_key_values  # noqa: SIM401 - .get(k, default) would read the default eagerly


class CausalRunner:
    """Runs a causal LM on token sequences (:meth:`run`); ``batch_size``: sequences (prefixes)
    per forward call, or continuations holding as many tokens. The head runs only at scored
    positions, unless :meth:`check` finds that split differs from the model's logits."""

    def __init__(self, model, *, device, batch_size):
        self.model = model
        self.device = device
        self.batch_size = batch_size
        body = getattr(model, "base_model", None)
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        self._body_head = (
            (body, head) if (body is not None and body is not model and head is not None) else None
        )
        self.n_forward_calls = 0
        self.window = sliding_window(model)

    def _forward(self, ids, att, pos, *, past=None, use_cache=False):
        """(states, cache): hidden states (head split) or logits, and the key/value cache."""
        module = self._body_head[0] if self._body_head is not None else self.model
        past = {} if past is None else {cache_keyword(module): past}
        self.n_forward_calls += 1
        out = module(
            input_ids=ids, attention_mask=att, position_ids=pos, use_cache=use_cache, **past
        )
        states = out[0] if self._body_head is not None else out.logits
        return states, (cache_of(out) if use_cache else None)

    def _site_logp(self, states, rows, cols, targets):
        """float64 log P(targets) at (rows, cols) of ``states``: the head and the log-softmax
        once per distinct site, in blocks of sites (bounding memory)."""
        import torch

        site_of: dict[tuple, int] = {}
        q_site = np.fromiter(
            (site_of.setdefault(rc, len(site_of)) for rc in zip(rows, cols)),
            dtype=np.int64,
            count=len(rows),
        )
        sites = np.array(list(site_of), dtype=np.int64).reshape(-1, 2)
        q_tgt = np.asarray(targets, dtype=np.int64)
        out = np.empty(len(rows), dtype=np.float64)
        for b0 in range(0, len(sites), _SITE_BLOCK):
            block = sites[b0 : b0 + _SITE_BLOCK]
            x = states[
                torch.from_numpy(block[:, 0]).to(self.device),
                torch.from_numpy(block[:, 1]).to(self.device),
            ]
            if self._body_head is not None:
                x = self._body_head[1](x)
            sel = np.flatnonzero((q_site >= b0) & (q_site < b0 + len(block)))
            li = torch.from_numpy(q_site[sel] - b0).to(self.device)
            ti = torch.from_numpy(q_tgt[sel]).to(self.device)
            out[sel] = target_log_softmax(x, li, ti).cpu().numpy()
        return out

    def _tensors(self, rows, width, starts):
        """Right-padded ids, attention mask and explicit positions (start + column)."""
        import torch

        ids, att = pad_right(rows, width)
        pos = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(width, dtype=np.int64)
        return tuple(torch.from_numpy(a).to(self.device) for a in (ids, att, pos))

    def run(self, seqs, first, split, on_batch=lambda n: None):
        """``lp[i][t] = log P(seqs[i][t] | seqs[i][:t])`` for ``t >= first[i] >= 1`` (NaN
        before) of distinct sequences, split by :func:`plan_splits`; ``on_batch(n_done)`` after
        each batch. Batches are sorted by length and padded on the right (causal attention
        never looks right; explicit positions, so the pads before a continuation shift nothing)."""
        import torch

        lp = [np.full(len(s), np.nan) for s in seqs]
        by_prefix: dict[tuple, list[int]] = {}
        for i, s in enumerate(seqs):
            by_prefix.setdefault(tuple(s[: split[i]]), []).append(i)
        groups = sorted(by_prefix.items(), key=lambda g: -len(g[0]))  # longest first, stable
        with torch.inference_mode():
            for b0 in range(0, len(groups), self.batch_size):
                self._run_group(
                    groups[b0 : b0 + self.batch_size],
                    seqs=seqs,
                    first=first,
                    split=split,
                    lp=lp,
                    on_batch=on_batch,
                )
        return lp

    def _run_group(self, batch, *, seqs, first, split, lp, on_batch):
        import torch

        conts = [i for _, mem in batch for i in mem if split[i] < len(seqs[i]) - 1]
        ids, att, pos = self._tensors([p for p, _ in batch], len(batch[0][0]), [0] * len(batch))
        states, cache = self._forward(ids, att, pos, use_cache=bool(conts))
        row_of = {i: r for r, (_, mem) in enumerate(batch) for i in mem}
        self._store(  # the positions t whose t-1 lies in the prefix
            states,
            [
                (row_of[i], t - 1, seqs[i][t], i, t)
                for i in row_of
                for t in range(first[i], split[i] + 1)
            ],
            lp,
        )
        on_batch(len(row_of) - len(conts))
        conts.sort(key=lambda i: -(len(seqs[i]) - 1 - split[i]))
        full = max((len(seqs[i]) - 1 for i in conts), default=1)
        c0 = 0
        while c0 < len(conts):
            # as many tokens per call as batch_size whole sequences would have: short
            # continuations go in proportionally larger batches
            width = len(seqs[conts[c0]]) - 1 - split[conts[c0]]
            part = conts[c0 : c0 + self.batch_size * max(1, full // width)]
            c0 += len(part)
            index = torch.as_tensor([row_of[i] for i in part], device=self.device)
            past = select_cache(cache, index)
            if past is None:
                raise RuntimeError(
                    f"cannot reuse a {type(cache).__name__} (layers "
                    f"{sorted({type(x).__name__ for x in cache.layers})})"
                )
            cids, catt, cpos = self._tensors(
                [seqs[i][split[i] : -1] for i in part],
                len(seqs[part[0]]) - 1 - split[part[0]],
                [split[i] for i in part],
            )
            states, _ = self._forward(
                cids, torch.cat([att[index], catt], dim=1), cpos, past=past, use_cache=True
            )
            sites = [
                (r, q - split[i], seqs[i][q + 1], i, q + 1)
                for r, i in enumerate(part)
                for q in range(max(split[i], first[i] - 1), len(seqs[i]) - 1)
            ]
            self._store(states, sites, lp)
            on_batch(len(part))

    def _store(self, states, sites, lp):
        """``lp[i][t]`` of each site ``(row, col, target, i, t)`` of ``states``."""
        if sites:
            rows, cols, tgts, seq, pos = zip(*sites)
            for i, t, v in zip(seq, pos, self._site_logp(states, rows, cols, tgts)):
                lp[i][t] = v

    def check(self, ids, *, atol):
        """``(split_head_ok, share_ok)``: whether each fast path, run on ``ids`` (a few token ids),
        matches the model's own logits within ``atol`` (in log probability) without raising."""
        import torch

        ids = [int(x) for x in ids]
        seqs = [tuple(ids[:4]), tuple(ids[:2] + ids[4:7]), tuple(ids[:3] + ids[7:9])]
        first = [1] * len(seqs)
        ref = []
        with torch.inference_mode():
            for s in seqs:
                logits = self.model(input_ids=torch.tensor([s], device=self.device)).logits[0]
                logp = torch.log_softmax(logits.float(), dim=-1)
                ref.append(
                    np.array([np.nan] + [float(logp[t - 1, s[t]]) for t in range(1, len(s))])
                )

        def close(split):
            got = self.run(seqs, first, split)
            return all(np.allclose(g[1:], r[1:], atol=atol, rtol=0) for g, r in zip(got, ref))

        head_ok = True
        if self._body_head is not None:
            try:
                head_ok = close(plan_splits(seqs, share=False))
            except Exception as exc:  # noqa: BLE001 - any failure: use the plain model
                log.info("LM head split unusable for %s: %s", type(self.model).__name__, exc)
                head_ok = False
            if not head_ok:
                self._body_head = None
        try:
            share_ok = close(plan_splits(seqs, share=True, min_shared=1))
        except Exception as exc:  # noqa: BLE001 - e.g. a cache type select_cache does not know
            log.info("key/value cache reuse unusable for %s: %s", type(self.model).__name__, exc)
            share_ok = False
        return head_ok, share_ok
