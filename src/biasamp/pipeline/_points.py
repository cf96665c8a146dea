"""Point estimates of one (base-rate source, direction): the numbers before any interval.

Crossed sets: BiasAmp-> per template with :func:`biasamp.metrics.directional_bias_amplification`
(the published arithmetic, bit for bit), then means over templates. Bound sets: BiasAmp-> of
the table pooled per task (:mod:`._pooled`). Either way the intervals come afterwards, from
:mod:`.resample`.

One arithmetic, two routes (fairlearn's ``MetricFrame`` computes the point and its
replicates with one computation; so does this, but for one step). Both the point and every
replicate run :func:`biasamp.metrics.directional_table_core`: the point through the public
metric, which validates its tables, counts ties and returns the per-cell frame; the replicates
(:func:`.resample.replicates`) directly, one pass over the stack of replicate tables. The
routes differ where bit-exactness with the published code is at stake: for a crossed set the
point is the mean over templates of each template's value, computed one template at a time,
because the paper's Table 2 reports that mean and its std and ``--compat wang2021`` reproduces
them to the last digit; a replicate takes the value of the mean of the drawn templates' tables
instead. With the base fixed, BiasAmp-> is linear in the model's table, so the two are the same
number up to rounding (about 1e-16), not bit for bit; a pooled (bound) set's point is the value
of its pooled table, as its replicates are.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._conventions import TASK_TO_ATTRIBUTE
from .._errors import UndefinedCellsWarning
from ..metrics import directional_bias_amplification
from .resample import Units, mean_tables

__all__ = ["Point", "point_estimate"]


@dataclass
class Point:
    """The point estimate of one (source, direction); cell arrays have shape (T, A)."""

    value: float
    std: float
    per_template: np.ndarray   # (m,) value per template (NaN where a template has none)
    n_ties: np.ndarray         # (m,) or a single count for a pooled table
    n_nan: np.ndarray
    n_templates: int           # templates behind the value
    aggregation: str           # "templates" or "pooled"
    y: np.ndarray
    p_base: np.ndarray
    p_model: np.ndarray
    p_model_std: np.ndarray
    delta: np.ndarray
    contribution: np.ndarray
    n_templates_cell: np.ndarray  # (T, A) templates behind each defined cell


def _cells_of(res, n_t, n_a):
    """The metric's by_pair (positional labels) as (T, A) arrays."""
    bp = res.by_pair
    pos = bp["task"].to_numpy(dtype=np.int64) * n_a + bp["attribute"].to_numpy(dtype=np.int64)
    out = {}
    for c in ("association", "p_base", "p_model", "delta", "contribution"):
        arr = np.empty(n_t * n_a)
        arr[pos] = bp[c].to_numpy(dtype=np.float64)
        out[c] = arr.reshape(n_t, n_a)
    return out


def _per_template(tables, joint, kwargs, cells):
    """The metric on every template: values, ties, undefined cells and the cell arrays."""
    m, n_t, n_a = tables.shape
    values, n_ties, n_nan = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    cols = {c: np.empty((m, n_t, n_a)) for c in ("p_model", "delta", "contribution")}
    first = None
    with warnings.catch_warnings():  # the caller warns once per (source, direction)
        warnings.simplefilter("ignore", UndefinedCellsWarning)
        for i in range(m):
            res = directional_bias_amplification(np.ascontiguousarray(tables[i]), joint,
                                                 cells=cells, **kwargs)
            c = _cells_of(res, n_t, n_a)
            values[i], n_ties[i], n_nan[i] = res.value, res.n_ties, res.n_nan
            for k, col in cols.items():
                col[i] = c[k]
            first = c if first is None else first
    return values, n_ties, n_nan, cols, first


def point_estimate(tables: np.ndarray, units: Units, joint: np.ndarray, *, kwargs: dict,
                   direction: str, pooled: bool, cells=None) -> Point:
    """The point estimate of one (source, direction) (``kwargs``: the metric settings of
    the base table, with ``direction``)."""
    m, n_t, n_a = tables.shape
    if not pooled or direction != TASK_TO_ATTRIBUTE:
        values, n_ties, n_nan, cols, first = _per_template(tables, joint, kwargs, cells)
    if not pooled:
        finite = values[np.isfinite(values)]
        with warnings.catch_warnings():  # all-NaN (undefined) cells stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            means = {k: np.nanmean(v, axis=0) for k, v in cols.items()}
            p_std = np.nanstd(cols["p_model"], axis=0, ddof=0)
        return Point(value=float(np.mean(finite)) if finite.size else float("nan"),
                     std=float(np.std(finite, ddof=0)) if finite.size else float("nan"),
                     per_template=values, n_ties=n_ties, n_nan=n_nan,
                     n_templates=int(finite.size), aggregation="templates",
                     y=first["association"], p_base=first["p_base"], p_model=means["p_model"],
                     p_model_std=p_std, delta=means["delta"],
                     contribution=means["contribution"],
                     n_templates_cell=np.sum(np.isfinite(cols["contribution"]), axis=0))
    pooled_table = mean_tables(units, None)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedCellsWarning)
        res = directional_bias_amplification(np.ascontiguousarray(pooled_table), joint,
                                             cells=cells, **kwargs)
    c = _cells_of(res, n_t, n_a)
    defined = ~np.isnan(c["contribution"])
    x = units.X
    with np.errstate(invalid="ignore"):
        if direction == TASK_TO_ATTRIBUTE:  # rows of each task's own templates
            per_task = units.rows.sum(axis=0)
            sq = (units.rows[:, :, None] * (x - pooled_table[None]) ** 2).sum(axis=0)
            p_std = np.sqrt(sq / per_task[:, None])
            per_tpl, std = np.full(m, np.nan), float("nan")
            n_cell = np.where(defined, per_task[:, None], 0)
            n_ties, n_nan = np.full(m, res.n_ties), np.full(m, res.n_nan)
        else:
            p_std = np.std(tables, axis=0, ddof=0)
            per_tpl, std = values, float(np.std(values[np.isfinite(values)], ddof=0))
            n_cell = np.where(defined, m, 0)
    return Point(value=float(res.value), std=std, per_template=per_tpl, n_ties=n_ties,
                 n_nan=n_nan, n_templates=int(len(np.unique(units.template))),
                 aggregation="pooled", y=c["association"], p_base=c["p_base"],
                 p_model=c["p_model"], p_model_std=p_std, delta=c["delta"],
                 contribution=c["contribution"], n_templates_cell=n_cell)
