"""The model-free stage: probability tables -> BiasAmp-> per template, aggregates, CIs.

:func:`evaluate_tables` takes the model's tables of shape ``(n_templates, n_tasks,
n_attributes)`` per direction (A->T: ``P(task | attribute)``, columns sum to 1; T->A:
``P(attribute | task)``, rows sum to 1) and base-rate sources, and returns the summary
(mean, population std, seeded bootstrap CI over templates), the per-(task, attribute)
disaggregation with CIs, the per-template values and the values per group of templates.
Each base table carries its own conventions (``tie_tol``, ``undefined``), which are passed
to the metric unchanged. Sets with templates bound to their own tasks are pooled per task
instead (:mod:`._pooled`).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import DIRECTIONS
from .._errors import BiasampError, UnavailableCIWarning, UndefinedCellsWarning
from .._validation import Interval, Names, PositiveInt, Integer, validate_params
from ..metrics import bootstrap_ci, directional_bias_amplification
from ..results import (BY_GROUP_COLUMNS, BY_PAIR_COLUMNS, PER_TEMPLATE_COLUMNS, SUMMARY_KEYS,
                       jsonable)
from ._pooled import coverage, crossed_group, group_value, pooled_table, template_masks

__all__ = ["Evaluation", "evaluate_tables"]

_CELL_BLOCK = 1 << 22  # resample-count entries per chunk (memory bound of the fast bootstrap)


@dataclass
class Evaluation:
    """What :func:`evaluate_tables` returns.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction): ``mean``, ``std`` (population, ddof=0),
        ``ci_low``, ``ci_high``, ``n_templates``, ``per_template`` (list of floats),
        ``aggregation`` (``"templates"``: mean over templates, bootstrap over templates;
        ``"pooled"``: BiasAmp-> of the tables pooled per task, bootstrap stratified by
        task, ``std`` NaN and ``per_template`` empty for T->A).
    by_pair : DataFrame
        One row per (base_rates, direction, task, attribute): ``association``,
        ``p_base``, ``p_model`` (mean over templates), ``p_model_std``, ``delta`` and
        ``contribution`` (means over templates) with bootstrap CIs, ``n_templates``.
    per_template : DataFrame
        Long table: base_rates, direction, template_id, value, n_ties, n_nan.
    base_provenance : dict
        Provenance of each base-rate table, keyed by ``"<source>|<direction>"``.
    by_group : DataFrame
        One row per (base_rates, direction, group) for the groups of ``template_groups``
        (:data:`~biasamp.results.BY_GROUP_COLUMNS`); empty without groups.
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    base_provenance: dict
    by_group: pd.DataFrame = None

    def __post_init__(self):
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))


def _source(source):
    """(name, source) for a source object or a registered name."""
    if isinstance(source, str):
        from ..base_rates import get_source
        return source, get_source(source)
    return str(getattr(source, "name", None) or type(source).__name__), source


def _check_tables(tables, name, n_tasks, n_attr, axis, cover=None) -> np.ndarray:
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


def _pairs_in_order(by_pair: pd.DataFrame, n_t: int, n_a: int) -> dict:
    """The metric's by_pair columns (positional labels) as arrays in row-major cell order."""
    pos = (by_pair["task"].to_numpy(dtype=np.int64) * n_a
           + by_pair["attribute"].to_numpy(dtype=np.int64))
    order = np.empty(n_t * n_a, dtype=np.int64)
    order[pos] = np.arange(n_t * n_a)
    return {c: by_pair[c].to_numpy(dtype=np.float64)[order]
            for c in ("association", "p_base", "p_model", "delta", "contribution")}


def _base_facts(table, joint: np.ndarray, attributes, tasks) -> dict:
    """What the reports say about a base table: the attribute marginal P(A) (the line that
    decides the association of a derived sign), whether the signs were given explicitly,
    and, for counts, the co-occurrences behind each task."""
    total = joint.sum()
    facts = {"marginal": {a: float(v) for a, v in zip(attributes, joint.sum(axis=0) / total)},
             "association_given": getattr(table, "association", None) is not None}
    counts = getattr(table, "counts", None)
    if counts is not None:
        rows = c_table(counts, tasks, attributes, "counts").sum(axis=1)
        facts["row_totals"] = {t: float(v) for t, v in zip(tasks, rows)}
    return facts


def metric_settings(table, name, tasks, attributes) -> dict:
    """What a base table asks of the metric: explicit signs, ``tie_tol``, ``undefined``."""
    return {k: v for k, v in _metric_kwargs(table, name, tasks, attributes, None).items()
            if k != "direction"}


def _metric_kwargs(table, name, tasks, attributes, direction) -> dict:
    kwargs = {"direction": direction}
    if getattr(table, "association", None) is not None:
        kwargs["association"] = c_table(table.association, tasks, attributes,
                                        f"base source {name!r} association")
    if getattr(table, "tie_tol", None) is not None:
        kwargs["tie_tol"] = table.tie_tol
    if getattr(table, "undefined", None) is not None:
        kwargs["undefined"] = table.undefined
    return kwargs


@validate_params({"tasks": Names(what="task"), "attributes": Names(min_size=2, what="attribute"),
                  "n_resamples": PositiveInt, "seed": Integer(0),
                  "confidence": Interval(0.0, 1.0)})
def evaluate_tables(tables_at, tables_ta, tasks: Sequence[str], attributes: Sequence[str],
                    sources: Sequence, *, template_ids: Sequence[str] | None = None,
                    template_tasks: Sequence | None = None,
                    template_groups: Sequence | None = None,
                    group_labels: Sequence[str] | None = None,
                    n_resamples: int = 10_000, seed: int = 0,
                    confidence: float = 0.95) -> Evaluation:
    """BiasAmp-> per template and its aggregates, from fixed probability tables.

    Parameters
    ----------
    tables_at : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(task | attribute)`` per template; every column sums to 1.
    tables_ta : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(attribute | task)`` per template; every row sums to 1 (rows of tasks a bound
        template does not cover are not read: NaN is fine there).
    tasks, attributes : sequence of str
        Row and column labels.
    sources : sequence of str or BaseRateSource
        Base-rate sources (names are looked up with :func:`biasamp.base_rates.get_source`).
        Each source's table is built per direction (``source.table(tasks, attributes,
        direction=...)``); its ``association``, ``tie_tol`` and ``undefined`` (how
        undefined cells count: the paper-compatible ``*-wang2021`` tables say "tie") are
        passed to the metric.
    template_ids : sequence of str, optional
        Labels of the templates (default ``t0, t1, ...``).
    template_tasks : sequence of sequences of str, optional
        Per template, the tasks it is bound to (empty: every task, a crossed template).
        When some template covers only some tasks the tables are pooled per task (see
        :mod:`biasamp.pipeline._pooled`): T->A from each task's own templates, A->T over
        all templates, one value per table, bootstrap stratified by task (for A->T by the
        template's own tasks).
    template_groups : sequence of sequences of str, optional
        Per template, the groups it belongs to; ``by_group`` then holds the value of each
        group's templates, computed as the summary is (mean over the group's templates,
        or pooled over the tasks its templates cover).
    group_labels : sequence of str, optional
        The order of the groups in ``by_group`` (default: order of first appearance).
    n_resamples, seed, confidence
        Percentile bootstrap over templates (:func:`biasamp.metrics.bootstrap_ci`).

    Returns
    -------
    Evaluation

    Notes
    -----
    ``std`` is the population standard deviation over templates (``ddof=0``), as in the
    paper's Table 2. Undefined cells are announced by one :class:`UndefinedCellsWarning`
    per (source, direction).
    """
    n_t, n_a = len(tasks), len(attributes)
    cover, strata = coverage(template_tasks, tasks, np.shape(tables_ta)[0])
    at = _check_tables(tables_at, "tables_at", n_t, n_a, axis=1)
    ta = _check_tables(tables_ta, "tables_ta", n_t, n_a, axis=2, cover=cover)
    if at.shape[0] != ta.shape[0]:
        raise BiasampError(f"tables_at and tables_ta must hold the same number of templates; got "
                           f"{at.shape[0]} and {ta.shape[0]}")
    n_tpl = at.shape[0]
    template_ids = ([f"t{i}" for i in range(n_tpl)] if template_ids is None
                    else [str(t) for t in template_ids])
    if len(template_ids) != n_tpl:
        raise BiasampError(f"template_ids must have {n_tpl} entries; got {len(template_ids)}")
    if not sources:
        raise BiasampError("sources must name at least one base-rate source; got none")
    if n_tpl < 2:
        warnings.warn("1 template: confidence intervals over templates need at least 2 and are "
                      "unavailable (NaN); the std is 0 by construction", UnavailableCIWarning,
                      stacklevel=3)
    groups = template_masks(template_groups, n_tpl, group_labels)
    opts = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}

    summary_rows, pair_frames, tpl_frames, group_rows, base_prov = [], [], [], [], {}
    for source in sources:
        name, src = _source(source)
        for direction, tables in zip(DIRECTIONS, (at, ta)):
            table = src.table(tasks, attributes, direction=direction)
            joint = c_table(table.joint, tasks, attributes, f"base source {name!r} joint")
            prov = dict(getattr(table, "provenance", None) or {})
            prov.setdefault("joint_sha256", hashlib.sha256(joint.tobytes()).hexdigest())
            prov.update(_base_facts(table, joint, attributes, tasks))
            base_prov[f"{name}|{direction}"] = jsonable(prov)
            kwargs = _metric_kwargs(table, name, tasks, attributes, direction)
            where = {"name": name, "direction": direction, "tasks": tasks,
                     "attributes": attributes, "template_ids": template_ids}
            if cover is None:
                s, p, t = _one_table(tables, joint, kwargs, name, direction, tasks, attributes,
                                     template_ids, **opts)
                g = [crossed_group(t["value"].to_numpy(), members, n_t, **opts)
                     for members in groups.values()]
            else:
                s, p, t, units = pooled_table(tables, cover, strata, joint, kwargs, **where,
                                              **opts)
                g = [group_value(units, members, **opts) for members in groups.values()]
            summary_rows.append(s)
            pair_frames.append(p)
            tpl_frames.append(t)
            group_rows += [(name, direction, label, *vals) for label, vals in zip(groups, g)]
    return Evaluation(summary=pd.DataFrame(summary_rows, columns=list(SUMMARY_KEYS)),
                      by_pair=pd.concat(pair_frames, ignore_index=True),
                      per_template=pd.concat(tpl_frames, ignore_index=True),
                      base_provenance=base_prov,
                      by_group=pd.DataFrame(group_rows, columns=list(BY_GROUP_COLUMNS)))


def _one_table(tables, joint, kwargs, name, direction, tasks, attributes, template_ids, *,
               n_resamples, seed, confidence):
    """Summary record, by_pair frame and per-template frame of one (source, direction)."""
    n_tpl, n_t, n_a = tables.shape
    values = np.empty(n_tpl)
    n_ties = np.empty(n_tpl, dtype=np.int64)
    n_nan = np.empty(n_tpl, dtype=np.int64)
    cols = {c: np.empty((n_tpl, n_t * n_a)) for c in ("delta", "contribution", "p_model")}
    first = None
    with warnings.catch_warnings():  # one warning per (source, direction), below
        warnings.simplefilter("ignore", UndefinedCellsWarning)
        for i in range(n_tpl):
            res = directional_bias_amplification(np.ascontiguousarray(tables[i]), joint,
                                                 **kwargs)
            bp = _pairs_in_order(res.by_pair, n_t, n_a)
            values[i], n_ties[i], n_nan[i] = res.value, res.n_ties, res.n_nan
            for c in cols:
                cols[c][i] = bp[c]
            first = bp if first is None else first
    label = f"base source {name!r}, {direction}"
    if n_nan.max():
        warnings.warn(f"{label}: {int(n_nan.max())} of {n_t * n_a} (task, attribute) cells are "
                      "undefined (all-zero base row/column) and left out of the value",
                      UndefinedCellsWarning, stacklevel=4)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise BiasampError(f"BiasAmp-> is undefined (NaN) for every template with {label}")
    if finite.size < n_tpl:
        warnings.warn(f"{label}: {n_tpl - finite.size} of {n_tpl} templates give NaN and are "
                      "left out of the mean", UndefinedCellsWarning, stacklevel=4)
    if 1 == finite.size < n_tpl:
        warnings.warn(f"{label}: only 1 template gives a value; its confidence interval is "
                      "unavailable (NaN)", UnavailableCIWarning, stacklevel=4)
    with warnings.catch_warnings():  # announced once above
        warnings.simplefilter("ignore", UnavailableCIWarning)
        lo, hi = bootstrap_ci(finite, n_resamples=n_resamples, seed=seed, confidence=confidence)
    summary = {"base_rates": name, "direction": direction, "mean": float(np.mean(finite)),
               "std": float(np.std(finite, ddof=0)), "ci_low": float(lo), "ci_high": float(hi),
               "n_templates": int(finite.size), "per_template": [float(v) for v in values],
               "aggregation": "templates"}
    ci = {c: cell_bootstrap_ci(cols[c], n_resamples=n_resamples, seed=seed,
                               confidence=confidence) for c in ("delta", "contribution")}
    with warnings.catch_warnings():  # all-NaN (undefined) cells stay NaN, counted above
        warnings.simplefilter("ignore", RuntimeWarning)
        means = {c: np.nanmean(cols[c], axis=0) for c in cols}
        p_std = np.nanstd(cols["p_model"], axis=0, ddof=0)
    pair = pd.DataFrame({
        "base_rates": name, "direction": direction,
        "task": np.repeat(np.asarray(tasks, dtype=object), n_a),
        "attribute": np.tile(np.asarray(attributes, dtype=object), n_t),
        "association": first["association"], "p_base": first["p_base"],
        "p_model": means["p_model"], "p_model_std": p_std,
        "delta": means["delta"], "delta_ci_low": ci["delta"][0],
        "delta_ci_high": ci["delta"][1],
        "contribution": means["contribution"], "contribution_ci_low": ci["contribution"][0],
        "contribution_ci_high": ci["contribution"][1],
        "n_templates": np.sum(np.isfinite(cols["contribution"]), axis=0).astype(np.int64),
    }, columns=list(BY_PAIR_COLUMNS))
    per_template = pd.DataFrame({"base_rates": name, "direction": direction,
                                 "template_id": template_ids, "value": values,
                                 "n_ties": n_ties, "n_nan": n_nan},
                                columns=list(PER_TEMPLATE_COLUMNS))
    return summary, pair, per_template


def cell_bootstrap_ci(values: np.ndarray, *, n_resamples: int, seed: int,
                      confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-column percentile bootstrap of the mean over rows (templates), shape (m, k) -> (k,).

    Same resamples as ``biasamp.metrics.bootstrap_ci(values, ...)`` (identical seeded row
    draws), but each resample's column means are ``counts @ values / m`` (one matrix
    product) instead of a gather of shape (n_resamples, m, k): with 1,339 templates x 64
    cells and 10,000 resamples that is seconds instead of minutes. Columns holding NaN
    (undefined cells) go through ``bootstrap_ci`` itself; constant columns give exactly
    their value, as there.
    """
    v = np.asarray(values, dtype=np.float64)
    m, k = v.shape
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    if m < 2:  # one template: no interval (the caller warns once)
        return low, high
    has_nan = np.isnan(v).any(axis=0)
    const = ~has_nan & (v.min(axis=0) == v.max(axis=0))
    low[const] = high[const] = v[0, const]
    if has_nan.any() and not np.isnan(v[:, has_nan]).all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UnavailableCIWarning)
            lo, hi = bootstrap_ci(v[:, has_nan], n_resamples=n_resamples, seed=seed,
                                  confidence=confidence)
        low[has_nan], high[has_nan] = lo, hi
    free = ~has_nan & ~const
    if free.any():
        sub = np.ascontiguousarray(v[:, free])
        rng = np.random.default_rng(seed)
        block = max(1, _CELL_BLOCK // m)
        stats = []
        for start in range(0, int(n_resamples), block):
            b = min(block, int(n_resamples) - start)
            idx = rng.integers(0, m, size=(b, m))
            counts = np.bincount((idx + (np.arange(b) * m)[:, None]).ravel(),
                                 minlength=b * m).reshape(b, m).astype(np.float64)
            stats.append(counts @ sub / m)
        q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
        lo, hi = np.percentile(np.concatenate(stats, axis=0), q, axis=0)
        low[free], high[free] = lo, hi
    return low, high
