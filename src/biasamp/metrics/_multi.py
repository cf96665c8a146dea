"""Multi-> (Zhao, Andrews & Xiang 2023), as stated in the DPA paper's appendix A."""

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
    as_label_data,
    check_tie_tol,
    checked_preds,
    col_sums,
    gram,
    pair_frame,
    sign_with_tol,
    warn_nan,
)

__all__ = ["MultiResult", "multi_attribute_bias_amplification"]


@dataclass(frozen=True)
class MultiResult:
    """Result of Multi->.

    Attributes
    ----------
    value, variance : float
        Mean of ``|delta|`` and population variance of ``delta`` over the defined cells.
    by_group : pandas.DataFrame
    groups : list of tuple
        The attribute combinations, each a tuple of attribute labels.
    direction : str
    n_cells, n_nan : int
    """

    value: float
    variance: float
    by_group: pd.DataFrame
    groups: list
    direction: str
    n_cells: int
    n_nan: int


def _membership(rows: np.ndarray, combos: np.ndarray) -> np.ndarray:
    """P(row has every attribute of each combination), shape (n, n_groups); soft rows give the
    product of their per-attribute probabilities."""
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
    attributes, tasks : array-like of shape (n_examples, n_attributes), (n_examples, n_tasks)
        0/1 ground truth (several attributes per row allowed).
    direction : {"attribute_to_task", "task_to_attribute"} (aliases "A->T", "T->A")
    attribute_preds, task_preds : array-like, optional
        0/1 or soft predictions (the one the direction needs is required).
    attributes_train, tasks_train : array-like, optional
        Labels defining the groups (and the informational association); both or neither.
    min_count : int
        Keep combinations seen at least this many times in the training labels.
    tie_tol : float

    Returns
    -------
    MultiResult

    References
    ----------
    Zhao, Andrews & Xiang (2023), Men Also Do Laundry, ICML; DPA paper, appendix A, Eq. 17-19.

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

    G = _membership(A, combos)  # (n, n_groups), exact 0/1 here
    # informational association on the training rows with any label
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
    if n_cells:
        value = float(np.nanmean(np.abs(delta)))
        variance = float(np.nanvar(delta))
    else:
        value = variance = float("nan")
    by_group = pair_frame(
        t_lab,
        names,
        assoc=assoc,
        p_base=p_base,
        p_model=p_model,
        delta=delta,
        contribution=np.abs(delta),
    ).rename(columns={"attribute": "attribute_group", "contribution": "abs_delta"})
    return MultiResult(value, variance, by_group, groups, direction, int(n_cells), n_nan)
