"""MaskedLMScorer: batched candidate scoring with a Hugging Face masked LM."""

from __future__ import annotations

import logging

import numpy as np

from .._errors import BiasampError
from .._validation import PositiveInt, check
from ._audit import audit_candidates
from ._cache import ScoreCache, item_key
from ._engine import build_queries, run_queries
from ._load import (lm_head_fn, load_model, load_tokenizer, model_fingerprint, resolve_device,
                    resolve_dtype, tokenizer_fingerprint)
from ._result import ScoreResult
from ._spans import BLANK, check_score_inputs, locate_spans

log = logging.getLogger(__name__)

__all__ = ["MaskedLMScorer"]


class MaskedLMScorer:
    """Score candidate fillers of a blank with a masked language model.

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"bert-base-uncased"``) or local folder, loaded with
        ``AutoModelForMaskedLM`` / ``AutoTokenizer`` (fast tokenizer needed).
    revision : str, optional
        Hub revision (branch, tag or commit) to pin.
    device : {"auto", "cpu", "cuda", "cuda:N"}
        ``"auto"``: CUDA if available, else CPU.
    dtype : {"float32", "bfloat16", "float16"}
        Weight dtype. ``float16`` needs CUDA; ``bfloat16`` also runs on CPU (slowly on most
        CPUs). The log-softmax is always taken in float32.
    trust_remote_code : bool
        Passed to ``from_pretrained``; off by default.
    batch_size : int
        Distinct masked contexts per encoder call.
    cache_dir : str or path-like, optional
        Folder for an on-disk score cache (sqlite, one file per model/tokenizer/estimator/dtype);
        cached prompts never reach the model.
    progress : bool
        Show a tqdm progress bar (off by default in the library).
    chunk_size : int
        Prompts tokenised and run together; memory does not grow with the number of prompts
        beyond one chunk (plus the (n, k) result arrays).

    Examples
    --------
    Doctests cannot download a model; see ``tests/test_scoring.py`` and the README::

        scorer = MaskedLMScorer("bert-base-uncased")
        r = scorer.score(["[BLANK] is a nurse."], ["he", "she"], scoring="first-piece")
        r.prob      # (1, 2), rows sum to 1

    >>> MaskedLMScorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """

    def __init__(self, model, *, revision=None, device="auto", dtype="float32",
                 trust_remote_code=False, batch_size=32, cache_dir=None, progress=False,
                 chunk_size=2048):
        self.batch_size = check(batch_size, PositiveInt, "batch_size")
        self.chunk_size = check(chunk_size, PositiveInt, "chunk_size")
        self.progress = bool(progress)
        self.model_name = str(model)
        self.revision = revision
        self.tokenizer = load_tokenizer(model, revision=revision,
                                        trust_remote_code=trust_remote_code)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.model = load_model(model, revision=revision, trust_remote_code=trust_remote_code,
                                dtype=self.dtype, progress=self.progress).to(self.device)
        if self.tokenizer.mask_token_id is None:
            raise BiasampError(f"model {self.model_name!r}: its tokenizer has no mask token; "
                               "a masked language model is needed")
        self._head = lm_head_fn(self.model)
        if self._head is None:
            log.info("no known LM head split for %s; scoring with full-model logits",
                     type(self.model).__name__)
        self.max_length = self._max_length()
        self._special_ids = frozenset(self.tokenizer.all_special_ids)
        self.n_forward_calls = 0
        self.cache_dir = cache_dir
        self._caches = {}
        self._fingerprint = None

    def _max_length(self):
        tok_max = getattr(self.tokenizer, "model_max_length", None) or 10 ** 9
        cfg = self.model.config
        pos = getattr(cfg, "max_position_embeddings", None)
        if pos is not None and type(self.model).__name__.startswith(
                ("Roberta", "XLMRoberta", "Camembert")):
            pos = pos - (cfg.pad_token_id or 0) - 1  # positions start after the padding index
        return int(min(tok_max, pos or tok_max))

    # ------------------------------------------------------------------ public API
    @property
    def provenance(self):
        """Model, revision, classes, device, dtype and library versions (a dict of str)."""
        import torch
        import transformers

        from .. import __version__

        return {"model": self.model_name, "revision": self.revision,
                "model_class": type(self.model).__name__,
                "tokenizer_class": type(self.tokenizer).__name__,
                "device": str(self.device), "dtype": str(self.dtype).replace("torch.", ""),
                "versions": {"biasamp": __version__, "torch": torch.__version__,
                             "transformers": transformers.__version__}}

    def audit(self, candidates, *, prompt=None, blank=BLANK):
        """Tokenisation audit of ``candidates`` (see :func:`biasamp.scoring.audit_candidates`)."""
        return audit_candidates(self.tokenizer, candidates, prompt=prompt, blank=blank)

    def score(self, prompts, candidates, *, scoring="word", blank=BLANK):
        """Score each candidate in each prompt.

        Parameters
        ----------
        prompts : sequence of str, length n
            Each contains ``blank`` exactly once.
        candidates : sequence of str (length k), or n sequences of k str
            One candidate list shared by all prompts, or one per prompt (equal lengths). A
            candidate may be several words (``"they are"``).
        scoring : {"word", "first-piece", "pll"}
        blank : str

        Returns
        -------
        ScoreResult
            ``log_prob`` (n, k), ``prob`` (n, k) rows summing to 1, ``mass`` (n,), in the
            caller's order.
        """
        pairs, per, given, mode = check_score_inputs(prompts, candidates, scoring=scoring,
                                                     blank=blank)
        prompts = tuple(pre + blank + post for pre, post in pairs)  # (any iterable given)
        n, k = len(pairs), len(per[0])
        out = np.full((n, k), np.nan)
        todo = np.arange(n)
        cache = self._cache(mode)
        keys = None
        if cache is not None:
            keys = [item_key(pre, post, c) for (pre, post), c in zip(pairs, per)]
            found = cache.get_many(keys)
            hit = np.array([kk in found for kk in keys], dtype=bool)
            for i in np.flatnonzero(hit):
                out[i] = found[keys[i]]
            todo = np.flatnonzero(~hit)
            log.info("score cache %s: %d of %d prompts cached", cache.path, hit.sum(), n)
        split = {}
        from tqdm.auto import tqdm

        bar = tqdm(total=0, unit="ctx", desc=f"scoring ({mode})", disable=not self.progress)

        def on_batch(n_ctx, n_tok):
            self.n_forward_calls += 1
            bar.update(n_ctx)

        try:
            for c0 in range(0, len(todo), self.chunk_size):
                idx = todo[c0:c0 + self.chunk_size]
                rows = []
                for i in idx:
                    pre, post = pairs[i]
                    for c in per[i]:
                        rows.append((pre + c + post, len(pre), len(pre) + len(c), prompts[i], c))
                spans = locate_spans(self.tokenizer, rows, max_length=self.max_length)
                if mode == "first-piece":
                    for (_, _, _, _, c), sp in zip(rows, spans):
                        if sp.end - sp.start > 1 and c not in split:
                            split[c] = self.tokenizer.convert_ids_to_tokens(list(sp.pieces))
                qs = build_queries(mode, spans, self.tokenizer.mask_token_id, self._special_ids)
                bar.total += len(qs.contexts)
                bar.refresh()
                vals = run_queries(qs, model=self.model, head=self._head, device=self.device,
                                   batch_size=self.batch_size, pad_id=self.tokenizer.pad_token_id,
                                   on_batch=on_batch)
                flat = np.zeros(len(idx) * k)
                np.add.at(flat, np.asarray(qs.q_out, dtype=np.int64), vals)
                out[idx] = flat.reshape(len(idx), k)
                if cache is not None:
                    cache.put_many((keys[i], out[i]) for i in idx)
        finally:
            bar.close()
        if split:
            log.warning("first-piece scoring of %d split candidate(s) uses only their first "
                        "piece: %s", len(split),
                        ", ".join(f"{c!r} -> {' '.join(p)}" for c, p in split.items()))
        return ScoreResult.from_log_prob(out, candidates=given, scoring=mode, prompts=prompts)

    # ------------------------------------------------------------------ cache
    def _cache(self, mode):
        if self.cache_dir is None:
            return None
        if mode not in self._caches:
            if self._fingerprint is None:
                self._fingerprint = (model_fingerprint(self.model_name, self.revision,
                                                       self.model),
                                     tokenizer_fingerprint(self.tokenizer))
            config = {"model": self.model_name, "revision": self.revision,
                      "weights": self._fingerprint[0], "tokenizer": self._fingerprint[1],
                      "scoring": mode, "dtype": str(self.dtype), "format": 1}
            self._caches[mode] = ScoreCache(self.cache_dir, config)
        return self._caches[mode]

    def __repr__(self):
        return (f"MaskedLMScorer({self.model_name!r}, device='{self.device}', "
                f"dtype='{str(self.dtype).replace('torch.', '')}', batch_size={self.batch_size})")
