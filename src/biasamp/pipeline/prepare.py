"""Everything a probe needs before a model is loaded: templates, tasks, prompts, base tables.

:func:`prepare` builds the prompts of both directions and every base-rate table the run
will use, so that bad input fails before the (slow) model is loaded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._memory import check_memory
from ..results import TasksInfo, jsonable
from ._design import Design
from ._tables import check_base
from .config import DEFAULT_TASKS, ProbeConfig
from .resample import bootstrap_bytes

__all__ = ["NamedSource", "Prepared", "prepare"]


class NamedSource:
    """A base-rate source under the name it was requested as; each table is built once."""

    def __init__(self, name: str, source):
        self.name = name
        self._source = source
        self._cache: dict = {}

    def table(self, tasks, attributes, *, direction=None):
        key = (tuple(tasks), tuple(attributes), direction)
        if key not in self._cache:
            self._cache[key] = self._source.table(list(tasks), list(attributes),
                                                  direction=direction)
        return self._cache[key]


@dataclass
class Prepared:
    """Inputs of the scoring stage (no model needed to build them)."""

    #: templates, tasks, attributes and which template covers which task (built once)
    design: Design
    prompts: dict[str, pd.DataFrame]          # direction -> build_prompts frame
    sources: list[NamedSource]
    prompts_sha256: str
    #: the template set's file and metadata (``set_sha256``, ``set_path``,
    #: ``set_provenance``; ``aggregation`` and ``groups`` for bound or grouped sets): the
    #: fields of :class:`~biasamp.results.TemplatesInfo` known before scoring
    template_provenance: dict = field(default_factory=dict)
    tasks_provenance: TasksInfo | None = None

    @property
    def tasks(self) -> list[str]:
        """The rows of every table (the design's)."""
        return list(self.design.tasks)

    @property
    def attributes(self) -> list[str]:
        """The columns of every table (the design's)."""
        return list(self.design.attributes)

    @property
    def bound(self) -> bool:
        """Whether some template is bound to its own task(s): the tables are pooled."""
        return self.design.bound


def _vocabulary(cfg: ProbeConfig, tset):
    """The task vocabulary: ``cfg.tasks``, else the set's own tasks (bound set), else the
    default ``winobias32``."""
    from ..tasks import TaskVocabulary, load_tasks

    if cfg.tasks is not None:
        return load_tasks(cfg.tasks)
    if not tset.bound:
        return load_tasks(DEFAULT_TASKS)
    words = list(tset.tasks)
    return TaskVocabulary(f"{tset.name}:tasks", f"the own tasks of template set {tset.name!r}",
                          words, {}, {"name": f"{tset.name}:tasks", "source": tset.name,
                                      "set_sha256": tset.sha256, "n_words": len(words)},
                          None, None)


def _keep(t2a: pd.DataFrame, bound: bool, n: int) -> list[str]:
    """Template ids of a quick run: the first ``n`` templates (of each task when bound)."""
    if not bound:
        return list(dict.fromkeys(t2a["template_id"].astype(str)))[:n]
    keep: list[str] = []
    for _, ids in t2a.groupby("task", sort=False)["template_id"]:
        keep += list(dict.fromkeys(ids.astype(str)))[:n]
    return list(dict.fromkeys(keep))


def _check_memory(cfg: ProbeConfig, **shape) -> None:
    """Refuse ``n_resamples`` whose bootstrap cannot fit in memory, before the model loads
    (the estimate: :func:`~.resample.bootstrap_bytes`)."""
    check_memory(bootstrap_bytes(cfg.n_resamples, **shape), "n_resamples", cfg.n_resamples,
                 f"for the bootstrap ({shape['n_tasks']} tasks x {shape['n_attributes']} "
                 "attributes per replicate)")


def prepare(cfg: ProbeConfig) -> Prepared:
    """Load templates and tasks, build the prompts and every base-rate table of ``cfg``."""
    from ..base_rates import get_source
    from ..templates import build_prompts, load_template_set, resolve_attributes

    tset = load_template_set(cfg.templates)
    vocab = _vocabulary(cfg, tset)
    tasks = list(vocab.words)
    if len(tasks) < 2:  # the vocabulary of a name or file is known only now
        raise BiasampError(f"tasks must name at least 2 tasks; got {cfg.tasks!r} ({len(tasks)}: "
                           f"{tasks!r}); with one, P(T=t|A=a) = P(T=t) = 1: every association "
                           "is a tie and BiasAmp-> says nothing")
    attributes = resolve_attributes(cfg.attributes)
    prompts = {d: build_prompts(tset, attributes, vocab, direction=d) for d in DIRECTIONS}
    if cfg.max_templates is not None:
        keep = set(_keep(prompts[TASK_TO_ATTRIBUTE], tset.bound, cfg.max_templates))
        prompts = {d: df[df["template_id"].astype(str).isin(keep)].reset_index(drop=True)
                   for d, df in prompts.items()}
    for direction, df in prompts.items():
        if len(df) == 0:
            raise BiasampError(f"template set {cfg.templates!r} gives no prompts for direction "
                               f"{direction!r}")
    sources, resampled = [], set()
    for name in cfg.base_rates:
        src = NamedSource(name, get_source(name))
        for direction in DIRECTIONS:  # a task missing from a source fails before scoring
            table = src.table(tasks, attributes, direction=direction)
            check_base(table, name, tasks=tasks, attributes=attributes,
                       min_base_count=cfg.min_base_count)
            if cfg.base_uncertainty == "resample" and table.counts is not None:
                resampled.add(name)
        sources.append(src)
    t2a = prompts[TASK_TO_ATTRIBUTE]  # units: (template, task) rows when bound, else templates
    _check_memory(cfg, n_units=len(t2a) if tset.bound else t2a["template_id"].nunique(),
                  n_tasks=len(tasks), n_attributes=len(attributes), n_resampled=len(resampled))
    both = pd.concat([prompts[ATTRIBUTE_TO_TASK], prompts[TASK_TO_ATTRIBUTE]],
                     ignore_index=True)
    both = both.assign(candidates=both["candidates"].map(lambda c: "|".join(map(str, c))))
    digest = hashlib.sha256(both.to_csv(index=False).encode("utf-8")).hexdigest()
    tprov = {f"set_{k}": jsonable(getattr(tset, k)) for k in ("sha256", "path", "provenance")}
    by_template = t2a.groupby("template_id", sort=False)["task"].agg(
        lambda x: tuple(dict.fromkeys(x)))
    own = {str(k): (v if tset.template(str(k)).bound else ()) for k, v in by_template.items()}
    groups = {t.id: tuple(t.groups) for t in tset.templates if t.id in own}
    tpl_ids = tuple(dict.fromkeys(str(t) for d in DIRECTIONS for t in prompts[d]["template_id"]))
    design = Design(tpl_ids, tuple(tasks), tuple(attributes),
                    tuple(tuple(own.get(t, ())) for t in tpl_ids),
                    tuple(groups.get(t, ()) for t in tpl_ids), tuple(tset.groups))
    if tset.bound or any(groups.values()):
        tprov["aggregation"] = "pooled" if tset.bound else "templates"
        tprov["groups"] = {g: d for g, d in tset.groups.items()
                           if any(g in x for x in groups.values())}
    return Prepared(design=design, prompts=prompts, sources=sources,
                    prompts_sha256=digest, template_provenance=tprov,
                    tasks_provenance=TasksInfo(name=cfg.tasks if isinstance(cfg.tasks, str)
                                               else vocab.name, words=tuple(tasks),
                                               sha256=vocab.sha256))
