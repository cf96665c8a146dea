"""BiasAmp_MALS (Zhao et al. 2017), Eq. 1 of Wang & Russakovsky (2021)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._common import (
    align_to,
    as_label_data,
    as_label_matrix,
    as_table,
    check_nonneg,
    check_same,
    check_two_attributes,
    col_sums,
    gram,
    pair_frame,
    warn_nan,
)

__all__ = ["MALSResult", "mals_bias_amplification", "mals_bias_amplification_labels"]


@dataclass(frozen=True)
class MALSResult:
    """Result of BiasAmp_MALS.

    Attributes
    ----------
    value : float
    by_pair : pandas.DataFrame
        One row per (task, attribute); ``association`` is 1 for a selected cell, else 0.
    n_cells, n_nan : int
        Selected cells defined, and skipped because undefined.
    """

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
    model : array-like or DataFrame of shape (n_tasks, n_attributes)
        Counts (or probabilities) of the model's predictions; rows give ``P(Â=a | T̂=t)``.
    base : array-like or DataFrame of shape (n_tasks, n_attributes)
        Counts (or probabilities) of the data; rows give ``P(A=a | T=t)``.
    base_train : array-like or DataFrame, optional
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
    b = as_table(base, "base")
    check_two_attributes(b[0], "base")
    check_nonneg(b[0], "base")
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
    attributes, tasks : array-like of shape (n_examples, n_attributes), (n_examples, n_tasks)
        0/1 ground truth.
    attribute_preds, task_preds : array-like of the same shapes
        0/1 or soft predictions (soft ones count as expected counts).
    attributes_train, tasks_train : array-like, optional
        0/1 training labels for the selection (give both or neither).

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
