"""Paired comparisons of results: the difference between two models, bootstrapped paired
(the same draws of templates, tasks and base counts for both, so what they share cancels)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._conventions import DIRECTIONS
from .._errors import BiasampError, ZeroRowWarning
from ..results import ProbeResult
from .evaluate import BaseView, Design
from .resample import Resampling, interval, mean_tables, pooled_units

__all__ = ["model_tables", "paired_differences"]

#: Columns of :func:`paired_differences`.
PAIRED_COLUMNS = (
    "model_a",
    "model_b",
    "base_rates",
    "direction",
    "difference",
    "ci_low",
    "ci_high",
    "p_sign",
    "n_templates",
)


def model_tables(
    result: ProbeResult, direction: str, *, template_ids, tasks, attributes
) -> np.ndarray:
    """A result's probability tables (n_templates, n_tasks, n_attributes); NaN where a bound
    template covers no task."""
    if result.tables is None:
        raise BiasampError(f"result of {result.model!r} was loaded without its tables")
    t = result.tables[result.tables["direction"] == direction]
    p = t.set_index(["template_id", "task", "attribute"])["prob"]
    idx = pd.MultiIndex.from_product([list(template_ids), list(tasks), list(attributes)])
    arr = p.reindex(idx).to_numpy(dtype=np.float64)
    return arr.reshape(len(template_ids), len(tasks), len(attributes))


def paired_differences(
    results: Sequence[ProbeResult],
    *,
    n_resamples: int | None = None,
    seed: int | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    """The difference of each result from the first, per source and direction, with a paired
    bootstrap CI and ``p_sign``: the share of replicates whose difference has the sign of the
    observed one (NaN for a difference of exactly 0).

    The bootstrap settings (units, base uncertainty, resamples, seed, confidence) are the
    first result's, unless given.
    """
    if len(results) < 2:
        return pd.DataFrame(columns=list(PAIRED_COLUMNS))
    ref = results[0]
    b = ref.provenance.bootstrap
    boot = Resampling.of(
        b,
        n_resamples=int(n_resamples or b.n_resamples),
        seed=int(b.seed if seed is None else seed),
        confidence=float(confidence or b.confidence),
    )
    tasks = list(ref.provenance.tasks.words)
    attributes = list(ref.provenance.attributes)
    task_w = boot.task_weights(len(tasks))  # the same seed: the same task draws for all
    rows = []
    for other in results[1:]:
        shared = [
            t
            for t in dict.fromkeys(ref.per_template["template_id"])
            if t in set(other.per_template["template_id"])
        ]
        if not shared:
            raise BiasampError(f"{ref.model!r} and {other.model!r} share no template")
        # the same seed and the same units: the same draws for both models
        units, covers = {}, []
        for i, r in enumerate((ref, other)):
            cover, strata = Design.from_dict(r.provenance.design).select(shared).coverage()
            covers.append(cover)
            for d in DIRECTIONS:
                tab = model_tables(r, d, template_ids=shared, tasks=tasks, attributes=attributes)
                units[(i, d)] = pooled_units(np.nan_to_num(tab), cover, strata, d)
        if not (covers[0] is None and covers[1] is None) and not np.array_equal(*covers):
            raise BiasampError(
                f"{ref.model!r} and {other.model!r}: the templates cover "
                "different tasks in the two results; they cannot be paired"
            )
        for source, direction in zip(ref.summary["base_rates"], ref.summary["direction"]):
            base = _base_view(source, direction, (ref, other), tasks, attributes, b.min_base_count)
            draws = boot.base_draws(base.counts)
            points, reps = [], []
            for i in (0, 1):
                u = units[(i, direction)]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    points.append(base.replicates(mean_tables(u, None))["value"][0])
                model = boot.model_tables(u)
                reps.append(base.replicates(model, base_draws=draws, task_weights=task_w)["value"])
            pt, diff = float(points[0] - points[1]), reps[0] - reps[1]
            lo, hi = interval(diff, boot.confidence, pt)
            p_sign = float(np.mean(np.sign(diff) == np.sign(pt))) if pt != 0 else float("nan")
            rows.append(
                (ref.model, other.model, source, direction, pt, lo, hi, p_sign, len(shared))
            )
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))


def _base_view(source, direction, results, tasks, attributes, min_count) -> BaseView:  # noqa: PLR0917
    """The base table of ``source`` rebuilt, refused unless it is the one the runs used."""
    from ..base_rates import get_source

    with warnings.catch_warnings():  # zero rows were announced by the runs themselves
        warnings.simplefilter("ignore", ZeroRowWarning)
        table = get_source(source).table(tasks, attributes, direction=direction)
    base = BaseView.of(
        table, source, tasks, attributes, direction=direction, min_base_count=min_count
    )
    for r in results:
        info = r.provenance.base_rate(source, direction)
        if info is not None and info.joint_sha256 and info.joint_sha256 != base.sha256:
            raise BiasampError(
                f"base-rate source {source!r} ({direction}) is not the table the "
                f"run of {r.model!r} used (its sha256 differs): the shipped or "
                "user data changed since; re-run the probes"
            )
    return base
