"""Paired comparisons of results: the difference between two models, with its uncertainty.

For two results of the same setup (checked by :mod:`biasamp.report`'s setup table), the
difference of BiasAmp-> per (source, direction) is bootstrapped *paired*: every replicate
draws the same templates (and tasks) for both models and the same resample of a count-based
base table, so what the two results share cancels and only the models' difference varies.
The base tables are rebuilt from their sources and must hash to what the runs recorded.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._conventions import DIRECTIONS
from .._errors import BiasampError, ZeroRowWarning
from ..results import ProbeResult
from ._intervals import Resampling, draws_of
from .evaluate import c_table, metric_settings
from .resample import Units, interval, replicates

__all__ = ["PAIRED_COLUMNS", "model_tables", "paired_differences"]

#: Columns of :func:`paired_differences`.
PAIRED_COLUMNS = ("model_a", "model_b", "base_rates", "direction", "difference", "ci_low",
                  "ci_high", "p_sign", "n_templates")


def model_tables(result: ProbeResult, direction: str, template_ids, tasks, attributes
                 ) -> np.ndarray:
    """The model's probability tables of a result, shape (n_templates, n_tasks, n_attributes)."""
    if result.tables is None:
        raise BiasampError(f"result of {result.model!r} was loaded without its tables")
    t = result.tables[result.tables["direction"] == direction]
    p = t.set_index(["template_id", "task", "attribute"])["prob"]
    idx = pd.MultiIndex.from_product([list(template_ids), list(tasks), list(attributes)])
    arr = p.reindex(idx).to_numpy(dtype=np.float64)
    if np.isnan(arr).any():
        raise BiasampError(f"the tables of {result.model!r} lack cells for {direction} (a bound "
                           "template set? paired differences need crossed templates)")
    return arr.reshape(len(template_ids), len(tasks), len(attributes))


def _base_table(source: str, tasks, attributes, direction, recorded: dict):
    from ..base_rates import get_source

    with warnings.catch_warnings():  # zero rows were announced by the runs themselves
        warnings.simplefilter("ignore", ZeroRowWarning)
        table = get_source(source).table(tasks, attributes, direction=direction)
    joint = c_table(table.joint, tasks, attributes, f"base source {source!r} joint")
    digest = hashlib.sha256(joint.tobytes()).hexdigest()
    for model, sha in recorded.items():
        if sha and sha != digest:
            raise BiasampError(f"base-rate source {source!r} ({direction}) is not the table the "
                               f"run of {model!r} used (its sha256 differs): the shipped or "
                               "user data changed since; re-run the probes")
    return table, joint


def paired_differences(results: Sequence[ProbeResult], *, n_resamples: int | None = None,
                       seed: int | None = None, confidence: float | None = None
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
    cfg = ref.config
    boot = Resampling(units=cfg.get("resample", "templates"),
                      base=cfg.get("base_uncertainty", "resample"),
                      n_resamples=int(n_resamples or cfg.get("n_resamples", 10_000)),
                      seed=int(cfg.get("seed", 0) if seed is None else seed),
                      confidence=float(confidence or cfg.get("confidence", 0.95)))
    tasks = list(ref.provenance.get("tasks", {}).get("words") or [])
    attributes = list(ref.provenance.get("attributes") or [])
    rows = []
    for other in results[1:]:
        shared = [t for t in dict.fromkeys(ref.per_template["template_id"])
                  if t in set(other.per_template["template_id"])]
        if not shared:
            raise BiasampError(f"{ref.model!r} and {other.model!r} share no template")
        task_w = boot.task_weights(len(tasks))
        # the same seed and the same number of templates: the same draws for both models
        mbars = {d: tuple(boot.model_tables(Units.crossed(model_tables(r, d, shared, tasks,
                                                                       attributes)))
                          for r in (ref, other)) for d in DIRECTIONS}
        for rec in ref.summary.itertuples():
            source, direction = rec.base_rates, rec.direction
            key = f"{source}|{direction}"
            recorded = {r.model: ((r.provenance.get("base_rates") or {}).get(key) or {})
                        .get("joint_sha256") for r in (ref, other)}
            table, joint = _base_table(source, tasks, attributes, direction, recorded)
            metric = metric_settings(table, source, tasks, attributes)
            counts = (None if getattr(table, "counts", None) is None
                      else c_table(table.counts, tasks, attributes, "counts"))
            base = draws_of(boot, table, counts, source)
            reps = [replicates(m, joint, direction=direction, metric=metric, base_draws=base,
                               to_joint=table.joint_from_counts, task_weights=task_w)["value"]
                    for m in mbars[direction]]
            diff = reps[0] - reps[1]
            pt = _point(ref, other, source, direction, shared)
            lo, hi = interval(diff, boot.confidence, pt)
            p_sign = (float(np.mean(np.sign(diff) == np.sign(pt))) if pt != 0
                      else float("nan"))
            rows.append({"model_a": ref.model, "model_b": other.model, "base_rates": source,
                         "direction": direction, "difference": pt, "ci_low": float(lo),
                         "ci_high": float(hi), "p_sign": p_sign, "n_templates": len(shared)})
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))


def _point(a: ProbeResult, b: ProbeResult, source: str, direction: str, shared) -> float:
    def mean(r):
        p = r.per_template
        sel = p[(p["base_rates"] == source) & (p["direction"] == direction)]
        return sel.set_index("template_id").loc[list(shared), "value"].astype(float).mean()
    return float(mean(a) - mean(b))
