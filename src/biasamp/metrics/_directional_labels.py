"""BiasAmp-> on per-example labels (Eq. 2 of Wang & Russakovsky 2021)."""

from __future__ import annotations

import numpy as np

from .._conventions import ATTRIBUTE_TO_TASK, canonical_direction
from .._errors import BiasampError
from .._validation import OneOf, check
from ._common import (
    TIE_TOL,
    any_rows,
    as_label_data,
    check_tie_tol,
    checked_preds,
    col_sums,
    gram,
    sign_with_tol,
)
from ._directional import EMPTY_ROW_POLICIES, TIE_POLICIES, DirectionalResult, _finish, signed

__all__ = ["directional_bias_amplification_labels"]


def _indicator(joint_counts, attr_counts, task_counts, *, n_keep, tie_tol):
    """Association sign (n_tasks, n_attributes) from counts over ``n_keep`` rows (rows without
    a label add nothing to the counts: ``empty_rows`` changes only ``n_keep``)."""
    if n_keep == 0:
        raise BiasampError("the training labels have no row with a task or an attribute set")
    joint = joint_counts / n_keep
    return sign_with_tol(joint - np.outer(task_counts / n_keep, attr_counts / n_keep), tie_tol)


def directional_bias_amplification_labels(
    attributes,
    tasks,
    *,
    direction,
    attribute_preds=None,
    task_preds=None,
    attributes_train=None,
    tasks_train=None,
    tie_tol=TIE_TOL,
    ties="zero",
    empty_rows="drop",
) -> DirectionalResult:
    """BiasAmp-> on per-example labels (Eq. 2 of Wang & Russakovsky 2021).

    Parameters
    ----------
    attributes : array-like or DataFrame of shape (n_examples, n_attributes)
        Ground-truth 0/1 (or boolean) attribute labels of the evaluation set.
    tasks : array-like or DataFrame of shape (n_examples, n_tasks)
        Ground-truth 0/1 task labels of the evaluation set.
    direction : {"attribute_to_task", "task_to_attribute"} (aliases "A->T", "T->A")
    attribute_preds, task_preds : array-like shaped as attributes, tasks, optional
        0/1 or soft predictions in [0, 1]; the one of the direction is required.
    attributes_train, tasks_train : array-like, optional
        0/1 training labels defining the association (both or neither; default: the
        evaluation labels).
    tie_tol : float, default 1e-12
        ``|P(A,T) - P(A)P(T)| <= tie_tol`` gives association 0.
    ties : {"zero", "negative"}, default "zero"
        A tie contributes 0 (published code) or ``-delta`` (the paper's text); see
        :func:`directional_bias_amplification`.
    empty_rows : {"drop", "keep"}, default "drop"
        Which training rows define ``P(A)``, ``P(T)`` and ``P(A, T)`` for the association:
        only rows with at least one task or attribute set (the published code) or all rows
        (the paper's text). The sign can differ when some rows carry no label at all.

    Returns
    -------
    DirectionalResult
        ``by_pair`` labels come from DataFrame columns, else integer positions.

    Notes
    -----
    A->T: ``delta[t, a] = mean(task_preds[A_a=1, t]) - mean(tasks[A_a=1, t])``;
    T->A: ``delta[t, a] = mean(attribute_preds[T_t=1, a]) - mean(attributes[T_t=1, a])``.
    Evaluation rows are not filtered; an empty conditioning set gives a NaN cell, skipped
    in the mean (counted in ``n_nan``, one warning).

    Examples
    --------
    >>> A = [[1, 0]] * 50 + [[0, 1]] * 50
    >>> T = [[0]] * 10 + [[1]] * 40 + [[0]] * 40 + [[1]] * 10
    >>> That = [[0]] * 10 + [[1]] * 40 + [[0]] * 50  # group 2 always predicted 0
    >>> r = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=That)
    >>> round(r.value, 4)
    0.1
    """
    direction = canonical_direction(direction)
    tie_tol = check_tie_tol(tie_tol)
    check(ties, OneOf(TIE_POLICIES), "ties")
    check(empty_rows, OneOf(EMPTY_ROW_POLICIES), "empty_rows")
    A, a_lab, T, t_lab, Atr, Ttr = as_label_data(attributes, tasks, attributes_train, tasks_train)
    P = checked_preds(direction, task_preds, attribute_preds, T=T, t_lab=t_lab, A=A, a_lab=a_lab)

    # counts on the evaluation labels: joint[t, a] = #(T_t = 1 and A_a = 1)
    joint = gram(T, A)
    if attributes_train is not None:
        n_rows = any_rows(Atr, Ttr) if empty_rows == "drop" else Atr.shape[0]
        y = _indicator(gram(Ttr, Atr), col_sums(Atr), col_sums(Ttr), n_keep=n_rows, tie_tol=tie_tol)
    else:
        n_rows = any_rows(A, T) if empty_rows == "drop" else A.shape[0]
        y = _indicator(joint, col_sums(A), col_sums(T), n_keep=n_rows, tie_tol=tie_tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        if direction == ATTRIBUTE_TO_TASK:
            count = col_sums(A)  # (n_attributes,)
            p_base = joint / count[None, :]  # (n_tasks, n_attributes)
            p_model = gram(P, A) / count[None, :]
        else:
            count = col_sums(T)  # (n_tasks,)
            p_base = joint / count[:, None]
            p_model = gram(T, P) / count[:, None]
    delta = p_model - p_base
    contribution = np.where(np.isnan(delta), np.nan, signed(y, delta, ties))  # empty condition
    with np.errstate(invalid="ignore"):
        value = np.nanmean(contribution) if (~np.isnan(contribution)).any() else np.nan
    core = dict(y=y, p_base=p_base, p_model=p_model, delta=delta, contribution=contribution)
    return _finish(t_lab, a_lab, core | {"value": value}, direction)
