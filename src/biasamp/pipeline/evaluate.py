"""The model-free stage: probability tables -> BiasAmp-> per template, aggregates, CIs.

long on purpose: one stage, read top to bottom: :func:`evaluate_tables`, the points, their
intervals (:mod:`.resample`), the checked base tables, the :class:`Design`.
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._conventions import CONFIDENCE, DIRECTIONS, N_RESAMPLES, TASK_TO_ATTRIBUTE, TIE_TOL
from .._errors import BiasampError, UnavailableCIWarning, UndefinedCellsWarning
from .._progress import as_progress
from .._schema import (
    AGREEMENT_COLUMNS,
    BY_GROUP_COLUMNS,
    BY_PAIR_COLUMNS,
    PER_TEMPLATE_COLUMNS,
    SUMMARY_KEYS,
    BaseRatesInfo,
    BootstrapInfo,
    jsonable,
)
from .._validation import (
    Integer,
    Interval,
    Names,
    OneOf,
    Optional,
    PositiveInt,
    normalised,
    validate_params,
)
from ..base_rates import BaseRateTable
from ..metrics import directional_bias_amplification
from .resample import (
    BASE_UNCERTAINTY,
    RESAMPLE_UNITS,
    Resampling,
    Units,
    interval,
    mean_tables,
    pooled_units,
    replicates,
    sign_support,
)

__all__ = ["BaseView", "Design", "Evaluation", "check_base", "evaluate_tables"]


@dataclass
class Evaluation:
    """What :func:`evaluate_tables` returns.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction); columns :data:`~biasamp.results.SUMMARY_KEYS`.
    by_pair : DataFrame
        One row per (base_rates, direction, task, attribute), with bootstrap CIs.
    per_template : DataFrame
        Long table: base_rates, direction, template_id, value, n_ties, n_nan.
    base_provenance : dict
        source -> direction -> :class:`~biasamp._schema.BaseRatesInfo`, as the run used it.
    by_group : DataFrame
        One row per (base_rates, direction, group) of ``template_groups``; empty without.
    sign_agreement : DataFrame
        How often two sources agree on the sign of an association, with a bootstrap CI.
    bootstrap : BootstrapInfo
        The bootstrap settings and a one-line description of it (``method``).
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    base_provenance: dict
    by_group: pd.DataFrame
    sign_agreement: pd.DataFrame
    bootstrap: BootstrapInfo


def base_tables(sources, tasks, attributes, min_base_count) -> list:
    """(name, {direction: BaseView}) per source (an object or a registered name), each table
    checked as it enters (:func:`check_base`)."""
    from ..base_rates import get_source

    bases = []
    for src in sources:
        if isinstance(src, str):
            name, src = src, get_source(src)
        else:
            name = str(getattr(src, "name", None) or type(src).__name__)
        bases.append((name, {}))
        for direction in DIRECTIONS:  # a task missing from a source fails before scoring
            bases[-1][1][direction] = check_base(
                src.table(tasks, attributes, direction=direction),
                name,
                tasks=tasks,
                attributes=attributes,
                min_base_count=min_base_count,
                direction=direction,
            )
    return bases


_PARAMS = {
    "tasks": Names(min_size=2, what="task"),
    "attributes": Names(min_size=2, what="attribute"),
    "n_resamples": PositiveInt,
    "seed": Integer(0),
    "confidence": Interval(0.0, 1.0),
    "resample": OneOf(RESAMPLE_UNITS),
    "base_uncertainty": OneOf(BASE_UNCERTAINTY),
    "min_base_count": Optional(PositiveInt),
}


def _names_per_template(values, name: str, n_tpl: int) -> tuple:
    """One tuple of names per template (``()`` for all when ``values`` is None)."""
    if values is None:
        return ((),) * n_tpl
    per = tuple(tuple(map(str, v or ())) for v in values)
    if len(per) != n_tpl:
        raise BiasampError(f"{name} must have one entry per template ({n_tpl}); got {len(per)}")
    return per


@validate_params(_PARAMS)
def evaluate_tables(  # noqa: PLR0917 - public, sklearn-style: the data arguments positional
    tables_at,
    tables_ta,
    tasks: Sequence[str],
    attributes: Sequence[str],
    sources: Sequence,
    *,
    template_ids: Sequence[str] | None = None,
    template_tasks: Sequence | None = None,
    template_groups: Sequence | None = None,
    group_labels: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    resample: str = "templates",
    base_uncertainty: str = "resample",
    min_base_count: int | None = None,
    progress=None,
) -> Evaluation:
    """BiasAmp-> per template and its aggregates, from fixed probability tables.

    Parameters
    ----------
    tables_at : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(task | attribute)`` per template; every column sums to 1.
    tables_ta : array-like of shape (n_templates, n_tasks, n_attributes)
        ``P(attribute | task)`` per template; every row a template covers sums to 1.
    tasks, attributes : sequence of str
        Row and column labels.
    sources : sequence of str or BaseRateSource
        Base-rate sources (a name: :func:`biasamp.base_rates.get_source`); a degenerate
        table is refused, as by ``biasamp probe`` (docs/metrics.md).
    template_ids : sequence of str, optional
        Labels of the templates (default ``t0, t1, ...``).
    template_tasks : sequence of sequences of str, optional
        Per template, the tasks it is bound to (empty: every task); bound sets are pooled.
    template_groups : sequence of sequences of str, optional
        Per template, its groups; ``by_group`` then holds each group's value.
    group_labels : sequence of str, optional
        The order of the groups in ``by_group`` (default: order of first appearance).
    n_resamples, seed, confidence
        The bootstrap behind every CI (docs/probing.md).
    resample : {"templates", "tasks", "both"}
        What a replicate draws: templates, tasks, or both (two-way).
    base_uncertainty : {"resample", "none"}
        Resample count-based base tables jointly, or treat every base as exact.
    min_base_count : int, optional
        Leave out the tasks with fewer co-occurrences than this in a count-based source.
    progress : bool or biasamp._progress.Progress, optional
        Told the ``bootstrap`` stage: one step per (source, direction).

    Returns
    -------
    Evaluation
        ``std`` is over templates with ``ddof=0``, as in the paper's Table 2.
    """
    tasks, attributes, n_resamples, seed, confidence, min_base_count = normalised(
        _PARAMS,
        tasks=tasks,
        attributes=attributes,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        min_base_count=min_base_count,
    )
    bases = base_tables(sources, tasks, attributes, min_base_count)
    n_tpl = np.shape(tables_ta)[0]
    ids = tuple(f"t{i}" for i in range(n_tpl)) if template_ids is None else template_ids
    if len(ids) != n_tpl:
        raise BiasampError(f"template_ids must have {n_tpl} entries; got {len(ids)}")
    design = Design(
        tuple(map(str, ids)),
        tuple(tasks),
        tuple(attributes),
        _names_per_template(template_tasks, "template_tasks", n_tpl),
        _names_per_template(template_groups, "template_groups", n_tpl),
        tuple(map(str, group_labels or ())),
    )
    cfg = Resampling(resample, base_uncertainty, n_resamples, seed, confidence, min_base_count)
    return _evaluate(design, tables_at, tables_ta, bases, cfg, progress)


def _evaluate(  # noqa: PLR0917 - the two routes' one core
    design: Design, tables_at, tables_ta, bases: list, cfg: Resampling, progress
) -> Evaluation:
    """The core of :func:`evaluate_tables` and :func:`~.run.evaluate_scores`."""
    tasks, attributes = list(design.tasks), list(design.attributes)
    n_t, n_a = len(tasks), len(attributes)
    cover, strata = design.coverage()
    at = check_tables(tables_at, "tables_at", n_tasks=n_t, n_attr=n_a, axis=1)
    ta = check_tables(tables_ta, "tables_ta", n_tasks=n_t, n_attr=n_a, axis=2, cover=cover)
    if at.shape[0] != ta.shape[0]:
        raise BiasampError(
            f"tables_at and tables_ta must hold the same number of templates; got "
            f"{at.shape[0]} and {ta.shape[0]}"
        )
    n_tpl = at.shape[0]
    if not bases:
        raise BiasampError("sources must name at least one base-rate source; got none")
    per = design.template_groups  # the groups in their order, then in order of appearance
    labels = [g for g in design.group_labels if any(g in gs for gs in per)]
    groups = {
        g: np.array([g in gs for gs in per]) for g in dict.fromkeys(itertools.chain(labels, *per))
    }
    one_template = n_tpl < 2 and cover is None and cfg.resample == "templates"
    if one_template:
        warnings.warn(
            "1 template: confidence intervals over templates need at least 2 and are "
            "unavailable (NaN); the std is 0 by construction",
            UnavailableCIWarning,
            stacklevel=4,
        )
    if cover is None or cfg.resample == "tasks":  # (bound templates: strata, not counted)
        cfg.warn_if_few(n_tpl, n_t)
    task_w = cfg.task_weights(n_t)
    per_dir = {}
    for direction, tables in zip(DIRECTIONS, (at, ta)):
        units = pooled_units(tables, cover, strata, direction)
        per_dir[direction] = (tables, units, cfg.model_tables(units))
    summary, pairs, templates, group_rows, base_prov, signs = [], [], [], [], {}, {}
    progress = as_progress(progress)
    progress.stage("bootstrap", len(bases) * len(DIRECTIONS), "tables")
    for name, views in bases:
        for direction in DIRECTIONS:
            tables, units, mbar = per_dir[direction]
            base = views[direction]
            base_prov.setdefault(name, {})[direction] = base.info(tasks, attributes)
            point = point_estimate(tables, units, base, pooled=cover is not None)
            n_undefined = int(np.isnan(point.contribution).sum()) - int(base.excluded.sum()) * n_a
            if n_undefined > 0:
                warnings.warn(
                    f"{base.label}: {n_undefined} of {n_t * n_a} (task, attribute) cells are "
                    "undefined (all-zero base row/column) and left out of the value",
                    UndefinedCellsWarning,
                    stacklevel=4,
                )
            if not np.isfinite(point.value):
                raise BiasampError(
                    f"BiasAmp-> is undefined (NaN) for every template with {base.label}"
                )
            draws = cfg.base_draws(base.counts)
            iv = table_intervals(
                point, mbar, base, cfg, base_draws=draws, task_w=task_w, unavailable=one_template
            )
            defined = ~np.isnan(point.contribution)
            signs[name, direction] = (point.association, defined, iv.y_rep, iv.defined_rep)
            summary.append(_summary_row(base, point, iv, cfg))
            pairs.append(_pair_frame(base, tasks=tasks, attributes=attributes, point=point, iv=iv))
            templates.append(
                pd.DataFrame(
                    {
                        "base_rates": name,
                        "direction": direction,
                        "template_id": list(design.template_ids),
                        "value": point.per_template,
                        "n_ties": point.n_ties,
                        "n_nan": point.n_nan,
                    },
                    columns=list(PER_TEMPLATE_COLUMNS),
                )
            )
            for label, members in groups.items():
                value = _group_value(units, members, base, cfg, draws=draws, task_w=task_w)
                group_rows.append((name, direction, label, *value))
            progress.advance()
    names = list(dict.fromkeys(name for name, _ in bases))
    return Evaluation(
        summary=pd.DataFrame(summary, columns=list(SUMMARY_KEYS)),
        by_pair=pd.concat(pairs, ignore_index=True),
        per_template=pd.concat(templates, ignore_index=True),
        base_provenance=base_prov,
        by_group=pd.DataFrame(group_rows, columns=list(BY_GROUP_COLUMNS)),
        sign_agreement=agreement_table(signs, names, cfg),
        bootstrap=cfg.provenance(bound=cover is not None),
    )


def _summary_row(base: BaseView, point, iv, cfg: Resampling) -> dict:
    unsupported = None
    if iv.supported is not None:
        has_data = base.counts.sum(axis=1) > 0
        bad = np.nan_to_num(iv.supported, nan=1.0) == 0
        unsupported = int((bad.any(axis=1) & has_data & ~base.excluded).sum())
    return {
        "base_rates": base.name,
        "direction": base.direction,
        "mean": point.value,
        "std": point.std,
        "ci_low": float(iv.value_ci[0]),
        "ci_high": float(iv.value_ci[1]),
        "n_templates": point.n_templates,
        "per_template": []
        if point.aggregation == "pooled" and base.direction == TASK_TO_ATTRIBUTE
        else [float(v) for v in point.per_template],
        "aggregation": point.aggregation,
        "resample": cfg.resample,
        "base_resampled": iv.support is not None,
        "base_bias": iv.base_bias,
        "n_tasks_unsupported": unsupported,
        "n_tasks_excluded": int(base.excluded.sum()),
    }


def _pair_frame(base: BaseView, *, tasks, attributes, point, iv: Intervals) -> pd.DataFrame:
    n_t, n_a = len(tasks), len(attributes)
    cols = {
        c: getattr(point, c).ravel()
        for c in ("association", "p_base", "p_model", "p_model_std", "delta", "contribution")
    }
    for c in ("delta", "contribution"):
        lo, hi = iv.cell_ci[c]
        cols[f"{c}_ci_low"], cols[f"{c}_ci_high"] = lo.ravel(), hi.ravel()
    unmeasured = np.full(n_t * n_a, np.nan)
    support, supported = (
        unmeasured if x is None else x.ravel() for x in (iv.support, iv.supported)
    )
    return pd.DataFrame(
        {
            "base_rates": base.name,
            "direction": base.direction,
            "task": np.repeat(np.asarray(tasks, dtype=object), n_a),
            "attribute": np.tile(np.asarray(attributes, dtype=object), n_t),
            **cols,
            "n_templates": point.n_templates_cell.ravel().astype(np.int64),
            "sign_support": support,
            "sign_supported": pd.array(supported, dtype="boolean"),
        },
        columns=list(BY_PAIR_COLUMNS),
    )


def _group_value(units, members, base: BaseView, cfg: Resampling, *, draws, task_w):
    """(value, ci_low, ci_high, n_templates, n_tasks) of the templates ``members``: their own
    pool (tasks none covers left out) and draws, the run's base resamples."""
    sub = units.subset(members[units.template])  # every group has a template: never empty
    n_tpl = int(len(np.unique(sub.template)))
    covered = sub.rows.any(axis=0)
    mask = np.repeat(covered[:, None], base.joint.shape[1], axis=1)
    mask = mask if base.cells is None else mask & base.cells
    with np.errstate(invalid="ignore"):
        point = base.replicates(mean_tables(sub, None), cells=mask)["value"][0]
    rep = base.replicates(cfg.model_tables(sub), base_draws=draws, cells=mask, task_weights=task_w)
    lo, hi = interval(rep["value"], cfg.confidence, point)
    return float(point), float(lo), float(hi), n_tpl, int(covered.sum())


# -- point estimates --------------------------------------------------------------------------


@dataclass
class Point:
    """The point estimate of one (source, direction); cell arrays have shape (T, A)."""

    value: float
    std: float
    per_template: np.ndarray  # (m,) value per template (NaN where a template has none)
    n_ties: np.ndarray  # (m,) or a single count for a pooled table
    n_nan: np.ndarray
    n_templates: int  # templates behind the value
    aggregation: str  # "templates" or "pooled"
    association: np.ndarray
    p_base: np.ndarray
    p_model: np.ndarray
    p_model_std: np.ndarray
    delta: np.ndarray
    contribution: np.ndarray
    n_templates_cell: np.ndarray  # (T, A) templates behind each defined cell


def _per_template(tables, joint, kwargs, cells):
    """The metric on every template: values, ties, undefined cells, the stacked cell arrays
    and the first template's (its by_pair, task-major, as C-ordered (T, A) arrays)."""
    _, n_t, n_a = tables.shape
    with warnings.catch_warnings():  # the caller warns once per (source, direction)
        warnings.simplefilter("ignore", UndefinedCellsWarning)
        res = [
            directional_bias_amplification(np.ascontiguousarray(t), joint, cells=cells, **kwargs)
            for t in tables
        ]
    names = ("association", "p_base", "p_model", "delta", "contribution")
    c = [
        {k: r.by_pair[k].to_numpy(np.float64, copy=True).reshape(n_t, n_a) for k in names}
        for r in res
    ]
    cols = {k: np.stack([x[k] for x in c]) for k in ("p_model", "delta", "contribution")}
    ints = {k: np.array([getattr(r, k) for r in res], np.int64) for k in ("n_ties", "n_nan")}
    values = np.array([r.value for r in res], dtype=np.float64)
    return values, ints["n_ties"], ints["n_nan"], cols, c[0]


def point_estimate(tables: np.ndarray, units: Units, base: BaseView, *, pooled: bool) -> Point:
    """The point estimate of one (source, direction)."""
    m = tables.shape[0]
    joint, cells, direction = base.joint, base.cells, base.direction
    kwargs = {"direction": direction, **base.metric}
    per_tpl, std = np.full(m, np.nan), float("nan")  # none for a table pooled per task
    if not pooled or direction != TASK_TO_ATTRIBUTE:
        per_tpl, n_ties, n_nan, cols, first = _per_template(tables, joint, kwargs, cells)
        finite = per_tpl[np.isfinite(per_tpl)]
        std = float(np.std(finite, ddof=0)) if finite.size else std
    if not pooled:
        with warnings.catch_warnings():  # all-NaN (undefined) cells stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            c = {**first, **{k: np.nanmean(v, axis=0) for k, v in cols.items()}}
            p_std = np.nanstd(cols["p_model"], axis=0, ddof=0)
        value = float(np.mean(finite)) if finite.size else float("nan")
        n_tpl, how = int(finite.size), "templates"
        n_cell = np.sum(np.isfinite(cols["contribution"]), axis=0)
    else:
        pooled_table = mean_tables(units, None)[0]
        value, ties, nans, _, c = _per_template(pooled_table[None], joint, kwargs, cells)
        value, defined = float(value[0]), ~np.isnan(c["contribution"])
        n_tpl, how = int(len(np.unique(units.template))), "pooled"
        with np.errstate(invalid="ignore"):
            if direction == TASK_TO_ATTRIBUTE:  # rows of each task's own templates
                per_task = units.rows.sum(axis=0)
                sq = (units.rows[:, :, None] * (units.X - pooled_table[None]) ** 2).sum(axis=0)
                p_std = np.sqrt(sq / per_task[:, None])
                n_cell = np.where(defined, per_task[:, None], 0)
                n_ties, n_nan = np.full(m, ties[0]), np.full(m, nans[0])
            else:
                p_std = np.std(tables, axis=0, ddof=0)
                n_cell = np.where(defined, m, 0)
    return Point(
        value=value,
        std=std,
        per_template=per_tpl,
        n_ties=n_ties,
        n_nan=n_nan,
        n_templates=n_tpl,
        aggregation=how,
        p_model_std=p_std,
        n_templates_cell=n_cell,
        **c,
    )


# -- intervals --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Intervals:
    """CIs of the value and of each cell's delta and contribution; for a resampled base the
    base bias and each cell's sign support; the replicates' signs, for the agreement."""

    value_ci: tuple
    cell_ci: dict  # "delta", "contribution" -> (low, high) arrays
    base_bias: float
    support: np.ndarray | None
    supported: np.ndarray | None
    y_rep: np.ndarray
    defined_rep: np.ndarray


def table_intervals(
    point, mbar, base: BaseView, cfg: Resampling, *, base_draws, task_w, unavailable: bool
) -> Intervals:
    """The :class:`Intervals` of one (source, direction)."""
    rep = base.replicates(mbar, base_draws=base_draws, task_weights=task_w)
    conf = cfg.confidence
    nan_cells = np.full(base.joint.shape, np.nan)
    value_ci, cis = (np.nan, np.nan), dict.fromkeys(("delta", "contribution"), (nan_cells,) * 2)
    if not unavailable:
        value_ci = interval(rep["value"], conf, point.value)
        for c in cis:
            cell = getattr(point, c)
            cis[c] = tuple(
                np.where(np.isnan(cell), np.nan, x) for x in interval(rep[c], conf, cell)
            )
    defined, defined_rep = ~np.isnan(point.contribution), ~np.isnan(rep["contribution"])
    support = supported = None
    bias = float("nan")
    if base_draws is not None:
        support = np.where(defined, sign_support(rep["y"], point.association, defined_rep), np.nan)
        supported = np.where(defined, support >= conf, np.nan)
        if np.isfinite(rep["value"]).any():
            bias = float(np.nanmean(rep["value"]) - point.value)
    return Intervals(
        value_ci=value_ci,
        cell_ci=cis,
        base_bias=bias,
        support=support,
        supported=supported,
        y_rep=rep["y"],
        defined_rep=defined_rep,
    )


def agreement_table(signs: dict, sources: list, cfg: Resampling) -> pd.DataFrame:
    """How often two sources agree on the sign of an association, with a bootstrap CI;
    ``signs[(source, direction)] = (y_point, defined_point, y_rep, defined_rep)``."""
    rows = []
    for direction in DIRECTIONS:
        for a, b in itertools.combinations(sources, 2):
            if (a, direction) not in signs or (b, direction) not in signs:
                continue
            ya, da, ra, rda = signs[(a, direction)]
            yb, db, rb, rdb = signs[(b, direction)]
            both = da & db
            n = int(both.sum())
            point = float(np.mean(ya[both] == yb[both])) if n else float("nan")
            lo = hi = point
            if n:
                ok = rda & rdb & both[None]
                agree = ((ra == rb) & ok).sum(axis=(1, 2))
                with np.errstate(invalid="ignore", divide="ignore"):
                    reps = np.where(ok.sum(axis=(1, 2)) > 0, agree / ok.sum(axis=(1, 2)), np.nan)
                lo, hi = interval(reps, cfg.confidence, point)
            rows.append((direction, a, b, point, float(lo), float(hi), n))
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


# -- the tables: the model's, the bases', the groups of templates -----------------------------


def check_tables(tables, name, *, n_tasks, n_attr, axis, cover=None) -> np.ndarray:
    arr = np.asarray(tables, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[1:] != (n_tasks, n_attr):
        raise BiasampError(
            f"{name} must have shape (n_templates, {n_tasks}, {n_attr}); got {arr.shape}"
        )
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

    C order matters: ``DataFrame.to_numpy()`` is Fortran-ordered, and numpy's pairwise row sums
    then round differently, flipping the paper's exact-tie signs in compat mode."""
    if isinstance(x, pd.DataFrame):
        missing = [t for t in tasks if t not in set(map(str, x.index))]
        if missing:
            raise BiasampError(f"{what} lacks the tasks {missing}")
        x = x.rename(index=str, columns=str).reindex(index=tasks, columns=attributes)
        if x.isna().any().any():
            raise BiasampError(f"{what} lacks values for some (task, attribute) cells")
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if arr.shape != (len(tasks), len(attributes)):
        raise BiasampError(
            f"{what} must have shape ({len(tasks)}, {len(attributes)}); got {arr.shape}"
        )
    return arr


@dataclass(frozen=True)
class BaseView:
    """One base-rate table of one (source, direction) as the evaluation reads it (:meth:`of`):
    C-ordered arrays, what it asks of the metric, the tasks left out and the cells that count."""

    name: str
    direction: str | None
    table: BaseRateTable
    joint: np.ndarray
    counts: np.ndarray | None
    metric: dict
    excluded: np.ndarray
    cells: np.ndarray | None

    @classmethod
    def of(
        cls,
        table: BaseRateTable,
        name: str,
        tasks,
        attributes,
        *,
        direction: str | None,
        min_base_count: int | None,
    ) -> BaseView:
        what = f"base source {name!r}"
        joint = c_table(table.joint, tasks, attributes, f"{what} joint")
        counts = table.counts
        if counts is not None:
            counts = c_table(counts, tasks, attributes, f"{what} counts")
        metric = {
            k: getattr(table, k) for k in ("tie_tol", "undefined") if getattr(table, k) is not None
        }
        if table.association is not None:
            metric["association"] = c_table(
                table.association, tasks, attributes, f"{what} association"
            )
        excluded = np.zeros(len(tasks), dtype=bool)
        if min_base_count is not None and counts is not None:
            excluded = counts.sum(axis=1) < min_base_count
        cells = np.repeat(~excluded[:, None], len(attributes), axis=1) if excluded.any() else None
        return cls(name, direction, table, joint, counts, metric, excluded, cells)

    def replicates(self, mbar, *, base_draws=None, cells=None, task_weights=None) -> dict:
        """:func:`.resample.replicates` against this table."""
        return replicates(
            mbar,
            self.joint,
            direction=self.direction,
            metric=self.metric,
            base_draws=base_draws,
            to_joint=self.table.joint_from_counts,
            cells=self.cells if cells is None else cells,
            task_weights=task_weights,
        )

    @property
    def label(self) -> str:
        return f"base source {self.name!r}, {self.direction}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.joint.tobytes()).hexdigest()

    def info(self, tasks, attributes) -> BaseRatesInfo:
        """The table as the run used it (``results.json`` provenance)."""
        total = self.joint.sum()
        return BaseRatesInfo(
            source=jsonable(dict(self.table.provenance or {})),
            joint_sha256=self.sha256,
            marginal={a: float(v) for a, v in zip(attributes, self.joint.sum(axis=0) / total)},
            association_given=self.table.association is not None,
            row_totals=(
                None
                if self.counts is None
                else {t: float(v) for t, v in zip(tasks, self.counts.sum(axis=1))}
            ),
        )


def check_base(
    table, name: str, *, tasks, attributes, min_base_count: int | None, direction=None
) -> BaseView:
    """Refuse, before any model loads, a base table BiasAmp-> is degenerate against; return
    its :class:`BaseView` otherwise."""
    view = BaseView.of(
        table, name, tasks, attributes, direction=direction, min_base_count=min_base_count
    )
    joint, counts, excluded = view.joint, view.counts, view.excluded
    kept = int((~excluded).sum())
    if kept < 2:
        raise BiasampError(
            f"min_base_count {min_base_count} leaves {kept} of the {len(tasks)} tasks of "
            f"base-rate source {name!r} (its largest task count is {counts.sum(axis=1).max():g}); "
            "BiasAmp-> needs at least 2: lower it or leave the source out"
        )
    live = joint[~excluded]
    scope = "the requested tasks"
    if excluded.any():
        scope = f"the tasks min_base_count {min_base_count} keeps"
    empty = [a for a, s in zip(attributes, live.sum(axis=0)) if not s > 0]
    if empty:
        raise BiasampError(
            f"base_rates: source {name!r}: attribute {empty[0]!r} never occurs (its column is "
            f"all zero for {scope}), so P(A={empty[0]}) = 0 and BiasAmp-> is undefined "
            "against it"
        )
    rows = int((live.sum(axis=1) > 0).sum())
    if rows < 2:
        raise BiasampError(
            f"base_rates: source {name!r}: only {rows} of {scope} occurs (the others' rows are "
            "all zero); BiasAmp-> needs P(T=t) > 0 for at least 2 tasks"
        )
    if table.association is None:  # derived signs: all ties when every row is in proportion
        col = live.sum(axis=0, keepdims=True)
        lean = live / col - live.sum(axis=1, keepdims=True) / col.sum()
        if (np.abs(lean) <= (TIE_TOL if table.tie_tol is None else table.tie_tol)).all():
            raise BiasampError(
                f"base_rates: source {name!r}: every one of {scope} holds the attributes in "
                "their overall proportion (P(T|A) = P(T), e.g. all 50/50), so no task is "
                "associated with an attribute and BiasAmp-> is 0 by construction; leave "
                "the source out"
            )
    return view


@dataclass(frozen=True)
class Design:
    """What a probe measures, apart from any model: templates, tasks, attributes, the tasks
    each template covers (``()``: every task), its groups, and the groups' order; saved as
    ``provenance.design``.

    >>> d = Design(("t1", "t2"), ("nurse", "cook"), ("he", "she"), (("nurse",), ()), ((), ()), ())
    >>> d.bound, d.coverage()[0].tolist()
    (True, [[True, False], [True, True]])
    """

    template_ids: tuple
    tasks: tuple
    attributes: tuple
    template_tasks: tuple
    template_groups: tuple
    group_labels: tuple

    @property
    def bound(self) -> bool:
        """Some template covers only its own tasks (the tables are pooled per task)."""
        return any(self.template_tasks)

    def coverage(self):
        """``(cover, strata)`` of the templates: the (n_templates, n_tasks) tasks each covers and
        the strata of the bootstrap; ``(None, None)`` when every one covers every task."""
        index = {t: i for i, t in enumerate(self.tasks)}
        cover = np.zeros((len(self.template_ids), len(self.tasks)), dtype=bool)
        for k, b in enumerate(self.template_tasks):
            unknown = [t for t in b if t not in index]
            if unknown:
                raise BiasampError(
                    f"template_tasks[{k}] names tasks {unknown} that are not in tasks"
                )
            cover[k, [index[t] for t in b] if b else slice(None)] = True
        if cover.all():
            return None, None
        missing = [t for t, c in zip(self.tasks, cover.any(axis=0)) if not c]
        if missing:
            raise BiasampError(f"template_tasks: tasks {missing} are covered by no template")
        return cover, ["|".join(b) if b else "*" for b in self.template_tasks]

    def select(self, template_ids) -> Design:
        """The design of some of the templates (in the order given)."""
        at = {t: i for i, t in enumerate(self.template_ids)}
        idx = [at[str(t)] for t in template_ids]
        per = ("template_ids", "template_tasks", "template_groups")
        return replace(self, **{f: tuple(getattr(self, f)[i] for i in idx) for f in per})

    def to_dict(self) -> dict:
        """JSON-ready (``results.json``)."""
        return {f: jsonable(getattr(self, f)) for f in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: dict) -> Design:
        nested = ("template_tasks", "template_groups")
        return cls(
            **{
                f: tuple(tuple(map(str, v)) if f in nested else str(v) for v in data[f])
                for f in cls.__dataclass_fields__
            }
        )
