"""Everything a probe needs before a model is loaded: templates, tasks, prompts, base tables.

:func:`prepare` builds the prompts of both directions, the :class:`Design` and every base-rate
table the run will use (each checked: :func:`~.evaluate.check_base`), so that bad input fails
before the (slow) model is loaded; the runner then checks that the bootstrap fits in memory
(:meth:`Prepared.check_memory`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._memory import check_memory
from ..results import TasksInfo, jsonable
from .config import DEFAULT_TASKS, ProbeConfig
from .evaluate import check_base
from .resample import bootstrap_bytes, coverage

__all__ = ["Design", "Prepared", "prepare"]


@dataclass(frozen=True)
class Design:
    """What a probe measures, apart from any model: the templates, tasks and attributes and
    how templates cover tasks (a bound template: its own tasks; a crossed one: every task).

    Built once by :func:`prepare`, read by the table building and the evaluation
    (:func:`~.run.evaluate_scores`), saved in ``results.json`` (``provenance.design``) and
    read back by :func:`~.compare.paired_differences`, so no step works it out again.

    >>> d = Design(("t1", "t2"), ("nurse", "cook"), ("he", "she"), (("nurse",), ()), ((), ()), ())
    >>> d.bound, d.expected().tolist()
    (True, [[True, False], [True, True]])

    Attributes
    ----------
    template_ids : tuple of str
        In the order of the probability tables.
    tasks, attributes : tuple of str
        Rows and columns of every table.
    template_tasks : tuple of tuple of str
        Per template, the tasks a bound template covers; ``()``: every task (crossed).
    template_groups : tuple of tuple of str
        Per template, the groups it belongs to.
    group_labels : tuple of str
        The groups in the set's order.
    """

    template_ids: tuple
    tasks: tuple
    attributes: tuple
    template_tasks: tuple
    template_groups: tuple
    group_labels: tuple

    @property
    def bound(self) -> bool:
        """Some template covers only its own tasks (the tables are pooled per task)."""
        return any(self.template_tasks)

    @property
    def grouped(self) -> bool:
        return any(self.template_groups)

    def coverage(self):
        """``(cover, strata)`` as :func:`~.resample.coverage` gives them (None, None:
        crossed)."""
        return coverage(
            self.template_tasks if self.bound else None, list(self.tasks), len(self.template_ids)
        )

    def expected(self) -> np.ndarray:
        """(n_templates, n_tasks) of bool: the task rows each template fills."""
        cover, _ = self.coverage()
        if cover is None:
            return np.ones((len(self.template_ids), len(self.tasks)), dtype=bool)
        return cover

    def select(self, template_ids) -> Design:
        """The design of some of the templates (in the order given)."""
        at = {t: i for i, t in enumerate(self.template_ids)}
        idx = [at[str(t)] for t in template_ids]
        return Design(
            tuple(self.template_ids[i] for i in idx),
            self.tasks,
            self.attributes,
            tuple(self.template_tasks[i] for i in idx),
            tuple(self.template_groups[i] for i in idx),
            self.group_labels,
        )

    def to_dict(self) -> dict:
        """JSON-ready (``results.json``)."""
        return {
            "template_ids": list(self.template_ids),
            "tasks": list(self.tasks),
            "attributes": list(self.attributes),
            "template_tasks": [list(t) for t in self.template_tasks],
            "template_groups": [list(g) for g in self.template_groups],
            "group_labels": list(self.group_labels),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Design:
        return cls(
            tuple(map(str, data["template_ids"])),
            tuple(map(str, data["tasks"])),
            tuple(map(str, data["attributes"])),
            tuple(tuple(map(str, t)) for t in data["template_tasks"]),
            tuple(tuple(map(str, g)) for g in data["template_groups"]),
            tuple(map(str, data["group_labels"])),
        )


@dataclass
class Prepared:
    """Inputs of the scoring stage (no model needed to build them)."""

    #: templates, tasks, attributes and which template covers which task (built once)
    design: Design
    prompts: dict[str, pd.DataFrame]  # direction -> build_prompts frame
    #: source name (as requested) -> direction -> its BaseRateTable, each built once
    base_tables: dict
    prompts_sha256: str
    #: the template set's file and metadata (``set_sha256``, ``set_path``,
    #: ``set_provenance``; ``aggregation`` and ``groups`` for bound or grouped sets): the
    #: fields of :class:`~biasamp.results.TemplatesInfo` known before scoring
    template_provenance: dict
    tasks_provenance: TasksInfo
    #: what the template bootstrap draws: (template, task) rows of a bound set, else templates
    n_units: int

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

    def check_memory(self, cfg: ProbeConfig) -> None:
        """Refuse ``cfg.n_resamples`` whose bootstrap cannot fit in memory (the estimate:
        :func:`~.resample.bootstrap_bytes`); the runner asks before the model loads."""
        n_resampled = sum(
            cfg.base_uncertainty == "resample"
            and any(t.counts is not None for t in tables.values())
            for tables in self.base_tables.values()
        )
        n_t, n_a = len(self.design.tasks), len(self.design.attributes)
        need = bootstrap_bytes(
            cfg.n_resamples,
            n_units=self.n_units,
            n_tasks=n_t,
            n_attributes=n_a,
            n_resampled=n_resampled,
        )
        check_memory(
            need,
            "n_resamples",
            cfg.n_resamples,
            f"for the bootstrap ({n_t} tasks x {n_a} attributes per replicate)",
        )


def _vocabulary(cfg: ProbeConfig, tset):
    """The task vocabulary: ``cfg.tasks``, else the set's own tasks (bound set), else the
    default ``winobias32``."""
    from ..tasks import TaskVocabulary, load_tasks

    if cfg.tasks is not None:
        return load_tasks(cfg.tasks)
    if not tset.bound:
        return load_tasks(DEFAULT_TASKS)
    words = list(tset.tasks)
    return TaskVocabulary(
        f"{tset.name}:tasks",
        f"the own tasks of template set {tset.name!r}",
        words,
        {},
        {
            "name": f"{tset.name}:tasks",
            "source": tset.name,
            "set_sha256": tset.sha256,
            "n_words": len(words),
        },
        None,
        None,
    )


def _keep(t2a: pd.DataFrame, bound: bool, n: int) -> list[str]:
    """Template ids of a quick run: the first ``n`` templates (of each task when bound)."""
    if not bound:
        return list(dict.fromkeys(t2a["template_id"].astype(str)))[:n]
    keep: list[str] = []
    for _, ids in t2a.groupby("task", sort=False)["template_id"]:
        keep += list(dict.fromkeys(ids.astype(str)))[:n]
    return list(dict.fromkeys(keep))


def prepare(cfg: ProbeConfig) -> Prepared:
    """Load templates and tasks, build the prompts and every base-rate table of ``cfg``."""
    from ..base_rates import get_source
    from ..templates import build_prompts, load_template_set, resolve_attributes

    tset = load_template_set(cfg.templates)
    vocab = _vocabulary(cfg, tset)
    tasks = list(vocab.words)
    if len(tasks) < 2:  # the vocabulary of a name or file is known only now
        raise BiasampError(
            f"tasks must name at least 2 tasks; got {cfg.tasks!r} ({len(tasks)}: "
            f"{tasks!r}); with one, P(T=t|A=a) = P(T=t) = 1: every association "
            "is a tie and BiasAmp-> says nothing"
        )
    attributes = resolve_attributes(cfg.attributes)
    prompts = {d: build_prompts(tset, attributes, vocab, direction=d) for d in DIRECTIONS}
    if cfg.max_templates is not None:
        keep = set(_keep(prompts[TASK_TO_ATTRIBUTE], tset.bound, cfg.max_templates))
        prompts = {
            d: df[df["template_id"].astype(str).isin(keep)].reset_index(drop=True)
            for d, df in prompts.items()
        }
    for direction, df in prompts.items():
        if len(df) == 0:
            raise BiasampError(
                f"template set {cfg.templates!r} gives no prompts for direction {direction!r}"
            )
    base_tables = {}
    for name in cfg.base_rates:
        src = get_source(name)
        base_tables[name] = {}
        for direction in DIRECTIONS:  # a task missing from a source fails before scoring
            table = src.table(tasks, attributes, direction=direction)
            check_base(
                table, name, tasks=tasks, attributes=attributes, min_base_count=cfg.min_base_count
            )
            base_tables[name][direction] = table
    counted = [n for n, t in base_tables.items() if t[ATTRIBUTE_TO_TASK].counts is not None]
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
        base_tables=base_tables,
        prompts_sha256=digest,
        template_provenance=tprov,
        tasks_provenance=TasksInfo(
            name=cfg.tasks if isinstance(cfg.tasks, str) else vocab.name,
            words=tuple(tasks),
            sha256=vocab.sha256,
        ),
        n_units=len(t2a) if tset.bound else t2a["template_id"].nunique(),
    )
