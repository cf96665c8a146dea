"""The rules of ``templates/README.md`` for one template (its slots, a masked span per
direction that does not leak the answer), its task bindings and its group labels."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._conventions import ATTRIBUTE_TO_TASK, ATTRIBUTES, BLANK, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._registry import did_you_mean
from .._validation import check_visible
from ..tasks import task_aliases
from ._groups import Realisation, uses_groups
from ._model import Template, render_parts
from ._slots import (
    ATTRIBUTE_FORMS,
    GROUP_SLOTS,
    SLOTS,
    Slot,
    dependent_indexes,
    resolve_ref,
)


def _ref(parts: tuple, i: int) -> str:
    """How a mask names the slot at ``parts[i]``: its name, or ``name#k`` when repeated."""
    s = parts[i]
    n = sum(1 for p in parts if isinstance(p, Slot) and p.name == s.name)
    return s.name if n == 1 else s.ref


def default_mask(parts: tuple, agreement: bool) -> dict:
    """The blank without ``mask``: every attribute-dependent slot (T->A), the task (A->T)."""
    t2a = tuple(dict.fromkeys(_ref(parts, i) for i in dependent_indexes(parts, agreement)))
    return {TASK_TO_ATTRIBUTE: t2a, ATTRIBUTE_TO_TASK: ("task",)}


def _check_mask(t: Template, direction: str, agreement: bool, where: str) -> None:
    """The mask of ``direction`` names slots of the text, each once; T->A covers the
    attribute-dependent slots (all, with a shared context), A->T the task; the span holds no
    unmasked slot and follows no unmasked article."""
    refs = t.mask[direction]  # non-empty: a mask is read as a non-empty list
    names = t.slot_names()
    for ref in refs:
        name, _, copy = ref.partition("#")
        if name not in SLOTS:
            raise BiasampError(
                f"{where}: mask.{direction} names unknown slot {name!r}"
                f"{did_you_mean(name, SLOTS)}; known slots: {', '.join(SLOTS)}"
            )
        n = names.count(name)
        if copy:
            if not resolve_ref(t.parts, ref):
                raise BiasampError(
                    f"{where}: mask.{direction} names copy {ref!r}, but the text "
                    f"has {n} {{{name}}} slot(s): {t.text!r}"
                )
        elif n != 1:
            copies = " or ".join(repr(f"{name}#{k}") for k in range(1, n + 1))
            raise BiasampError(
                f"{where}: mask.{direction} slot {name!r} must occur exactly once "
                f"in the text; it occurs {n} times in {t.text!r}"
                + (f"; name one copy: {copies}" if n else "")
            )
    found = t.masked(direction)
    if len(set(found)) != len(found):
        raise BiasampError(f"{where}: mask.{direction} repeats a slot: {list(refs)}")
    masked = set(found)
    dep = dependent_indexes(t.parts, agreement)
    task_masked = any(t.parts[i].name == "task" for i in masked)
    if direction == TASK_TO_ATTRIBUTE:
        if task_masked:
            raise BiasampError(f"{where}: mask.task_to_attribute must not contain 'task'")
        missing = [_ref(t.parts, i) for i in dep if i not in masked]
        if missing and t.context == "shared":
            raise BiasampError(
                f"{where}: mask.task_to_attribute must cover every slot that depends on the "
                f"attribute, else the prompt leaks the answer; missing {missing} "
                f"(agreement={agreement}) in {t.text!r}; to score each attribute in its own "
                'rendering (the other copies visible), set context = "per-attribute"'
            )
        if not masked & set(dep):
            raise BiasampError(
                f"{where}: mask.task_to_attribute must cover at least one slot "
                f"that depends on the attribute; got {list(refs)}"
            )
    else:
        if not task_masked:
            raise BiasampError(f"{where}: mask.attribute_to_task must contain 'task'")
        leaking = sorted(_ref(t.parts, i) for i in masked if i in dep)
        if leaking:
            raise BiasampError(
                f"{where}: mask.attribute_to_task must not cover attribute slots {leaking}"
            )
    for i in range(min(masked), max(masked) + 1):
        p = t.parts[i]
        if isinstance(p, Slot) and i not in masked:
            raise BiasampError(
                f"{where}: mask.{direction} {list(refs)} is not "
                f"contiguous: slot {p.raw} lies inside the masked span of "
                f"{t.text!r}"
            )
    # an unmasked article right before the blank would leak the masked word's sound
    for i, p in enumerate(t.parts):
        if isinstance(p, Slot) and p.kind == "article" and i not in masked:
            after = [
                j for j, q in enumerate(t.parts) if j > i and (isinstance(q, Slot) or q.strip())
            ]
            if after and after[0] in masked:  # the next slot or word is masked
                raise BiasampError(
                    f"{where}: the article {p.raw} directly precedes the masked slot "
                    f"{t.parts[after[0]].raw} for {direction}, so a/an would leak the answer; "
                    f"put a word between them, use 'the', or mask the article too ({t.text!r})"
                )


def check_template(t: Template, agreement: bool, article: str, where: str) -> None:
    """Raise :class:`BiasampError` (prefixed with ``where``) if ``t`` breaks a rule."""
    check_visible(t.text, where)
    names = t.slot_names()
    if names.count("task") != 1:
        raise BiasampError(
            f"{where}: text must contain the {{task}} slot exactly once; "
            f"got {names.count('task')} in {t.text!r}"
        )
    if not any(n in ATTRIBUTE_FORMS or n in GROUP_SLOTS for n in names):
        *rest, last = ("{" + s + "}" for s in (*ATTRIBUTE_FORMS, *GROUP_SLOTS))
        raise BiasampError(
            f"{where}: text must contain an attribute slot ({', '.join(rest)} "
            f"or {last}); got {t.text!r}"
        )
    if any(n in GROUP_SLOTS for n in names) and any(n in ATTRIBUTE_FORMS for n in names):
        raise BiasampError(
            f"{where}: text mixes pronoun slots and group slots ({{group}}, {{group_noun}}); "
            f"a template realises pronouns or groups, not both: {t.text!r}"
        )
    kinds = [p.kind for p in t.parts if isinstance(p, Slot)]
    if "verb" in kinds and "attribute" not in names:
        raise BiasampError(
            f"{where}: the verb slots {{be}}/{{was}} agree with the pronoun and "
            "need an {attribute} slot (so does {verb:SINGULAR|PLURAL}); got "
            f"{t.text!r}"
        )
    for direction in DIRECTIONS:
        _check_mask(t, direction, agreement, where)
    # a trial rendering catches the rest (e.g. an article with no following word)
    trial = ATTRIBUTES if not uses_groups(t) else (Realisation("trial", "Asian", "person"),)
    for attribute in trial:
        render_parts(
            t, attribute, t.tasks[0] if t.tasks else "nurse", agreement=agreement, article=article
        )


#: A template id or group label: letters, digits, ``-``, ``_``, ``.``.
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def _task_word(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BiasampError(f"{where} must be a non-empty string; got {value!r}")
    check_visible(value, where)
    if value != value.strip() or any(c in value for c in "{}") or BLANK in value:
        raise BiasampError(
            f"{where} must be a task word without surrounding spaces, braces "
            f"or {BLANK!r}; got {value!r}"
        )
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
        raise BiasampError(
            f"{where}: conflicting bindings: give 'task' (one) or 'tasks' (a "
            f"list), not both; got task={entry['task']!r}, "
            f"tasks={entry['tasks']!r}"
        )
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
        if not isinstance(v, str) or not LABEL_RE.match(v):
            raise BiasampError(
                f"{where}: a label must be letters, digits, '-', '_' or '.'; got {v!r}"
            )
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
                f"same occupation (task alias table {aliases.file!r}); use one of them"
            )
        seen[key] = w


def check_bindings(templates: Sequence, declared, where: str) -> tuple:
    """The set's own tasks (``[set] tasks`` or the bound tasks), checked against the bindings."""
    bound = [t for t in templates if t.tasks]
    used = list(dict.fromkeys(task for t in bound for task in t.tasks))
    if declared is None:
        _check_spellings(used, where)
        return tuple(used)
    own = _word_list(declared, f"{where}: tasks")
    if not bound:
        raise BiasampError(
            f"{where}: tasks lists the tasks of bound templates, but no template "
            "is bound (give 'task = ...' in the templates, or remove tasks)"
        )
    _check_spellings(own, where)
    for t in bound:
        stray = [task for task in t.tasks if task not in own]
        if stray:
            raise BiasampError(
                f"{where}: conflicting bindings: template {t.id!r} is bound to "
                f"{stray}, which [set] tasks does not list"
            )
    crossed = any(not t.tasks for t in templates)
    unused = [task for task in own if task not in used]
    if unused and not crossed:
        raise BiasampError(
            f"{where}: tasks {unused} have no template bound to them (every "
            "listed task needs at least one)"
        )
    return own


def read_groups(table, templates: Sequence, where: str) -> dict:
    """Group label -> description: ``[set.groups]``, exactly the labels used (else ``""``)."""
    used = list(dict.fromkeys(g for t in templates for g in t.groups))
    if table is None:
        return dict.fromkeys(used, "")
    if not isinstance(table, dict):
        raise BiasampError(
            f"{where}: groups must be a table of label = description ([set.groups]); got {table!r}"
        )
    read_label_list(list(table), f"{where}: groups")
    for label, text in table.items():
        if not isinstance(text, str) or not text.strip():
            raise BiasampError(
                f"{where}: groups.{label} must be a non-empty description; got {text!r}"
            )
    unknown = [g for g in used if g not in table]
    if unknown:
        raise BiasampError(
            f"{where}: templates use groups {unknown} that [set.groups] does not "
            f"describe (described: {list(table)})"
        )
    unused = [g for g in table if g not in used]
    if unused:
        raise BiasampError(f"{where}: [set.groups] describes {unused}, which no template uses")
    return dict(table)
