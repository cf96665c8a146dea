"""Intervals of one (source, direction): the joint bootstrap of :mod:`.resample` applied to a
point estimate, the support of each association's sign, and sign agreement between sources."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import CONFIDENCE, DIRECTIONS, N_RESAMPLES
from .._provenance import BootstrapInfo
from .._schema import AGREEMENT_COLUMNS
from ._tables import BaseView
from .resample import (Units, interval, mean_tables, replicates, resample_counts, sign_support,
                       source_stream, task_draws, unit_draws)

__all__ = ["Intervals", "Resampling", "agreement_table", "draws_of", "table_intervals"]

_UNITS_TEXT = {"templates": "templates", "tasks": "tasks (occupations)",
               "both": "templates and tasks (two-way)"}


@dataclass(frozen=True)
class Resampling:
    """The bootstrap settings of a run."""

    units: str = "templates"          # templates | tasks | both
    base: str = "resample"            # resample | none
    n_resamples: int = N_RESAMPLES
    seed: int = 0
    confidence: float = CONFIDENCE

    def provenance(self, *, bound: bool, min_base_count: int | None) -> BootstrapInfo:
        """The settings and a one-line description of the bootstrap (results' provenance)."""
        method = f"percentile bootstrap over {_UNITS_TEXT[self.units]}"
        if bound and self.units != "tasks":
            method += ", stratified by task (templates bound to their own tasks)"
        if self.base == "resample":
            method += ("; count-based base rates resampled jointly (multinomial over their "
                       "counted sentences)")
        return BootstrapInfo(n_resamples=self.n_resamples, confidence=self.confidence,
                             seed=self.seed, resample=self.units, base_uncertainty=self.base,
                             min_base_count=min_base_count, method=method)

    def task_weights(self, n_tasks: int):
        if self.units in ("tasks", "both"):
            return task_draws(n_tasks, n_resamples=self.n_resamples, seed=self.seed)
        return None

    def model_tables(self, units: Units) -> np.ndarray:
        """The model's table of every replicate, (R, T, A)."""
        if self.units in ("templates", "both"):
            return mean_tables(units, unit_draws(units, n_resamples=self.n_resamples,
                                                 seed=self.seed))
        point = mean_tables(units, None)
        return np.broadcast_to(point, (self.n_resamples, *point.shape[1:]))


def draws_of(cfg: Resampling, counts: np.ndarray | None):
    """The resampled base counts of a source (None when its table is fixed)."""
    if cfg.base != "resample" or counts is None:
        return None
    return resample_counts(counts, n_resamples=cfg.n_resamples, seed=cfg.seed,
                           stream=source_stream(counts))


@dataclass(frozen=True)
class Intervals:
    """The intervals of one (source, direction).

    ``value_ci`` (low, high) of BiasAmp->; ``delta_ci`` and ``contribution_ci``: (low, high)
    arrays (T, A) per cell; ``base_bias``: mean of the replicates minus the point (NaN for a
    fixed base); ``support`` (T, A): the share of replicates whose association has the point's
    sign, and ``supported``: ``support >= confidence`` (None for a fixed base); ``y_rep`` and
    ``defined_rep`` (R, T, A): the replicates' signs and defined cells, for the agreement.
    """

    value_ci: tuple
    delta_ci: tuple
    contribution_ci: tuple
    base_bias: float
    support: np.ndarray | None
    supported: np.ndarray | None
    y_rep: np.ndarray
    defined_rep: np.ndarray


def table_intervals(point, mbar, base: BaseView, cfg: Resampling, *, base_draws, task_weights,
                    unavailable: bool) -> Intervals:
    """CIs of the value and of every cell's delta and contribution, and (for a resampled
    base) the sign support of every cell and the bias the base's sampling error puts into
    the value; also the replicate signs for the agreement (:class:`Intervals`)."""
    n_t, n_a = base.joint.shape
    rep = replicates(mbar, base.joint, direction=base.direction, metric=base.metric,
                     base_draws=base_draws, to_joint=base.table.joint_from_counts,
                     cells=base.cells, task_weights=task_weights)
    conf = cfg.confidence
    nan_cells = np.full((n_t, n_a), np.nan)
    if unavailable:
        value_ci, d_ci, c_ci = (np.nan, np.nan), (nan_cells, nan_cells), (nan_cells, nan_cells)
    else:
        r = rep["value"].shape[0]
        value_ci = interval(rep["value"], conf, point.value)
        d_ci = interval(rep["delta"].reshape(r, -1), conf, point.delta.ravel())
        c_ci = interval(rep["contribution"].reshape(r, -1), conf, point.contribution.ravel())
        d_ci = tuple(np.where(np.isnan(point.delta), np.nan, x.reshape(n_t, n_a)) for x in d_ci)
        c_ci = tuple(np.where(np.isnan(point.contribution), np.nan, x.reshape(n_t, n_a))
                     for x in c_ci)
    defined = ~np.isnan(point.contribution)
    support = supported = None
    if base_draws is not None:
        support = np.where(defined, sign_support(rep["y"], point.y,
                                                 ~np.isnan(rep["contribution"])), np.nan)
        supported = np.where(defined, support >= conf, np.nan)
    bias = float("nan")
    if base_draws is not None and np.isfinite(rep["value"]).any():
        bias = float(np.nanmean(rep["value"]) - point.value)
    return Intervals(value_ci=value_ci, delta_ci=d_ci, contribution_ci=c_ci, base_bias=bias,
                     support=support, supported=supported, y_rep=rep["y"],
                     defined_rep=~np.isnan(rep["contribution"]))


def agreement_table(signs: dict, sources: list, cfg: Resampling) -> pd.DataFrame:
    """How often two sources agree on the sign of an association, with a bootstrap CI when
    a source's counts are resampled (its signs vary between replicates).

    ``signs[(source, direction)] = (y_point, defined_point, y_rep, defined_rep)``.
    """
    rows = []
    for direction in DIRECTIONS:
        for i, a in enumerate(sources):
            for b in sources[i + 1:]:
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
                        reps = np.where(ok.sum(axis=(1, 2)) > 0, agree / ok.sum(axis=(1, 2)),
                                        np.nan)
                    lo, hi = interval(reps, cfg.confidence, point)
                rows.append({"direction": direction, "source_a": a, "source_b": b,
                             "agreement": point, "ci_low": float(lo), "ci_high": float(hi),
                             "n_cells": n})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
