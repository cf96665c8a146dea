"""CausalLMScorer, its engine (each shared prefix run once, its key/value cache reused) and the
token it reads before each sentence (:func:`choose_context`); long on purpose: the scorer with
its engine, as _scorer holds the masked one with its."""

from __future__ import annotations

import copy
import inspect
import itertools
import logging
import re
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from .._errors import BiasampError, ChatModelWarning
from .._validation import Bool, NonEmptyStr, Optional, check
from ._base import BaseScorer
from ._load import load_tokenizer
from ._spans import locate_spans, pad_right

log = logging.getLogger(__name__)


class CausalLMScorer(BaseScorer):
    """Score candidate fillers of a blank with a causal (decoder-only) language model: each
    filled sentence scored left to right after a document-start token (docs/scoring.md).

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"gpt2"``) or local folder; a chat model is scored as a plain LM.
    options, progress, chunk_size
        As for :class:`MaskedLMScorer`.
    share_prefix : bool
        Run each shared prefix once and reuse its key/value cache (off when a load-time
        self-check finds the cache cannot be reused).
    context_token : str or None
        The token read before every sentence; None: :func:`choose_context`'s.
    """

    model_type = "causal"
    count_unit = "seq"

    def __init__(self, model, options=None, *, share_prefix=True, context_token=None, **kwargs):
        share_prefix = check(share_prefix, Bool, "share_prefix")
        context_token = check(context_token, Optional(NonEmptyStr), "context_token")
        super().__init__(model, options, **kwargs)
        self.context = choose_context(self.tokenizer, context_token, model=self.model_name)
        self.context_id = self.context.id
        if self.context.chat_template:
            warnings.warn(
                ChatModelWarning(
                    f"model {self.model_name!r} has a chat template: it is probed as a plain "
                    f"language model, each sentence scored as text after the context token "
                    f"{self.context.token!r} ({self.context.rule}), not inside a chat turn; the "
                    "numbers describe how it continues text, not what it answers in a conversation"
                ),
                stacklevel=2,
            )
        # the LM head alone at the scored positions, unless the self-check finds that it differs
        body, head = getattr(self.model, "base_model", None), self.model.get_output_embeddings()
        split = body is not None and body is not self.model and head is not None
        self._body_head = (body, head) if split else None
        self.window = sliding_window(self.model)
        atol = 1e-3 if self.dtype == torch.float32 else 0.25  # half precision: looser
        vocab = int(self.model.get_input_embeddings().weight.shape[0])
        probe_ids = [self.context_id] + [(17 * j + 3) % vocab for j in range(8)]
        self.head_split, ok = self._check_paths(probe_ids, atol=atol)
        self.n_forward_calls = 0  # the self-check's are not the caller's
        self.share_prefix = bool(share_prefix and ok)
        if share_prefix and not ok:
            log.info(
                "model %s: key/value cache reuse is off (self-check failed); every filled "
                "sentence runs whole",
                self.model_name,
            )

    def _cache_key(self):
        return {"context_token_id": self.context_id}

    def _extra_provenance(self):
        return {
            **self.context.to_dict(),
            "share_prefix": self.share_prefix,
            "head_split": self.head_split,
        }

    def sequences(self, rows, mode):
        """``(token ids, first scored position)`` of each row: the context token first; the
        candidate's first piece (``continuation``) or the token after the context (``sentence``)."""
        out = []
        for (_, _, _, prompt, cand), sp in zip(rows, locate_spans(self.tokenizer, rows)):
            ids, start = list(sp.ids), sp.start
            while ids and ids[-1] in self._special_ids and len(ids) > sp.end:
                ids.pop()  # an EOS the tokenizer appends is not part of the sentence
            lead = 0
            while lead < start and ids[lead] in self._special_ids:
                lead += 1  # what the tokenizer put in front: replaced by the context token
            ids, start = [self.context_id] + ids[lead:], start - lead + 1
            if len(ids) > self.max_length:
                raise BiasampError(
                    f"prompt {prompt!r} filled with {cand!r} is {len(ids)} tokens long (with the "
                    f"context token); the model accepts at most {self.max_length}"
                )
            out.append((tuple(ids), 1 if mode == "sentence" else start))
        return out

    def _count_rows(self, mode, rows):
        return len({ids for ids, _ in self.sequences(rows, mode)})

    def _score_rows(self, mode, rows, on_batch):
        return self._run_cells(self.sequences(rows, mode))

    def score_sentences(self, texts) -> np.ndarray:
        """The natural-log likelihood of each whole text after the context token (CrowS-Pairs on
        a causal LM: lm-evaluation-harness' ``loglikelihood`` after an empty context)."""
        return self._run_cells(self.sequences(_whole(texts), "sentence"))

    def count_sentences(self, texts) -> int:
        """How many distinct sequences :meth:`score_sentences` runs; nothing is run."""
        return len({ids for ids, _ in self.sequences(_whole(texts), "sentence")})

    def _run_cells(self, cells) -> np.ndarray:
        """The summed log probabilities of each ``(sequence, first scored position)`` cell."""
        earliest: dict[tuple, int] = {}
        for ids, f in cells:
            earliest[ids] = min(earliest.get(ids, f), f)
        seqs, first = list(earliest), list(earliest.values())
        index = {ids: i for i, ids in enumerate(seqs)}
        window = self.window  # a sliding-window cache keeps only the last tokens
        share = self.share_prefix and (window is None or max(map(len, seqs), default=0) < window)
        lp = self._run(seqs, first, plan_splits(seqs, share=share), on_batch=self.progress.advance)
        return np.array([lp[index[ids]][f:].sum() for ids, f in cells])

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
        """float64 log P(targets) at (rows, cols) of ``states``, once per distinct site."""
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
            x = states[tuple(torch.from_numpy(c).to(self.device) for c in block.T)]
            if self._body_head is not None:
                x = self._body_head[1](x)
            sel = np.flatnonzero((q_site >= b0) & (q_site < b0 + len(block)))
            li = torch.from_numpy(q_site[sel] - b0).to(self.device)
            ti = torch.from_numpy(q_tgt[sel]).to(self.device)
            out[sel] = target_log_softmax(x, li, ti).cpu().numpy()
        return out

    def _tensors(self, rows, width, starts):
        """Right-padded ids, attention mask and explicit positions (start + column)."""
        ids, att = pad_right(rows, width)
        pos = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(width, dtype=np.int64)
        return tuple(torch.from_numpy(a).to(self.device) for a in (ids, att, pos))

    def _run(self, seqs, first, split, on_batch=lambda n: None):
        """``lp[i][t] = log P(seqs[i][t] | seqs[i][:t])`` for ``t >= first[i] >= 1`` (NaN
        before) of distinct sequences, split by :func:`plan_splits`; ``on_batch(n_done)`` after
        each batch. Batches are sorted by length and padded on the right (causal attention
        never looks right; explicit positions, so the pads before a continuation shift nothing)."""
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
        conts = [i for _, mem in batch for i in mem if split[i] < len(seqs[i]) - 1]
        ids, att, pos = self._tensors([p for p, _ in batch], len(batch[0][0]), [0] * len(batch))
        states, cache = self._forward(ids, att, pos, use_cache=bool(conts))
        row_of = {i: r for r, (_, mem) in enumerate(batch) for i in mem}
        in_prefix = [  # the positions t whose t-1 lies in the prefix
            (row_of[i], t - 1, seqs[i][t], i, t)
            for i in row_of
            for t in range(first[i], split[i] + 1)
        ]
        self._store(states, in_prefix, lp)
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
                [seqs[i][split[i] : -1] for i in part], width, [split[i] for i in part]
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

    def _check_paths(self, ids, *, atol):
        """``(split_head_ok, share_ok)``: each fast path on ``ids`` gives the logits within ``atol``."""
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
            got = self._run(seqs, first, split)
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


def _whole(texts):
    """Rows of :meth:`CausalLMScorer.sequences` whose candidate is the whole text."""
    return [(t, 0, len(t), t, "the whole sentence") for t in texts]


#: Document separators looked for in the vocabulary, in this order.
DOCUMENT_SEPARATORS = (
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|begin_of_text|>",
    "<bos>",
    "<s>",
    "</s>",
    "<eos>",
)
_TURN_MARKERS = re.compile(
    r"im_start|im_end|start_of_turn|end_of_turn|eot_id|header_id|"
    r"^\[/?INST\]$|^<\|(user|assistant|system|end)\|>$"
)


@dataclass(frozen=True)
class Context:
    """The context token, the rule that chose it, and the chat markers passed over."""

    token: str
    id: int
    rule: str
    chat_template: bool
    skipped: tuple[str, ...] = ()

    def to_dict(self):
        return {
            "context_token": self.token,
            "context_rule": self.rule,
            "chat_template": self.chat_template,
            "context_skipped": list(self.skipped),
        }


def _template_text(tokenizer) -> str:
    tpl = getattr(tokenizer, "chat_template", None)
    if isinstance(tpl, dict):
        return "\n".join(str(v) for v in tpl.values())
    return str(tpl) if tpl else ""


def chat_markers(tokenizer) -> set[str]:
    """Special tokens marking chat turns: written in the chat template, or named as turn markers."""
    text = _template_text(tokenizer)
    specials = set(tokenizer.all_special_tokens)
    specials |= {
        t.content
        for t in getattr(tokenizer, "added_tokens_decoder", {}).values()
        if getattr(t, "special", False)
    }
    return {t for t in specials if (text and t in text) or _TURN_MARKERS.search(t)}


def _added_in_front(tokenizer) -> str | None:
    """The special token the tokenizer itself puts before a text, if any."""
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    front = ids and ids[0] in set(tokenizer.all_special_ids)
    return tokenizer.convert_ids_to_tokens(ids[0]) if front else None


def _vocab_id(tokenizer, token):
    """The id of ``token`` when it is one token of the vocabulary, else None."""
    tid = tokenizer.convert_tokens_to_ids(token)
    unknown = tid is None or (tid == tokenizer.unk_token_id and token != tokenizer.unk_token)
    return None if unknown else int(tid)


def choose_context(tokenizer, requested=None, *, model="model") -> Context:
    """The token a causal LM reads before each sentence (the rule: docs/scoring.md), or the
    ``requested`` one (``--context-token``)."""
    has_template = bool(_template_text(tokenizer))
    if requested is not None:
        tid = _vocab_id(tokenizer, requested)
        if tid is None:
            raise BiasampError(
                f"context_token {requested!r} is not a token of the vocabulary of "
                f"model {model!r} (its special tokens: "
                f"{', '.join(tokenizer.all_special_tokens)})"
            )
        return Context(requested, tid, "given with --context-token", has_template)
    markers = chat_markers(tokenizer)
    skipped = {}  # the chat markers passed over, in order
    candidates = [
        (_added_in_front(tokenizer), "added by the tokenizer in front of every text"),
        (tokenizer.bos_token, "the tokenizer's bos_token"),
        (tokenizer.eos_token, "the tokenizer's eos_token, a document separator"),
        *((t, "a document separator of the vocabulary") for t in DOCUMENT_SEPARATORS),
    ]
    for token, rule in candidates:
        if token is None or (tid := _vocab_id(tokenizer, token)) is None:
            continue
        if not (_TURN_MARKERS.search(token) if rule.startswith("added") else token in markers):
            return Context(token, tid, rule, has_template, tuple(skipped))
        skipped[token] = None
    raise BiasampError(
        f"model {model!r}: no document-start token found (no BOS or EOS that is not a chat "
        f"marker{', passed over ' + ', '.join(skipped) if skipped else ''}, and none of "
        f"{', '.join(DOCUMENT_SEPARATORS)}); give one with context_token (--context-token)"
    )


def model_context(model, requested=None, *, revision=None, trust_remote_code=False) -> Context:
    """The context token of ``model`` (its tokenizer alone), for the lm-evaluation-harness tasks."""
    tok = load_tokenizer(model, revision=revision, trust_remote_code=trust_remote_code)
    return choose_context(tok, requested, model=str(model))


_SITE_BLOCK = 512  # head + log-softmax over at most this many positions at once (memory)


def plan_splits(seqs, *, share=True, min_shared=2):
    """Split point ``p`` of each sequence (tokens before it run in the prefix pass): the longest
    prefix (``min_shared`` tokens at least) it shares with another, else the whole sequence.

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
    """float64 ``log_softmax(logits)[rows, targets]``, ``logits`` (the caller's) overwritten by
    ``exp(logits - max)``, summed by torch's cascade summation (docs/scoring.md: faster and more
    exact than ``torch.log_softmax`` in float32)."""
    x = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()
    picked = x[rows, targets].double()
    top = x.amax(dim=-1, keepdim=True)
    total = x.sub_(top).exp_().sum(dim=-1)
    return picked - (top.squeeze(-1).double() + torch.log(total.double()))[rows]


_LAYERS = ("DynamicLayer", "DynamicSlidingWindowLayer")  # cache layers select_cache copies


def select_cache(cache, index):
    """A new cache of rows ``index`` of ``cache``; None for one it does not know (hybrid, ...)."""
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
