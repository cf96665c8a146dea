"""What every scorer shares (long on purpose: the loop, with its result and cache): loading,
device/dtype, the score loop, provenance, :class:`ScoreResult` and :class:`ScoreCache`. A subclass
implements ``_score_rows(mode, rows, on_batch)``, the log probability of every row (filled text,
candidate start and end, prompt, candidate), and ``_count_rows(mode, rows)``, the units it runs."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sqlite3
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._errors import BiasampError, DamagedCacheWarning, MissingWeightsWarning
from .._progress import as_progress
from .._validation import Bool, PositiveInt, check
from . import LoadOptions, take_options
from ._hub import resolve_model, weight_files_sha256
from ._load import (
    check_vocabulary,
    input_device,
    load_model,
    load_tokenizer,
    placement,
    resolve_device,
    resolve_dtype,
    tokenizer_fingerprint,
    transformers_logs_propagate,
)
from ._spans import BLANK, audit_candidates, check_score_inputs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoreResult:
    """Scores of ``k`` candidates for each of ``n`` prompts, in the caller's order.

    Attributes
    ----------
    log_prob : ndarray of shape (n, k), float64
        Natural-log probability of each candidate under the estimator.
    prob : ndarray of shape (n, k), float64
        ``exp(log_prob)`` renormalised over the ``k`` candidates of the row (rows sum to 1).
    mass : ndarray of shape (n,), float64
        ``sum_k exp(log_prob)``: the raw probability the candidates cover (not one for ``pll``).
    candidates : tuple of str, or tuple of tuple of str
        As given: one shared tuple, or one per prompt.
    scoring : str
        The estimator.
    prompts : tuple of str

    Examples
    --------
    >>> r = ScoreResult.from_log_prob(
    ...     np.log([[0.1, 0.3]]), candidates=("he", "she"), scoring="word"
    ... )
    >>> r.prob.round(3).tolist(), round(float(r.mass[0]), 3)
    ([[0.25, 0.75]], 0.4)
    """

    log_prob: np.ndarray
    prob: np.ndarray
    mass: np.ndarray
    candidates: tuple
    scoring: str
    prompts: tuple = ()

    @classmethod
    def from_log_prob(cls, log_prob, *, candidates, scoring, prompts=()):
        """Build a result from log probabilities of shape (n, k)."""
        log_prob = np.asarray(log_prob, dtype=np.float64)
        w = np.exp(log_prob - log_prob.max(axis=1, keepdims=True))  # a softmax of each row
        return cls(
            log_prob=log_prob,
            prob=w / w.sum(axis=1, keepdims=True),
            mass=np.exp(log_prob).sum(axis=1),
            candidates=candidates,
            scoring=scoring,
            prompts=tuple(prompts),
        )

    def candidates_for(self, i):
        """The candidate tuple of prompt ``i``."""
        if self.candidates and isinstance(self.candidates[0], tuple):
            return self.candidates[i]
        return self.candidates

    def to_frame(self):
        """One row per (prompt, candidate): prompt_index, prompt, candidate, log_prob, prob, mass."""
        import pandas as pd

        rows = [
            (i, self.prompts[i] if i < len(self.prompts) else "", c, lp[j], self.prob[i, j], m)
            for i, (lp, m) in enumerate(zip(self.log_prob, self.mass))
            for j, c in enumerate(self.candidates_for(i))
        ]
        columns = ["prompt_index", "prompt", "candidate", "log_prob", "prob", "mass"]
        return pd.DataFrame(rows, columns=columns)


def item_key(prefix, suffix, candidates):
    """Key of one prompt (text around the blank) with its ordered candidate tuple."""
    blob = json.dumps([prefix, suffix, list(candidates)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ScoreCache:
    """The score cache of one configuration (table ``meta``): ``scores-<hash16>.sqlite``, from
    :func:`item_key` to the JSON list of log probabilities (``repr`` floats: exact)."""

    def __init__(self, folder, config):
        try:
            root = Path(folder).expanduser()
            root.mkdir(parents=True, exist_ok=True)
        except (OSError, TypeError) as exc:
            raise BiasampError(f"score_cache {str(folder)!r} cannot be created: {exc}") from exc
        blob = json.dumps(config, sort_keys=True)
        self.path = root / f"scores-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.sqlite"
        try:
            self._open(blob)
        except sqlite3.DatabaseError as exc:  # "file is not a database": kept, set aside
            self._con.close()
            aside = self.path.with_name(f"{self.path.name}.damaged-{os.getpid()}")
            os.replace(self.path, aside)
            warnings.warn(
                DamagedCacheWarning(
                    f"score cache file {str(self.path)!r} could not be read ({exc}); it was "
                    f"moved to {aside.name!r} beside it and a fresh cache started"
                ),
                stacklevel=2,
            )
            self._open(blob)

    def _open(self, blob: str) -> None:
        self._con = sqlite3.connect(str(self.path))
        with self._con:
            self._con.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            self._con.execute("CREATE TABLE IF NOT EXISTS scores (k TEXT PRIMARY KEY, v TEXT)")
            self._con.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (blob,))

    def get_many(self, keys):
        """``{key: list of float}`` of the keys present."""
        found = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT k, v FROM scores WHERE k IN ({','.join('?' * len(part))})"
            for k, v in self._con.execute(q, part):
                found[k] = json.loads(v)
        return found

    def put_many(self, items):
        """Store ``(key, sequence of float)`` pairs in one transaction."""
        try:
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO scores VALUES (?, ?)",
                    [(k, json.dumps([float(x) for x in v])) for k, v in items],
                )
        except sqlite3.OperationalError as exc:  # "database or disk is full", "readonly"
            raise BiasampError(
                f"score_cache {str(self.path)!r} cannot be written ({exc}); the "
                f"{len(self)} scores it holds are kept: free space and rerun "
                "to reuse them"
            ) from exc

    def __len__(self):
        return self._con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def close(self):
        self._con.close()


class BaseScorer:
    """Common part of :class:`MaskedLMScorer` and :class:`CausalLMScorer` (see those)."""

    model_type = ""  # "masked" or "causal": the estimators it accepts and the class it loads
    #: Bumped when a scorer's numbers change for the same inputs (invalidates score caches).
    cache_format = 1

    def __init__(
        self,
        model,
        options: LoadOptions | None = None,
        *,
        progress=False,
        chunk_size=2048,
        **loading,
    ):
        self.options = o = take_options(options, loading)
        if loading:
            raise TypeError(
                f"{type(self).__name__}() got unexpected keyword arguments: {', '.join(loading)}"
            )
        self.batch_size = check(o.batch_size, PositiveInt, "batch_size")
        self.chunk_size = check(chunk_size, PositiveInt, "chunk_size")
        check(o.allow_missing_weights, Bool, "allow_missing_weights")
        check(o.trust_remote_code, Bool, "trust_remote_code")
        self.progress = as_progress(progress)
        self.revision = o.revision
        self.device = resolve_device(o.device)
        self.dtype = resolve_dtype(o.dtype, self.device)
        placed = placement(o)
        self.device_map = placed.get("device_map")
        # a ResolvedModel (load_scorer) is taken as it is: no second hub request or config read
        resolved = resolve_model(model, self.model_type, options=o)
        if resolved.model_type != self.model_type or resolved.revision != o.revision:
            raise BiasampError(
                f"model {resolved.name!r} was resolved as a {resolved.model_type} "
                f"language model at revision {resolved.revision!r}; this scorer "
                f"is for {self.model_type} ones at revision {o.revision!r}"
            )
        self.model_name, self.source = resolved.name, resolved.source
        self.model_type_evidence = resolved.evidence
        self.progress.stage(f"loading {self.model_name}", 1, "model")
        self.tokenizer = load_tokenizer(self.source, trust_remote_code=o.trust_remote_code)
        self._check_tokenizer()  # before the weights are read
        self.model, self.missing_weights = load_model(
            self.source, kind=self.model_type, options=o, dtype=self.dtype, placed=placed
        )
        check_vocabulary(self.tokenizer, self.model, self.model_name)
        self.max_length = self._max_length()
        self._special_ids = frozenset(self.tokenizer.all_special_ids)
        if self.device_map is None:
            self.model.to(self.device)
        else:  # placed by accelerate (GPUs, CPU, disk); inputs go where its first module is
            self.device = input_device(self.model, self.device)
        self.progress.advance()
        if self.missing_weights:
            names = ", ".join(self.missing_weights[:4]) + (
                ", ..." if len(self.missing_weights) > 4 else ""
            )
            warnings.warn(
                MissingWeightsWarning(
                    f"model {self.model_name!r} was loaded with {len(self.missing_weights)} weight(s) "
                    f"missing from its checkpoint and initialised at random ({names}); its scores "
                    "are not those of a trained model"
                ),
                stacklevel=2,
            )
        self.n_forward_calls = 0
        self._caches = {}

    def _check_tokenizer(self):
        """What the scorer needs of the tokenizer, checked before the weights load."""

    def _max_length(self) -> int:
        """The longest token sequence the tokenizer and the position embeddings take."""
        tok_max = getattr(self.tokenizer, "model_max_length", None) or 10**9
        cfg = self.model.config
        pos = getattr(cfg, "max_position_embeddings", None)
        if self.model_type == "causal":
            pos = pos or getattr(cfg, "n_positions", None)
        elif pos is not None and type(self.model).__name__.startswith(
            ("Roberta", "XLMRoberta", "Camembert")
        ):
            pos = pos - (cfg.pad_token_id or 0) - 1  # positions start after the padding index
        return int(min(tok_max, pos or tok_max))

    @functools.cached_property
    def _weights(self) -> dict:
        return weight_files_sha256(self.source)

    @property
    def provenance(self):
        """The model, how it was loaded and run, and library versions (JSON-ready dict)."""
        import torch
        import transformers

        from .. import __version__

        placed = getattr(self.model, "hf_device_map", None)
        modules = dict(Counter(map(str, placed.values()))) if placed and self.device_map else None
        out = {
            "model": self.model_name,
            "model_type": self.model_type,
            "model_type_from": self.model_type_evidence,
            "revision": self.revision,
            "commit": self.source.commit,
            "weights_sha256": dict(self._weights),
            "model_class": type(self.model).__name__,
            "tokenizer_class": type(self.tokenizer).__name__,
            "device": str(self.device),
            "dtype": str(self.dtype).replace("torch.", ""),
            "device_map": modules and {"strategy": self.device_map, "modules": modules},
            "versions": {
                "biasamp": __version__,
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            },
        }
        if self.missing_weights:
            out["missing_weights"] = list(self.missing_weights)
        out.update(self._extra_provenance())
        return out

    def _extra_provenance(self):
        return {}

    def _on_batch(self, n_units):
        self.n_forward_calls += 1
        self.progress.advance(n_units)

    def audit(self, candidates, *, prompt=None, blank=BLANK):
        """Tokenisation audit of ``candidates`` (see :func:`biasamp.scoring.audit_candidates`)."""
        return audit_candidates(self.tokenizer, candidates, prompt=prompt, blank=blank)

    def audit_prompts(self, prompt_candidates, *, blank=BLANK):
        """:meth:`audit` of the candidates of ``(prompt, candidates)`` pairs, one row each, in the
        first prompt that offers its list (a sentence's first word has no leading space)."""
        import pandas as pd

        first: dict[tuple, str] = {}
        for prompt, cands in prompt_candidates:
            first.setdefault(tuple(cands), prompt)
        parts = [self.audit(list(c), prompt=p, blank=blank) for c, p in first.items()]
        return pd.concat(parts, ignore_index=True).drop_duplicates("candidate", ignore_index=True)

    @transformers_logs_propagate()
    def score(self, prompts, candidates, *, scoring=None, blank=BLANK):
        """Score each candidate in each prompt.

        Parameters
        ----------
        prompts : sequence of str, length n
            Each contains ``blank`` exactly once.
        candidates : sequence of str (length k), or n sequences of k str
            One list shared by all prompts, or one per prompt; a candidate may be several words.
        scoring : str or None
            An estimator of the model's type (:func:`biasamp.scoring.estimators_for`).
        blank : str

        Returns
        -------
        ScoreResult
        """
        import torch

        pairs, per, given, mode, prompts = self._inputs(prompts, candidates, scoring, blank)
        n, k = len(pairs), len(per[0])
        out = np.full((n, k), np.nan)
        cache = self._cache(mode)
        todo, keys, found = self._todo(cache, pairs, per)
        for i in np.flatnonzero(~todo):
            out[i] = found[keys[i]]
        if cache is not None:
            log.info("score cache %s: %d of %d prompts cached", cache.path, n - todo.sum(), n)
        done = 0
        for idx, rows in self._chunks(pairs, per, prompts, np.flatnonzero(todo)):
            try:
                vals = self._score_rows(mode, rows, self._on_batch)
            except (MemoryError, RuntimeError) as exc:  # torch's OutOfMemoryError is one
                if not (
                    isinstance(exc, MemoryError | torch.OutOfMemoryError)
                    or "can't allocate memory" in str(exc)
                ):
                    raise
                kept = (
                    f"; the {done} prompts scored before are in the score cache"
                    if cache is not None and done
                    else ""
                )
                raise BiasampError(
                    f"model {self.model_name!r} ran out of memory on {self.device} scoring "
                    f"a batch of up to {self.batch_size} prompts ({type(exc).__name__}); "
                    f"lower batch_size (--batch-size){kept}"
                ) from None
            out[idx] = vals.reshape(len(idx), k)
            done += len(idx)
            if cache is not None:
                cache.put_many((keys[i], out[i]) for i in idx)
        self._after_score(mode)
        return ScoreResult.from_log_prob(out, candidates=given, scoring=mode, prompts=prompts)

    @transformers_logs_propagate()
    def count_contexts(self, prompts, candidates, *, scoring=None, blank=BLANK) -> int:
        """How many units of ``progress`` :meth:`score` runs (cached prompts left out); none run."""
        pairs, per, _, mode, prompts = self._inputs(prompts, candidates, scoring, blank)
        todo = self._todo(self._cache(mode), pairs, per)[0]
        return sum(
            self._count_rows(mode, rows)
            for _, rows in self._chunks(pairs, per, prompts, np.flatnonzero(todo))
        )

    def _inputs(self, prompts, candidates, scoring, blank):
        pairs, per, given, mode = check_score_inputs(
            prompts,
            candidates,
            scoring=scoring,
            blank=blank,
            model_type=self.model_type,
            model=self.model_name,
        )
        return pairs, per, given, mode, tuple(pre + blank + post for pre, post in pairs)

    def _todo(self, cache, pairs, per):
        """(which prompts the cache does not hold, their cache keys, what it holds)."""
        if cache is None:
            return np.ones(len(pairs), dtype=bool), None, {}
        keys = [item_key(pre, post, c) for (pre, post), c in zip(pairs, per)]
        found = cache.get_many(keys)
        return np.array([kk not in found for kk in keys], dtype=bool), keys, found

    def _chunks(self, pairs, per, prompts, todo):
        """``(indices, rows)`` of each chunk of the prompts in ``todo``."""
        for c0 in range(0, len(todo), self.chunk_size):
            idx = todo[c0 : c0 + self.chunk_size]
            rows = []
            for i in idx:
                pre, post = pairs[i]
                rows += [
                    (pre + c + post, len(pre), len(pre) + len(c), prompts[i], c) for c in per[i]
                ]
            yield idx, rows

    count_unit = "ctx"  # of count_contexts and of the progress score reports

    def _after_score(self, mode):
        pass

    def _cache_key(self) -> dict:
        """What else changes the scores of the same prompts (a causal LM's context token)."""
        return {}

    def _cache(self, mode):
        if self.options.score_cache is None:
            return None
        if mode not in self._caches:
            config = {
                "model": self.model_name,
                "revision": self.revision,
                "commit": self.source.commit,
                "weights": self._weights,
                "config": self.model.config.to_json_string(),
                "tokenizer": tokenizer_fingerprint(self.tokenizer),
                "scoring": mode,
                "dtype": str(self.dtype),
                "format": self.cache_format,
                **self._cache_key(),
            }
            self._caches[mode] = ScoreCache(self.options.score_cache, config)
        return self._caches[mode]

    def __repr__(self):
        return (
            f"{type(self).__name__}({self.model_name!r}, device='{self.device}', "
            f"dtype='{str(self.dtype).replace('torch.', '')}', batch_size={self.batch_size})"
        )
