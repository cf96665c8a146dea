"""BiasAmp-> (Wang & Russakovsky 2021): probability-table form and per-example form."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import canonical_direction
from .._errors import BiasampError
from .._validation import OneOf, check
from ._common import (
    ATTRIBUTE_TO_TASK,
    TASK_TO_ATTRIBUTE,
    TIE_TOL,
    align_to,
    as_table,
    check_association,
    check_nonneg,
    check_sums_to_one,
    check_tie_tol,
    check_two_attributes,
    pair_frame,
    sign_with_tol,
    warn_nan,
)

#: The choices of ``undefined``, ``ties`` and the labels form's ``empty_rows`` (default first).
UNDEFINED_POLICIES = ("skip", "tie")
TIE_POLICIES = ("zero", "negative")
EMPTY_ROW_POLICIES = ("drop", "keep")

__all__ = ["DirectionalResult", "directional_bias_amplification", "table_core"]


@dataclass(frozen=True)
class DirectionalResult:
    """Result of BiasAmp-> in one direction.

    Attributes
    ----------
    value : float
        Mean of ``association * delta`` over the defined cells; NaN when none is (warned).
    by_pair : pandas.DataFrame
        One row per (task, attribute), task-major: ``task``, ``attribute``, ``association``
        (-1/0/1), ``p_base``, ``p_model``, ``delta`` (``p_model - p_base``) and
        ``contribution`` (NaN where undefined).
    direction : str
    n_cells, n_ties, n_nan : int
        Cells averaged into ``value`` (ties included), cells of association 0, undefined
        cells skipped.
    """

    value: float
    by_pair: pd.DataFrame
    direction: str
    n_cells: int
    n_ties: int
    n_nan: int


def table_core(
    M, B, *, direction, y=None, Btr=None, tie_tol=TIE_TOL, undefined="skip", ties="zero", cells=None
) -> dict:
    """The arithmetic of BiasAmp-> on probability tables, vectorised over leading axes.

    Arrays of shape (..., n_tasks, n_attributes), trusted (validated by the callers). ``y`` is
    an explicit sign matrix, else the sign comes from ``Btr`` (default ``B``). Follows the
    published ``utils.py`` operation by operation, so a 2-D table gives the published numbers
    bit for bit; stacks of tables (bootstrap resamples) are computed in one pass.

    Returns a dict of arrays: ``y``, ``p_base``, ``p_model``, ``delta``, ``contribution``
    (NaN where undefined) and ``value`` (shape ``(...)``; NaN when no cell is defined).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        sign_undefined = None
        if y is None:
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
            # the published code divides by the base's column sums (= 1 for a normalised base)
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
    return {
        "y": y,
        "p_base": p_base,
        "p_model": p_model,
        "delta": delta,
        "contribution": contribution,
        "value": value,
    }


def signed(y, delta, ties: str):
    """``y * delta``; a tie (y = 0) contributes 0 (``ties="zero"``, the published code) or,
    y read as the paper's indicator, ``-delta`` (``"negative"``)."""
    if ties == "zero":
        return np.where(y == 0, 0.0, np.where(y < 0, -delta, delta))
    return np.where(y > 0, delta, -delta)


def _finish(tasks, attrs, core: dict, direction) -> DirectionalResult:
    y, contribution = core["y"], core["contribution"]
    n_nan = int(np.isnan(contribution).sum())
    n_cells = contribution.size - n_nan
    warn_nan(n_nan, f"of {contribution.size} (task, attribute) cells")
    value = float("nan") if n_cells == 0 else float(core["value"])
    n_ties = int(np.sum((y == 0) & ~np.isnan(contribution)))
    by_pair = pair_frame(
        tasks,
        attrs,
        assoc=y,
        p_base=core["p_base"],
        p_model=core["p_model"],
        delta=core["delta"],
        contribution=contribution,
    )
    return DirectionalResult(
        value=value,
        by_pair=by_pair,
        direction=direction,
        n_cells=int(n_cells),
        n_ties=n_ties,
        n_nan=n_nan,
    )


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
    """BiasAmp-> on probability tables (fill-in-the-blank form).

    Parameters
    ----------
    model : array-like or DataFrame of shape (n_tasks, n_attributes)
        The model's conditional probabilities. ``attribute_to_task``: ``M[t, a] = P(T=t | A=a)``,
        every column sums to 1. ``task_to_attribute``: ``M[t, a] = P(A=a | T=t)``, every row
        sums to 1 (tolerance 1e-6; otherwise an error).
    base : array-like or DataFrame of shape (n_tasks, n_attributes)
        Base joint table (non-negative counts or probabilities). DataFrames have tasks as index
        and attributes as columns; other DataFrame arguments are aligned to it by label.
    direction : {"attribute_to_task", "task_to_attribute"} (aliases "A->T", "T->A")
    base_train : array-like or DataFrame of shape (n_tasks, n_attributes), optional
        Table that defines the association sign instead of ``base``.
    association : array-like or DataFrame of shape (n_tasks, n_attributes), optional
        Explicit sign matrix with values in {-1, 0, 1}; excludes ``base_train``.
    tie_tol : float or None, default 1e-12
        ``|P(T=t|A=a) - P(T=t)| <= tie_tol`` gives association 0. ``0.0`` is plain ``np.sign``
        (the published code's behaviour, floating-point noise included); ``None`` means the
        default (so a ``BaseRateTable.tie_tol`` can be passed through).
    undefined : {"skip", "tie"}, default "skip"
        Cells whose base probability is undefined (an all-zero base row in T->A, column in
        A->T) are NaN and skipped (``"skip"``, with one warning). ``"tie"`` reproduces the
        published code: such a cell whose association is 0 counts as a 0 contribution (with
        ``tie_tol=0.0`` for exact compatibility).
    ties : {"zero", "negative"}, default "zero"
        How a cell with association 0 contributes: 0, as in the published code, or
        ``-delta``, as in the paper's text (Eq. 2 writes ``y_at * delta + (1 - y_at) *
        (-delta)`` with the indicator ``y_at = 1[P(A_a, T_t) > P(A_a) P(T_t)]``, so a tie is
        counted as "not associated").
    cells : array-like of bool of shape (n_tasks, n_attributes), optional
        Only these cells count in the value; the others are left out (NaN in ``by_pair``,
        counted in ``n_nan``), e.g. the tasks a base table has too little data for.

    Returns
    -------
    DirectionalResult

    Notes
    -----
    Arithmetic follows the published ``utils.py`` operation by operation (so a compat
    pipeline reproduces it bit for bit): ``p_t_a = B / B.sum(axis=0)``,
    ``p_t = B.sum(axis=1) / B.sum(axis=0).sum()``, ``y = sign(p_t_a - p_t[:, None])``.
    T->A: ``p_base = B / B.sum(axis=1)``, ``p_model = M / M.sum(axis=1)``.
    A->T: ``p_base = B / B.sum(axis=0)``; the published code divides the model by the
    *base's* column sums, which equals ``M`` only when ``B`` is column-normalised. We do
    exactly that when every column of ``B`` sums to 1 (within 1e-9), and otherwise divide by
    the model's own column sums (so counts are accepted for ``B``). The value is
    ``np.nanmean`` of ``y * delta`` over the table.

    References
    ----------
    Wang & Russakovsky (2021), Directional Bias Amplification, ICML, Eq. 2.

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
    b = as_table(base, "base")
    B = b[0]
    check_two_attributes(B, "base")
    check_nonneg(B, "base")
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
    core = table_core(
        M,
        B,
        direction=direction,
        y=y,
        Btr=Btr,
        tie_tol=tie_tol,
        undefined=undefined,
        ties=ties,
        cells=cells,
    )
    return _finish(b[1], b[2], core, direction)
