"""Slots of template texts: their kinds, the parsed :class:`Slot`, and parsing a text.

Every named slot is one entry of :data:`_SLOT_KINDS`, built from the tables of
``_morphology``; rendering asks a slot's kind, not its name, so a new slot of an existing
kind (a pronoun case, a named agreeing verb) is one table entry there and needs no code
here. The generic verb slot ``{verb:SINGULAR|PLURAL}`` carries its two forms itself.

A slot may occur several times in one text; its copies are numbered in order of
appearance, and a mask names one copy as ``name#k`` (1-based), e.g. ``attribute#2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._errors import BiasampError
from .._registry import did_you_mean
from ._morphology import ATTRIBUTE_FORMS, VERB_FORMS

__all__ = ["CONTEXTS", "SLOTS", "SLOT_KINDS", "Slot", "attribute_slots", "dependent_indexes",
           "parse_text", "resolve_ref"]

#: What each slot renders: an attribute form, an agreeing verb, the task, or the article.
SLOT_KINDS = MappingProxyType({
    **dict.fromkeys(ATTRIBUTE_FORMS, "attribute"),
    **dict.fromkeys(VERB_FORMS, "verb"),
    "verb": "verb",
    "task": "task",
    "a": "article",
})

#: Every slot name a template may use (lower-case; a capitalised first letter is allowed).
SLOTS = tuple(sorted(SLOT_KINDS))

#: How a template's task->attribute prompts are built: ``shared`` (one prompt per task; the
#: blank covers every attribute-dependent slot) or ``per-attribute`` (each attribute scored
#: in its own rendering; attribute-dependent slots may stay outside the blank).
CONTEXTS = ("shared", "per-attribute")

_SLOT_RE = re.compile(r"\{([^{}]*)\}")
_REF_RE = re.compile(r"^([A-Za-z_]+)(?:#([0-9]+))?$")


def attribute_slots(agreement: bool) -> set[str]:
    """The slots whose rendering depends on the attribute (verbs only with agreement)."""
    kinds = ("attribute", "verb") if agreement else ("attribute",)
    return {name for name, kind in SLOT_KINDS.items() if kind in kinds}


# ---------------------------------------------------------------------------------------
# slots and texts
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    """A slot of a parsed template text (the literal text around it stays a ``str``)."""

    name: str          # canonical lower-case name
    capital: bool      # written with a capital first letter
    kind: str          # its entry in SLOT_KINDS
    forms: tuple = ()  # (singular, plural) of a verb slot
    copy: int = 1      # 1-based number among the slots of this name in the text

    @property
    def raw(self) -> str:
        name = self.name[0].upper() + self.name[1:] if self.capital else self.name
        if self.name == "verb":
            name += ":" + "|".join(self.forms)
        return "{" + name + "}"

    @property
    def ref(self) -> str:
        """How a mask names this copy: ``name#copy``."""
        return f"{self.name}#{self.copy}"


def _no_brace(literal: str, text: str, where: str) -> None:
    if "{" in literal or "}" in literal:
        raise BiasampError(f"{where}: unbalanced brace in text {text!r}")


def _verb_forms(raw: str, arg: str | None, text: str, where: str) -> tuple:
    if arg is None:
        raise BiasampError(f"{where}: the slot {{{raw}}} needs its two forms, singular|plural, "
                           f"e.g. {{verb:has|have}} or {{verb:wants|want}}; text {text!r}")
    forms = tuple(f.strip() for f in arg.split("|"))
    if len(forms) != 2 or not all(forms):
        raise BiasampError(f"{where}: {{{raw}:{arg}}} must give exactly two non-empty forms, "
                           f"singular|plural (e.g. {{verb:does|do}}); text {text!r}")
    return forms


def _slot(raw: str, text: str, where: str) -> Slot:
    name, sep, arg = raw.partition(":")
    low = name[:1].lower() + name[1:]
    if low not in SLOT_KINDS and name.lower() in SLOT_KINDS:
        raise BiasampError(f"{where}: slot {{{raw}}} may only capitalise its first letter "
                           f"(write {{{name.lower()}}} or {{{name.lower().capitalize()}}})")
    if low not in SLOT_KINDS:
        raise BiasampError(
            f"{where}: unknown slot {{{raw}}}{did_you_mean(low, SLOTS)} in text {text!r}; "
            f"known slots: {', '.join('{' + s + '}' for s in SLOTS)} (the generic verb: "
            "{verb:SINGULAR|PLURAL}; capitalise the first letter for a capitalised rendering)")
    forms: tuple = ()
    if low == "verb":
        forms = _verb_forms(name, arg if sep else None, text, where)
    elif sep:
        raise BiasampError(f"{where}: only the generic {{verb:...}} slot takes forms; got "
                           f"{{{raw}}} in {text!r}")
    return Slot(low, name != low, SLOT_KINDS[low], forms)


def parse_text(text: str, where: str) -> tuple[Any, ...]:
    """Split a template text into literal strings and slots (copies numbered)."""
    parts: list[Any] = []
    pos = 0
    seen: dict[str, int] = {}
    for m in _SLOT_RE.finditer(text):
        literal = text[pos:m.start()]
        _no_brace(literal, text, where)
        if literal:
            parts.append(literal)
        s = _slot(m.group(1), text, where)
        seen[s.name] = seen.get(s.name, 0) + 1
        parts.append(Slot(s.name, s.capital, s.kind, s.forms, seen[s.name]))
        pos = m.end()
    tail = text[pos:]
    _no_brace(tail, text, where)
    if tail:
        parts.append(tail)
    return tuple(parts)


def resolve_ref(parts: tuple, ref: str) -> list[int]:
    """Indexes in ``parts`` of the slot copies a mask entry names (``name`` or ``name#k``)."""
    m = _REF_RE.match(ref)
    if not m:
        return []
    name, copy = m.group(1), m.group(2)
    return [i for i, p in enumerate(parts) if isinstance(p, Slot) and p.name == name
            and (copy is None or p.copy == int(copy))]


def dependent_indexes(parts: tuple, agreement: bool) -> list[int]:
    """Indexes in ``parts`` of the slots whose rendering depends on the attribute."""
    dep = attribute_slots(agreement)
    return [i for i, p in enumerate(parts) if isinstance(p, Slot) and p.name in dep]
