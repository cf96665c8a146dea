"""Templates bound to their own tasks, and group labels: reading and checking them.

A ``[[template]]`` may say ``task = "developer"`` (or ``tasks = ["nurse", "doctor"]``): it is
then rendered only with those tasks (the benchmark's own sentence) instead of being crossed
with every task of the vocabulary. ``groups = ["pro", "type1"]`` labels the subsets the
template belongs to; results are also reported per label. The set may declare its own task
list (``[set] tasks``, the vocabulary its bound templates come with) and describe its groups
(``[set.groups]``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._conventions import BLANK
from .._errors import BiasampError
from ..tasks import task_aliases

__all__ = ["check_bindings", "read_groups", "read_label_list", "read_task_binding"]

_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def _task_word(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BiasampError(f"{where} must be a non-empty string; got {value!r}")
    if value != value.strip() or any(c in value for c in "{}") or BLANK in value:
        raise BiasampError(f"{where} must be a task word without surrounding spaces, braces "
                           f"or {BLANK!r}; got {value!r}")
    return value


def _word_list(value, where: str) -> tuple:
    if not isinstance(value, list) or not value:
        raise BiasampError(f"{where} must be a non-empty list of task words; got {value!r}")
    words = [_task_word(v, f"{where}[{i}]") for i, v in enumerate(value)]
    dup = sorted({w for w in words if words.count(w) > 1})
    if dup:
        raise BiasampError(f"{where} lists {dup} more than once")
    return tuple(words)


def read_task_binding(entry: dict, where: str) -> tuple:
    """The tasks a template entry is bound to (``task`` or ``tasks``); ``()`` = crossed."""
    if "task" in entry and "tasks" in entry:
        raise BiasampError(f"{where}: conflicting bindings: give 'task' (one) or 'tasks' (a "
                           f"list), not both; got task={entry['task']!r}, "
                           f"tasks={entry['tasks']!r}")
    if "task" in entry:
        return (_task_word(entry["task"], f"{where}: task"),)
    if "tasks" in entry:
        return _word_list(entry["tasks"], f"{where}: tasks")
    return ()


def read_label_list(value, where: str) -> tuple:
    """Group labels: a list of distinct labels (letters, digits, ``-``, ``_``, ``.``)."""
    if not isinstance(value, list):
        raise BiasampError(f"{where} must be a list of labels; got {value!r}")
    for v in value:
        if not isinstance(v, str) or not _LABEL_RE.match(v):
            raise BiasampError(f"{where}: a label must be letters, digits, '-', '_' or '.'; "
                               f"got {v!r}")
    if len(set(value)) != len(value):
        raise BiasampError(f"{where} repeats a label: {value!r}")
    return tuple(value)


def _check_spellings(words: Sequence[str], where: str) -> None:
    """Two spellings of one occupation (per the task alias table) conflict."""
    aliases = task_aliases()
    seen: dict[str, str] = {}
    for w in words:
        key = aliases.canonical(w)
        if key in seen and seen[key] != w:
            raise BiasampError(
                f"{where}: conflicting bindings: {seen[key]!r} and {w!r} are spellings of the "
                f"same occupation (task alias table {aliases.file!r}); use one of them")
        seen[key] = w


def check_bindings(templates: Sequence, declared, where: str) -> tuple:
    """The set's own tasks (``[set] tasks`` or the bound tasks in order of appearance),
    after checking that the bindings agree with them."""
    bound = [t for t in templates if t.tasks]
    used = list(dict.fromkeys(task for t in bound for task in t.tasks))
    if declared is None:
        _check_spellings(used, where)
        return tuple(used)
    own = _word_list(declared, f"{where}: tasks")
    if not bound:
        raise BiasampError(f"{where}: tasks lists the tasks of bound templates, but no template "
                           "is bound (give 'task = ...' in the templates, or remove tasks)")
    _check_spellings(own, where)
    for t in bound:
        stray = [task for task in t.tasks if task not in own]
        if stray:
            raise BiasampError(f"{where}: conflicting bindings: template {t.id!r} is bound to "
                               f"{stray}, which [set] tasks does not list")
    crossed = any(not t.tasks for t in templates)
    unused = [task for task in own if task not in used]
    if unused and not crossed:
        raise BiasampError(f"{where}: tasks {unused} have no template bound to them (every "
                           "listed task needs at least one)")
    return own


def read_groups(table, templates: Sequence, where: str) -> dict:
    """Group label -> description; labels used by templates but not described map to ``""``.

    When ``[set.groups]`` is given, every label a template uses must be described there and
    every described label used (a typo either way is an error).
    """
    used = list(dict.fromkeys(g for t in templates for g in t.groups))
    if table is None:
        return dict.fromkeys(used, "")
    if not isinstance(table, dict):
        raise BiasampError(f"{where}: groups must be a table of label = description "
                           f"([set.groups]); got {table!r}")
    read_label_list(list(table), f"{where}: groups")
    for label, text in table.items():
        if not isinstance(text, str) or not text.strip():
            raise BiasampError(f"{where}: groups.{label} must be a non-empty description; got "
                               f"{text!r}")
    unknown = [g for g in used if g not in table]
    if unknown:
        raise BiasampError(f"{where}: templates use groups {unknown} that [set.groups] does not "
                           f"describe (described: {list(table)})")
    unused = [g for g in table if g not in used]
    if unused:
        raise BiasampError(f"{where}: [set.groups] describes {unused}, which no template uses")
    return dict(table)
