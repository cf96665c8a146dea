"""Zhao et al.'s metrics: BiasAmp_MALS (2017; Eq. 1 of Wang & Russakovsky 2021) and Multi->
(Zhao, Andrews & Xiang 2023, as stated in the DPA paper's appendix A)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import canonical_direction
from .._errors import BiasampError
from .._validation import PositiveInt, check
from ._common import (
    ATTRIBUTE_TO_TASK,
    TIE_TOL,
    align_to,
    as_base,
    as_label_data,
    as_label_matrix,
    as_table,
    check_nonneg,
    check_same,
    check_tie_tol,
    checked_preds,
    col_sums,
    gram,
    pair_frame,
    sign_with_tol,
    warn_nan,
)


@dataclass(frozen=True)
class MALSResult:
    """Result of BiasAmp_MALS: ``value``, ``by_pair`` (one row per (task, attribute),
    ``association`` 1 for a selected cell), ``n_cells`` defined and ``n_nan`` undefined selected cells."""

    value: float
    by_pair: pd.DataFrame
    n_cells: int
    n_nan: int


def _mals(tasks, attrs, *, p_ind, p_base, p_model) -> MALSResult:
    n_tasks, n_attrs = p_base.shape
    y = (p_ind > 1.0 / n_attrs).astype(np.int64)
    delta = p_model - p_base
    contribution = np.where(y == 1, delta, 0.0)
    n_nan = int(np.sum((y == 1) & np.isnan(delta)))
    warn_nan(n_nan, "selected (task, attribute) cells of BiasAmp_MALS are")
    value = (1.0 / n_tasks) * np.nansum(contribution)
    parts = dict(p_base=p_base, p_model=p_model, delta=delta, contribution=contribution)
    by_pair = pair_frame(tasks, attrs, assoc=y, **parts)
    return MALSResult(float(value), by_pair, int(np.sum((y == 1) & ~np.isnan(delta))), n_nan)


def mals_bias_amplification(model, base, *, base_train=None) -> MALSResult:
    """BiasAmp_MALS on tables (Wang & Russakovsky 2021, Eq. 1, ``bog_mals``; docs/metrics.md).

    Parameters
    ----------
    model, base
        (n_tasks, n_attributes) counts (or probabilities) of the model's predictions and of the data.
    base_train
        Table whose row-normalised values select the cells (``> 1/|A|``); default ``base``.

    Returns
    -------
    MALSResult

    Examples
    --------
    >>> # one task; 40 positives with A1, 10 with A2 in the data; the model predicts 40 / 0
    >>> round(mals_bias_amplification([[40, 0]], [[40, 10]]).value, 4)
    0.2
    """
    b = as_base(base)
    M = align_to(b, as_table(model, "model"), "model")
    check_nonneg(M, "model")
    ind = b[0]
    if base_train is not None:
        ind = align_to(b, as_table(base_train, "base_train"), "base_train")
        check_nonneg(ind, "base_train")
    with np.errstate(divide="ignore", invalid="ignore"):
        p_base = b[0] / np.sum(b[0], axis=1, keepdims=True)
        p_model = M / np.sum(M, axis=1, keepdims=True)
        p_ind = ind / np.sum(ind, axis=1, keepdims=True)
    return _mals(b[1], b[2], p_ind=np.nan_to_num(p_ind, nan=0.0), p_base=p_base, p_model=p_model)


def mals_bias_amplification_labels(
    attributes, tasks, *, attribute_preds, task_preds, attributes_train=None, tasks_train=None
) -> MALSResult:
    """BiasAmp_MALS on per-example labels (Wang & Russakovsky 2021, Eq. 1; docs/metrics.md).

    Parameters
    ----------
    attributes, tasks
        0/1 ground truth of shape (n_examples, n_attributes / n_tasks).
    attribute_preds, task_preds
        0/1 or soft predictions of the same shapes.
    attributes_train, tasks_train
        0/1 training labels for the selection (both or neither).

    Returns
    -------
    MALSResult

    Examples
    --------
    >>> A = [[1, 0]] * 90 + [[0, 1]] * 30
    >>> T = [[0]] * 60 + [[1]] * 30 + [[0]] * 10 + [[1]] * 20
    >>> That = [[0]] * 90 + [[1]] * 30  # Sec. 3.2 example 2
    >>> round(mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=That).value, 4)
    -0.6
    """
    A, a_lab, T, t_lab, Atr, Ttr = as_label_data(attributes, tasks, attributes_train, tasks_train)
    Ap, ap_lab = as_label_matrix(attribute_preds, "attribute_preds", soft=True)
    Tp, tp_lab = as_label_matrix(task_preds, "task_preds", soft=True)
    check_same((A, a_lab), (Ap, ap_lab), "attribute_preds", "attributes")
    check_same((T, t_lab), (Tp, tp_lab), "task_preds", "tasks")
    with np.errstate(divide="ignore", invalid="ignore"):
        p_base = gram(T, A) / col_sums(T)[:, None]
        p_model = gram(Tp, Ap) / col_sums(Tp)[:, None]
        p_ind = p_base if Atr is None else gram(Ttr, Atr) / col_sums(Ttr)[:, None]
    return _mals(t_lab, a_lab, p_ind=np.nan_to_num(p_ind, nan=0.0), p_base=p_base, p_model=p_model)


@dataclass(frozen=True)
class MultiResult:
    """Result of Multi->: ``value`` (mean ``|delta|``) and ``variance`` (population, of ``delta``)
    over the defined cells, ``by_group``, ``groups`` (tuples of attribute labels), ``direction``,
    ``n_cells`` and ``n_nan``."""

    value: float
    variance: float
    by_group: pd.DataFrame
    groups: list
    direction: str
    n_cells: int
    n_nan: int


def _membership(rows: np.ndarray, combos: np.ndarray) -> np.ndarray:
    """P(row has every attribute of each combination), shape (n, n_groups)."""
    out = np.ones((rows.shape[0], combos.shape[0]), dtype=np.float64)
    for j in range(rows.shape[1]):
        if combos[:, j].any():
            p = rows[:, j].astype(np.float64)[:, None]
            out *= np.where(combos[None, :, j], p, 1.0)
    return out


def multi_attribute_bias_amplification(
    attributes,
    tasks,
    *,
    direction,
    attribute_preds=None,
    task_preds=None,
    attributes_train=None,
    tasks_train=None,
    min_count=1,
    tie_tol=TIE_TOL,
) -> MultiResult:
    """Multi->: mean absolute bias amplification over attribute combinations (docs/metrics.md).

    Parameters
    ----------
    attributes, tasks
        0/1 ground truth of shape (n_examples, n_attributes / n_tasks), several attributes a row.
    direction
        ``"attribute_to_task"`` or ``"task_to_attribute"`` (aliases ``"A->T"``, ``"T->A"``).
    attribute_preds, task_preds
        0/1 or soft predictions (the one the direction needs is required).
    attributes_train, tasks_train
        Labels defining the groups (and the informational association); both or neither.
    min_count
        Keep combinations seen at least this many times in the training labels.
    tie_tol
        Association differences within it are ties.

    Returns
    -------
    MultiResult

    Examples
    --------
    >>> A = [[1, 0]] * 4 + [[0, 1]] * 4
    >>> T = [[1], [1], [0], [0], [1], [1], [0], [0]]
    >>> That = [[1], [1], [1], [0], [1], [0], [0], [0]]
    >>> r = multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=That)
    >>> r.value, r.variance  # deltas +0.25 and -0.25
    (0.25, 0.0625)
    """
    direction = canonical_direction(direction)
    tie_tol = check_tie_tol(tie_tol)
    check(min_count, PositiveInt, "min_count")
    A, a_lab, T, t_lab, Atr, Ttr = as_label_data(attributes, tasks, attributes_train, tasks_train)
    if Atr is None:
        Atr, Ttr = A, T
    combos, counts = np.unique(Atr.astype(np.bool_), axis=0, return_counts=True)
    keep = combos.any(axis=1) & (counts >= min_count)
    combos = combos[keep]
    if combos.shape[0] == 0:
        raise BiasampError(f"no attribute combination occurs at least min_count={min_count} times")
    groups = [tuple(a_lab[j] for j in np.flatnonzero(c)) for c in combos]
    names = ["+".join(map(str, g)) for g in groups]

    G = _membership(A, combos)  # exact 0/1 here
    rows = Atr.any(axis=1) | Ttr.any(axis=1)
    Gtr = _membership(Atr[rows], combos)
    ntr = max(int(rows.sum()), 1)
    assoc = sign_with_tol(
        gram(Ttr[rows], Gtr) / ntr - np.outer(col_sums(Ttr[rows]) / ntr, Gtr.sum(axis=0) / ntr),
        tie_tol,
    )

    P = checked_preds(direction, task_preds, attribute_preds, T=T, t_lab=t_lab, A=A, a_lab=a_lab)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A->T: delta = P(T̂_t=1 | m) - P(T_t=1 | m); T->A: delta = P(m̂ | T_t=1) - P(m | T_t=1)
        if direction == ATTRIBUTE_TO_TASK:
            cnt = G.sum(axis=0)
            p_base = gram(T, G) / cnt[None, :]
            p_model = gram(P, G) / cnt[None, :]
        else:
            Gp = _membership(P, combos)
            cnt = col_sums(T)
            p_base = gram(T, G) / cnt[:, None]
            p_model = gram(T, Gp) / cnt[:, None]
    delta = p_model - p_base
    n_nan = int(np.isnan(delta).sum())
    warn_nan(n_nan, f"of {delta.size} (task, attribute group) cells")
    n_cells = delta.size - n_nan
    value = variance = float("nan")
    if n_cells:
        value, variance = float(np.nanmean(np.abs(delta))), float(np.nanvar(delta))
    parts = dict(p_base=p_base, p_model=p_model, delta=delta, contribution=np.abs(delta))
    by_group = pair_frame(t_lab, names, assoc=assoc, **parts).rename(
        columns={"attribute": "attribute_group", "contribution": "abs_delta"}
    )
    return MultiResult(value, variance, by_group, groups, direction, int(n_cells), n_nan)
