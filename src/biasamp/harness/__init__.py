"""BiasAmp-> inside EleutherAI's lm-evaluation-harness (docs/harness.md): one task per
(template set, base-rate source) in :func:`tasks_dir`; the harness scores each prompt row's
choices, :func:`biasamp.pipeline.evaluate_scores` computes. Imports neither lm_eval nor torch.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path

import numpy as np

from .._conventions import BLANK, DIRECTIONS
from .._errors import BiasampError

log = logging.getLogger(__name__)

__all__ = ["BLS_TASKS", "METRICS", "TASKS", "TASK_OPTIONS", "main", "tasks_dir"]

#: task name -> (template set, base-rate source); one task per pair.
TASKS = {
    "biasamp_wang2021_uniform": ("wang2021", "uniform"),
    "biasamp_wang2021_labor2016": ("wang2021", "labor-2016"),
    "biasamp_winogender_uniform_bergsma": ("winogender", "uniform:bergsma"),
    "biasamp_winogender_bergsma": ("winogender", "bergsma"),
    "biasamp_winobias_uniform": ("winobias", "uniform"),
    "biasamp_winobias_labor2016shares": ("winobias", "labor-2016-shares"),
    "biasamp_groups_race_uniform": ("groups", "uniform:labor-2022-race"),
    "biasamp_groups_race_labor2022": ("groups", "labor-2022-race"),
}
#: The WinoBias-32 occupations with a CPS Table 11 (2022) row: all but counselor and designer.
BLS_TASKS = (
    "janitor,cook,mover,laborer,constructor,chief,developer,carpenter,lawyer,farmer,driver,"
    "salesperson,physician,guard,analyst,sheriff,cashier,nurse,secretary,auditor,cleaner,"
    "receptionist,hairdresser,writer,housekeeper,baker,accountant,editor,librarian,sewer"
)
#: task name -> the probe options its file's ``dataset_kwargs`` add (groups: the race groups and
#: the occupations the labor table has)
TASK_OPTIONS = {
    name: {"attributes": "white,black,asian", "tasks": BLS_TASKS}
    for name in ("biasamp_groups_race_uniform", "biasamp_groups_race_labor2022")
}
#: metric name -> (direction, summary column)
METRICS = {
    f"{short}{suffix}": (direction, column)
    for short, direction in (("t2a", "task_to_attribute"), ("a2t", "attribute_to_task"))
    for suffix, column in (("", "mean"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high"))
}
#: the probe options a task reads from ``--metadata`` (besides ``context_token``)
OPTIONS = ("attributes", "tasks", "max_templates", "n_resamples", "seed", "confidence")


def _said(value, yes: bool) -> bool:
    """Whether a ``--model_args`` / ``--metadata`` value says ``yes`` (True) or no (False)."""
    return str(value).strip().lower() in (
        ("1", "true", "yes", "on") if yes else ("0", "false", "no", "off")
    )


def check_model_args(meta: dict) -> None:
    """Refuse the harness settings under which its numbers would not be biasamp's:
    ``logits_cache`` not stated False, ``add_bos_token=True``."""
    if not _said(meta.get("logits_cache", True), yes=False):
        raise BiasampError(
            f"logits_cache: got {meta.get('logits_cache', 'the harness default, True')!r}; the "
            "biasamp tasks need logits_cache=False in --model_args (hf backend; backends "
            "without the cache: --metadata '{\"logits_cache\": false}'): with the cache on, the "
            "hf backend reuses one forward pass for requests whose sentences coincide, as "
            "biasamp's two directions do, and scores some of them wrongly"
        )
    if _said(meta.get("add_bos_token", False), yes=True):
        raise BiasampError(
            f"add_bos_token: got {meta['add_bos_token']!r}; the biasamp tasks put the model's "
            "document-start token in front of each sentence themselves (leave it False)"
        )


def context_token(meta: dict) -> tuple[str, str]:
    """``(token, where it came from)``: ``--metadata context_token``, else the one biasamp's
    scorer would use for the model of ``model_args``."""
    from ..scoring import model_context

    given = meta.get("context_token")
    model = meta.get("tokenizer") or meta.get("pretrained") or meta.get("model")
    if model is None:
        if given is None:
            raise BiasampError(
                "context_token: the biasamp tasks found no model name in --model_args "
                "(pretrained=, tokenizer= or model=) to choose the document-start token "
                'from; give it with --metadata \'{"context_token": "<|endoftext|>"}\''
            )
        return str(given), "given with --metadata context_token"
    ctx = model_context(
        str(model),
        given,
        revision=meta.get("revision"),
        trust_remote_code=_said(meta.get("trust_remote_code", False), yes=True),
    )
    return ctx.token, ctx.rule


def _setup(templates: str, base_rates: str, meta: dict) -> str:
    """The probe settings of a task as one JSON string (every document carries it)."""
    fields = {"templates": templates, "base_rates": [base_rates]}
    fields.update({k: meta[k] for k in OPTIONS if k in meta})
    return json.dumps(fields, sort_keys=True)


@functools.lru_cache(maxsize=8)
def _prepared(setup: str):
    from ..pipeline import ProbeConfig, prepare

    cfg = ProbeConfig(models=[], **json.loads(setup)).resolved()
    prep = prepare(cfg)
    prep.check_memory(cfg)  # before the harness scores anything
    return cfg, prep


def documents(setup: str, token: str) -> list[dict]:
    """One document per prompt row: direction, row, context and choices."""
    _, prep = _prepared(setup)
    docs = []
    for direction in DIRECTIONS:
        frame = prep.prompts[direction]
        for row, (prompt, cands) in enumerate(zip(frame["prompt"], frame["candidates"])):
            pre, post = str(prompt).split(BLANK)
            docs.append(
                {
                    "setup": setup,
                    "direction": direction,
                    "row": row,
                    "prompt": str(prompt),
                    "context": token + pre,
                    "choices": [str(c) + post for c in cands],
                }
            )
    return docs


def dataset(templates: str, base_rates: str, **meta):
    """``custom_dataset`` of every biasamp task: ``{"test": datasets.Dataset}`` (``meta``: the
    harness's ``model_args`` merged with ``--metadata``)."""
    import datasets

    check_model_args(meta)
    token, rule = context_token(meta)
    setup = _setup(templates, base_rates, meta)
    docs = documents(setup, token)
    log.info(
        "biasamp task %s / %s: %d documents, context token %r (%s)",
        templates,
        base_rates,
        len(docs),
        token,
        rule,
    )
    return {"test": datasets.Dataset.from_list(docs)}


def process_results(doc: dict, results) -> dict:
    """Each metric gets the document's log-likelihoods (one per choice); the aggregation
    computes BiasAmp-> from all of them."""
    item = (doc["setup"], doc["direction"], int(doc["row"]), tuple(float(r[0]) for r in results))
    return dict.fromkeys(METRICS, item)


@functools.lru_cache(maxsize=1)
def evaluate_items(items: tuple) -> dict:
    """``{metric: value}`` of the items of one task (computed once, whatever metric asks)."""
    from ..pipeline import evaluate_scores, row_scores

    setups = {it[0] for it in items}
    if len(setups) != 1:
        raise BiasampError(f"items of {len(setups)} biasamp task setups in one aggregation")
    cfg, prep = _prepared(setups.pop())
    by_row: dict[str, dict[int, tuple]] = {d: {} for d in DIRECTIONS}
    for _, direction, row, lls in items:
        by_row[direction][row] = lls
    scores = {}
    for direction in DIRECTIONS:
        n = len(prep.prompts[direction])
        if len(by_row[direction]) != n:
            raise BiasampError(
                f"limit: the biasamp tasks need every document ({len(by_row[direction])} of "
                f"{n} {direction} prompts were scored); drop --limit, and use --metadata "
                "'{\"max_templates\": N}' for a shorter run"
            )
        scores[direction] = row_scores([np.asarray(by_row[direction][i]) for i in range(n)])
    summary = evaluate_scores(cfg, prep, scores).evaluation.summary
    return {
        name: float(summary[summary["direction"] == direction][column].iloc[0])
        for name, (direction, column) in METRICS.items()
    }


def aggregate(name: str):
    """The aggregation function of metric ``name``."""

    def agg(items):
        return evaluate_items(tuple(items))[name]

    agg.__name__ = f"biasamp_{name}"
    return agg


def tasks_dir() -> Path:
    """The folder to give ``lm_eval --include_path``."""
    return Path(__file__).resolve().parent / "tasks"


def main(argv=None) -> int:
    """``python -m biasamp.harness``: print the task folder (``--list``: the tasks too)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m biasamp.harness",
        description="Print the folder of biasamp's lm-evaluation-harness tasks "
        "(for lm_eval --include_path).",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="also list the tasks: name, template set, base-rate source",
    )
    args = parser.parse_args(argv)
    print(tasks_dir())
    if args.list:
        for name, (templates, source) in TASKS.items():
            print(f"{name}\t{templates}\t{source}")
    return 0
