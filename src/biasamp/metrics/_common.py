"""Shared validation and helpers of the metric core (pure numpy/pandas)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, TASK_TO_ATTRIBUTE, TIE_TOL  # noqa: F401
from .._errors import BiasampError, UndefinedCellsWarning

#: tolerance for "rows / columns of the model sum to 1"
SUM_TOL = 1e-6
#: rows per chunk when accumulating matrix products over many examples
CHUNK_ROWS = 1 << 16

TABLE_COLUMNS = ["task", "attribute", "association", "p_base", "p_model", "delta", "contribution"]


def check_tie_tol(tie_tol) -> float:
    """``tie_tol`` checked; ``None`` is the default (1e-12), as a BaseRateTable may carry."""
    if tie_tol is None:
        return TIE_TOL
    try:
        tol = float(tie_tol)
    except (TypeError, ValueError):
        tol = float("nan")
    if not np.isfinite(tol) or tol < 0:
        raise BiasampError(f"tie_tol must be a non-negative number; got {tie_tol!r}")
    return tol


def sign_with_tol(x: np.ndarray, tie_tol: float) -> np.ndarray:
    """``np.sign(x)`` with ``|x| <= tie_tol`` mapped to 0 (``tie_tol=0`` is plain ``np.sign``)."""
    s = np.sign(x)
    if tie_tol > 0:
        s = np.where(np.abs(x) <= tie_tol, 0.0, s)
    return s


def as_table(x, name: str):
    """A checked (n_tasks, n_attributes) table as (float array, tasks, attributes, is_frame)."""
    if isinstance(x, pd.DataFrame):
        tasks, attrs = list(x.index), list(x.columns)
        try:
            arr = x.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise BiasampError(
                f"{name} must hold numbers; got dtypes {sorted(set(map(str, x.dtypes)))}"
            ) from None
        is_frame = True
    else:
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise BiasampError(
                f"{name} must be a numeric array of shape (n_tasks, n_attributes); "
                f"got {type(x).__name__}"
            ) from None
        tasks = attrs = None
        is_frame = False
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise BiasampError(
            f"{name} must be 2-D of shape (n_tasks, n_attributes); got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise BiasampError(
            f"{name} must be finite; got {int(np.sum(~np.isfinite(arr)))} NaN/inf entries"
        )
    if tasks is None:
        tasks, attrs = list(range(arr.shape[0])), list(range(arr.shape[1]))
    # C order, as the published code's arrays: numpy's row/column sums round differently on a
    # Fortran-ordered array (DataFrame.to_numpy() gives one), which flips exact-tie signs
    return np.ascontiguousarray(arr), tasks, attrs, is_frame


def align_to(ref, other, name: str, ref_name: str = "base"):
    """Return ``other``'s array re-ordered to ``ref``'s labels; ``ref``/``other`` are as_table tuples."""
    r_arr, r_tasks, r_attrs, r_frame = ref
    o_arr, o_tasks, o_attrs, o_frame = other
    if o_arr.shape != r_arr.shape:
        raise BiasampError(
            f"{name} must have the shape of {ref_name} {r_arr.shape}; got {o_arr.shape}"
        )
    if not (r_frame and o_frame):
        return o_arr
    for what, r_lab, o_lab in (
        ("tasks (index)", r_tasks, o_tasks),
        ("attributes (columns)", r_attrs, o_attrs),
    ):
        if set(r_lab) != set(o_lab) or len(set(o_lab)) != len(o_lab):
            missing = [v for v in r_lab if v not in set(o_lab)]
            extra = [v for v in o_lab if v not in set(r_lab)]
            raise BiasampError(
                f"{name} {what} do not match {ref_name}: missing {missing}, extra {extra}"
                f"{' (duplicate labels)' if not missing and not extra else ''}"
            )
    t_pos = {v: i for i, v in enumerate(o_tasks)}
    a_pos = {v: i for i, v in enumerate(o_attrs)}
    return o_arr[np.ix_([t_pos[v] for v in r_tasks], [a_pos[v] for v in r_attrs])]


def as_base(base):
    """:func:`as_table` of a base table: non-negative, two attributes at least."""
    b = as_table(base, "base")
    if b[0].shape[1] < 2:
        raise BiasampError(
            f"base must have at least two attributes (columns); got "
            f"{b[0].shape[1]} (with one attribute the value is 0 by construction)"
        )
    check_nonneg(b[0], "base")
    return b


def check_nonneg(arr: np.ndarray, name: str) -> None:
    if np.any(arr < 0):
        raise BiasampError(
            f"{name} must be non-negative counts or probabilities; got minimum {float(arr.min())!r}"
        )
    if not np.any(arr > 0):
        raise BiasampError(f"{name} must not be all zero")


def check_sums_to_one(arr: np.ndarray, axis: int, name: str, what: str) -> None:
    sums = arr.sum(axis=axis)
    bad = np.abs(sums - 1.0) > SUM_TOL
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise BiasampError(
            f"{name} {what} must each sum to 1 (tolerance {SUM_TOL:g}); "
            f"{int(bad.sum())} do not, e.g. index {i} sums to {float(sums[i])!r}"
        )


def check_association(assoc, ref, name: str = "association") -> np.ndarray:
    arr = align_to(ref, as_table(assoc, name), name)
    if not np.all(np.isin(arr, (-1.0, 0.0, 1.0))):
        bad = np.unique(arr[~np.isin(arr, (-1.0, 0.0, 1.0))])[:5]
        raise BiasampError(f"{name} values must be -1, 0 or 1; got {bad.tolist()}")
    return arr


def as_label_matrix(x, name: str, *, soft: bool):
    """A checked (n, k) label matrix and its column labels: 0/1 as boolean, soft as float."""
    labels = list(x.columns) if isinstance(x, pd.DataFrame) else None
    arr = x.to_numpy() if isinstance(x, pd.DataFrame) else np.asarray(x)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise BiasampError(
            f"{name} must be 2-D of shape (n_examples, n_columns); got shape {arr.shape}"
        )
    if arr.dtype != np.bool_:
        if not (np.issubdtype(arr.dtype, np.number)):
            raise BiasampError(f"{name} must be numeric or boolean; got dtype {arr.dtype}")
        integer = np.issubdtype(arr.dtype, np.integer)
        if not integer:
            arr = arr.astype(np.float64, copy=False) if arr.dtype != np.float32 else arr
        hard = integer or not soft
        ok = (arr == 0) | (arr == 1) if hard else (arr >= 0) & (arr <= 1)
        if not ok.all():
            what = (
                "be 0/1" if integer else "be 0/1 labels" if hard else "hold probabilities in [0, 1]"
            )
            raise BiasampError(f"{name} must {what}; got values {np.unique(arr[~ok])[:5].tolist()}")
        if hard:
            arr = arr == 1
    if labels is None:
        labels = list(range(arr.shape[1]))
    return arr, labels


def check_rows(n_a: int, n_t: int, names: str = "attributes and tasks") -> None:
    if n_a != n_t:
        raise BiasampError(f"{names} must have the same number of rows; got {n_a} and {n_t}")


def check_same(ref, other, name: str, ref_name: str, *, rows: bool = True) -> None:
    """``other`` (array, labels) has ``ref``'s shape (columns only unless ``rows``) and labels."""
    (r, ref_labels), (o, labels) = ref, other
    ref_shape, shape = (r.shape, o.shape) if rows else (r.shape[1:], o.shape[1:])
    if shape != ref_shape:
        raise BiasampError(f"{name} must have the shape of {ref_name} {ref_shape}; got {shape}")
    if list(labels) != list(ref_labels):
        raise BiasampError(
            f"{name} columns do not match {ref_name}: {list(labels)} vs {list(ref_labels)}"
        )


def required_preds(direction: str, task_preds, attribute_preds):
    """The direction's predictions (A->T: ``task_preds``, T->A: ``attribute_preds``), required."""
    a_to_t = direction == ATTRIBUTE_TO_TASK
    name, preds = ("task_preds", task_preds) if a_to_t else ("attribute_preds", attribute_preds)
    if preds is None:
        raise BiasampError(f"{name} is required for direction {direction!r}; got None")
    return preds, name


def checked_preds(direction: str, task_preds, attribute_preds, *, T, t_lab, A, a_lab) -> np.ndarray:
    """:func:`required_preds` as a label matrix shaped and labelled as the labels it predicts."""
    preds, name = required_preds(direction, task_preds, attribute_preds)
    ref, ref_lab, ref_name = (
        (T, t_lab, "tasks") if direction == ATTRIBUTE_TO_TASK else (A, a_lab, "attributes")
    )
    P, p_lab = as_label_matrix(preds, name, soft=True)
    check_same((ref, ref_lab), (P, p_lab), name, ref_name)
    return P


def as_label_data(attributes, tasks, attributes_train=None, tasks_train=None):
    """The checked label matrices ``(A, a_labels, T, t_labels, Atr, Ttr)``."""
    A, a_lab = as_label_matrix(attributes, "attributes", soft=False)
    T, t_lab = as_label_matrix(tasks, "tasks", soft=False)
    check_rows(A.shape[0], T.shape[0])
    if (attributes_train is None) != (tasks_train is None):
        given = "attributes_train" if attributes_train is not None else "tasks_train"
        raise BiasampError(
            f"give both attributes_train and tasks_train or neither; got only {given}"
        )
    Atr = Ttr = None
    if attributes_train is not None:
        Atr, atr_lab = as_label_matrix(attributes_train, "attributes_train", soft=False)
        Ttr, ttr_lab = as_label_matrix(tasks_train, "tasks_train", soft=False)
        check_rows(Atr.shape[0], Ttr.shape[0], "attributes_train and tasks_train")
        check_same((A, a_lab), (Atr, atr_lab), "attributes_train", "attributes", rows=False)
        check_same((T, t_lab), (Ttr, ttr_lab), "tasks_train", "tasks", rows=False)
    return A, a_lab, T, t_lab, Atr, Ttr


#: a boolean matrix with at most this many columns is used as row masks in :func:`gram`
MASK_COLS = 16


def _masked_sums(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``x.T @ m`` for boolean ``m`` as row sums: no BLAS (it oversubscribes small machines)."""
    out = np.zeros((x.shape[1], m.shape[1]), dtype=np.float64)
    is_bool = x.dtype == np.bool_
    xv = x.view(np.uint8) if is_bool else x
    acc = np.int32 if is_bool else np.float64
    for s in range(0, x.shape[0], CHUNK_ROWS):
        xc, mc = xv[s : s + CHUNK_ROWS], m[s : s + CHUNK_ROWS]
        for j in range(m.shape[1]):  # few columns; never a loop over examples
            out[:, j] += np.add.reduce(xc[mc[:, j]], axis=0, dtype=acc)
    return out


def gram(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x.T @ y`` in float64 with bounded memory (a narrow boolean operand: exact counts)."""
    if y.dtype == np.bool_ and y.shape[1] <= MASK_COLS:
        return _masked_sums(x, y)
    if x.dtype == np.bool_ and x.shape[1] <= MASK_COLS:
        return _masked_sums(y, x).T
    out = np.zeros((x.shape[1], y.shape[1]), dtype=np.float64)
    for s in range(0, x.shape[0], CHUNK_ROWS):
        xc = x[s : s + CHUNK_ROWS].astype(np.float64)
        yc = y[s : s + CHUNK_ROWS].astype(np.float64)
        out += xc.T @ yc
    return out


def col_sums(x: np.ndarray) -> np.ndarray:
    """Column sums in float64 (exact counts for boolean input). Shape (n, k) -> (k,)."""
    if x.dtype != np.bool_:
        return x.sum(axis=0, dtype=np.float64)
    out = np.zeros(x.shape[1], dtype=np.int64)
    xv = x.view(np.uint8)
    for s in range(0, x.shape[0], CHUNK_ROWS):
        out += np.add.reduce(xv[s : s + CHUNK_ROWS], axis=0, dtype=np.int32)
    return out.astype(np.float64)


def any_rows(*mats: np.ndarray) -> int:
    """Number of rows with any non-zero entry in any of the (n, k) matrices."""
    keep = np.zeros(mats[0].shape[0], dtype=np.bool_)
    for m in mats:
        keep |= m.any(axis=1) if m.dtype == np.bool_ else (m != 0).any(axis=1)
    return int(np.count_nonzero(keep))


def warn_nan(n_nan: int, what: str) -> None:
    """One :class:`UndefinedCellsWarning` counting the undefined cells (never also logged)."""
    if n_nan:
        msg = f"{n_nan} {what} undefined (empty conditioning set or zero total) and skipped"
        warnings.warn(msg, UndefinedCellsWarning, stacklevel=3)


def pair_frame(tasks, attrs, *, assoc, **values) -> pd.DataFrame:
    """Tidy per-pair table, task-major, of (n_tasks, n_attributes) arrays (TABLE_COLUMNS)."""
    nt, na = len(tasks), len(attrs)
    columns = {
        "task": pd.Index(list(tasks)).repeat(na),
        "attribute": pd.Index(list(attrs) * nt),
        "association": np.asarray(assoc).astype(np.int64).ravel(),
    }
    columns |= {k: np.asarray(v, dtype=np.float64).ravel() for k, v in values.items()}
    return pd.DataFrame(columns, columns=TABLE_COLUMNS)
