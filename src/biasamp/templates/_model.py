"""The template model: slots, parsed texts, :class:`Template`, :class:`TemplateSet`, rendering.

Every slot is one entry of :data:`_SLOT_KINDS`, built from the tables of ``_morphology``;
rendering asks a slot's kind, not its name, so a new slot of an existing kind (a pronoun
case, an agreeing verb) is one table entry there and needs no code here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._conventions import ATTRIBUTES
from .._errors import BiasampError
from .._registry import did_you_mean, unknown_name
from .._validation import Constraint, check
from ._morphology import ATTRIBUTE_FORMS, VERB_FORMS, article_for, verb_form

__all__ = ["ATTRIBUTE", "SLOTS", "Slot", "Template", "TemplateSet", "attribute_hint",
           "attribute_slots", "check_attribute", "parse_text", "render_parts", "slot_positions"]

#: What each slot renders: an attribute form, an agreeing verb, the task, or the article.
_SLOT_KINDS = MappingProxyType({
    **dict.fromkeys(ATTRIBUTE_FORMS, "attribute"),
    **dict.fromkeys(VERB_FORMS, "verb"),
    "task": "task",
    "a": "article",
})

#: Every slot name a template may use (lower-case; a capitalised first letter is allowed).
SLOTS = tuple(sorted(_SLOT_KINDS))

_SLOT_RE = re.compile(r"\{([^{}]*)\}")
_WORD_RE = re.compile(r"\S+")


class _Attribute(Constraint):
    """One of :data:`ATTRIBUTES`; the hint also catches a wrong case ("He")."""

    def __call__(self, value, name):
        if isinstance(value, str) and value in ATTRIBUTES:
            return value
        self.fail(value, name, "one of {" + ", ".join(map(repr, ATTRIBUTES)) + "}",
                  attribute_hint(value))


#: The constraint of one attribute name.
ATTRIBUTE = _Attribute()


def attribute_hint(value: Any) -> str:
    """``" (did you mean 'he'?)"`` for a near miss of an attribute name, else ``""``."""
    low = str(value).strip().lower()
    if low in ATTRIBUTES:
        return f" (did you mean {low!r}?)"
    return did_you_mean(str(value), ATTRIBUTES)


def check_attribute(value: Any, param: str = "attribute") -> str:
    """Return ``value`` if it is one of :data:`ATTRIBUTES`; else raise naming ``param``."""
    return check(value, ATTRIBUTE, param)


def attribute_slots(agreement: bool) -> set[str]:
    """The slots whose rendering depends on the attribute (verbs only with agreement)."""
    kinds = ("attribute", "verb") if agreement else ("attribute",)
    return {name for name, kind in _SLOT_KINDS.items() if kind in kinds}


# ---------------------------------------------------------------------------------------
# slots and texts
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    """A slot of a parsed template text (the literal text around it stays a ``str``)."""

    name: str          # canonical lower-case name
    capital: bool      # written with a capital first letter
    kind: str          # its entry in _SLOT_KINDS

    @property
    def raw(self) -> str:
        return "{" + (self.name[0].upper() + self.name[1:] if self.capital else self.name) + "}"


def _no_brace(literal: str, text: str, where: str) -> None:
    if "{" in literal or "}" in literal:
        raise BiasampError(f"{where}: unbalanced brace in text {text!r}")


def parse_text(text: str, where: str) -> tuple[Any, ...]:
    """Split a template text into literal strings and slots."""
    parts: list[Any] = []
    pos = 0
    for m in _SLOT_RE.finditer(text):
        literal = text[pos:m.start()]
        _no_brace(literal, text, where)
        if literal:
            parts.append(literal)
        raw = m.group(1)
        low = raw[:1].lower() + raw[1:]
        if low not in _SLOT_KINDS and raw.lower() in _SLOT_KINDS:
            raise BiasampError(f"{where}: slot {{{raw}}} may only capitalise its first letter "
                               f"(write {{{raw.lower()}}} or {{{raw.lower().capitalize()}}})")
        if low not in _SLOT_KINDS:
            raise BiasampError(
                f"{where}: unknown slot {{{raw}}}{did_you_mean(low, SLOTS)} in text {text!r}; "
                f"known slots: {', '.join('{' + s + '}' for s in SLOTS)} "
                "(capitalise the first letter for a capitalised rendering)")
        parts.append(Slot(low, raw != low, _SLOT_KINDS[low]))
        pos = m.end()
    tail = text[pos:]
    _no_brace(tail, text, where)
    if tail:
        parts.append(tail)
    return tuple(parts)


def slot_positions(parts: tuple, names) -> list[int]:
    """Indexes in ``parts`` of the slots named in ``names``."""
    return [i for i, p in enumerate(parts) if isinstance(p, Slot) and p.name in names]


# ---------------------------------------------------------------------------------------
# templates and sets
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Template:
    """One template of a set.

    Attributes
    ----------
    id : str
        Unique within the set.
    text : str
        The text with its slots, e.g. ``"{attribute} {be} {a} new {task}."``.
    family, tense, source : str
        Metadata (family of sentences, "present"/"past", where the sentence comes from).
    mask : mapping
        Direction -> tuple of the slot names the blank covers.
    """

    id: str
    text: str
    family: str
    tense: str
    source: str
    mask: MappingProxyType
    parts: tuple = field(repr=False, compare=False, default=())

    def slot_names(self) -> list[str]:
        """Names of the slots in order of appearance (lower-case)."""
        return [p.name for p in self.parts if isinstance(p, Slot)]


@dataclass(frozen=True)
class TemplateSet:
    """A named, versioned collection of templates (one TOML file).

    Attributes
    ----------
    name, description : str
    templates : tuple of Template
    agreement : bool
        Whether ``{be}``/``{was}`` agree with the attribute ("they are") or not
        ("they is", the paper's compat sentences).
    article : {"sound", "wang2021"}
        The a/an rule (see :func:`~biasamp.templates.indefinite_article`).
    provenance : dict
        ``source``, ``year``, ``license`` and any other metadata of the file, plus
        ``file`` and ``sha256`` (and ``words_files``/``dropped_duplicates`` for generated
        sets).
    sha256 : str
        Hash of the TOML file's bytes.
    path : pathlib.Path
    """

    name: str
    description: str
    templates: tuple
    agreement: bool
    article: str
    provenance: dict
    sha256: str
    path: Path

    def __len__(self) -> int:
        return len(self.templates)

    @property
    def ids(self) -> list[str]:
        """Template ids in file order."""
        return [t.id for t in self.templates]

    def template(self, template_id: str) -> Template:
        """Return the template with that id."""
        for t in self.templates:
            if t.id == template_id:
                return t
        raise unknown_name(f"template id in set {self.name!r}", template_id, self.ids)

    def render(self, template: Template | str, attribute: str, task: str) -> str:
        """Render a full sentence (no blank) for one attribute and one task.

        Examples
        --------
        >>> from biasamp.templates import load_template_set
        >>> s = load_template_set("wang2021")
        >>> s.render("present-08-old", "they", "nurse")
        'they is an old nurse.'
        >>> load_template_set("adjectives").render("past-08-old", "they", "nurse")
        'They were an old nurse.'
        """
        t = self.template(template) if isinstance(template, str) else template
        check_attribute(attribute)
        return "".join(render_parts(t, attribute, str(task), self.agreement, self.article))

    def select(self, *, family: str | None = None, tense: str | None = None) -> TemplateSet:
        """Return the subset of templates with that family and/or tense (same provenance)."""
        keep = tuple(t for t in self.templates
                     if family in (None, t.family) and tense in (None, t.tense))
        if not keep:
            fams = sorted({t.family for t in self.templates})
            tenses = sorted({t.tense for t in self.templates})
            raise BiasampError(f"no template of set {self.name!r} has family={family!r} and "
                               f"tense={tense!r}; families: {fams}, tenses: {tenses}")
        return TemplateSet(self.name, self.description, keep, self.agreement, self.article,
                           {**self.provenance, "selected": {"family": family, "tense": tense}},
                           self.sha256, self.path)


# ---------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------

def _surface(slot: Slot, attribute: str, task: str, agreement: bool) -> str:
    kind = slot.kind
    if kind == "attribute":
        text = ATTRIBUTE_FORMS[slot.name][attribute]
    elif kind == "verb":
        text = verb_form(slot.name, attribute, agreement)
    elif kind == "task":
        text = task
    else:  # pragma: no cover - articles are resolved by the caller
        raise AssertionError(slot)
    return text[:1].upper() + text[1:] if slot.capital else text


def render_parts(t: Template, attribute: str, task: str, agreement: bool,
                 article: str) -> list[str]:
    """Render every part of ``t`` to a string (articles chosen by the following word)."""
    out: list[str | None] = []
    for p in t.parts:
        if isinstance(p, Slot):
            out.append(None if p.kind == "article" else _surface(p, attribute, task, agreement))
        else:
            out.append(p)
    for i in range(len(out) - 1, -1, -1):  # right to left: "{a} {a} x" is not useful but safe
        p = t.parts[i]
        if isinstance(p, Slot) and p.kind == "article":
            following = "".join(s for s in out[i + 1:] if s is not None).lstrip()
            m = _WORD_RE.match(following)
            if not m or not re.search(r"\w", m.group(0)):
                raise BiasampError(f"template {t.id!r}: the article slot {p.raw} must be followed "
                                   f"by a word; text {t.text!r}")
            art = article_for(m.group(0), article)
            out[i] = art[0].upper() + art[1:] if p.capital else art
    return out  # type: ignore[return-value]
