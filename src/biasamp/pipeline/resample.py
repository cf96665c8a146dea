"""The bootstrap behind every CI of a probe: templates, tasks and base-rate counts, jointly.

long on purpose: the one bootstrap: draws, replicates, intervals, settings, provenance.

A *unit* is what the template bootstrap draws: a template (crossed sets, and A->T of bound
sets) or a (template, task) row (T->A of bound sets). One replicate

* draws units with replacement (within strata for bound sets: the draws of
  :func:`biasamp.metrics.bootstrap_ci` with the same seed); the model's table is the mean of
  the drawn units' rows, task by task;
* draws tasks with replacement (``units`` "tasks" or "both"): each task's cells weigh as often
  as it was drawn;
* resamples a count-based source's ``N`` counted sentences (``base="resample"``),
  ``Multinomial(N, counts / N)``: no prior, structural zeros kept, made into a base table as
  the source makes its own (``BaseRateTable.joint_from_counts``);

and evaluates :func:`biasamp.metrics.directional_table_core`, vectorised over replicates. With
the base fixed BiasAmp-> is linear in the model's table, so a templates-only replicate is the
mean of the drawn templates' values. Bound templates (WinoBias, Winogender) have no T->A value
per template: the tables are pooled per task (:func:`pooled_units`) and BiasAmp-> is computed
once on the pooled table.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._conventions import CONFIDENCE, N_RESAMPLES, TASK_TO_ATTRIBUTE, TIE_TOL
from .._errors import BiasampError, FewResamplesWarning
from ..metrics import directional_table_core as table_core
from ..metrics import resample_indices
from ..results import BootstrapInfo

__all__ = [
    "BASE_UNCERTAINTY",
    "FEW_RESAMPLES",
    "RESAMPLE_UNITS",
    "Resampling",
    "Units",
    "bootstrap_bytes",
    "coverage",
    "interval",
    "mean_tables",
    "pooled_units",
    "replicates",
    "resample_counts",
    "sign_support",
    "source_stream",
    "task_draws",
    "unit_draws",
]

#: Fewer distinct resamples of the units than this: the CIs are warned of as rough.
FEW_RESAMPLES = 20
#: What a bootstrap replicate resamples besides the base counts.
RESAMPLE_UNITS = ("templates", "tasks", "both")
#: Whether count-based base rates are resampled (their sampling error enters the CIs).
BASE_UNCERTAINTY = ("resample", "none")

_UNITS_TEXT = {
    "templates": "templates",
    "tasks": "tasks (occupations)",
    "both": "templates and tasks (two-way)",
}


@dataclass
class Units:
    """What the template bootstrap draws, for one direction: each unit's rows of the model's
    table ``X`` (U, T, A; zeros where it covers no task), the task ``rows`` (U, T) it covers,
    its stratum (draws stay within strata; None: no strata) and its ``template`` index."""

    X: np.ndarray
    rows: np.ndarray
    strata: list | None
    template: np.ndarray

    @classmethod
    def crossed(cls, tables: np.ndarray) -> Units:
        """Every template a unit covering every task."""
        m, t, _ = tables.shape
        return cls(tables, np.ones((m, t), dtype=bool), None, np.arange(m))

    def subset(self, keep: np.ndarray) -> Units:
        """The units whose mask is True (e.g. the templates of one group)."""
        strata = None if self.strata is None else [s for s, k in zip(self.strata, keep) if k]
        return Units(self.X[keep], self.rows[keep], strata, self.template[keep])


def unit_draws(units: Units, *, n_resamples: int, seed: int) -> np.ndarray:
    """How often each unit is drawn in each replicate, shape (R, U): the draws of
    ``resample_indices(U, strata=units.strata)`` (those of ``bootstrap_ci``)."""
    u = units.X.shape[0]
    draws = resample_indices(u, n_resamples=n_resamples, seed=seed, strata=units.strata)
    return np.concatenate([_draw_counts(idx, u) for idx in draws])


def task_draws(n_tasks: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """How often each task is drawn in each replicate, shape (R, T); stream ``(seed, 1)``."""
    idx = np.random.default_rng([seed, 1]).integers(0, n_tasks, size=(n_resamples, n_tasks))
    return _draw_counts(idx, n_tasks)


def _draw_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each row of ``idx`` (R, k), shape (R, n)."""
    r = idx.shape[0]
    flat = (idx + (np.arange(r) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=r * n).reshape(r, n).astype(np.float64)


def mean_tables(units: Units, weights: np.ndarray | None) -> np.ndarray:
    """The model's table of each replicate, shape (R, T, A): per task row, the weighted mean
    of the units covering it (``weights`` (R, U); None: every unit once, shape (1, T, A)).
    A row no drawn unit covers is NaN."""
    u, t, a = units.X.shape
    w = np.ones((1, u)) if weights is None else weights
    num = (w @ units.X.reshape(u, -1)).reshape(-1, t, a)
    den = w @ units.rows.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den[:, :, None]


def source_stream(counts: np.ndarray) -> int:
    """The random stream of a count table's resamples, from the counts themselves (their
    shape and float64 bytes): every run, every machine and every comparison draws the same
    resamples for the same table, whatever the source is called or where its file lies."""
    c = np.ascontiguousarray(counts, dtype=np.float64)
    digest = hashlib.sha256(repr(c.shape).encode("ascii") + c.tobytes()).hexdigest()
    return int(digest[:8], 16)


def resample_counts(counts: np.ndarray, *, n_resamples: int, seed: int, stream: int) -> np.ndarray:
    """``n_resamples`` multinomial resamples of a count table (its sentences), shape
    ``(n_resamples, *counts.shape)``; seeded by ``(seed, 2, stream)``."""
    c = np.asarray(counts, dtype=np.float64)
    n = int(round(c.sum()))
    rng = np.random.default_rng([seed, 2, stream])
    if n == 0:
        return np.zeros((n_resamples, *c.shape))
    draws = rng.multinomial(n, c.ravel() / c.sum(), size=n_resamples)
    return draws.reshape(n_resamples, *c.shape).astype(np.float64)


def replicates(
    mbar: np.ndarray,
    joint: np.ndarray,
    *,
    direction: str,
    metric: dict,
    base_draws: np.ndarray | None = None,
    to_joint=None,
    cells: np.ndarray | None = None,
    task_weights: np.ndarray | None = None,
) -> dict:
    """BiasAmp-> of every replicate: ``value`` (R,), ``delta``, ``contribution`` and ``y``
    (R, T, A), from the model's table of each replicate ``mbar`` (R, T, A) against the base
    ``joint`` (T, A), or the tables ``to_joint`` makes of the resampled counts ``base_draws``
    (R, T, A). ``metric``: what the base asks of the metric (``association``, ``tie_tol``,
    ``undefined``, ``ties``); ``cells`` (T, A): only these count; ``task_weights`` (R, T): the
    tasks' draw counts (:func:`task_draws`)."""
    base = joint if base_draws is None else to_joint(base_draws)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        core = table_core(
            mbar,
            base,
            direction=direction,
            y=metric.get("association"),
            tie_tol=metric.get("tie_tol", TIE_TOL),
            undefined=metric.get("undefined") or "skip",
            ties=metric.get("ties") or "zero",
            cells=cells,
        )
    contribution = core["contribution"]
    defined = ~np.isnan(contribution)
    c0 = np.where(defined, contribution, 0.0)
    w = np.ones(contribution.shape[:2]) if task_weights is None else task_weights
    num, den = (c0 * w[:, :, None]).sum(axis=(1, 2)), (defined * w[:, :, None]).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    shape = contribution.shape
    return {
        "value": value,
        "delta": np.broadcast_to(core["delta"], shape),
        "contribution": contribution,
        "y": np.broadcast_to(core["y"], shape),
    }


def bootstrap_bytes(
    n_resamples: int, *, n_units: int, n_tasks: int, n_attributes: int, n_resampled: int
) -> int:
    """An upper estimate of the bootstrap's peak memory in bytes (measured with tracemalloc
    on the probe's own evaluation; checked against it in the tests).

    Per replicate and (task, attribute) cell about 8 float64 arrays are alive at once (the
    model's replicate tables of both directions, the metric's delta, contribution and signs,
    the percentile's copy), 6 more while a count table is resampled (its draws and the base
    tables made of them), and 2 per resampled count table kept for the sign agreement; per
    replicate the draws of the ``n_units`` units (counts, indices, weights) and of the tasks.

    >>> bootstrap_bytes(10_000, n_units=20, n_tasks=32, n_attributes=2, n_resampled=0)
    48320000
    """
    arrays = 8 + (6 + 2 * n_resampled if n_resampled else 0)
    return 8 * n_resamples * (n_tasks * n_attributes * arrays + 3 * n_units + n_tasks)


def interval(replicates_: np.ndarray, confidence: float, point):
    """Percentile interval over the first axis (NaN replicates ignored; all NaN -> NaN).
    Where every replicate equals the point up to rounding, the interval is the point itself
    (so rounding never puts a value outside its own interval)."""
    q = [100.0 * (1.0 - confidence) / 2.0, 100.0 * (1.0 + confidence) / 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(replicates_, q, axis=0)
        spread = np.nanmax(replicates_, axis=0) - np.nanmin(replicates_, axis=0)
    point = np.asarray(point, dtype=np.float64)
    tight = np.isfinite(point) & (spread <= 1e-12 * np.maximum(1.0, np.abs(point)))
    lo, hi = np.where(tight, point, lo), np.where(tight, point, hi)
    return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)


def sign_support(y_rep: np.ndarray, y_point: np.ndarray, defined_rep: np.ndarray) -> np.ndarray:
    """Per cell: the share of replicates whose association sign equals the point estimate's
    (a replicate in which the cell is undefined does not support it)."""
    return ((y_rep == y_point[None]) & defined_rep).mean(axis=0)


@dataclass(frozen=True)
class Resampling:
    """The bootstrap settings of a run."""

    units: str = "templates"  # templates | tasks | both
    base: str = "resample"  # resample | none
    n_resamples: int = N_RESAMPLES
    seed: int = 0
    confidence: float = CONFIDENCE

    def provenance(self, *, bound: bool, min_base_count: int | None) -> BootstrapInfo:
        """The settings and a one-line description of the bootstrap (results' provenance)."""
        method = f"percentile bootstrap over {_UNITS_TEXT[self.units]}"
        if bound and self.units != "tasks":
            method += ", stratified by task (templates bound to their own tasks)"
        if self.base == "resample":
            method += (
                "; count-based base rates resampled jointly (multinomial over their "
                "counted sentences)"
            )
        return BootstrapInfo(
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=self.seed,
            resample=self.units,
            base_uncertainty=self.base,
            min_base_count=min_base_count,
            method=method,
        )

    def warn_if_few(self, n_templates: int, n_tasks: int) -> None:
        """Warn once when the units resampled have fewer than :data:`FEW_RESAMPLES` distinct
        resamples (``C(2n-1, n)`` for ``n`` units: 3 for 2, 10 for 3): a 95% percentile
        interval then rests on a handful of distinct values."""
        n = {"templates": n_templates, "tasks": n_tasks}
        kinds = ("templates", "tasks") if self.units == "both" else (self.units,)
        distinct = math.prod(math.comb(2 * n[k] - 1, n[k]) for k in kinds)
        if 1 < distinct < FEW_RESAMPLES:
            what = " and ".join(f"{n[k]} {k}" for k in kinds)
            warnings.warn(
                FewResamplesWarning(
                    f"the bootstrap resamples {what}, which have only {distinct} distinct "
                    f"resamples: its {self.confidence:.0%} CIs rest on a handful of values "
                    "(rough); more templates or tasks narrow them honestly"
                ),
                stacklevel=4,
            )

    def task_weights(self, n_tasks: int):
        if self.units in ("tasks", "both"):
            return task_draws(n_tasks, n_resamples=self.n_resamples, seed=self.seed)
        return None

    def model_tables(self, units: Units) -> np.ndarray:
        """The model's table of every replicate, (R, T, A)."""
        if self.units in ("templates", "both"):
            return mean_tables(
                units, unit_draws(units, n_resamples=self.n_resamples, seed=self.seed)
            )
        point = mean_tables(units, None)
        return np.broadcast_to(point, (self.n_resamples, *point.shape[1:]))

    def base_draws(self, counts: np.ndarray | None):
        """The resampled base counts of a source (None when its table is fixed)."""
        if self.base != "resample" or counts is None:
            return None
        return resample_counts(
            counts, n_resamples=self.n_resamples, seed=self.seed, stream=source_stream(counts)
        )


def pooled_units(tables: np.ndarray, cover: np.ndarray | None, strata_at, direction: str) -> Units:
    """The units of one direction: every template (crossed sets; A->T of bound sets, drawn
    within the templates' own tasks), or every (template, task) row a bound template
    covers (T->A, drawn within each task)."""
    if cover is None:
        return Units.crossed(tables)
    n_tpl, n_t, n_a = tables.shape
    if direction == TASK_TO_ATTRIBUTE:
        kk, tt = np.nonzero(cover)
        X = np.zeros((len(kk), n_t, n_a))
        X[np.arange(len(kk)), tt] = tables[kk, tt, :]
        rows = np.zeros((len(kk), n_t), dtype=bool)
        rows[np.arange(len(kk)), tt] = True
        return Units(X, rows, [int(t) for t in tt], kk)
    return Units(tables, np.ones((n_tpl, n_t), dtype=bool), list(strata_at), np.arange(n_tpl))


def coverage(template_tasks, tasks, n_tpl):
    """(cover, strata): which tasks each template covers and its stratum label, or (None,
    None) when every template covers every task (crossed)."""
    if template_tasks is None:
        return None, None
    bound = [list(map(str, b or ())) for b in template_tasks]
    if len(bound) != n_tpl:
        raise BiasampError(
            f"template_tasks must have one entry per template ({n_tpl}); got {len(bound)}"
        )
    index = {t: i for i, t in enumerate(tasks)}
    cover = np.zeros((n_tpl, len(tasks)), dtype=bool)
    for k, b in enumerate(bound):
        unknown = [t for t in b if t not in index]
        if unknown:
            raise BiasampError(f"template_tasks[{k}] names tasks {unknown} that are not in tasks")
        cover[k, [index[t] for t in b] if b else slice(None)] = True
    if cover.all():
        return None, None
    missing = [t for t, c in zip(tasks, cover.any(axis=0)) if not c]
    if missing:
        raise BiasampError(f"template_tasks: tasks {missing} are covered by no template")
    return cover, ["|".join(b) if b else "*" for b in bound]
