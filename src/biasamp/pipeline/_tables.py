"""Checks and facts of the tables :func:`~.evaluate.evaluate_tables` works on: the model's
probability tables, C-ordered base tables, what a base table asks of the metric."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import BiasampError

__all__ = ["base_facts", "c_table", "check_base", "check_tables", "excluded_tasks", "metric_kwargs",
           "metric_settings"]


def check_tables(tables, name, n_tasks, n_attr, axis, cover=None) -> np.ndarray:
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


def base_facts(table, joint: np.ndarray, counts: np.ndarray | None, attributes, tasks) -> dict:
    """What the reports say about a base table: the attribute marginal P(A) (the line that
    decides the association of a derived sign), whether the signs were given explicitly,
    and, for counts (its :func:`c_table`), the co-occurrences behind each task."""
    total = joint.sum()
    facts = {"marginal": {a: float(v) for a, v in zip(attributes, joint.sum(axis=0) / total)},
             "association_given": getattr(table, "association", None) is not None}
    if counts is not None:
        facts["row_totals"] = {t: float(v) for t, v in zip(tasks, counts.sum(axis=1))}
    return facts


def metric_settings(table, name, tasks, attributes) -> dict:
    """What a base table asks of the metric: explicit signs, ``tie_tol``, ``undefined``."""
    return {k: v for k, v in metric_kwargs(table, name, tasks, attributes, None).items()
            if k != "direction"}


def metric_kwargs(table, name, tasks, attributes, direction) -> dict:
    kwargs = {"direction": direction}
    if getattr(table, "association", None) is not None:
        kwargs["association"] = c_table(table.association, tasks, attributes,
                                        f"base source {name!r} association")
    if getattr(table, "tie_tol", None) is not None:
        kwargs["tie_tol"] = table.tie_tol
    if getattr(table, "undefined", None) is not None:
        kwargs["undefined"] = table.undefined
    return kwargs


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


def check_base(table, name: str, tasks, attributes, min_base_count: int | None) -> None:
    """Refuse, before any model is loaded, a base table BiasAmp-> is degenerate against:
    ``min_base_count`` leaving fewer than 2 of its tasks, an attribute that never occurs in
    the tasks kept (P(A=a) = 0: P(T|A=a) is 0/0, the value a silent 0), or fewer than 2 kept
    tasks that occur (P(T=t) = 1 for the one: every association a tie)."""
    joint = c_table(table.joint, tasks, attributes, f"base source {name!r} joint")
    counts = getattr(table, "counts", None)
    counts = None if counts is None else c_table(counts, tasks, attributes,
                                                 f"base source {name!r} counts")
    excluded, _ = excluded_tasks(counts, len(tasks), min_base_count)
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
