"""Slots of template texts and the English they render (a/an, attribute forms, verb
agreement): each table is the one place a form is defined; rendering asks a slot's kind
(:data:`SLOT_KINDS`), not its name."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from .._conventions import ATTRIBUTES
from .._errors import BiasampError
from .._registry import did_you_mean

_FORMS = {  # attribute slot: its he / she / they forms ("they" is the singular they), case
    "attribute": ("he", "she", "they", "nominative"),
    "attribute_accusative": ("him", "her", "them", "accusative"),
    "attribute_possessive": ("his", "her", "their", "possessive determiner"),
    "attribute_possessive_pronoun": ("his", "hers", "theirs", "possessive pronoun"),
    "attribute_reflexive": ("himself", "herself", "themselves", "reflexive"),
    "attribute_noun": ("man", "woman", "person", None),
}
#: Surface form of each attribute for each attribute slot.
ATTRIBUTE_FORMS = MappingProxyType(
    {s: MappingProxyType(dict(zip(ATTRIBUTES, f))) for s, f in _FORMS.items()}
)
#: The pronoun case of each pronoun slot.
PRONOUN_CASES = MappingProxyType({s: f[3] for s, f in _FORMS.items() if f[3]})

#: The slots a group renders: its term ("Asian") and the term with the person noun.
GROUP_SLOTS = ("group", "group_noun")

#: Named verb slots agreeing with the pronoun: slot -> (singular, plural).
VERB_FORMS = MappingProxyType({"be": ("is", "are"), "was": ("was", "were")})

#: The a/an rules a template set may declare (see :func:`article_for`).
ARTICLE_RULES = ("sound", "wang2021")

#: Words spelled with a consonant letter but spoken with a vowel sound -> "an" (matched
#: on the lower-cased word, as whole words or as prefixes).
AN_WORDS = frozenset(
    "heir heiress heirloom herb honest honestly honesty honor honorable honorary honored"  # noqa: SIM905 - a word list
    " honour honourable honoured hour hourly hours".split()
)
_AN_PREFIXES = ("honest", "honor", "honour", "hour", "heir")
#: Initialisms read letter by letter whose first letter name starts with a vowel sound
#: (matched case-sensitively, e.g. "an MBA", "an RN").
AN_INITIALISMS = frozenset(
    {"FBI", "HR", "LLM", "MBA", "MD", "MP", "MRI", "NGO", "NHS", "RN", "SUV", "X-ray"}
)
#: Words spelled with a vowel letter but spoken with a consonant sound -> "a".
A_WORDS = frozenset(
    "eucalyptus eulogy euphoric euro european ewe once one ubiquitous ukrainian unanimous"  # noqa: SIM905 - a word list
    " unicorn uniform union unique unit united universal university uranium urinal usable"
    " usage use used useful useless user usual usually utensil utility utilized utopian".split()
)
_A_PREFIXES = ("eu", "one-", "uni", "usa", "use", "usu", "uti", "ubi", "ukr", "ura", "uri")
# "uni" words where "un-" is the negating prefix are spoken with a vowel: "an unimportant"
_A_PREFIX_EXCEPTIONS = ("unim", "unin", "unid")

_PUNCTUATION = ".,;:!?\"'()[]"


def verb_form(forms: tuple[str, str], attribute: str, agreement: bool) -> str:
    """The form of a verb, ``(singular, plural)``, next to ``attribute``: the plural only
    for "they" in a set with agreement (the compat sets say "they is").

    >>> verb_form(VERB_FORMS["be"], "they", True), verb_form(("wants", "want"), "she", True)
    ('are', 'wants')
    """
    singular, plural = forms
    return plural if (agreement and attribute == "they") else singular  # a group: singular


def article_for(word: str, rule: str) -> str:
    """``"a"`` or ``"an"`` for the word that follows the article, by one of
    :data:`ARTICLE_RULES` (described in ``templates/README.md``, "a / an").

    >>> [article_for(w, "sound") for w in ("old", "hour", "university", "MBA", "French")]
    ['an', 'an', 'a', 'an', 'a']
    >>> article_for("Old", "wang2021"), article_for("old", "wang2021")
    ('a', 'an')
    """
    token = word.strip().strip(_PUNCTUATION)
    if rule == "wang2021":
        return "an" if token[0] in "aeiou" else "a"
    if token in AN_INITIALISMS:
        return "an"
    low = token.lower()
    if low in AN_WORDS or low.startswith(_AN_PREFIXES):
        return "an"
    if low in A_WORDS or (low.startswith(_A_PREFIXES) and not low.startswith(_A_PREFIX_EXCEPTIONS)):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


#: What each slot renders: an attribute form, an agreeing verb, the task, or the article.
SLOT_KINDS = MappingProxyType(
    {
        **dict.fromkeys(ATTRIBUTE_FORMS, "attribute"),
        **dict.fromkeys(GROUP_SLOTS, "attribute"),
        **dict.fromkeys(VERB_FORMS, "verb"),
        "verb": "verb",
        "task": "task",
        "a": "article",
    }
)

#: Every slot name a template may use (lower-case; a capitalised first letter is allowed).
SLOTS = tuple(sorted(SLOT_KINDS))

#: How a template's task->attribute prompts are built: ``shared`` (one prompt per task; the
#: blank covers every attribute-dependent slot) or ``per-attribute`` (one per attribute).
CONTEXTS = ("shared", "per-attribute")

_SLOT_RE = re.compile(r"\{([^{}]*)\}")
_REF_RE = re.compile(r"^([A-Za-z_]+)(?:#([0-9]+))?$")


@dataclass(frozen=True)
class Slot:
    """A slot of a parsed template text (the literal text around it stays a ``str``)."""

    name: str  # lower-case
    capital: bool
    kind: str  # its entry in SLOT_KINDS
    forms: tuple = ()  # (singular, plural) of a verb slot
    copy: int = 1  # 1-based number among the slots of this name

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


def _slot(raw: str, text: str, where: str) -> Slot:
    name, sep, arg = raw.partition(":")
    low = name[:1].lower() + name[1:]
    if low not in SLOT_KINDS and name.lower() in SLOT_KINDS:
        raise BiasampError(
            f"{where}: slot {{{raw}}} may only capitalise its first letter "
            f"(write {{{name.lower()}}} or {{{name.lower().capitalize()}}})"
        )
    if low not in SLOT_KINDS:
        raise BiasampError(
            f"{where}: unknown slot {{{raw}}}{did_you_mean(low, SLOTS)} in text {text!r}; "
            f"known slots: {', '.join('{' + s + '}' for s in SLOTS)} (the generic verb: "
            "{verb:SINGULAR|PLURAL}; capitalise the first letter for a capitalised rendering)"
        )
    forms: tuple = ()
    if low == "verb" and not sep:
        raise BiasampError(
            f"{where}: the slot {{{name}}} needs its two forms, singular|plural, "
            f"e.g. {{verb:has|have}} or {{verb:wants|want}}; text {text!r}"
        )
    if low == "verb":
        forms = tuple(f.strip() for f in arg.split("|"))
        if len(forms) != 2 or not all(forms):
            raise BiasampError(
                f"{where}: {{{name}:{arg}}} must give exactly two non-empty forms, "
                f"singular|plural (e.g. {{verb:does|do}}); text {text!r}"
            )
    elif sep:
        raise BiasampError(
            f"{where}: only the generic {{verb:...}} slot takes forms; got {{{raw}}} in {text!r}"
        )
    return Slot(low, name != low, SLOT_KINDS[low], forms)


def parse_text(text: str, where: str) -> tuple[Any, ...]:
    """Split a template text into literal strings and slots (copies numbered)."""
    parts: list[Any] = []
    seen: Counter = Counter()
    for k, piece in enumerate(_SLOT_RE.split(text)):  # literal, slot, literal, ..., literal
        if k % 2:
            s = _slot(piece, text, where)
            seen[s.name] += 1
            parts.append(replace(s, copy=seen[s.name]))
        elif "{" in piece or "}" in piece:
            raise BiasampError(f"{where}: unbalanced brace in text {text!r}")
        elif piece:
            parts.append(piece)
    return tuple(parts)


def resolve_ref(parts: tuple, ref: str) -> list[int]:
    """Indexes in ``parts`` of the slot copies a mask entry names (``name`` or ``name#k``)."""
    m = _REF_RE.match(ref)
    if not m:
        return []
    name, copy = m.group(1), m.group(2)
    return [
        i
        for i, p in enumerate(parts)
        if isinstance(p, Slot) and p.name == name and (copy is None or p.copy == int(copy))
    ]


def dependent_indexes(parts: tuple, agreement: bool) -> list[int]:
    """Indexes of the slots that depend on the attribute (verbs only with agreement)."""
    kinds = ("attribute", "verb") if agreement else ("attribute",)
    return [i for i, p in enumerate(parts) if isinstance(p, Slot) and p.kind in kinds]
