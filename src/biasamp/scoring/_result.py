"""The result object of :meth:`MaskedLMScorer.score` (numpy only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ScoreResult", "renormalise"]


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
        Natural-log probability of each candidate under the estimator (``pll``: the
        pseudo-log-likelihood of the whole filled sentence).
    prob : ndarray of shape (n, k), float64
        ``exp(log_prob)`` renormalised over the ``k`` candidates of the row (rows sum to 1).
    mass : ndarray of shape (n,), float64
        ``sum_k exp(log_prob)``: the raw probability the candidate set covers (for ``pll`` a
        sum of sentence pseudo-likelihoods, not a probability mass).
    candidates : tuple of str, or tuple of tuple of str
        The candidates as given: one shared tuple, or one tuple per prompt.
    scoring : str
        The estimator, one of :data:`biasamp.scoring.SCORING_MODES`.
    prompts : tuple of str
        The prompts as given.

    Examples
    --------
    >>> r = ScoreResult.from_log_prob(np.log([[0.1, 0.3]]), candidates=("he", "she"),
    ...                               scoring="word", prompts=("[BLANK] is here.",))
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
        return cls(log_prob=log_prob, prob=renormalise(log_prob),
                   mass=np.exp(log_prob).sum(axis=1), candidates=candidates, scoring=scoring,
                   prompts=tuple(prompts))

    def candidates_for(self, i):
        """The candidate tuple of prompt ``i``."""
        if self.candidates and isinstance(self.candidates[0], tuple):
            return self.candidates[i]
        return self.candidates

    def to_frame(self):
        """Long table: one row per (prompt, candidate).

        Returns
        -------
        pandas.DataFrame
            Columns ``prompt_index, prompt, candidate, log_prob, prob, mass``.
        """
        import pandas as pd

        rows = []
        for i in range(self.log_prob.shape[0]):
            prompt = self.prompts[i] if i < len(self.prompts) else ""
            for j, cand in enumerate(self.candidates_for(i)):
                rows.append((i, prompt, cand, self.log_prob[i, j], self.prob[i, j], self.mass[i]))
        return pd.DataFrame(rows, columns=["prompt_index", "prompt", "candidate", "log_prob",
                                           "prob", "mass"])
