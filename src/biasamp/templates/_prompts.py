"""From a template set, attributes and tasks to sentences and masked prompts with candidates."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import partial

import pandas as pd

from .._conventions import BLANK, TASK_TO_ATTRIBUTE, canonical_direction
from .._errors import BiasampError
from ..tasks import TaskVocabulary, load_tasks, task_aliases
from ._groups import checked_sets, realisations
from ._loading import load_template_set
from ._model import Template, TemplateSet, render_parts

_PROMPT_COLUMNS = ["template_id", "direction", "attribute", "task", "prompt", "candidates"]
_SENTENCE_COLUMNS = ["template_id", "attribute", "task", "sentence"]


def resolve_attributes(spec: str | Iterable[str]) -> list[str]:
    """Turn ``"he,she,they"`` (or a list) into a validated list of attributes.

    Parameters
    ----------
    spec
        Two or more distinct pronouns or groups, never both; a set stands for its groups.

    Returns
    -------
    list of str
        In the order given (the column order downstream).

    Examples
    --------
    >>> resolve_attributes("he, she,they"), resolve_attributes(["she", "he"])
    (['he', 'she', 'they'], ['she', 'he'])
    >>> resolve_attributes("white,black,asian"), resolve_attributes("ethnicity")
    (['white', 'black', 'asian'], ['hispanic', 'not-hispanic'])
    """
    items, _ = checked_sets(_items(spec), spec)
    if len(set(items)) != len(items):
        raise BiasampError(f"attributes must not repeat a name; got {spec!r}")
    if len(items) < 2:
        raise BiasampError(f"attributes must name at least two attributes; got {spec!r}")
    return items


def _items(spec) -> list:
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",")]
    if isinstance(spec, Iterable):
        return list(spec)
    raise BiasampError(f"attributes must be a comma-separated string or a list; got {spec!r}")


def _as_set(template_set) -> TemplateSet:
    return (
        template_set if isinstance(template_set, TemplateSet) else load_template_set(template_set)
    )


def _task_words(tasks) -> list[str]:
    """The words of what ``load_tasks`` accepts, or of any iterable of words."""
    if isinstance(tasks, Iterable) and not isinstance(
        tasks, (str, bytes, os.PathLike, TaskVocabulary, Sequence)
    ):
        tasks = list(tasks)
    return list(load_tasks(tasks).words)


def template_tasks(
    template_set: TemplateSet | str | os.PathLike,
    tasks: TaskVocabulary | str | os.PathLike | Sequence[str],
) -> dict:
    """Which tasks of the vocabulary each template is rendered with, and how it spells them.

    Parameters
    ----------
    template_set, tasks
        As for :func:`build_prompts`.

    Returns
    -------
    dict
        template id -> ``(vocabulary word, spelling in the sentence)`` pairs in vocabulary
        order (a bound template: its own tasks, found exactly or by alias).

    Examples
    --------
    >>> m = template_tasks("winobias", ["constructor", "nurse"])
    >>> m["t1-dev-001"], m["t1-dev-079"], m["t1-dev-024"]
    ([], [('constructor', 'construction worker')], [('nurse', 'nurse')])
    """
    tset = _as_set(template_set)
    words = _task_words(tasks)
    aliases = task_aliases()
    # a word stands for itself first, then (the first word of each) for its canonical spelling
    index = {aliases.canonical(w): w for w in reversed(words)} | {w: w for w in words}
    out = {}
    for t in tset.templates:
        if not t.tasks:
            out[t.id] = [(w, w) for w in words]
            continue
        own = {}
        for task in t.tasks:
            w = index.get(task, index.get(aliases.canonical(task)))
            if w is not None:
                own.setdefault(w, task)
        out[t.id] = [(w, own[w]) for w in words if w in own]
    return out


def _setup(template_set, attributes, tasks) -> tuple:
    tset = _as_set(template_set)
    attrs = resolve_attributes(attributes)
    forms = realisations(tset, _items(attributes))  # an attribute set's groups too
    words = _task_words(tasks)
    return tset, attrs, forms, words, template_tasks(tset, words)


def _masked(
    t: Template, direction: str, attribute: str, task: str, *, tset: TemplateSet
) -> tuple[str, str]:
    """(prompt with BLANK, text of the masked span) of one rendering."""
    rendered = render_parts(t, attribute, task, agreement=tset.agreement, article=tset.article)
    idx = t.masked(direction)
    lo, hi = min(idx), max(idx) + 1
    prompt = "".join(rendered[:lo]) + BLANK + "".join(rendered[hi:])
    return prompt, "".join(rendered[lo:hi])


def _frame(rows: list[tuple], columns: list[str], object_cols: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns, dtype=object).astype(
        {n: "str" for n in columns if n not in object_cols}
    )


def build_prompts(
    template_set: TemplateSet | str | os.PathLike,
    attributes: str | Sequence[str],
    tasks: TaskVocabulary | str | os.PathLike | Sequence[str],
    *,
    direction: str,
) -> pd.DataFrame:
    """Build the masked prompts and their candidates for one direction.

    Parameters
    ----------
    template_set
        A loaded set, a set name or a TOML path.
    attributes
        See :func:`resolve_attributes`.
    tasks
        Anything :func:`biasamp.tasks.load_tasks` accepts.
    direction
        ``"attribute_to_task"``, ``"task_to_attribute"`` or an alias (``"A->T"``, ...).

    Returns
    -------
    pandas.DataFrame
        ``template_id, direction, attribute, task, prompt, candidates`` (docs/probing.md).

    Examples
    --------
    >>> df = build_prompts("adjectives", "he,she,they", ["nurse", "cook"], direction="T->A")
    >>> df.shape
    (40, 6)
    >>> df.loc[0, "prompt"], df.loc[0, "candidates"]
    ('[BLANK] a new nurse.', ('He is', 'She is', 'They are'))
    >>> df = build_prompts("wang2021", "he,she,they", ["nurse", "cook"], direction="A->T")
    >>> df.loc[2, "prompt"], df.loc[2, "candidates"]
    ('they is a new [BLANK].', ('nurse', 'cook'))
    """
    direction = canonical_direction(direction)
    tset, attrs, forms, words, covered = _setup(template_set, attributes, tasks)
    have = {w for own in covered.values() for w, _ in own}
    missing = [w for w in words if w not in have]
    if missing:
        shown = ", ".join(map(repr, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise BiasampError(
            f"tasks: {len(missing)} task(s) have no template in set {tset.name!r} ({shown}); "
            "its templates are bound to their own tasks "
            f"({', '.join(map(repr, tset.tasks[:6]))}{' ...' if len(tset.tasks) > 6 else ''})"
            ": probe the set's own tasks (leave tasks unset) or a subset of them"
        )
    rows: list[tuple] = []
    for t in tset.templates:
        own = covered[t.id]
        if not own:
            continue
        # a prompt row: (attribute, task, its renderings: the blank hides all they differ in)
        if direction != TASK_TO_ATTRIBUTE:
            cells = [(a, None, [(r, word) for word in words]) for a in attrs for r in forms[a]]
        elif t.context == "per-attribute":
            cells = [
                (a, word, [(r, spelled)]) for word, spelled in own for a in attrs for r in forms[a]
            ]
        else:
            cells = [
                (None, word, [(r, spelled) for a in attrs for r in forms[a]])
                for word, spelled in own
            ]
        for a, word, renderings in cells:
            masked = [_masked(t, direction, r, task, tset=tset) for r, task in renderings]
            spans = tuple(span for _, span in masked)
            rows.append((t.id, direction, a, word, masked[0][0], spans))
    return _frame(rows, _PROMPT_COLUMNS, object_cols=("attribute", "task", "candidates"))


def render_sentences(
    template_set: TemplateSet | str | os.PathLike,
    attributes: str | Sequence[str],
    tasks: TaskVocabulary | str | os.PathLike | Sequence[str],
) -> pd.DataFrame:
    """Render every full sentence (no blank) of a set.

    Parameters
    ----------
    template_set, attributes, tasks
        As for :func:`build_prompts`.

    Returns
    -------
    pandas.DataFrame
        ``template_id, attribute, task, sentence``: a row per (template, attribute,
        realisation, task), in that nesting order.

    Examples
    --------
    >>> df = render_sentences("wang2021", "he,they", ["nurse"])
    >>> df["sentence"].tolist()[:3]
    ['he is a new nurse.', 'they is a new nurse.', 'he is a known nurse.']
    """
    tset, attrs, forms, _, covered = _setup(template_set, attributes, tasks)
    render = partial(render_parts, agreement=tset.agreement, article=tset.article)
    rows = [
        (t.id, a, word, "".join(render(t, r, spelled)))
        for t in tset.templates
        for a in attrs
        for r in forms[a]
        for word, spelled in covered[t.id]
    ]
    return _frame(rows, _SENTENCE_COLUMNS, object_cols=())
