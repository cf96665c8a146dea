"""The rules one template must follow: its slots, and a masked span per direction that does
not leak the answer (coverage, contiguity, no article right before the blank).

The rules are stated in ``templates/README.md`` ("The masked span (the blank) per
direction"); :func:`check_template` applies them when a set is loaded.
"""

from __future__ import annotations

from .._conventions import ATTRIBUTE_TO_TASK, ATTRIBUTES, DIRECTIONS, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._registry import did_you_mean
from ._model import SLOTS, Slot, Template, attribute_slots, render_parts, slot_positions
from ._morphology import ATTRIBUTE_FORMS, VERB_FORMS

__all__ = ["check_template", "default_mask"]


def default_mask(parts: tuple, agreement: bool) -> dict:
    """The blank without ``mask`` declarations: every attribute-dependent slot (T->A), the
    task (A->T)."""
    dep = attribute_slots(agreement)
    t2a = tuple(dict.fromkeys(p.name for p in parts if isinstance(p, Slot) and p.name in dep))
    return {TASK_TO_ATTRIBUTE: t2a, ATTRIBUTE_TO_TASK: ("task",)}


def _check_slots(t: Template, where: str) -> None:
    names = t.slot_names()
    if names.count("task") != 1:
        raise BiasampError(f"{where}: text must contain the {{task}} slot exactly once; "
                           f"got {names.count('task')} in {t.text!r}")
    if not any(n in ATTRIBUTE_FORMS for n in names):
        *rest, last = ("{" + s + "}" for s in ATTRIBUTE_FORMS)
        raise BiasampError(f"{where}: text must contain an attribute slot ({', '.join(rest)} "
                           f"or {last}); got {t.text!r}")
    if any(n in VERB_FORMS for n in names) and "attribute" not in names:
        verbs = "/".join("{" + s + "}" for s in VERB_FORMS)
        raise BiasampError(f"{where}: the verb slots {verbs} agree with the pronoun and "
                           f"need an {{attribute}} slot; got {t.text!r}")


def _check_mask_names(t: Template, direction: str, where: str) -> None:
    names = t.slot_names()
    masked = t.mask[direction]
    if not masked:
        raise BiasampError(f"{where}: mask.{direction} must name at least one slot")
    for n in masked:
        if n not in SLOTS:
            raise BiasampError(f"{where}: mask.{direction} names unknown slot {n!r}"
                               f"{did_you_mean(n, SLOTS)}; known slots: {', '.join(SLOTS)}")
        if names.count(n) != 1:
            raise BiasampError(f"{where}: mask.{direction} slot {n!r} must occur exactly once "
                               f"in the text; it occurs {names.count(n)} times in {t.text!r}")
    if len(set(masked)) != len(masked):
        raise BiasampError(f"{where}: mask.{direction} repeats a slot: {list(masked)}")


def _check_coverage(t: Template, direction: str, agreement: bool, where: str) -> None:
    """T->A covers every attribute-dependent slot and not the task; A->T the reverse."""
    masked = t.mask[direction]
    present_dep = {n for n in t.slot_names() if n in attribute_slots(agreement)}
    if direction == TASK_TO_ATTRIBUTE:
        if "task" in masked:
            raise BiasampError(f"{where}: mask.task_to_attribute must not contain 'task'")
        missing = sorted(present_dep - set(masked))
        if missing:
            raise BiasampError(
                f"{where}: mask.task_to_attribute must cover every slot that depends on the "
                f"attribute, else the prompt leaks the answer; missing {missing} "
                f"(agreement={agreement}) in {t.text!r}")
    else:
        if "task" not in masked:
            raise BiasampError(f"{where}: mask.attribute_to_task must contain 'task'")
        leaking = sorted(set(masked) & present_dep)
        if leaking:
            raise BiasampError(f"{where}: mask.attribute_to_task must not cover attribute "
                               f"slots {leaking}")


def _check_span(t: Template, direction: str, where: str) -> None:
    """No unmasked slot inside the span; no unmasked article right before a masked slot."""
    masked = t.mask[direction]
    idx = slot_positions(t.parts, masked)
    for p in t.parts[idx[0]:idx[-1] + 1]:
        if isinstance(p, Slot) and p.name not in masked:
            raise BiasampError(f"{where}: mask.{direction} {list(masked)} is not contiguous: "
                               f"slot {p.raw} lies inside the masked span of {t.text!r}")
    # an unmasked article right before the blank would leak the masked word's sound
    for i, p in enumerate(t.parts):
        if isinstance(p, Slot) and p.kind == "article" and p.name not in masked:
            nxt = next((q for q in t.parts[i + 1:] if isinstance(q, Slot) or q.strip()), None)
            if isinstance(nxt, Slot) and nxt.name in masked:
                raise BiasampError(
                    f"{where}: the article {p.raw} directly precedes the masked slot "
                    f"{nxt.raw} for {direction}, so a/an would leak the answer; put a word "
                    f"between them, use 'the', or mask the article too ({t.text!r})")


def check_template(t: Template, agreement: bool, article: str, where: str) -> None:
    """Raise :class:`BiasampError` (prefixed with ``where``) if ``t`` breaks a rule."""
    _check_slots(t, where)
    for direction in DIRECTIONS:
        _check_mask_names(t, direction, where)
        _check_coverage(t, direction, agreement, where)
        _check_span(t, direction, where)
    # a trial rendering catches the rest (e.g. an article with no following word)
    for attribute in ATTRIBUTES:
        render_parts(t, attribute, "nurse", agreement, article)
