"""The template model: :class:`Template`, :class:`TemplateSet`, rendering."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._conventions import ATTRIBUTES
from .._errors import BiasampError
from .._registry import did_you_mean, unknown_name
from ._slots import ATTRIBUTE_FORMS, VERB_FORMS, Slot, article_for, resolve_ref, verb_form

_WORD_RE = re.compile(r"\S+")


def attribute_hint(value: Any) -> str:
    """``" (did you mean 'he'?)"`` for a near miss of an attribute name, else ``""``."""
    low = str(value).strip().lower()
    if low in ATTRIBUTES:
        return f" (did you mean {low!r}?)"
    return did_you_mean(str(value), ATTRIBUTES)


@dataclass(frozen=True)
class Template:
    """One template of a set (its fields: the ``[[template]]`` keys of ``templates/README.md``);
    ``mask`` maps a direction to the slots its blank covers, ``tasks`` empty = crossed."""

    id: str
    text: str
    family: str
    tense: str
    source: str
    mask: MappingProxyType
    parts: tuple = field(repr=False, compare=False, default=())
    tasks: tuple = ()
    groups: tuple = ()
    context: str = "shared"

    def slot_names(self) -> list[str]:
        """Slot names in order of appearance (lower-case)."""
        return [p.name for p in self.parts if isinstance(p, Slot)]

    def masked(self, direction: str) -> list[int]:
        """Indexes in ``parts`` of the slots the blank of ``direction`` covers, in the mask's
        order (a slot the mask names twice comes twice)."""
        return [i for ref in self.mask[direction] for i in resolve_ref(self.parts, ref)]

    @property
    def bound(self) -> bool:
        """Whether the template is bound to its own task(s) (not crossed)."""
        return bool(self.tasks)


@dataclass(frozen=True)
class TemplateSet:
    """A named, versioned collection of templates (one TOML file, ``templates/README.md``):
    ``provenance`` is its ``[set]`` table with ``file`` and ``sha256`` (of the file's bytes),
    ``tasks`` its own tasks (``[set] tasks``, else the bound ones), ``groups`` label ->
    description."""

    name: str
    description: str
    templates: tuple
    agreement: bool
    article: str
    provenance: dict
    sha256: str
    path: Path
    tasks: tuple = ()
    groups: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def __len__(self) -> int:
        return len(self.templates)

    @property
    def ids(self) -> list[str]:
        """Template ids in file order."""
        return [t.id for t in self.templates]

    @property
    def bound(self) -> bool:
        """Whether any template is bound to its own task(s)."""
        return any(t.bound for t in self.templates)

    def template(self, template_id: str) -> Template:
        """The template with that id."""
        for t in self.templates:
            if t.id == template_id:
                return t
        raise unknown_name(f"template id in set {self.name!r}", template_id, self.ids)

    def render(self, template: Template | str, attribute: str, task: str | None = None) -> str:
        """A full sentence (no blank) for one attribute and one task (left out: the one task
        a template is bound to).

        Examples
        --------
        >>> from biasamp.templates import load_template_set
        >>> s = load_template_set("wang2021")
        >>> s.render("present-08-old", "they", "nurse")
        'they is an old nurse.'
        >>> load_template_set("adjectives").render("past-08-old", "they", "nurse")
        'They were an old nurse.'
        >>> load_template_set("winogender").render("technician.customer.1", "they")
        'The technician told the customer that they could pay with cash.'
        """
        t = self.template(template) if isinstance(template, str) else template
        if not (isinstance(attribute, str) and attribute in ATTRIBUTES):
            allowed = "{" + ", ".join(map(repr, ATTRIBUTES)) + "}"
            raise BiasampError(
                f"attribute must be one of {allowed}; got {attribute!r}{attribute_hint(attribute)}"
            )
        if task is None:
            if len(t.tasks) != 1:
                raise BiasampError(
                    f"task is required for template {t.id!r} (it is bound to "
                    f"{len(t.tasks)} tasks); got None"
                )
            task = t.tasks[0]
        return "".join(
            render_parts(t, attribute, str(task), agreement=self.agreement, article=self.article)
        )

    def select(
        self, *, family: str | None = None, tense: str | None = None, group: str | None = None
    ) -> TemplateSet:
        """The subset of templates with that family, tense and/or group."""
        keep = tuple(
            t
            for t in self.templates
            if family in (None, t.family)
            and tense in (None, t.tense)
            and (group is None or group in t.groups)
        )
        if not keep:
            fams = sorted({t.family for t in self.templates})
            tenses = sorted({t.tense for t in self.templates})
            groups = sorted({g for t in self.templates for g in t.groups})
            raise BiasampError(
                f"no template of set {self.name!r} has family={family!r}, "
                f"tense={tense!r} and group={group!r}; families: {fams}, "
                f"tenses: {tenses}, groups: {groups}"
            )
        selected = {"family": family, "tense": tense, "group": group}
        return replace(self, templates=keep, provenance={**self.provenance, "selected": selected})


def _surface(slot: Slot, attribute, task: str, agreement: bool) -> str | None:
    """One slot rendered for a pronoun or a group's realisation (``attribute``) and a task."""
    if slot.kind == "attribute" and not isinstance(attribute, str):
        text = attribute.form(slot.name)
    elif slot.kind == "attribute" and slot.name not in ATTRIBUTE_FORMS:
        raise BiasampError(
            f"the pronoun {attribute!r} has no realisation for the group slot {{{slot.name}}}: "
            "probe a group template set with groups (e.g. attributes = white,black,asian)"
        )
    elif slot.kind == "attribute":
        text = ATTRIBUTE_FORMS[slot.name][attribute]
    elif slot.kind == "verb":
        text = verb_form(slot.forms or VERB_FORMS[slot.name], attribute, agreement)
    elif slot.kind == "article":
        return None  # chosen once the following word is rendered
    else:
        text = task
    return text[:1].upper() + text[1:] if slot.capital else text


def render_parts(t: Template, attribute, task: str, *, agreement: bool, article: str) -> list[str]:
    """Every part of ``t`` rendered (articles chosen by the following word)."""
    out = [_surface(p, attribute, task, agreement) if isinstance(p, Slot) else p for p in t.parts]
    for i in range(len(out) - 1, -1, -1):  # right to left: "{a} {a} x" is not useful but safe
        p = t.parts[i]
        if isinstance(p, Slot) and p.kind == "article":
            following = "".join(s for s in out[i + 1 :] if s is not None).lstrip()
            m = _WORD_RE.match(following)
            if not m or not re.search(r"\w", m.group(0)):
                raise BiasampError(
                    f"template {t.id!r}: the article slot {p.raw} must be followed "
                    f"by a word; text {t.text!r}"
                )
            art = article_for(m.group(0), article)
            out[i] = art[0].upper() + art[1:] if p.capital else art
    return out  # type: ignore[return-value]
