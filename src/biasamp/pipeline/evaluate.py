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

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError, UnavailableCIWarning, UndefinedCellsWarning
from .._progress import as_progress
from .._validation import (Integer, Interval, Names, OneOf, Optional, PositiveInt, normalised,
                           validate_params)
from ..results import (AGREEMENT_COLUMNS, BY_GROUP_COLUMNS, BY_PAIR_COLUMNS,
                       PER_TEMPLATE_COLUMNS, SUMMARY_KEYS, BootstrapInfo)
from ._intervals import Intervals, Resampling, agreement_table, draws_of, table_intervals
from ._tables import BaseView, check_tables
from ._points import point_estimate
from ._pooled import coverage, pooled_units, template_masks
from .resample import BASE_UNCERTAINTY, RESAMPLE_UNITS, interval, mean_tables, replicates

__all__ = ["Evaluation", "evaluate_tables"]


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
        Each base-rate table as the run used it: source -> direction ->
        :class:`~biasamp.results.BaseRatesInfo`.
    by_group : DataFrame
        One row per (base_rates, direction, group) for the groups of ``template_groups``
        (:data:`~biasamp.results.BY_GROUP_COLUMNS`); empty without groups.
    sign_agreement : DataFrame
        How often two sources agree on the sign of an association, with a bootstrap CI
        (:data:`~biasamp.results.AGREEMENT_COLUMNS`).
    bootstrap : BootstrapInfo
        The bootstrap settings and a one-line description of it (``method``).
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    base_provenance: dict
    by_group: pd.DataFrame = None
    sign_agreement: pd.DataFrame = None
    bootstrap: BootstrapInfo = None

    def __post_init__(self):
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))
        if self.sign_agreement is None:
            self.sign_agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))


def _source(source):
    """(name, source) for a source object or a registered name."""
    if isinstance(source, str):
        from ..base_rates import get_source
        return source, get_source(source)
    return str(getattr(source, "name", None) or type(source).__name__), source


_PARAMS = {"tasks": Names(min_size=2, what="task"),
           "attributes": Names(min_size=2, what="attribute"),
           "n_resamples": PositiveInt, "seed": Integer(0), "confidence": Interval(0.0, 1.0),
           "resample": OneOf(RESAMPLE_UNITS), "base_uncertainty": OneOf(BASE_UNCERTAINTY),
           "min_base_count": Optional(PositiveInt)}


@validate_params(_PARAMS)
def evaluate_tables(  # noqa: PLR0917 - public contract: the data positional (sklearn style)
        tables_at, tables_ta, tasks: Sequence[str], attributes: Sequence[str], sources: Sequence,
        *, template_ids: Sequence[str] | None = None,
        template_tasks: Sequence | None = None,
        template_groups: Sequence | None = None,
        group_labels: Sequence[str] | None = None,
        n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95,
        resample: str = "templates", base_uncertainty: str = "resample",
        min_base_count: int | None = None, progress=None) -> Evaluation:
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
        Each source's table is built per direction; its ``association``, ``tie_tol`` and
        ``undefined`` are passed to the metric, and its ``counts`` (count-based sources) are
        resampled with ``base_uncertainty="resample"``.
    template_ids : sequence of str, optional
        Labels of the templates (default ``t0, t1, ...``).
    template_tasks : sequence of sequences of str, optional
        Per template, the tasks it is bound to (empty: every task, a crossed template).
        When some template covers only some tasks the tables are pooled per task (see
        :mod:`biasamp.pipeline._pooled`).
    template_groups : sequence of sequences of str, optional
        Per template, the groups it belongs to; ``by_group`` then holds each group's value.
    group_labels : sequence of str, optional
        The order of the groups in ``by_group`` (default: order of first appearance).
    n_resamples, seed, confidence
        The bootstrap behind every CI (:mod:`biasamp.pipeline.resample`).
    resample : {"templates", "tasks", "both"}
        What a replicate draws: templates (default; within tasks for bound sets), tasks, or
        both (two-way).
    base_uncertainty : {"resample", "none"}
        Resample count-based base tables jointly (default), or treat every base as exact.
    min_base_count : int, optional
        Leave out the tasks with fewer co-occurrences than this in a count-based source.
    progress : bool or biasamp._progress.Progress, optional
        Told the ``bootstrap`` stage: one step per (source, direction).

    Returns
    -------
    Evaluation

    Notes
    -----
    ``std`` is the population standard deviation over templates (``ddof=0``), as in the
    paper's Table 2. Undefined cells are announced by one :class:`UndefinedCellsWarning`
    per (source, direction).
    """
    tasks, attributes, n_resamples, seed, confidence, min_base_count = normalised(
        _PARAMS, tasks=tasks, attributes=attributes, n_resamples=n_resamples, seed=seed,
        confidence=confidence, min_base_count=min_base_count)
    n_t, n_a = len(tasks), len(attributes)
    cover, strata = coverage(template_tasks, tasks, np.shape(tables_ta)[0])
    at = check_tables(tables_at, "tables_at", n_tasks=n_t, n_attr=n_a, axis=1)
    ta = check_tables(tables_ta, "tables_ta", n_tasks=n_t, n_attr=n_a, axis=2, cover=cover)
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
    groups = template_masks(template_groups, n_tpl, group_labels)
    cfg = Resampling(resample, base_uncertainty, n_resamples, seed, confidence)
    one_template = n_tpl < 2 and cover is None and resample == "templates"
    if one_template:
        warnings.warn("1 template: confidence intervals over templates need at least 2 and are "
                      "unavailable (NaN); the std is 0 by construction", UnavailableCIWarning,
                      stacklevel=3)
    task_w = cfg.task_weights(n_t)
    per_dir = {}
    for direction, tables in zip(DIRECTIONS, (at, ta)):
        units = pooled_units(tables, cover, strata, direction)
        per_dir[direction] = (tables, units, cfg.model_tables(units))
    out = _Collector()
    progress = as_progress(progress)
    progress.stage("bootstrap", len(sources) * len(DIRECTIONS), "tables")
    for source in sources:
        name, src = _source(source)
        for direction in DIRECTIONS:
            tables, units, mbar = per_dir[direction]
            base = BaseView.of(src.table(tasks, attributes, direction=direction), name, tasks,
                               attributes, direction=direction, min_base_count=min_base_count)
            _evaluate_one(out, base, tables=tables, units=units, mbar=mbar,
                          pooled=cover is not None, tasks=tasks, attributes=attributes,
                          template_ids=template_ids, groups=groups, cfg=cfg, task_w=task_w,
                          one_template=one_template)
            progress.advance()
    names = list(dict.fromkeys(out.names))
    return Evaluation(summary=pd.DataFrame(out.summary, columns=list(SUMMARY_KEYS)),
                      by_pair=pd.concat(out.pairs, ignore_index=True),
                      per_template=pd.concat(out.templates, ignore_index=True),
                      base_provenance=out.base_prov,
                      by_group=pd.DataFrame(out.groups, columns=list(BY_GROUP_COLUMNS)),
                      sign_agreement=agreement_table(out.signs, names, cfg),
                      bootstrap=cfg.provenance(bound=cover is not None,
                                               min_base_count=min_base_count))


class _Collector:
    def __init__(self):
        self.summary, self.pairs, self.templates, self.groups = [], [], [], []
        self.base_prov, self.signs, self.names = {}, {}, []


def _evaluate_one(out: _Collector, base: BaseView, *, tables, units, mbar, pooled: bool,
                  tasks, attributes, template_ids, groups, cfg: Resampling, task_w,
                  one_template: bool) -> None:
    """Point estimate and intervals of one (source, direction), added to ``out``."""
    n_t, n_a = len(tasks), len(attributes)
    name, direction = base.name, base.direction
    out.base_prov.setdefault(name, {})[direction] = base.info(tasks, attributes)
    point = point_estimate(tables, units, base.joint,
                           kwargs={"direction": direction, **base.metric},
                           direction=direction, pooled=pooled, cells=base.cells)
    n_undefined = int(np.isnan(point.contribution).sum()) - int(base.excluded.sum()) * n_a
    if n_undefined > 0:
        warnings.warn(f"{base.label}: {n_undefined} of {n_t * n_a} (task, attribute) cells are "
                      "undefined (all-zero base row/column) and left out of the value",
                      UndefinedCellsWarning, stacklevel=5)
    if not np.isfinite(point.value):
        raise BiasampError(f"BiasAmp-> is undefined (NaN) for every template with {base.label}")
    draws = draws_of(cfg, base.counts)
    iv = table_intervals(point, mbar, base, cfg, base_draws=draws, task_weights=task_w,
                         unavailable=one_template)
    out.names.append(name)
    out.signs[(name, direction)] = (point.y, ~np.isnan(point.contribution), iv.y_rep,
                                    iv.defined_rep)
    unsupported = None
    if iv.supported is not None:
        has_data = base.counts.sum(axis=1) > 0
        bad = np.nan_to_num(iv.supported, nan=1.0) == 0
        unsupported = int((bad.any(axis=1) & has_data & ~base.excluded).sum())
    out.summary.append({
        "base_rates": name, "direction": direction, "mean": point.value, "std": point.std,
        "ci_low": float(iv.value_ci[0]), "ci_high": float(iv.value_ci[1]),
        "n_templates": point.n_templates,
        "per_template": [] if pooled and direction == TASK_TO_ATTRIBUTE
        else [float(v) for v in point.per_template],
        "aggregation": point.aggregation, "resample": cfg.units,
        "base_resampled": draws is not None, "base_bias": iv.base_bias,
        "n_tasks_unsupported": unsupported,
        "n_tasks_excluded": int(base.excluded.sum())})
    out.pairs.append(_pair_frame(base, tasks=tasks, attributes=attributes, point=point, iv=iv))
    out.templates.append(pd.DataFrame({"base_rates": name, "direction": direction,
                                       "template_id": template_ids,
                                       "value": point.per_template, "n_ties": point.n_ties,
                                       "n_nan": point.n_nan},
                                      columns=list(PER_TEMPLATE_COLUMNS)))
    for label_g, members in groups.items():
        out.groups.append((name, direction, label_g,
                           *_group_value(units, members, base, cfg, draws=draws,
                                         task_w=task_w)))


def _pair_frame(base: BaseView, *, tasks, attributes, point, iv: Intervals) -> pd.DataFrame:
    n_t, n_a = len(tasks), len(attributes)
    nan = np.full(n_t * n_a, np.nan)
    return pd.DataFrame({
        "base_rates": base.name, "direction": base.direction,
        "task": np.repeat(np.asarray(tasks, dtype=object), n_a),
        "attribute": np.tile(np.asarray(attributes, dtype=object), n_t),
        "association": point.y.ravel(), "p_base": point.p_base.ravel(),
        "p_model": point.p_model.ravel(), "p_model_std": point.p_model_std.ravel(),
        "delta": point.delta.ravel(), "delta_ci_low": iv.delta_ci[0].ravel(),
        "delta_ci_high": iv.delta_ci[1].ravel(),
        "contribution": point.contribution.ravel(),
        "contribution_ci_low": iv.contribution_ci[0].ravel(),
        "contribution_ci_high": iv.contribution_ci[1].ravel(),
        "n_templates": point.n_templates_cell.ravel().astype(np.int64),
        "sign_support": nan if iv.support is None else iv.support.ravel(),
        "sign_supported": (pd.array([None] * (n_t * n_a), dtype="boolean")
                           if iv.supported is None
                           else pd.array([None if np.isnan(v) else bool(v)
                                          for v in iv.supported.ravel()], dtype="boolean")),
    }, columns=list(BY_PAIR_COLUMNS))


def _group_value(units, members, base: BaseView, cfg: Resampling, *, draws, task_w):
    """(value, ci_low, ci_high, n_templates, n_tasks) of the templates ``members``: the
    group's own pool (a task none of them covers is left out), its own bootstrap draws and
    the run's base resamples."""
    sub = units.subset(members[units.template])
    n_tpl = int(len(np.unique(sub.template)))
    if n_tpl == 0:
        return (float("nan"),) * 3 + (0, 0)
    covered = sub.rows.any(axis=0)
    mask = np.repeat(covered[:, None], base.joint.shape[1], axis=1)
    mask = mask if base.cells is None else mask & base.cells
    with np.errstate(invalid="ignore"):
        point = replicates(mean_tables(sub, None), base.joint, direction=base.direction,
                           metric=base.metric, cells=mask)["value"][0]
    rep = replicates(cfg.model_tables(sub), base.joint, direction=base.direction,
                     metric=base.metric, base_draws=draws, to_joint=base.table.joint_from_counts,
                     cells=mask, task_weights=task_w)
    lo, hi = interval(rep["value"], cfg.confidence, point)
    return float(point), float(lo), float(hi), n_tpl, int(covered.sum())
