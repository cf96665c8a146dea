"""Aggregation of bound templates (each rendered with its own task), and values per group.

A bound template covers only its own task(s), so BiasAmp-> per template does not exist for
task->attribute. The model's tables are pooled instead:

* T->A: ``P(A | T=t)`` is the mean over the templates of task ``t`` (its own sentences);
* A->T: ``P(T | A=a)`` is the mean over all templates (the referent masked, every task of
  the vocabulary a candidate), as for crossed templates;

and BiasAmp-> is computed once on the pooled table. For a crossed set (every template
covers every task) this equals the mean of the per-template values. The value is linear
in the pooled table (the base fixes the association, the base probabilities and which
cells are defined), so it decomposes into per-unit terms -- a unit is a (template, task)
row for T->A, a template for A->T -- and a bootstrap that resamples units *within each
stratum* (task for T->A; the template's own task for A->T) is a counts-by-values product,
with exactly the resamples of :func:`biasamp.metrics.bootstrap_ci` with ``strata``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from ..metrics import bootstrap_ci, directional_bias_amplification, resample_indices
from ..results import BY_PAIR_COLUMNS, PER_TEMPLATE_COLUMNS

__all__ = ["Units", "coverage", "crossed_group", "group_value", "pooled_table",
           "stratified_mean_ci", "template_masks"]


@dataclass
class Units:
    """The decomposition of one pooled (source, direction) value into units."""

    k: np.ndarray         # (U,) template index of each unit
    t: np.ndarray | None  # (U,) task index of each unit (T->A), None (A->T: all tasks)
    strata: list          # (U,) stratum label of each unit
    sums: np.ndarray      # (U, n_t) summed contributions of the unit's defined cells per task
    row_cells: np.ndarray  # (n_t,) defined cells per task (the mean's denominator by row)


def _percentiles(stats: np.ndarray, confidence: float):
    q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
    with np.errstate(invalid="ignore"):
        lo, hi = np.percentile(stats, q, axis=0)
    return lo, hi


def _constant(v: np.ndarray, strata) -> np.ndarray:
    """Columns of ``v`` whose values are equal within every stratum: every stratified
    resample then has exactly the same mean."""
    labels = np.asarray([str(s) for s in strata])
    const = np.ones(v.shape[1], dtype=bool)
    for lab in dict.fromkeys(labels.tolist()):
        part = v[labels == lab]
        const &= np.all(part == part[:1], axis=0)
    return const


def stratified_mean_ci(v: np.ndarray, strata, *, n_resamples: int, seed: int,
                       confidence: float):
    """Percentile CI of the column means of ``v`` (U, c) under stratified resampling, and
    which columns are constant (their interval is the point itself; callers put their
    exact value there, so no rounding puts a point outside its own interval)."""
    u = v.shape[0]
    stats = []
    for idx in resample_indices(u, n_resamples=n_resamples, seed=seed, strata=strata):
        b = idx.shape[0]
        counts = np.bincount((idx + (np.arange(b) * u)[:, None]).ravel(),
                             minlength=b * u).reshape(b, u).astype(np.float64)
        stats.append(counts @ v / u)
    lo, hi = _percentiles(np.concatenate(stats, axis=0), confidence)
    return lo, hi, _constant(v, strata)


def _cells(tables, cover, strata_at, direction):
    """Units (k, t) and their rows x: T->A one task row each, A->T a full table each."""
    n_tpl, n_t, n_a = tables.shape
    if direction == TASK_TO_ATTRIBUTE:
        kk, tt = np.nonzero(cover)
        x = tables[kk, tt, :]
        n = np.bincount(tt, minlength=n_t)
        pooled = np.zeros((n_t, n_a))
        np.add.at(pooled, tt, x)
        return kk, tt, x, pooled / n[:, None], list(tt)
    kk = np.arange(n_tpl)
    return kk, None, tables, tables.mean(axis=0), list(strata_at)


def pooled_table(tables, cover, strata_at, joint, kwargs, *, name, direction, tasks,
                 attributes, template_ids, n_resamples, seed, confidence):
    """Summary record, by_pair frame, per-template frame and :class:`Units` of one (source,
    direction) of a set with bound templates."""
    from .evaluate import _pairs_in_order

    n_tpl, n_t, n_a = tables.shape
    kk, tt, x, pooled, strata = _cells(tables, cover, strata_at, direction)
    res = directional_bias_amplification(np.ascontiguousarray(pooled), joint, **kwargs)
    bp = _pairs_in_order(res.by_pair, n_t, n_a)
    y, pb = bp["association"].reshape(n_t, n_a), bp["p_base"].reshape(n_t, n_a)
    defined = ~np.isnan(bp["contribution"].reshape(n_t, n_a))
    n_cells = max(int(defined.sum()), 1)
    if tt is not None:   # one row per unit
        delta = x - pb[tt]
        contr = np.where(defined[tt], np.where(y[tt] == 0, 0.0, y[tt] * delta), np.nan)
        sums = np.zeros((len(kk), n_t))
        sums[np.arange(len(kk)), tt] = np.nansum(contr, axis=1)
        per_task = np.bincount(tt, minlength=n_t)
        scale = len(kk) / per_task[tt]
        cols = np.zeros((len(kk), 2 * n_t * n_a))
        for c, arr in enumerate((delta, contr)):
            idx = c * n_t * n_a + tt[:, None] * n_a + np.arange(n_a)[None, :]
            cols[np.arange(len(kk))[:, None], idx] = arr * scale[:, None]
        value_col = sums.sum(axis=1) * scale / n_cells
        p_std = np.zeros((n_t, n_a))
        for t in range(n_t):
            p_std[t] = np.std(x[tt == t], axis=0, ddof=0)
        n_tpl_cell = np.where(defined, per_task[:, None], 0).ravel()
    else:                # a full table per unit
        delta = x - pb[None]
        contr = np.where(defined[None], np.where(y[None] == 0, 0.0, y[None] * delta), np.nan)
        sums = np.nansum(contr, axis=2)
        cols = np.concatenate([delta.reshape(n_tpl, -1), contr.reshape(n_tpl, -1)], axis=1)
        value_col = sums.sum(axis=1) / n_cells
        p_std = np.std(x, axis=0, ddof=0)
        n_tpl_cell = np.where(defined, n_tpl, 0).ravel()
    v = np.concatenate([value_col[:, None], cols], axis=1)
    lo, hi, const = stratified_mean_ci(v, strata, n_resamples=n_resamples, seed=seed,
                                       confidence=confidence)
    exact = np.concatenate([[res.value], bp["delta"], bp["contribution"]])
    lo, hi = np.where(const, exact, lo), np.where(const, exact, hi)
    per_tpl = (np.full(n_tpl, np.nan) if tt is not None else value_col)
    summary = {"base_rates": name, "direction": direction, "mean": float(res.value),
               "std": float("nan") if tt is not None else float(np.std(value_col)),
               "ci_low": float(lo[0]), "ci_high": float(hi[0]),
               "n_templates": int(len(np.unique(kk))),
               "per_template": [] if tt is not None else [float(v) for v in value_col],
               "aggregation": "pooled"}
    m = n_t * n_a
    pair = pd.DataFrame({
        "base_rates": name, "direction": direction,
        "task": np.repeat(np.asarray(tasks, dtype=object), n_a),
        "attribute": np.tile(np.asarray(attributes, dtype=object), n_t),
        "association": bp["association"], "p_base": bp["p_base"], "p_model": bp["p_model"],
        "p_model_std": p_std.ravel(), "delta": bp["delta"],
        "delta_ci_low": lo[1:1 + m], "delta_ci_high": hi[1:1 + m],
        "contribution": bp["contribution"], "contribution_ci_low": lo[1 + m:],
        "contribution_ci_high": hi[1 + m:], "n_templates": n_tpl_cell.astype(np.int64),
    }, columns=list(BY_PAIR_COLUMNS))
    per_template = pd.DataFrame({"base_rates": name, "direction": direction,
                                 "template_id": template_ids, "value": per_tpl,
                                 "n_ties": res.n_ties, "n_nan": res.n_nan},
                                columns=list(PER_TEMPLATE_COLUMNS))
    units = Units(kk, tt, strata, sums, defined.sum(axis=1))
    return summary, pair, per_template, units


def group_value(units: Units, members: np.ndarray, *, n_resamples, seed, confidence):
    """(value, ci_low, ci_high, n_templates, n_tasks) of the templates ``members`` (bool
    mask over templates): the pooled value over the tasks they cover (a task no member
    covers is left out of the mean, like an undefined cell)."""
    sel = members[units.k]
    if not sel.any():
        return (float("nan"),) * 3 + (0, 0)
    sums = units.sums[sel]
    if units.t is None:
        covered = np.ones(sums.shape[1], dtype=bool)
        n_cells = int(units.row_cells.sum())
        v = sums.sum(axis=1) / max(n_cells, 1)
    else:
        t = units.t[sel]
        per_task = np.bincount(t, minlength=sums.shape[1])
        covered = per_task > 0
        n_cells = int(units.row_cells[covered].sum())
        v = sums.sum(axis=1) * len(t) / per_task[t] / max(n_cells, 1)
    if n_cells == 0:
        return (float("nan"),) * 3 + (int(len(np.unique(units.k[sel]))), int(covered.sum()))
    strata = [s for s, keep in zip(units.strata, sel) if keep]
    lo, hi, const = stratified_mean_ci(v[:, None], strata, n_resamples=n_resamples, seed=seed,
                                       confidence=confidence)
    value = float(np.mean(v))
    if const[0]:
        lo, hi = [value], [value]
    return (value, float(lo[0]), float(hi[0]), int(len(np.unique(units.k[sel]))),
            int(covered.sum()))


def coverage(template_tasks, tasks, n_tpl):
    """(cover, strata): which tasks each template covers and its stratum label, or (None,
    None) when every template covers every task (crossed)."""
    if template_tasks is None:
        return None, None
    bound = [list(map(str, b or ())) for b in template_tasks]
    if len(bound) != n_tpl:
        raise BiasampError(f"template_tasks must have one entry per template ({n_tpl}); got "
                           f"{len(bound)}")
    index = {t: i for i, t in enumerate(tasks)}
    cover = np.zeros((n_tpl, len(tasks)), dtype=bool)
    for k, b in enumerate(bound):
        unknown = [t for t in b if t not in index]
        if unknown:
            raise BiasampError(f"template_tasks[{k}] names tasks {unknown} that are not in "
                               f"tasks")
        cover[k, [index[t] for t in b] if b else slice(None)] = True
    if cover.all():
        return None, None
    missing = [t for t, c in zip(tasks, cover.any(axis=0)) if not c]
    if missing:
        raise BiasampError(f"template_tasks: tasks {missing} are covered by no template")
    return cover, ["|".join(b) if b else "*" for b in bound]


def template_masks(template_groups, n_tpl, order=None) -> dict:
    """label -> bool mask over templates, labels in ``order`` (then in order of first
    appearance)."""
    if template_groups is None:
        return {}
    per = [list(map(str, g or ())) for g in template_groups]
    if len(per) != n_tpl:
        raise BiasampError(f"template_groups must have one entry per template ({n_tpl}); got "
                           f"{len(per)}")
    labels = list(dict.fromkeys([g for g in (order or ()) if any(g in gs for gs in per)]
                                + [g for gs in per for g in gs]))
    return {lab: np.array([lab in gs for gs in per]) for lab in labels}


def crossed_group(values, members, n_tasks, *, n_resamples, seed, confidence):
    """(mean, ci_low, ci_high, n_templates, n_tasks) over the finite values of members."""
    v = values[members]
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), float("nan"), 0, n_tasks
    lo, hi = bootstrap_ci(v, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return float(np.mean(v)), float(lo), float(hi), int(v.size), n_tasks
