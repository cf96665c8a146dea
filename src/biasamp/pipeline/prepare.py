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
from ..results import jsonable
from .config import ProbeConfig

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

    tasks: list[str]
    attributes: list[str]
    prompts: dict[str, pd.DataFrame]          # direction -> build_prompts frame
    sources: list[NamedSource]
    prompts_sha256: str
    template_provenance: dict = field(default_factory=dict)
    tasks_provenance: dict = field(default_factory=dict)


def prepare(cfg: ProbeConfig) -> Prepared:
    """Load templates and tasks, build the prompts and every base-rate table of ``cfg``."""
    from ..base_rates import get_source
    from ..tasks import load_tasks
    from ..templates import build_prompts, load_template_set, resolve_attributes

    tset = load_template_set(cfg.templates)
    vocab = load_tasks(cfg.tasks)
    tasks = list(vocab.words)
    attributes = resolve_attributes(cfg.attributes)
    prompts = {}
    for direction in DIRECTIONS:
        df = build_prompts(tset, attributes, vocab, direction=direction)
        if cfg.max_templates is not None:
            keep = list(dict.fromkeys(df["template_id"].astype(str)))[: cfg.max_templates]
            df = df[df["template_id"].astype(str).isin(keep)].reset_index(drop=True)
        if len(df) == 0:
            raise BiasampError(f"template set {cfg.templates!r} gives no prompts for direction "
                               f"{direction!r}")
        prompts[direction] = df
    sources = []
    for name in cfg.base_rates:
        src = NamedSource(name, get_source(name))
        for direction in DIRECTIONS:  # a task missing from a source fails before scoring
            src.table(tasks, attributes, direction=direction)
        sources.append(src)
    both = pd.concat([prompts[ATTRIBUTE_TO_TASK], prompts[TASK_TO_ATTRIBUTE]],
                     ignore_index=True)
    both = both.assign(candidates=both["candidates"].map(lambda c: "|".join(map(str, c))))
    digest = hashlib.sha256(both.to_csv(index=False).encode("utf-8")).hexdigest()
    tprov = {f"set_{k}": jsonable(getattr(tset, k)) for k in ("sha256", "path", "provenance")}
    return Prepared(tasks=tasks, attributes=list(attributes), prompts=prompts, sources=sources,
                    prompts_sha256=digest, template_provenance=tprov,
                    tasks_provenance={"name": cfg.tasks if isinstance(cfg.tasks, str)
                                      else vocab.name, "words": tasks,
                                      "sha256": vocab.sha256})
