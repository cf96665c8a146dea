"""Templates bound to their own task(s), and groups of templates.

A bound template covers only its own task(s), so BiasAmp-> per template does not exist for
task->attribute. The model's tables are pooled instead:

* T->A: ``P(A | T=t)`` is the mean over the templates of task ``t`` (its own sentences);
* A->T: ``P(T | A=a)`` is the mean over all templates (the referent masked, every task of
  the vocabulary a candidate), as for crossed templates;

and BiasAmp-> is computed once on the pooled table. For a crossed set (every template
covers every task) this equals the mean of the per-template values. The bootstrap
(:mod:`.resample`) draws the *units* of the pool -- (template, task) rows for T->A, templates
for A->T -- within strata (the task for T->A; the template's own tasks for A->T), exactly the
resamples of :func:`biasamp.metrics.bootstrap_ci` with ``strata``.
"""

from __future__ import annotations

import numpy as np

from .._conventions import TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .resample import Units

__all__ = ["coverage", "pooled_units", "template_masks"]


def pooled_units(tables: np.ndarray, cover: np.ndarray | None, strata_at, direction: str
                 ) -> Units:
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
        raise BiasampError(f"template_tasks must have one entry per template ({n_tpl}); got "
                           f"{len(bound)}")
    index = {t: i for i, t in enumerate(tasks)}
    cover = np.zeros((n_tpl, len(tasks)), dtype=bool)
    for k, b in enumerate(bound):
        unknown = [t for t in b if t not in index]
        if unknown:
            raise BiasampError(f"template_tasks[{k}] names tasks {unknown} that are not in "
                               f"tasks")
        cover[k, [index[t] for t in b] if b else slice(None)] = True
    if cover.all():
        return None, None
    missing = [t for t, c in zip(tasks, cover.any(axis=0)) if not c]
    if missing:
        raise BiasampError(f"template_tasks: tasks {missing} are covered by no template")
    return cover, ["|".join(b) if b else "*" for b in bound]


def template_masks(template_groups, n_tpl, order=None) -> dict:
    """label -> bool mask over templates, labels in ``order`` (then in order of first
    appearance)."""
    if template_groups is None:
        return {}
    per = [list(map(str, g or ())) for g in template_groups]
    if len(per) != n_tpl:
        raise BiasampError(f"template_groups must have one entry per template ({n_tpl}); got "
                           f"{len(per)}")
    labels = list(dict.fromkeys([g for g in (order or ()) if any(g in gs for gs in per)]
                                + [g for gs in per for g in gs]))
    return {lab: np.array([lab in gs for gs in per]) for lab in labels}
