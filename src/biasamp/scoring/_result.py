"""What a scorer's ``score`` returns (:class:`ScoreResult`), and the on-disk score cache."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._errors import BiasampError, DamagedCacheWarning


def renormalise(log_prob):
    """Softmax of each row of ``log_prob`` (shape (n, k)) in float64: rows sum to 1.

    >>> renormalise(np.log([[0.2, 0.6]])).round(6).tolist()
    [[0.25, 0.75]]
    """
    log_prob = np.asarray(log_prob, dtype=np.float64)
    top = log_prob.max(axis=1, keepdims=True)
    w = np.exp(log_prob - top)
    return w / w.sum(axis=1, keepdims=True)


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
    ...     np.log([[0.1, 0.3]]),
    ...     candidates=("he", "she"),
    ...     scoring="word",
    ...     prompts=("[BLANK] is here.",),
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
        return cls(
            log_prob=log_prob,
            prob=renormalise(log_prob),
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
        """Long table, one row per (prompt, candidate): ``prompt_index, prompt, candidate,
        log_prob, prob, mass``."""
        import pandas as pd

        rows = []
        for i in range(self.log_prob.shape[0]):
            prompt = self.prompts[i] if i < len(self.prompts) else ""
            for j, cand in enumerate(self.candidates_for(i)):
                rows.append((i, prompt, cand, self.log_prob[i, j], self.prob[i, j], self.mass[i]))
        return pd.DataFrame(
            rows, columns=["prompt_index", "prompt", "candidate", "log_prob", "prob", "mass"]
        )


def item_key(prefix, suffix, candidates):
    """Key of one prompt (text around the blank) with its ordered candidate tuple."""
    blob = json.dumps([prefix, suffix, list(candidates)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ScoreCache:
    """The score cache of one scoring configuration: ``scores-<hash16>.sqlite``, its
    configuration in table ``meta``, and ``scores`` from :func:`item_key` to the JSON list of
    log probabilities (``repr`` floats: an exact round trip)."""

    def __init__(self, folder, config):
        try:
            root = Path(folder).expanduser()
            root.mkdir(parents=True, exist_ok=True)
        except (OSError, TypeError) as exc:
            raise BiasampError(f"score_cache {str(folder)!r} cannot be created: {exc}") from exc
        blob = json.dumps(config, sort_keys=True)
        self.config_hash = hashlib.sha256(blob.encode()).hexdigest()
        self.path = root / f"scores-{self.config_hash[:16]}.sqlite"
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
