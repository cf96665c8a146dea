"""Running a probe: prepare -> score -> evaluate -> result -> files -> reports.

long on purpose: the whole run reads in one file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .._conventions import ATTRIBUTE_TO_TASK, DIRECTION_LABELS, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._memory import check_memory
from .._output import OutputFolder
from .._progress import as_progress
from .._schema import (
    TABLE_COLUMNS,
    BootstrapInfo,
    ModelInfo,
    Provenance,
    ScorerInfo,
    TasksInfo,
    TemplatesInfo,
    jsonable,
)
from ..report import render, write_comparison
from ..results import ProbeResult
from ..templates import pool_realisations
from .compare import paired_differences
from .config import DEFAULT_TASKS, ProbeConfig, as_config
from .evaluate import Design, Evaluation, _evaluate, base_tables
from .resample import Resampling, bootstrap_bytes

log = logging.getLogger(__name__)


# -- before a model loads: templates, tasks, prompts, base tables -------------------------


@dataclass
class Prepared:
    """Inputs of the scoring stage (no model needed to build them)."""

    design: Design
    prompts: dict[str, pd.DataFrame]  # direction -> build_prompts frame
    base_tables: dict  # source name (as requested) -> direction -> its checked BaseView
    prompts_sha256: str
    template_provenance: dict  # the fields of TemplatesInfo known before scoring
    tasks_provenance: TasksInfo
    n_units: int  # units the template bootstrap draws: (template, task) rows if bound
    realisations: dict | None = None  # group -> its number of realisations; None: pronouns

    def check_memory(self, cfg: ProbeConfig) -> None:
        """Refuse ``cfg.n_resamples`` whose bootstrap cannot fit in memory."""
        n_resampled = sum(
            cfg.base_uncertainty == "resample"
            and any(t.counts is not None for t in tables.values())
            for tables in self.base_tables.values()
        )
        n_t, n_a = len(self.design.tasks), len(self.design.attributes)
        check_memory(
            bootstrap_bytes(
                cfg.n_resamples,
                n_units=self.n_units,
                n_tasks=n_t,
                n_attributes=n_a,
                n_resampled=n_resampled,
            ),
            "n_resamples",
            cfg.n_resamples,
            f"for the bootstrap ({n_t} tasks x {n_a} attributes per replicate)",
        )


def prepare(cfg: ProbeConfig) -> Prepared:
    """Load templates and tasks, build the prompts and every base-rate table of ``cfg``."""
    from ..tasks import TaskVocabulary, load_tasks
    from ..templates import (
        attribute_sets_of,
        build_prompts,
        load_template_set,
        realisations,
        resolve_attributes,
    )

    tset = load_template_set(cfg.templates)
    if cfg.tasks is None and tset.bound:  # a bound set's own tasks
        about = f"the own tasks of template set {tset.name!r}"
        vocab = TaskVocabulary(f"{tset.name}:tasks", about, list(tset.tasks), {}, {}, None, None)
    else:
        vocab = load_tasks(DEFAULT_TASKS if cfg.tasks is None else cfg.tasks)
    tasks = list(vocab.words)
    if len(tasks) < 2:  # the vocabulary of a name or file is known only now
        raise BiasampError(
            f"tasks must name at least 2 tasks; got {cfg.tasks!r} ({len(tasks)}: "
            f"{tasks!r}); with one, P(T=t|A=a) = P(T=t) = 1: every association "
            "is a tie and BiasAmp-> says nothing"
        )
    attributes = resolve_attributes(cfg.attributes)
    given = cfg.attributes  # with the attribute sets named in it, whose groups are their own
    forms = realisations(tset, given)  # a group with no realisation fails here
    groups_of = attribute_sets_of(given)
    prompts = {d: build_prompts(tset, given, vocab, direction=d) for d in DIRECTIONS}
    if cfg.max_templates is not None:  # a quick run: the first templates (of each task if bound)
        ids = prompts[TASK_TO_ATTRIBUTE]["template_id"].astype(str)
        per = (
            ids.groupby(prompts[TASK_TO_ATTRIBUTE]["task"], sort=False)
            if tset.bound
            else [(0, ids)]
        )
        keep = {t for _, i in per for t in list(dict.fromkeys(i))[: cfg.max_templates]}
        prompts = {
            d: df[df["template_id"].astype(str).isin(keep)].reset_index(drop=True)
            for d, df in prompts.items()
        }
    for direction, df in prompts.items():
        if len(df) == 0:
            raise BiasampError(
                f"template set {cfg.templates!r} gives no prompts for direction {direction!r}"
            )
    bases = dict(base_tables(cfg.base_rates, tasks, attributes, cfg.min_base_count))
    counted = [n for n, t in bases.items() if t[ATTRIBUTE_TO_TASK].counts is not None]
    if cfg.min_base_count is not None and not counted:  # an option with nothing to act on
        raise BiasampError(
            f"min_base_count {cfg.min_base_count} leaves out tasks rarely counted in a "
            f"count-based source (corpus co-occurrences); none of base_rates {cfg.base_rates} "
            "is one: leave min_base_count out, or add such a source"
        )
    t2a = prompts[TASK_TO_ATTRIBUTE]
    both = pd.concat([prompts[ATTRIBUTE_TO_TASK], prompts[TASK_TO_ATTRIBUTE]], ignore_index=True)
    both = both.assign(candidates=both["candidates"].map(lambda c: "|".join(map(str, c))))
    digest = hashlib.sha256(both.to_csv(index=False).encode("utf-8")).hexdigest()
    tprov = {f"set_{k}": jsonable(getattr(tset, k)) for k in ("sha256", "path", "provenance")}
    if groups_of:  # the groups' sets and every realisation scored
        real = {a: [r.term for r in rs] for a, rs in forms.items()}
        tprov["set_provenance"] |= {"attribute_sets": groups_of, "realisations": real}
    by_template = t2a.groupby("template_id", sort=False)["task"].agg(
        lambda x: tuple(dict.fromkeys(x))
    )
    own = {str(k): (v if tset.template(str(k)).bound else ()) for k, v in by_template.items()}
    groups = {t.id: tuple(t.groups) for t in tset.templates if t.id in own}
    tpl_ids = tuple(dict.fromkeys(str(t) for d in DIRECTIONS for t in prompts[d]["template_id"]))
    design = Design(
        tpl_ids,
        tuple(tasks),
        tuple(attributes),
        tuple(tuple(own.get(t, ())) for t in tpl_ids),
        tuple(groups.get(t, ()) for t in tpl_ids),
        tuple(tset.groups),
    )
    if tset.bound or any(groups.values()):
        tprov["aggregation"] = "pooled" if tset.bound else "templates"
        tprov["groups"] = {
            g: d for g, d in tset.groups.items() if any(g in x for x in groups.values())
        }
    return Prepared(
        design=design,
        prompts=prompts,
        base_tables=bases,
        prompts_sha256=digest,
        template_provenance=tprov,
        tasks_provenance=TasksInfo(
            name=cfg.tasks if isinstance(cfg.tasks, str) else vocab.name,
            words=tuple(tasks),
            sha256=vocab.sha256,
        ),
        n_units=len(t2a) if tset.bound else t2a["template_id"].nunique(),
        realisations={a: len(r) for a, r in forms.items()} if groups_of else None,
    )


def _score_direction(scorer, prompts: pd.DataFrame, *, scoring: str, stage: str):
    """(prob, log_prob, mass) per row, scored in groups of identical candidates."""
    n = len(prompts)
    prob, logp, mass = [None] * n, [None] * n, np.empty(n)
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(prompts["candidates"]):
        groups.setdefault(tuple(c), []).append(i)
    texts = prompts["prompt"].astype(str).tolist()
    total = sum(
        scorer.count_contexts([texts[i] for i in rows], list(cand), scoring=scoring)
        for cand, rows in groups.items()
    )
    scorer.progress.stage(stage, total, scorer.count_unit)
    for cand, rows in groups.items():
        res = scorer.score([texts[i] for i in rows], list(cand), scoring=scoring)
        for j, i in enumerate(rows):
            prob[i], logp[i], mass[i] = res.prob[j], res.log_prob[j], float(res.mass[j])
    return prob, logp, mass


def _load_scorer(cfg: ProbeConfig, resolved, *, progress):
    """The scorer of a resolved model: the one place a probe loads a model."""
    from ..scoring import LoadOptions, load_scorer

    extra = {"context_token": cfg.context_token} if resolved.model_type == "causal" else {}
    return load_scorer(resolved, LoadOptions.of(cfg), progress=progress, **extra)


def _probe_one(
    cfg: ProbeConfig, model: str, prep: Prepared, *, resolved, estimator: str, progress
) -> ProbeResult:
    scorer = _load_scorer(cfg, resolved, progress=progress)
    log.info(
        "scoring %d A->T and %d T->A prompts with %s (%s LM, %s)",
        len(prep.prompts[ATTRIBUTE_TO_TASK]),
        len(prep.prompts[TASK_TO_ATTRIBUTE]),
        model,
        resolved.model_type,
        estimator,
    )
    who = f"{model}: " if len(cfg.models) > 1 else ""
    scores = {
        d: _score_direction(
            scorer,
            prep.prompts[d],
            scoring=estimator,
            stage=f"{who}scoring {DIRECTION_LABELS[d].replace('→', '->')}",
        )
        for d in DIRECTIONS
    }
    scored = evaluate_scores(cfg, prep, scores, progress=scorer.progress)
    tpl_ids, ev = prep.design.template_ids, scored.evaluation
    pairs = [zip(prep.prompts[d]["prompt"], prep.prompts[d]["candidates"]) for d in DIRECTIONS]
    audit = scorer.audit_prompts([pc for pcs in pairs for pc in pcs])
    sprov = dict(scorer.provenance)
    versions = {
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "python": platform.python_version(),
        **sprov.pop("versions", {}),
    }
    # the options but the bootstrap's, which the provenance holds (once)
    conf = {k: v for k, v in cfg.model_dump().items() if k not in BootstrapInfo.model_fields}
    conf.update(models=[model], model_type=resolved.model_type, scoring=estimator)
    provenance = Provenance(
        model=ModelInfo.of_scorer(sprov, name=model),
        scorer=ScorerInfo.of_scorer(sprov, estimator=estimator),
        compat=cfg.compat,
        bootstrap=ev.bootstrap,
        std="population (ddof=0) over templates"
        + ("; none for task_to_attribute (pooled per task)" if prep.design.bound else ""),
        templates=TemplatesInfo(
            name=cfg.templates,
            n_templates=len(tpl_ids),
            template_ids=tpl_ids,
            prompts_sha256=prep.prompts_sha256,
            **prep.template_provenance,
        ),
        tasks=prep.tasks_provenance,
        attributes=prep.design.attributes,
        base_rates=ev.base_provenance,
        design=prep.design.to_dict(),
        versions={"biasamp": __version__, **versions},
        platform=platform.platform(),
        note=cfg.note,
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    stats = {"mean": np.mean, "min": np.min, "median": np.median, "max": np.max}
    mass = {  # of the float64 arrays of scores
        d: {"n_prompts": m.size, **{k: float(f(m)) for k, f in stats.items()}}
        for d, (_, _, m) in scores.items()
    }
    return ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=scored.tables,
        audit=audit,
        mass=mass,
        provenance=provenance,
        config=conf,
        by_group=ev.by_group,
        sign_agreement=ev.sign_agreement,
    )


def _build_tables(prep: Prepared, scores: dict):
    """Scored rows -> ({direction: prob array}, long tables); uncovered cells stay NaN."""
    from ..scoring import ScoreResult

    tpl_ids = list(prep.design.template_ids)
    tasks, attributes = prep.design.tasks, prep.design.attributes
    t_index = {t: i for i, t in enumerate(tasks)}
    a_index = {a: i for i, a in enumerate(attributes)}
    k_index = {t: i for i, t in enumerate(tpl_ids)}
    shape = (len(tpl_ids), len(tasks), len(attributes))
    cover, _ = prep.design.coverage()
    probs, long_rows = {}, []
    for direction in DIRECTIONS:
        prob, logp, _ = scores[direction]
        rows = prep.prompts[direction]
        if prep.realisations is not None:  # groups: one column per group, not per term
            rows, prob, logp = pool_realisations(
                direction, rows, prob, logp, sizes=prep.realisations
            )
        p, lp = np.full(shape, np.nan), np.full(shape, np.nan)
        own = np.zeros((shape[0], shape[1]), dtype=bool)
        for row, pr, lpr in zip(rows.itertuples(index=False), prob, logp):
            k = k_index[str(row.template_id)]
            if direction == ATTRIBUTE_TO_TASK:
                a = a_index[str(row.attribute)]
                p[k, :, a], lp[k, :, a] = pr, lpr
            elif row.attribute is not None:  # per-attribute: one attribute's own rendering
                t = t_index[str(row.task)]
                lp[k, t, a_index[str(row.attribute)]] = lpr[0]
                own[k, t] = True
            else:
                t = t_index[str(row.task)]
                p[k, t, :], lp[k, t, :] = pr, lpr
        if own.any():  # a (template, task)'s attributes renormalised together
            p[own] = ScoreResult.from_log_prob(lp[own], candidates=(), scoring="continuation").prob
        every = direction == ATTRIBUTE_TO_TASK or cover is None
        must = np.broadcast_to(True if every else cover[:, :, None], shape)
        if np.isnan(p[must]).any():
            missing = sorted({tpl_ids[k] for k in np.argwhere(np.isnan(p) & must)[:, 0]})
            what = "attribute" if direction == ATTRIBUTE_TO_TASK else "task"
            raise BiasampError(
                f"templates {missing} do not give prompts for every {what} in "
                f"direction {direction!r}; each template must fill both directions"
            )
        probs[direction] = p
        kk, tt, aa = np.nonzero(must)  # in C order, as the cells are raveled
        long_rows.append(
            pd.DataFrame(
                {
                    "template_id": np.asarray(tpl_ids, dtype=object)[kk],
                    "direction": direction,
                    "task": np.asarray(tasks, dtype=object)[tt],
                    "attribute": np.asarray(attributes, dtype=object)[aa],
                    "prob": p[must],
                    "log_prob": lp[must],
                },
                columns=list(TABLE_COLUMNS),
            )
        )
    return probs, pd.concat(long_rows, ignore_index=True)


def row_scores(log_probs) -> tuple[list, list, np.ndarray]:
    """``(prob, log_prob, mass)`` of prompt rows from their candidates' log probabilities,
    each row renormalised over its own candidates (as :class:`biasamp.scoring.ScoreResult`)."""
    from ..scoring import ScoreResult

    rows = [
        ScoreResult.from_log_prob([lp], candidates=(), scoring="continuation") for lp in log_probs
    ]
    mass = np.array([float(r.mass[0]) for r in rows], dtype=np.float64)
    return [r.prob[0] for r in rows], [r.log_prob[0] for r in rows], mass


@dataclass(frozen=True)
class Scored:
    """What :func:`evaluate_scores` returns: the long tables and the evaluation."""

    tables: pd.DataFrame
    evaluation: Evaluation


def evaluate_scores(cfg: ProbeConfig, prep: Prepared, scores: dict, *, progress=None) -> Scored:
    """BiasAmp-> of scored prompts.

    Parameters
    ----------
    cfg : ProbeConfig
        Its bootstrap settings are used.
    prep : Prepared
        The prompts that were scored (:func:`prepare` of the same config).
    scores : dict
        ``{direction: (prob, log_prob, mass)}`` per row of ``prep.prompts[direction]``.
    progress : biasamp._progress.Progress, optional
        Told the ``bootstrap`` stage.

    Returns
    -------
    Scored
        The long tables and the :class:`~.evaluate.Evaluation`.
    """
    probs, long_tables = _build_tables(prep, scores)
    at, ta = probs[ATTRIBUTE_TO_TASK], probs[TASK_TO_ATTRIBUTE]
    bases = list(prep.base_tables.items())
    return Scored(long_tables, _evaluate(prep.design, at, ta, bases, Resampling.of(cfg), progress))


def probe_many(config=None, /, *, progress=None, **kwargs) -> list[ProbeResult]:
    """Probe every model of the config; return one :class:`~biasamp.ProbeResult` per model.

    Parameters are as for :func:`probe`. With ``out``, each model's results go to
    ``out/<model_slug>/`` (``out`` itself for one model), plus a comparison for several.
    """
    from ..scoring import LoadOptions, preflight

    cfg = as_config(config, **kwargs).resolved()
    wanted = cfg.progress if progress is None else progress
    reporter = as_progress(wanted)
    if not cfg.models:
        raise BiasampError("models must name at least one model id or folder; got []")
    folders = model_folders(cfg.models)
    output = None
    if cfg.out:  # checked before any long work
        note = (
            f"the scores are kept in the score cache {cfg.score_cache!r}: a rerun reuses them"
            if cfg.score_cache
            else "the scores were not kept: rerun with --score-cache DIR so "
            "that a failed write does not lose them"
        )
        output = OutputFolder(cfg.out, kind="probe", overwrite=cfg.overwrite, failure_note=note)
        output.check()
    prep = prepare(cfg)  # everything that can fail on input, before a model is loaded
    prep.check_memory(cfg)
    kinds = preflight(  # {model: (resolved, estimator)}, each resolved once, before torch
        cfg.models,
        LoadOptions.of(cfg),
        model_type=cfg.model_type,
        scoring=cfg.scoring,
        context_token=cfg.context_token,
        masked_only=cfg.masked_only,
    )
    staging = output.begin() if output is not None else None
    try:
        results = []
        for model in cfg.models:
            resolved, estimator = kinds[model]
            res = _probe_one(
                cfg, model, prep, resolved=resolved, estimator=estimator, progress=reporter
            )
            results.append(res)
            if staging is not None:
                d = staging if len(cfg.models) == 1 else staging / folders[model]
                # the data files, the reports, then results.json with the files' sha256 and
                # the completion mark (last)
                d.mkdir(parents=True, exist_ok=True)
                res.write_files(d, tables=cfg.tables)
                if cfg.formats:
                    render(res, d, formats=list(cfg.formats), progress=reporter)
                res.finish(d)
        if staging is not None and len(cfg.models) > 1:
            # one run: same templates, tasks and bases; a masked and a causal model differ in
            # estimator by construction, which the comparison marks
            write_comparison(
                results,
                [folders[m] for m in cfg.models],
                staging,
                formats=["md", "csv"] + (["html"] if "html" in cfg.formats else []),
                paired=paired_differences(results),
            )
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
        Where the run's stages are reported: a reporter, True for the standard display on
        stderr, False for none; default the config's ``progress``.
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
        raise BiasampError(
            "models must name exactly one model for probe() (use probe_many for "
            f"several); got {cfg.models!r}"
        )
    return probe_many(cfg, progress=progress)[0]


# -- where a probe writes ----------------------------------------------------------------------


def model_slug(model: str) -> str:
    """A folder-safe name for a model id or path.

    >>> model_slug("google/bert_uncased_L-2_H-128_A-2")
    'google--bert_uncased_L-2_H-128_A-2'
    >>> model_slug("/tmp/models/tiny-bert/")
    'tiny-bert'
    """
    text = str(model).rstrip("/\\")
    if os.path.isabs(text) or text.startswith((".", "~")):
        text = Path(text).name
    slug = "".join(c if (c.isalnum() or c in "-_.") else "-" for c in text.replace("/", "--"))
    return slug.strip(".") or "model"


def model_folders(models) -> dict[str, str]:
    """A distinct sub-folder name per model (the same model twice is an error).

    >>> model_folders(["a/tiny-bert", "b/tiny-bert", "bert-base-uncased"])
    {'a/tiny-bert': 'a--tiny-bert', 'b/tiny-bert': 'b--tiny-bert', 'bert-base-uncased': 'bert-base-uncased'}
    """
    seen: dict[str, str] = {}
    for m in models:
        key = os.path.realpath(path) if os.path.exists(path := os.path.expanduser(m)) else m
        if key in seen:
            raise BiasampError(f"models names the same model twice: {seen[key]!r} and {m!r}")
        seen[key] = m
    slugs = {m: model_slug(m) for m in models}
    out = {}
    for m in models:
        slug = slugs[m]
        if list(slugs.values()).count(slug) > 1:  # e.g. two local folders named tiny-bert
            parts = Path(os.path.expanduser(m).rstrip("/\\")).parts
            slug = model_slug("/".join(parts[-2:]) if len(parts) > 1 else m)
            if list(out.values()).count(slug) or slug in slugs.values():
                slug = f"{slug}-{hashlib.sha256(m.encode()).hexdigest()[:8]}"
        out[m] = slug
    if len(set(out.values())) != len(out):
        out = {m: f"{s}-{hashlib.sha256(m.encode()).hexdigest()[:8]}" for m, s in out.items()}
    return out
