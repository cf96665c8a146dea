"""BiasAmp-> (Wang & Russakovsky 2021, Eq. 2): the probability-table and per-example forms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import canonical_direction
from .._errors import BiasampError
from .._validation import OneOf, check
from ._common import (
    ATTRIBUTE_TO_TASK,
    TABLE_COLUMNS,
    TASK_TO_ATTRIBUTE,
    TIE_TOL,
    align_to,
    any_rows,
    as_base,
    as_label_data,
    as_table,
    check_association,
    check_nonneg,
    check_sums_to_one,
    check_tie_tol,
    checked_preds,
    col_sums,
    gram,
    pair_frame,
    sign_with_tol,
    warn_nan,
)

#: The choices of ``undefined``, ``ties`` and the labels form's ``empty_rows`` (default first).
UNDEFINED_POLICIES = ("skip", "tie")
TIE_POLICIES = ("zero", "negative")
EMPTY_ROW_POLICIES = ("drop", "keep")


@dataclass(frozen=True)
class DirectionalResult:
    """Result of BiasAmp-> in one direction: ``value`` (mean of ``association * delta`` over the
    defined cells), ``by_pair``, ``direction``, ``n_cells`` averaged (ties included), ``n_ties``
    (association 0) and ``n_nan`` (undefined, skipped)."""

    value: float
    by_pair: pd.DataFrame
    direction: str
    n_cells: int
    n_ties: int
    n_nan: int


def table_core(
    M, B, *, direction, y=None, Btr=None, tie_tol=TIE_TOL, undefined="skip", ties="zero", cells=None
) -> dict:
    """BiasAmp-> on trusted tables of shape (..., n_tasks, n_attributes), a stack in one pass.

    ``y`` is the sign matrix, else it comes from ``Btr`` (default ``B``). Returns ``y``,
    ``p_base``, ``p_model``, ``delta``, ``contribution`` (NaN where undefined) and ``value``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        sign_undefined = None
        if y is None:  # utils.py: y = sign(B / B.sum(0) - B.sum(1) / B.sum(0).sum())
            Btr = B if Btr is None else Btr
            num_attr_tr = np.sum(Btr, axis=-2)
            p_t_a = Btr / np.expand_dims(num_attr_tr, -2)
            p_t = np.sum(Btr, axis=-1) / np.sum(num_attr_tr, axis=-1, keepdims=True)
            diff = p_t_a - p_t[..., :, None]
            y = sign_with_tol(diff, tie_tol)
            # an all-zero column of the training table makes the sign undefined
            sign_undefined = np.isnan(diff)
            y = np.where(sign_undefined, 0.0, y)
        if direction == TASK_TO_ATTRIBUTE:
            p_base = B / np.sum(B, axis=-1, keepdims=True)
            p_model = M / np.sum(M, axis=-1, keepdims=True)
        else:
            num_attr = np.sum(B, axis=-2)
            p_base = B / np.expand_dims(num_attr, -2)
            # the published code divides by the base's column sums (= 1 for a normalised base);
            # otherwise the model's own column sums, so counts are accepted for the base
            normalised = np.all(np.abs(num_attr - 1.0) <= 1e-9, axis=-1)
            p_model = np.where(
                normalised[..., None, None],
                M / np.expand_dims(num_attr, -2),
                M / np.sum(M, axis=-2, keepdims=True),
            )
        delta = p_model - p_base
        contribution = signed(y, delta, ties)
        if undefined == "skip":
            undefined_cells = np.isnan(delta)
        else:  # published code: a tie zeroes the cell, an undefined (NaN) sign leaves it NaN
            undefined_cells = np.isnan(delta) & (y != 0)
            if sign_undefined is not None:
                undefined_cells |= np.isnan(delta) & sign_undefined
        contribution = np.where(undefined_cells, np.nan, contribution)
        if cells is not None:  # cells left out on purpose (e.g. tasks with too little data)
            contribution = np.where(cells, contribution, np.nan)
        defined = ~np.isnan(contribution)
        if contribution.ndim == 2:
            value = np.nanmean(contribution) if defined.any() else np.nan
        else:
            n = defined.sum(axis=(-2, -1))
            value = np.where(
                n > 0, np.nansum(contribution, axis=(-2, -1)) / np.maximum(n, 1), np.nan
            )
    return dict(
        y=y, p_base=p_base, p_model=p_model, delta=delta, contribution=contribution, value=value
    )


def signed(y, delta, ties: str):
    """``y * delta``; a tie contributes 0 (``"zero"``, the code) or ``-delta`` (``"negative"``,
    the text's Eq. 2 with the indicator ``y = 1[P(A,T) > P(A)P(T)]``)."""
    if ties == "zero":
        return np.where(y == 0, 0.0, np.where(y < 0, -delta, delta))
    return np.where(y > 0, delta, -delta)


def _finish(tasks, attrs, core: dict, direction) -> DirectionalResult:
    y, contribution = core["y"], core["contribution"]
    n_nan = int(np.isnan(contribution).sum())
    n_cells = contribution.size - n_nan
    warn_nan(n_nan, f"of {contribution.size} (task, attribute) cells")
    value = float("nan") if n_cells == 0 else float(np.nanmean(contribution))
    n_ties = int(np.sum((y == 0) & ~np.isnan(contribution)))
    by_pair = pair_frame(tasks, attrs, assoc=y, **{k: core[k] for k in TABLE_COLUMNS[3:]})
    return DirectionalResult(value, by_pair, direction, int(n_cells), n_ties, n_nan)


def directional_bias_amplification(
    model,
    base,
    *,
    direction="attribute_to_task",
    base_train=None,
    association=None,
    tie_tol=TIE_TOL,
    undefined="skip",
    ties="zero",
    cells=None,
) -> DirectionalResult:
    """BiasAmp-> on probability tables (Wang & Russakovsky 2021, Eq. 2; docs/metrics.md).

    Parameters
    ----------
    model
        ``P(T=t | A=a)`` (columns sum to 1) for A->T, ``P(A=a | T=t)`` (rows sum to 1) for T->A.
    base
        Base joint (n_tasks, n_attributes) table of counts or probabilities; frames align to it.
    direction
        ``"attribute_to_task"`` or ``"task_to_attribute"`` (aliases ``"A->T"``, ``"T->A"``).
    base_train, association
        The table that defines the association sign instead of ``base``, or the signs (-1/0/1).
    tie_tol, undefined, ties
        Tie tolerance, undefined cells, ties: :data:`UNDEFINED_POLICIES`, :data:`TIE_POLICIES`
        (docs/metrics.md).
    cells
        Boolean (n_tasks, n_attributes) mask: only these cells count.

    Returns
    -------
    DirectionalResult

    Examples
    --------
    >>> B = [[30, 10], [10, 30], [20, 20], [5, 15]]
    >>> M = [[0.8, 0.2], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]]
    >>> r = directional_bias_amplification(M, B, direction="T->A")
    >>> round(r.value, 6), r.n_cells, r.n_ties
    (0.0125, 8, 0)
    """
    direction = canonical_direction(direction)
    tie_tol = check_tie_tol(tie_tol)
    check(undefined, OneOf(UNDEFINED_POLICIES), "undefined")
    check(ties, OneOf(TIE_POLICIES), "ties")
    b = as_base(base)
    B = b[0]
    M = align_to(b, as_table(model, "model"), "model")
    if np.any(M < 0):
        raise BiasampError(
            f"model must be non-negative probabilities; got minimum {float(M.min())!r}"
        )
    if direction == ATTRIBUTE_TO_TASK:
        check_sums_to_one(M, 0, "model", "columns (P(task | attribute) for attribute_to_task)")
    else:
        check_sums_to_one(M, 1, "model", "rows (P(attribute | task) for task_to_attribute)")
    if association is not None and base_train is not None:
        raise BiasampError("give at most one of base_train and association; got both")

    y = Btr = None
    if association is not None:
        y = check_association(association, b)
    elif base_train is not None:
        Btr = align_to(b, as_table(base_train, "base_train"), "base_train")
        check_nonneg(Btr, "base_train")
    if cells is not None:
        cells = align_to(b, as_table(cells, "cells"), "cells") != 0
    opts = dict(tie_tol=tie_tol, undefined=undefined, ties=ties, cells=cells)
    core = table_core(M, B, direction=direction, y=y, Btr=Btr, **opts)
    return _finish(b[1], b[2], core, direction)


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
    """BiasAmp-> on per-example labels (Wang & Russakovsky 2021, Eq. 2; docs/metrics.md).

    Parameters
    ----------
    attributes, tasks
        Ground-truth 0/1 (or boolean) labels of shape (n_examples, n_attributes / n_tasks).
    direction
        ``"attribute_to_task"`` or ``"task_to_attribute"`` (aliases ``"A->T"``, ``"T->A"``).
    attribute_preds, task_preds
        0/1 or soft predictions in [0, 1] shaped as the labels; the direction's one is required.
    attributes_train, tasks_train
        0/1 training labels defining the association (both or neither; default: the above).
    tie_tol, ties
        As for :func:`directional_bias_amplification`.
    empty_rows
        The association's rows: those with a label set (the published code) or all (the text).

    Returns
    -------
    DirectionalResult
        ``by_pair`` labels come from DataFrame columns, else integer positions.

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
    joint = gram(T, A)
    # the association: sign(P(A,T) - P(A)P(T)) over the training rows (``empty_rows`` picks them)
    At, Tt = (A, T) if Atr is None else (Atr, Ttr)
    n = any_rows(At, Tt) if empty_rows == "drop" else At.shape[0]
    if n == 0:
        raise BiasampError("the training labels have no row with a task or an attribute set")
    joint_tr = (joint if Atr is None else gram(Tt, At)) / n
    y = sign_with_tol(joint_tr - np.outer(col_sums(Tt) / n, col_sums(At) / n), tie_tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A->T: delta = mean(task_preds[A_a=1, t]) - mean(tasks[A_a=1, t]); T->A symmetric
        if direction == ATTRIBUTE_TO_TASK:
            count = col_sums(A)
            p_base = joint / count[None, :]
            p_model = gram(P, A) / count[None, :]
        else:
            count = col_sums(T)
            p_base = joint / count[:, None]
            p_model = gram(T, P) / count[:, None]
    delta = p_model - p_base
    contribution = np.where(np.isnan(delta), np.nan, signed(y, delta, ties))  # empty condition
    core = dict(y=y, p_base=p_base, p_model=p_model, delta=delta, contribution=contribution)
    return _finish(t_lab, a_lab, core, direction)
