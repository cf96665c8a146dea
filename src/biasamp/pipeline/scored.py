"""Scores -> probability tables -> BiasAmp->: the step after scoring, shared by every scorer.

:func:`evaluate_scores` turns the log probabilities of every prompt row (each direction, in the
order of :attr:`Prepared.prompts`) into the probability tables and runs
:func:`~.evaluate.evaluate_tables` on them, with the bootstrap settings of the config. The
probe (:func:`~.run.probe`) and the lm-evaluation-harness tasks (:mod:`biasamp.harness`) both
call it, so a model's numbers do not depend on which of them scored the prompts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from ..results import TABLE_COLUMNS
from .config import ProbeConfig
from .evaluate import Evaluation, evaluate_tables
from .prepare import Prepared

__all__ = ["Scored", "evaluate_scores", "row_scores"]


def _softmax_rows(lp: np.ndarray) -> np.ndarray:
    top = np.max(lp, axis=-1, keepdims=True)
    e = np.exp(lp - top)
    return e / e.sum(axis=-1, keepdims=True)


def _build_tables(prep: Prepared, scores: dict):
    """Scored rows -> (template ids, {direction: prob array}, long tables frame).

    A T->A row with an attribute (a ``per-attribute`` template) holds that attribute's log
    probability in its own rendering; the attributes of one (template, task) are then
    renormalised together. Cells of tasks a bound template does not cover stay NaN and are
    left out of the long tables.
    """
    tpl_ids = list(prep.design.template_ids)
    t_index = {t: i for i, t in enumerate(prep.tasks)}
    a_index = {a: i for i, a in enumerate(prep.attributes)}
    k_index = {t: i for i, t in enumerate(tpl_ids)}
    shape = (len(tpl_ids), len(prep.tasks), len(prep.attributes))
    cover = prep.design.expected()
    probs, long_rows = {}, []
    for direction in DIRECTIONS:
        prob, logp, _ = scores[direction]
        p, lp = np.full(shape, np.nan), np.full(shape, np.nan)
        own = np.zeros((shape[0], shape[1]), dtype=bool)
        for row, pr, lpr in zip(prep.prompts[direction].itertuples(index=False), prob, logp):
            k = k_index[str(row.template_id)]
            if direction == ATTRIBUTE_TO_TASK:
                a = a_index[str(row.attribute)]
                p[k, :, a], lp[k, :, a] = pr, lpr
            elif row.attribute is not None:  # scored in its own rendering
                t = t_index[str(row.task)]
                lp[k, t, a_index[str(row.attribute)]] = lpr[0]
                own[k, t] = True
            else:
                t = t_index[str(row.task)]
                p[k, t, :], lp[k, t, :] = pr, lpr
        if own.any():
            p[own] = _softmax_rows(lp[own])
        must = (np.ones(shape, dtype=bool) if direction == ATTRIBUTE_TO_TASK
                else np.broadcast_to(cover[:, :, None], shape))
        if np.isnan(p[must]).any():
            missing = sorted({tpl_ids[k] for k in np.argwhere(np.isnan(p) & must)[:, 0]})
            what = "attribute" if direction == ATTRIBUTE_TO_TASK else "task"
            raise BiasampError(f"templates {missing} do not give prompts for every {what} in "
                               f"direction {direction!r}; each template must fill both directions")
        probs[direction] = p
        kk, tt, aa = np.meshgrid(*(np.arange(s) for s in shape), indexing="ij")
        keep = must.ravel()
        long_rows.append(pd.DataFrame({
            "template_id": np.asarray(tpl_ids, dtype=object)[kk.ravel()[keep]],
            "direction": direction,
            "task": np.asarray(prep.tasks, dtype=object)[tt.ravel()[keep]],
            "attribute": np.asarray(prep.attributes, dtype=object)[aa.ravel()[keep]],
            "prob": p.ravel()[keep], "log_prob": lp.ravel()[keep]}, columns=list(TABLE_COLUMNS)))
    return tpl_ids, probs, pd.concat(long_rows, ignore_index=True)


def row_scores(log_probs) -> tuple[list, list, np.ndarray]:
    """``(prob, log_prob, mass)`` of prompt rows from their candidates' log probabilities:
    each row renormalised over its own candidates, as :class:`biasamp.scoring.ScoreResult`
    does (the same function)."""
    from ..scoring import ScoreResult

    prob, logp, mass = [], [], np.empty(len(log_probs))
    for i, lp in enumerate(log_probs):
        r = ScoreResult.from_log_prob(np.asarray(lp, dtype=np.float64)[None, :],
                                      candidates=(), scoring="continuation")
        prob.append(r.prob[0])
        logp.append(r.log_prob[0])
        mass[i] = float(r.mass[0])
    return prob, logp, mass


class Scored:
    """What :func:`evaluate_scores` returns: template ids, the long tables, the evaluation."""

    def __init__(self, template_ids: list[str], tables: pd.DataFrame, evaluation: Evaluation):
        self.template_ids = template_ids
        self.tables = tables
        self.evaluation = evaluation


def evaluate_scores(cfg: ProbeConfig, prep: Prepared, scores: dict, *, progress=None) -> Scored:
    """BiasAmp-> of scored prompts.

    Parameters
    ----------
    cfg : ProbeConfig
        Its bootstrap settings (``n_resamples``, ``seed``, ``confidence``, ``resample``,
        ``base_uncertainty``, ``min_base_count``) are used.
    prep : Prepared
        The prompts that were scored (:func:`~.prepare.prepare` of the same config).
    scores : dict
        ``{direction: (prob, log_prob, mass)}``, one entry per row of ``prep.prompts[direction]``
        (see :func:`row_scores`).
    progress : biasamp._progress.Progress, optional
        Told the ``bootstrap`` stage (:func:`~.evaluate.evaluate_tables`).
    """
    tpl_ids, probs, long_tables = _build_tables(prep, scores)
    design = prep.design
    ev = evaluate_tables(probs[ATTRIBUTE_TO_TASK], probs[TASK_TO_ATTRIBUTE], prep.tasks,
                         prep.attributes, prep.sources, template_ids=tpl_ids,
                         template_tasks=list(design.template_tasks) if design.bound else None,
                         template_groups=(list(design.template_groups) if design.grouped
                                          else None),
                         group_labels=list(design.group_labels),
                         n_resamples=cfg.n_resamples, seed=cfg.seed, confidence=cfg.confidence,
                         resample=cfg.resample, base_uncertainty=cfg.base_uncertainty,
                         min_base_count=cfg.min_base_count, progress=progress)
    return Scored(tpl_ids, long_tables, ev)
