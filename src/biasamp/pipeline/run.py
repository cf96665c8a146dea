"""Running a probe: prepare -> score -> evaluate -> result -> files -> reports.

:func:`probe` / :func:`probe_many` are the public entry points (re-exported as
``biasamp.probe`` and ``biasamp.probe_many``). The model is the only slow part; everything
that can fail on bad input is checked before it is loaded (:func:`~.prepare.prepare`).
"""

from __future__ import annotations

import datetime as _dt
import logging
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .._conventions import ATTRIBUTE_TO_TASK, DIRECTION_LABELS, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._progress import as_progress
from ..results import (BootstrapInfo, ModelInfo, ProbeResult, Provenance, ScorerInfo,
                       TemplatesInfo)
from ._folders import model_folders, result_output
from .config import ProbeConfig, as_config
from .prepare import Prepared, prepare
from .scored import evaluate_scores

__all__ = ["probe", "probe_many", "write_result"]

log = logging.getLogger(__name__)


def _score_direction(scorer, prompts: pd.DataFrame, *, scoring: str, stage: str):
    """Score prompts grouped by identical candidate tuples; (prob, log_prob, mass) per row.
    The contexts of every group are counted first: one progress stage for the direction."""
    n = len(prompts)
    prob: list = [None] * n
    logp: list = [None] * n
    mass = np.empty(n)
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(prompts["candidates"]):
        groups.setdefault(tuple(c), []).append(i)
    texts = prompts["prompt"].astype(str).tolist()
    total = sum(scorer.count_contexts([texts[i] for i in rows], list(cand), scoring=scoring)
                for cand, rows in groups.items())
    scorer.progress.stage(stage, total, scorer.count_unit)
    for cand, rows in groups.items():
        res = scorer.score([texts[i] for i in rows], list(cand), scoring=scoring)
        for j, i in enumerate(rows):
            prob[i], logp[i], mass[i] = res.prob[j], res.log_prob[j], float(res.mass[j])
    return prob, logp, mass


def _mass_summary(mass: np.ndarray) -> dict:
    m = np.asarray(mass, dtype=np.float64)
    return {"n_prompts": int(m.size), "mean": float(np.mean(m)), "min": float(np.min(m)),
            "median": float(np.median(m)), "max": float(np.max(m))}


def _resolve_models(cfg: ProbeConfig) -> dict:
    """``{model: (resolved, estimator)}``: each model resolved once (its id, the hub, its
    config.json), before any weights are loaded; a wrong estimator or a compat mode for a
    causal LM is an error here."""
    from ..scoring import check_estimator, resolve_model

    out = {}
    for model in cfg.models:
        resolved = resolve_model(model, cfg.model_type, revision=cfg.revision,
                                 hf_cache_dir=cfg.hf_cache_dir,
                                 trust_remote_code=cfg.trust_remote_code)
        kind, evidence = resolved.model_type, resolved.evidence
        if cfg.compat is not None and kind != "masked":
            raise BiasampError(
                f"compat {cfg.compat!r} reproduces the paper's masked-LM procedure (FitBERT "
                f"first-piece scoring); model {model!r} is a {kind} language model ({evidence})")
        if cfg.context_token is not None and kind != "causal":
            raise BiasampError(f"context_token is for causal LMs; model {model!r} is {kind}")
        out[model] = (resolved, check_estimator(cfg.scoring, kind, model=model))
    return out


def _load_scorer(cfg: ProbeConfig, resolved, *, progress):
    """The scorer of a resolved model (:func:`biasamp.scoring.load_scorer`) with the config's
    loading options, reporting to ``progress``."""
    from ..scoring import load_scorer

    extra = {"context_token": cfg.context_token} if resolved.model_type == "causal" else {}
    return load_scorer(resolved, revision=cfg.revision, device=cfg.device, dtype=cfg.dtype,
                       device_map=cfg.device_map, max_memory=cfg.max_memory,
                       offload_folder=cfg.offload_folder,
                       trust_remote_code=cfg.trust_remote_code, batch_size=cfg.batch_size,
                       score_cache=cfg.score_cache, hf_cache_dir=cfg.hf_cache_dir,
                       allow_missing_weights=cfg.allow_missing_weights, progress=progress,
                       **extra)


def _probe_one(cfg: ProbeConfig, model: str, prep: Prepared, *, resolved, estimator: str,
               progress) -> ProbeResult:
    model_type = resolved.model_type
    scorer = _load_scorer(cfg, resolved, progress=progress)
    log.info("scoring %d A->T and %d T->A prompts with %s (%s LM, %s)",
             len(prep.prompts[ATTRIBUTE_TO_TASK]), len(prep.prompts[TASK_TO_ATTRIBUTE]), model,
             model_type, estimator)
    who = f"{model}: " if len(cfg.models) > 1 else ""
    scores = {d: _score_direction(scorer, prep.prompts[d], scoring=estimator,
                                  stage=f"{who}scoring {DIRECTION_LABELS[d].replace('→', '->')}")
              for d in DIRECTIONS}
    scored = evaluate_scores(cfg, prep, scores, progress=scorer.progress)
    tpl_ids, long_tables, ev = scored.template_ids, scored.tables, scored.evaluation
    audit = scorer.audit_prompts([pc for d in DIRECTIONS for pc in
                                  zip(prep.prompts[d]["prompt"], prep.prompts[d]["candidates"])])
    sprov = dict(scorer.provenance)
    versions = {"numpy": np.__version__, "pandas": pd.__version__,
                "python": platform.python_version(), **sprov.pop("versions", {})}
    # the options but the bootstrap's, which the provenance holds (once)
    conf = {k: v for k, v in cfg.to_dict().items() if k not in BootstrapInfo.model_fields}
    conf.update(models=[model], model_type=model_type, scoring=estimator)
    provenance = Provenance(
        model=ModelInfo.of_scorer(sprov, name=model),
        scorer=ScorerInfo.of_scorer(sprov, estimator=estimator),
        compat=cfg.compat, bootstrap=ev.bootstrap,
        std=("population (ddof=0) over templates; none for task_to_attribute (pooled per "
             "task)" if prep.bound else "population (ddof=0) over templates"),
        templates=TemplatesInfo(name=cfg.templates, n_templates=len(tpl_ids),
                                template_ids=tuple(tpl_ids),
                                prompts_sha256=prep.prompts_sha256,
                                **prep.template_provenance),
        tasks=prep.tasks_provenance, attributes=tuple(prep.attributes),
        base_rates=ev.base_provenance, design=prep.design.to_dict(),
        versions={"biasamp": __version__, **versions},
        platform=platform.platform(), note=cfg.note,
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    mass = {d: _mass_summary(scores[d][2]) for d in DIRECTIONS}
    return ProbeResult(summary=ev.summary, by_pair=ev.by_pair, per_template=ev.per_template,
                       tables=long_tables, audit=audit, mass=mass,
                       provenance=provenance, config=conf, by_group=ev.by_group,
                       sign_agreement=ev.sign_agreement)


def write_result(result: ProbeResult, folder, *, tables: str = "csv",
                 formats=("md", "html", "json"), progress=None) -> Path:
    """Write a result folder into ``folder`` (an empty folder, usually staged): the data
    files, the reports asked for (their ``plots`` and ``reports`` stages told to
    ``progress``), then ``results.json`` with the file list and the completion mark (written
    last)."""
    from ..report import render

    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    result.write_files(d, tables=tables)
    if formats:
        render(result, d, formats=list(formats), progress=progress)
    result.finish(d)
    return d


def probe_many(config=None, /, *, progress=None, **kwargs) -> list[ProbeResult]:
    """Probe every model of the config; return one :class:`~biasamp.ProbeResult` per model.

    Parameters are as for :func:`probe`. When ``out`` is set, each model's results go to
    ``out/<model_slug>/`` (or to ``out`` itself for a single model) with the reports of
    ``formats``, and, for several models, a comparison (``comparison.md`` / ``.csv``) to
    ``out``.
    """
    cfg = as_config(config, **kwargs).resolved()
    wanted = cfg.progress if progress is None else progress
    reporter = as_progress(wanted)
    if not cfg.models:
        raise BiasampError("models must name at least one model id or folder; got []")
    folders = model_folders(cfg.models)
    output = result_output(cfg.out, overwrite=cfg.overwrite, score_cache=cfg.score_cache)
    prep = prepare(cfg)  # everything that can fail on input, before a model is loaded
    kinds = _resolve_models(cfg)  # each model resolved once: id, hub, config.json
    staging = output.begin() if output is not None else None
    try:
        results = []
        for model in cfg.models:
            resolved, estimator = kinds[model]
            res = _probe_one(cfg, model, prep, resolved=resolved, estimator=estimator,
                             progress=reporter)
            results.append(res)
            if staging is not None:
                d = staging if len(cfg.models) == 1 else staging / folders[model]
                write_result(res, d, tables=cfg.tables, formats=cfg.formats, progress=reporter)
        if staging is not None and len(cfg.models) > 1:
            from ..report import write_comparison
            from .compare import paired_differences
            # one run: same templates, tasks and bases; a masked and a causal model differ in
            # estimator by construction, which the comparison marks
            write_comparison(results, [folders[m] for m in cfg.models], staging,
                             formats=["md", "csv"] + (["html"] if "html" in cfg.formats else []),
                             paired=paired_differences(results), allow_mismatch=True)
    except BaseException as exc:
        if output is not None:
            output.abort()
            output.raise_write_error(exc)  # a full disk: one line, saying where the scores are
        raise
    finally:
        if wanted is True:  # the display made here (a caller's reporter is the caller's)
            reporter.close()
    if output is not None:
        output.commit()
        log.info("wrote results to %s", output.target)
    return results


def probe(config=None, /, *, progress=None, **kwargs) -> ProbeResult:
    """Probe one language model (masked or causal) for directional bias amplification.

    Parameters
    ----------
    config : ProbeConfig, mapping or path to a TOML/YAML file, optional
        The configuration; keyword arguments override its fields (or build one).
    progress : bool or biasamp._progress.Progress, optional
        Where the stages of the run (``scoring A->T``, ``scoring T->A``, ``bootstrap``,
        ``plots``, ``reports``) and their counts are reported: a reporter, True for the
        standard display on stderr, False for none; default the config's ``progress``
        (False: the library shows nothing).
    **kwargs
        Fields of :class:`~biasamp.ProbeConfig` (``models=["bert-base-uncased"]``;
        ``model=`` is accepted for a single model).

    Returns
    -------
    ProbeResult
        For several models use :func:`probe_many` (one result per model).

    Examples
    --------
    >>> import biasamp
    >>> biasamp.probe(models=[])
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: models must name exactly one model for probe() (use probe_many for several); got []
    """
    if "model" in kwargs:
        kwargs["models"] = [kwargs.pop("model")]
    cfg = as_config(config, **kwargs)
    if len(cfg.models) != 1:
        raise BiasampError("models must name exactly one model for probe() (use probe_many for "
                           f"several); got {cfg.models!r}")
    return probe_many(cfg, progress=progress)[0]
