"""The bootstrap behind every CI of a probe: templates, tasks and base-rate counts, jointly.

One replicate ``b`` draws

* templates with replacement (``units`` "templates" or "both"): the model's table becomes
  the mean of the drawn templates' tables, ``M_b = counts_b @ M / m``;
* tasks with replacement (``units`` "tasks" or "both"): each task's cells are weighted by how
  often it was drawn (a two-way bootstrap over templates and occupations with "both");
* for a count-based base-rate source (``base="resample"``): a multinomial resample of its
  ``N`` counted sentences, ``counts_b ~ Multinomial(N, counts / N)``, turned into the base
  table the same way as the source's own (``BaseRateTable.joint_from_counts``).

and evaluates BiasAmp-> on ``(M_b, B_b)`` with the metric's own arithmetic
(:func:`biasamp.metrics._directional.table_core`, vectorised over replicates). BiasAmp-> is
linear in the model's table once the base is fixed, so the mean over drawn templates of the
per-template values is the value of the mean table: with templates only, the replicates are
exactly those of :func:`biasamp.metrics.bootstrap_ci` over the per-template values (same
seeded draws).

Why a multinomial bootstrap of the counts: the counts are ``N`` sentences, each falling in one
(task, attribute) cell; resampling the sentences is the nonparametric bootstrap of the
counting process. It needs no prior, keeps structural zeros (a cell never seen stays unseen,
so a task with no data stays undefined, as in the point estimate) and a task resting on one
sentence loses it in ``e^-1`` of the replicates (its sign is then not supported) while a
task with 1,000 sentences keeps its sign.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..metrics import directional_table_core as table_core

__all__ = ["BASE_UNCERTAINTY", "Draws", "RESAMPLE_UNITS", "draw_units", "percentile_ci",
           "replicates", "resample_counts", "sign_support", "source_stream"]

#: What a bootstrap replicate resamples besides the base counts.
RESAMPLE_UNITS = ("templates", "tasks", "both")
#: Whether count-based base rates are resampled (their sampling error enters the CIs).
BASE_UNCERTAINTY = ("resample", "none")

_BLOCK = 1 << 22  # entries of a (replicates x templates) block


@dataclass
class Draws:
    """The units drawn for each replicate (shared by every source and direction)."""

    templates: np.ndarray | None  # (R, m) how often each template is drawn, or None
    tasks: np.ndarray | None      # (R, T) how often each task is drawn, or None
    n: int                        # number of replicates R


def _counts_of(idx: np.ndarray, m: int) -> np.ndarray:
    b = idx.shape[0]
    return np.bincount((idx + (np.arange(b) * m)[:, None]).ravel(),
                       minlength=b * m).reshape(b, m).astype(np.float64)


def draw_units(n_templates: int, n_tasks: int, *, units: str, n_resamples: int,
               seed: int) -> Draws:
    """Seeded draws. Templates use ``default_rng(seed)`` in blocks exactly as
    :func:`biasamp.metrics.bootstrap_ci` does, so a templates-only bootstrap reproduces it."""
    tpl = tasks = None
    if units in ("templates", "both"):
        rng = np.random.default_rng(seed)
        block = max(1, _BLOCK // n_templates)
        parts = []
        for start in range(0, n_resamples, block):
            b = min(block, n_resamples - start)
            parts.append(_counts_of(rng.integers(0, n_templates, size=(b, n_templates)),
                                    n_templates))
        tpl = np.concatenate(parts)
    if units in ("tasks", "both"):
        rng = np.random.default_rng([seed, 1])
        tasks = _counts_of(rng.integers(0, n_tasks, size=(n_resamples, n_tasks)), n_tasks)
    return Draws(tpl, tasks, n_resamples)


def source_stream(name: str) -> int:
    """The random stream of a base-rate source's count resamples (from its name, so that
    every run and every comparison draws the same resamples for it)."""
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)


def resample_counts(counts: np.ndarray, *, n_resamples: int, seed: int, stream: int
                    ) -> np.ndarray:
    """``n_resamples`` multinomial resamples of a count table (its sentences), shape
    ``(n_resamples, *counts.shape)``; seeded by ``(seed, 2, stream)``."""
    c = np.asarray(counts, dtype=np.float64)
    n = int(round(c.sum()))
    rng = np.random.default_rng([seed, 2, stream])
    if n == 0:
        return np.zeros((n_resamples, *c.shape))
    draws = rng.multinomial(n, c.ravel() / c.sum(), size=n_resamples)
    return draws.reshape(n_resamples, *c.shape).astype(np.float64)


def replicates(tables: np.ndarray, joint: np.ndarray, *, direction: str, draws: Draws,
               metric: dict, base_draws: np.ndarray | None = None, to_joint=None,
               cells: np.ndarray | None = None) -> dict:
    """BiasAmp-> of every replicate: ``value`` (R,), ``delta``, ``contribution`` and ``y``
    (R, T, A).

    Parameters
    ----------
    tables : ndarray of shape (m, T, A)
        The model's table per template.
    joint : ndarray of shape (T, A)
        The base table (used when ``base_draws`` is None).
    metric : dict
        ``association`` (or None), ``tie_tol``, ``undefined``, ``ties`` as the metric takes.
    base_draws : ndarray of shape (R, T, A), optional
        Resampled base counts; ``to_joint`` maps them to base tables.
    cells : ndarray of bool (T, A), optional
        Only these cells count (the others are left out, as for ``min_base_count``).
    """
    m = tables.shape[0]
    flat = tables.reshape(m, -1)
    if draws.templates is not None:
        mbar = (draws.templates @ flat / m).reshape(draws.n, *tables.shape[1:])
    else:
        mbar = np.broadcast_to(flat.mean(axis=0).reshape(tables.shape[1:]),
                               (draws.n, *tables.shape[1:]))
    base = joint if base_draws is None else to_joint(base_draws)
    y = metric.get("association")
    core = table_core(mbar, base, direction=direction, y=y,
                      tie_tol=metric.get("tie_tol", 1e-12),
                      undefined=metric.get("undefined") or "skip",
                      ties=metric.get("ties") or "zero")
    contribution = core["contribution"]
    if cells is not None:
        contribution = np.where(cells, contribution, np.nan)
    defined = ~np.isnan(contribution)
    c0 = np.where(defined, contribution, 0.0)
    if draws.tasks is not None:  # weight each task's cells by its draw count
        w = draws.tasks[:, :, None]
        num, den = (c0 * w).sum(axis=(1, 2)), (defined * w).sum(axis=(1, 2))
    else:
        num, den = c0.sum(axis=(1, 2)), defined.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    y_rep = np.broadcast_to(core["y"], contribution.shape)
    return {"value": value, "delta": np.broadcast_to(core["delta"], contribution.shape),
            "contribution": contribution, "y": y_rep}


def percentile_ci(values: np.ndarray, confidence: float, axis: int = 0):
    """Percentile interval of replicates, NaN replicates ignored (all NaN -> NaN)."""
    import warnings

    q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(values, q, axis=axis)
    return lo, hi


def sign_support(y_rep: np.ndarray, y_point: np.ndarray, defined_rep: np.ndarray) -> np.ndarray:
    """Per cell: the share of replicates whose association sign equals the point estimate's
    (a replicate in which the cell is undefined does not support it)."""
    same = (y_rep == y_point[None]) & defined_rep
    return same.mean(axis=0)

