"""Checks and facts of the tables :func:`~.evaluate.evaluate_tables` works on: the model's
probability tables, C-ordered base tables, and :class:`BaseView`: a base table as the
evaluation reads it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import BiasampError
from .._schema import BaseRatesInfo, jsonable
from ..base_rates import BaseRateTable

__all__ = ["BaseView", "c_table", "check_base", "check_tables", "excluded_tasks"]


def check_tables(tables, name, *, n_tasks, n_attr, axis, cover=None) -> np.ndarray:
    arr = np.asarray(tables, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[1:] != (n_tasks, n_attr):
        raise BiasampError(f"{name} must have shape (n_templates, {n_tasks}, {n_attr}); got "
                           f"{arr.shape}")
    if arr.shape[0] == 0:
        raise BiasampError(f"{name} holds no templates (shape {arr.shape})")
    if cover is not None:  # rows of tasks a bound template does not cover are not read
        arr = np.where(cover[:, :, None], arr, 1.0 / n_attr)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise BiasampError(f"{name} must hold finite non-negative probabilities")
    sums = arr.sum(axis=axis)
    if not np.allclose(sums, 1.0, atol=1e-6):
        what = "column" if axis == 1 else "row"
        worst = float(np.max(np.abs(sums - 1.0)))
        raise BiasampError(f"{name}: every {what} must sum to 1 (max deviation {worst:.3g})")
    return arr


def c_table(x, tasks, attributes, what) -> np.ndarray:
    """A (tasks x attributes) C-contiguous float64 array from a labelled table or an array.

    C order matters: ``DataFrame.to_numpy()`` is Fortran-ordered and numpy's pairwise row
    sums then round differently, which flips the paper's exact-tie signs (uniform base, three
    pronouns) in compat mode.
    """
    if isinstance(x, pd.DataFrame):
        missing = [t for t in tasks if t not in set(map(str, x.index))]
        if missing:
            raise BiasampError(f"{what} lacks the tasks {missing}")
        x = x.rename(index=str, columns=str).reindex(index=tasks, columns=attributes)
        if x.isna().any().any():
            raise BiasampError(f"{what} lacks values for some (task, attribute) cells")
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if arr.shape != (len(tasks), len(attributes)):
        raise BiasampError(f"{what} must have shape ({len(tasks)}, {len(attributes)}); got "
                           f"{arr.shape}")
    return arr


@dataclass(frozen=True)
class BaseView:
    """One base-rate table as the evaluation reads it, for one (source, direction): built
    once (:meth:`of`) and read by the point estimate, the intervals, the paired differences
    and the early checks alike.

    Attributes
    ----------
    name, direction : str
        The source and the direction (None: a direction-free table).
    table : BaseRateTable
        As the source built it.
    joint : ndarray (T, A)
        Its joint table, C-ordered (:func:`c_table`).
    counts : ndarray (T, A) or None
        Its co-occurrence counts (count-based sources), C-ordered.
    metric : dict
        What it asks of the metric: explicit signs (``association``), ``tie_tol``,
        ``undefined``.
    excluded : ndarray (T,) of bool
        The tasks ``min_base_count`` leaves out.
    cells : ndarray (T, A) of bool or None
        The cells that count (None: every cell).
    """

    name: str
    direction: str | None
    table: BaseRateTable
    joint: np.ndarray
    counts: np.ndarray | None
    metric: dict
    excluded: np.ndarray
    cells: np.ndarray | None

    @classmethod
    def of(cls, table: BaseRateTable, name: str, tasks, attributes, *,
           direction: str | None, min_base_count: int | None) -> BaseView:
        what = f"base source {name!r}"
        joint = c_table(table.joint, tasks, attributes, f"{what} joint")
        counts = (None if table.counts is None
                  else c_table(table.counts, tasks, attributes, f"{what} counts"))
        metric = {}
        if table.association is not None:
            metric["association"] = c_table(table.association, tasks, attributes,
                                            f"{what} association")
        if table.tie_tol is not None:
            metric["tie_tol"] = table.tie_tol
        if table.undefined is not None:
            metric["undefined"] = table.undefined
        excluded, cells = excluded_tasks(counts, len(tasks), min_base_count)
        return cls(name, direction, table, joint, counts, metric, excluded, cells)

    @property
    def label(self) -> str:
        return f"base source {self.name!r}, {self.direction}"

    def info(self, tasks, attributes) -> BaseRatesInfo:
        """The table as the run used it (``results.json`` provenance): the source's own
        provenance, its joint's sha256, and what the reports say about it: the attribute
        marginal P(A) (the line that decides the association of a derived sign), whether the
        signs were given explicitly, and, for counts, the co-occurrences behind each task."""
        total = self.joint.sum()
        return BaseRatesInfo(
            source=jsonable(dict(self.table.provenance or {})),
            joint_sha256=hashlib.sha256(self.joint.tobytes()).hexdigest(),
            marginal={a: float(v) for a, v in zip(attributes, self.joint.sum(axis=0) / total)},
            association_given=self.table.association is not None,
            row_totals=(None if self.counts is None else
                        {t: float(v) for t, v in zip(tasks, self.counts.sum(axis=1))}))


def excluded_tasks(counts: np.ndarray | None, n_tasks: int, min_base_count: int | None
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """(excluded, cells): the tasks with fewer than ``min_base_count`` counted sentences in a
    count-based table (none for other tables or without a minimum), and the (T, A) mask of
    the cells that count (None: every cell)."""
    excluded = np.zeros(n_tasks, dtype=bool)
    if min_base_count is not None and counts is not None:
        excluded = counts.sum(axis=1) < min_base_count
    if not excluded.any():
        return excluded, None
    return excluded, np.repeat(~excluded[:, None], counts.shape[1], axis=1)


def check_base(table, name: str, *, tasks, attributes, min_base_count: int | None) -> None:
    """Refuse, before any model is loaded, a base table BiasAmp-> is degenerate against:
    ``min_base_count`` leaving fewer than 2 of its tasks, an attribute that never occurs in
    the tasks kept (P(A=a) = 0: P(T|A=a) is 0/0, the value a silent 0), or fewer than 2 kept
    tasks that occur (P(T=t) = 1 for the one: every association a tie)."""
    view = BaseView.of(table, name, tasks, attributes, direction=None,
                       min_base_count=min_base_count)
    joint, counts, excluded = view.joint, view.counts, view.excluded
    kept = int((~excluded).sum())
    if kept < 2:
        raise BiasampError(
            f"min_base_count {min_base_count} leaves {kept} of the {len(tasks)} tasks of "
            f"base-rate source {name!r} (its largest task count is {counts.sum(axis=1).max():g}); "
            "BiasAmp-> needs at least 2: lower it or leave the source out")
    live = joint[~excluded]
    scope = (f"the tasks min_base_count {min_base_count} keeps" if excluded.any()
             else "the requested tasks")
    empty = [a for a, s in zip(attributes, live.sum(axis=0)) if not s > 0]
    if empty:
        raise BiasampError(
            f"base_rates: source {name!r}: attribute {empty[0]!r} never occurs (its column is "
            f"all zero for {scope}), so P(A={empty[0]}) = 0 and BiasAmp-> is undefined "
            "against it")
    rows = int((live.sum(axis=1) > 0).sum())
    if rows < 2:
        raise BiasampError(
            f"base_rates: source {name!r}: only {rows} of {scope} occurs (the others' rows are "
            "all zero); BiasAmp-> needs P(T=t) > 0 for at least 2 tasks")
