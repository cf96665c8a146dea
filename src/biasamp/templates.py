"""Template sets, attribute forms and task vocabularies: which sentences are probed.

A *template set* is one TOML file in ``templates/`` (format: ``templates/README.md``):
set metadata (name, description, source, year, license, agreement, article rule, the
slots masked per direction) and ``[[template]]`` entries (id, text, family, tense,
source). Template texts use named slots:

==========================  =======================================================
slot                        renders as
==========================  =======================================================
``{attribute}``             the pronoun: he / she / they
``{attribute_possessive}``  his / her / their
``{attribute_noun}``        man / woman / person
``{be}``, ``{was}``         is / are, was / were, agreeing with the attribute when the
                            set has ``agreement = true`` (compat sets render "they is")
``{task}``                  the task word (occupation)
``{a}``                     "a" or "an" for the FOLLOWING word
==========================  =======================================================

A slot written with a capital first letter (``{Attribute}``, ``{A}``) renders
capitalised. For a direction, the *blank* (:data:`BLANK`) replaces the masked span:
for task->attribute it covers every slot that depends on the attribute (the pronoun and,
with agreement, its verb, so "[BLANK] a nurse." cannot leak the answer through "are");
for attribute->task it covers the task. The candidates are the surface strings of that
span, one per attribute (T->A) or per task (A->T).

A *task vocabulary* is a list of task words (occupations) with an optional
male_biased / female_biased group per word: the shipped ones are described by a TOML
file in ``templates/tasks/``; a user's CSV/TSV (column ``task`` or ``occupation``,
optional ``group``) or TXT file (one word per line) works too.

References
----------
.. [1] Wang, A. and Russakovsky, O. "Directional Bias Amplification." ICML 2021, Sec. 5.3.
.. [2] Lu, K. et al. "Gender Bias in Neural Natural Language Processing." 2019,
       arXiv:1807.11714 (supplement: the "ate because ... was hungry" sentences).
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from ._data import data_dir
from ._errors import BiasampError, MissingDependencyError
from ._registry import did_you_mean, unknown_name

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_FORMS",
    "BLANK",
    "DIRECTIONS",
    "SLOTS",
    "TaskVocabulary",
    "Template",
    "TemplateSet",
    "build_prompts",
    "indefinite_article",
    "list_task_sets",
    "list_template_sets",
    "load_tasks",
    "load_template_set",
    "normalize_direction",
    "render_sentences",
    "resolve_attributes",
]

log = logging.getLogger(__name__)

try:  # Python >= 3.11
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml
    except ModuleNotFoundError:
        _toml = None

#: The marker that stands for the masked span in a prompt; the scorer replaces it
#: with the model's mask token(s).
BLANK = "[BLANK]"

#: Attribute identities known to the templates, in canonical order.
ATTRIBUTES = ("he", "she", "they")

#: Surface form of each attribute for each attribute slot.
ATTRIBUTE_FORMS = MappingProxyType({
    "attribute": MappingProxyType({"he": "he", "she": "she", "they": "they"}),
    "attribute_possessive": MappingProxyType({"he": "his", "she": "her", "they": "their"}),
    "attribute_noun": MappingProxyType({"he": "man", "she": "woman", "they": "person"}),
})

# verb slot -> (form without agreement / singular, plural form used for "they" with agreement)
_VERBS = {"be": ("is", "are"), "was": ("was", "were")}

#: Every slot name a template may use (lower-case; a capitalised first letter is allowed).
SLOTS = ("a", "attribute", "attribute_noun", "attribute_possessive", "be", "task", "was")

#: Canonical direction names and their accepted aliases.
DIRECTIONS = ("attribute_to_task", "task_to_attribute")
_DIRECTION_ALIASES = {"attribute_to_task": "attribute_to_task", "A->T": "attribute_to_task",
                      "task_to_attribute": "task_to_attribute", "T->A": "task_to_attribute"}

_ARTICLE_RULES = ("sound", "wang2021")
_GROUPS = ("male_biased", "female_biased")

_SET_REQUIRED = ("name", "description", "source", "year", "license", "agreement")
_SET_OPTIONAL = ("article", "mask", "url", "citation", "notes", "transcribed")
_TEMPLATE_KEYS = ("id", "text", "family", "tense", "source", "mask")
_GENERATE_KEYS = ("id_prefix", "text", "words", "words_file", "duplicates", "family", "tense",
                  "source", "mask")
_VOCAB_REQUIRED = ("name", "description", "file", "word_column", "source", "year", "license")
_VOCAB_OPTIONAL = ("group_column", "url", "notes")

_SLOT_RE = re.compile(r"\{([^{}]*)\}")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")

# ---------------------------------------------------------------------------------------
# a / an
# ---------------------------------------------------------------------------------------

#: Words spelled with a consonant letter but spoken with a vowel sound -> "an" (matched
#: on the lower-cased word, as whole words or as prefixes).
AN_WORDS = frozenset({"heir", "heiress", "heirloom", "herb", "honest", "honestly", "honesty",
                      "honor", "honorable", "honorary", "honored", "honour", "honourable",
                      "honoured", "hour", "hourly", "hours"})
_AN_PREFIXES = ("honest", "honor", "honour", "hour", "heir")
#: Initialisms read letter by letter whose first letter name starts with a vowel sound
#: (matched case-sensitively, e.g. "an MBA", "an RN").
AN_INITIALISMS = frozenset({"FBI", "HR", "LLM", "MBA", "MD", "MP", "MRI", "NGO", "NHS", "RN",
                            "SUV", "X-ray"})
#: Words spelled with a vowel letter but spoken with a consonant sound -> "a".
A_WORDS = frozenset({"eucalyptus", "eulogy", "euphoric", "euro", "european", "ewe", "once",
                     "one", "ubiquitous", "ukrainian", "unanimous", "unicorn", "uniform",
                     "union", "unique", "unit", "united", "universal", "university", "uranium",
                     "urinal", "usable", "usage", "use", "used", "useful", "useless", "user",
                     "usual", "usually", "utensil", "utility", "utilized", "utopian"})
_A_PREFIXES = ("eu", "one-", "uni", "usa", "use", "usu", "uti", "ubi", "ukr", "ura", "uri")
# "uni" words where "un-" is the negating prefix are spoken with a vowel: "an unimportant"
_A_PREFIX_EXCEPTIONS = ("unim", "unin", "unid")


def _one_of(values: Iterable[str]) -> str:
    """``{'a', 'b'}`` in a fixed order (a set's repr would change from run to run)."""
    return "{" + ", ".join(repr(v) for v in values) + "}"


def indefinite_article(word: str, *, rule: str = "sound") -> str:
    """Return ``"a"`` or ``"an"`` for the word that follows the article.

    Parameters
    ----------
    word : str
        The following word (trailing punctuation is ignored).
    rule : {"sound", "wang2021"}, default "sound"
        ``"wang2021"`` is the paper's rule: "an" iff the word starts with a lower-case
        vowel letter (a, e, i, o, u), so "French" -> "a" and "Old" -> "a".
        ``"sound"`` starts from the vowel-letter rule (any case) and applies a small list
        of exceptions by sound: :data:`AN_WORDS` ("an hour", "an honest"), the
        initialisms in :data:`AN_INITIALISMS` ("an MBA") and :data:`A_WORDS` ("a
        university", "a European", "a one-way"), also as prefixes ("honestly",
        "universal"). Words starting with a digit get "a".

    Returns
    -------
    str
        ``"a"`` or ``"an"``.

    Examples
    --------
    >>> [indefinite_article(w) for w in ("old", "hour", "university", "MBA", "French")]
    ['an', 'an', 'a', 'an', 'a']
    >>> indefinite_article("Old", rule="wang2021"), indefinite_article("old", rule="wang2021")
    ('a', 'an')
    """
    if rule not in _ARTICLE_RULES:
        raise BiasampError(f"rule must be one of {_one_of(_ARTICLE_RULES)}; got {rule!r}")
    token = str(word).strip().strip(".,;:!?\"'()[]")
    if not token:
        raise BiasampError(f"word must contain a letter to choose a/an; got {word!r}")
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


# ---------------------------------------------------------------------------------------
# data model
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Slot:
    name: str          # canonical lower-case name
    capital: bool      # written with a capital first letter

    @property
    def raw(self) -> str:
        return "{" + (self.name[0].upper() + self.name[1:] if self.capital else self.name) + "}"


def _parse_text(text: str, where: str) -> tuple[Any, ...]:
    """Split a template text into literal strings and :class:`_Slot` objects."""
    parts: list[Any] = []
    pos = 0
    for m in _SLOT_RE.finditer(text):
        literal = text[pos:m.start()]
        if "{" in literal or "}" in literal:
            raise BiasampError(f"{where}: unbalanced brace in text {text!r}")
        if literal:
            parts.append(literal)
        raw = m.group(1)
        low = raw[:1].lower() + raw[1:]
        if low not in SLOTS and raw.lower() in SLOTS:
            raise BiasampError(f"{where}: slot {{{raw}}} may only capitalise its first letter "
                               f"(write {{{raw.lower()}}} or {{{raw.lower().capitalize()}}})")
        if low not in SLOTS:
            raise BiasampError(
                f"{where}: unknown slot {{{raw}}}{did_you_mean(low, SLOTS)} in text {text!r}; "
                f"known slots: {', '.join('{' + s + '}' for s in SLOTS)} "
                "(capitalise the first letter for a capitalised rendering)")
        parts.append(_Slot(low, raw != low))
        pos = m.end()
    tail = text[pos:]
    if "{" in tail or "}" in tail:
        raise BiasampError(f"{where}: unbalanced brace in text {text!r}")
    if tail:
        parts.append(tail)
    return tuple(parts)


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
        return [p.name for p in self.parts if isinstance(p, _Slot)]


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
        The a/an rule (see :func:`indefinite_article`).
    provenance : dict
        ``source``, ``year``, ``license`` and any other metadata of the file, plus
        ``file`` and ``sha256`` (and ``words_file``/``words_sha256`` for generated sets).
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
        >>> s = load_template_set("wang2021")
        >>> s.render("present-08-old", "they", "nurse")
        'they is an old nurse.'
        >>> load_template_set("adjectives").render("past-08-old", "they", "nurse")
        'They were an old nurse.'
        """
        t = self.template(template) if isinstance(template, str) else template
        _check_attribute(attribute, "attribute")
        return "".join(_render_parts(t, attribute, str(task), self))

    def select(self, *, family: str | None = None, tense: str | None = None) -> TemplateSet:
        """Return the subset of templates with that family and/or tense (same provenance)."""
        keep = tuple(t for t in self.templates
                     if (family is None or t.family == family) and (tense is None or t.tense == tense))
        if not keep:
            fams = sorted({t.family for t in self.templates})
            tenses = sorted({t.tense for t in self.templates})
            raise BiasampError(f"no template of set {self.name!r} has family={family!r} and "
                               f"tense={tense!r}; families: {fams}, tenses: {tenses}")
        return TemplateSet(self.name, self.description, keep, self.agreement, self.article,
                           {**self.provenance, "selected": {"family": family, "tense": tense}},
                           self.sha256, self.path)


@dataclass(frozen=True)
class TaskVocabulary:
    """An ordered list of task words (occupations) with optional groups.

    Attributes
    ----------
    name, description : str
    words : list of str
        In file order.
    groups : dict
        word -> ``"male_biased"`` / ``"female_biased"`` where the source declares it
        (words without a group are absent).
    provenance : dict
        ``source``, ``year``, ``license``, ``file``, ``sha256`` (of the data file) ...
    sha256 : str
        Hash of the data file's bytes.
    path : pathlib.Path
        The data file.
    """

    name: str
    description: str
    words: list
    groups: dict
    provenance: dict
    sha256: str
    path: Path

    def __len__(self) -> int:
        return len(self.words)


# ---------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------

def _surface(slot: _Slot, attribute: str, task: str, agreement: bool) -> str:
    if slot.name in ATTRIBUTE_FORMS:
        text = ATTRIBUTE_FORMS[slot.name][attribute]
    elif slot.name in _VERBS:
        singular, plural = _VERBS[slot.name]
        text = plural if (agreement and attribute == "they") else singular
    elif slot.name == "task":
        text = task
    else:  # pragma: no cover - articles are resolved by the caller
        raise AssertionError(slot)
    return text[:1].upper() + text[1:] if slot.capital else text


def _render_parts(t: Template, attribute: str, task: str, tset: TemplateSet | _SetInfo) -> list[str]:
    """Render every part of ``t`` to a string (articles resolved by the following word)."""
    out: list[str | None] = []
    for p in t.parts:
        if isinstance(p, _Slot):
            out.append(None if p.name == "a" else _surface(p, attribute, task, tset.agreement))
        else:
            out.append(p)
    for i in range(len(out) - 1, -1, -1):  # right to left: "{a} {a} x" is not useful but safe
        p = t.parts[i]
        if isinstance(p, _Slot) and p.name == "a":
            following = "".join(s for s in out[i + 1:] if s is not None).lstrip()
            m = re.match(r"\S+", following)
            if not m or not re.search(r"\w", m.group(0)):
                raise BiasampError(f"template {t.id!r}: the article slot {p.raw} must be followed "
                                   f"by a word; text {t.text!r}")
            art = indefinite_article(m.group(0), rule=tset.article)
            out[i] = art[0].upper() + art[1:] if p.capital else art
    return out  # type: ignore[return-value]


def _dependent_slots(agreement: bool) -> set[str]:
    dep = set(ATTRIBUTE_FORMS)
    if agreement:
        dep |= set(_VERBS)
    return dep


@dataclass(frozen=True)
class _SetInfo:  # what rendering needs while a set is being built
    agreement: bool
    article: str


def _validate_template(t: Template, info: _SetInfo, where: str) -> None:
    names = t.slot_names()
    if names.count("task") != 1:
        raise BiasampError(f"{where}: text must contain the {{task}} slot exactly once; "
                           f"got {names.count('task')} in {t.text!r}")
    if not any(n in ATTRIBUTE_FORMS for n in names):
        raise BiasampError(f"{where}: text must contain an attribute slot ({{attribute}}, "
                           f"{{attribute_possessive}} or {{attribute_noun}}); got {t.text!r}")
    if any(n in _VERBS for n in names) and "attribute" not in names:
        raise BiasampError(f"{where}: the verb slots {{be}}/{{was}} agree with the pronoun and "
                           f"need an {{attribute}} slot; got {t.text!r}")
    dependent = _dependent_slots(info.agreement)
    for direction in DIRECTIONS:
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
        present_dep = {n for n in names if n in dependent}
        if direction == "task_to_attribute":
            if "task" in masked:
                raise BiasampError(f"{where}: mask.task_to_attribute must not contain 'task'")
            missing = sorted(present_dep - set(masked))
            if missing:
                raise BiasampError(
                    f"{where}: mask.task_to_attribute must cover every slot that depends on the "
                    f"attribute, else the prompt leaks the answer; missing {missing} "
                    f"(agreement={info.agreement}) in {t.text!r}")
        else:
            if "task" not in masked:
                raise BiasampError(f"{where}: mask.attribute_to_task must contain 'task'")
            leaking = sorted(set(masked) & present_dep)
            if leaking:
                raise BiasampError(f"{where}: mask.attribute_to_task must not cover attribute "
                                   f"slots {leaking}")
        # contiguity: no unmasked slot between the first and last masked slot
        idx = [i for i, p in enumerate(t.parts) if isinstance(p, _Slot) and p.name in masked]
        for p in t.parts[idx[0]:idx[-1] + 1]:
            if isinstance(p, _Slot) and p.name not in masked:
                raise BiasampError(f"{where}: mask.{direction} {list(masked)} is not contiguous: "
                                   f"slot {p.raw} lies inside the masked span of {t.text!r}")
        # an unmasked article right before the blank would leak the masked word's sound
        for i, p in enumerate(t.parts):
            if isinstance(p, _Slot) and p.name == "a" and p.name not in masked:
                nxt = next((q for q in t.parts[i + 1:]
                            if isinstance(q, _Slot) or q.strip()), None)
                if isinstance(nxt, _Slot) and nxt.name in masked:
                    raise BiasampError(
                        f"{where}: the article {p.raw} directly precedes the masked slot "
                        f"{nxt.raw} for {direction}, so a/an would leak the answer; put a word "
                        f"between them, use 'the', or mask the article too ({t.text!r})")
    # a trial rendering catches the rest (e.g. an article with no following word)
    for attribute in ATTRIBUTES:
        _render_parts(t, attribute, "nurse", info)


# ---------------------------------------------------------------------------------------
# loading template sets
# ---------------------------------------------------------------------------------------

def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _registry(folder: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted(folder.glob("*.toml"))}


def list_template_sets() -> list[str]:
    """Names of the template sets shipped in ``templates/``.

    Examples
    --------
    >>> list_template_sets()
    ['adjectives', 'adjectives-large', 'lu2019', 'lu2019-extended', 'wang2021']
    """
    return sorted(_registry(data_dir("templates")))


def list_task_sets() -> list[str]:
    """Names of the task vocabularies shipped in ``templates/tasks/``.

    Examples
    --------
    >>> list_task_sets()
    ['winobias32', 'winobias40', 'winogender60']
    """
    return sorted(_registry(data_dir("templates") / "tasks"))


def _resolve_file(name_or_path: str | Path, registry: dict[str, Path], kind: str,
                  param: str) -> Path:
    if isinstance(name_or_path, Path):
        path = name_or_path
    else:
        if not isinstance(name_or_path, str) or not name_or_path.strip():
            raise BiasampError(f"{param} must be a {kind} name or a file path; got {name_or_path!r}")
        if name_or_path in registry:
            return registry[name_or_path]
        path = Path(name_or_path).expanduser()
        looks_like_path = any(c in name_or_path for c in "/\\") or path.suffix != ""
        if not looks_like_path and not path.exists():
            raise unknown_name(kind, name_or_path, registry)
    if not path.is_file():
        raise BiasampError(f"{param}: {kind} file not found: {str(path)!r}")
    return path


def _read_toml(path: Path, kind: str) -> tuple[dict, bytes]:
    if _toml is None:  # pragma: no cover - Python 3.10 without tomli
        raise MissingDependencyError("reading TOML files on Python 3.10 needs the 'tomli' "
                                     "package: pip install tomli")
    data = path.read_bytes()
    try:
        doc = _toml.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, _toml.TOMLDecodeError) as exc:
        raise BiasampError(f"malformed {kind} file {str(path)!r}: {exc}") from None
    return doc, data


def _check_keys(table: Any, allowed: Sequence[str], required: Sequence[str], where: str) -> dict:
    if not isinstance(table, dict):
        raise BiasampError(f"{where} must be a table; got {type(table).__name__}")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise BiasampError(f"{where}: unknown key(s) {unknown}{did_you_mean(unknown[0], allowed)}; "
                           f"allowed: {', '.join(allowed)}")
    missing = [k for k in required if k not in table]
    if missing:
        raise BiasampError(f"{where}: missing required key(s) {missing}")
    return table


def _str_field(table: dict, key: str, where: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise BiasampError(f"{where}: {key} must be a non-empty string; got {value!r}")
    return value


def _check_metadata(meta: dict, where: str) -> None:
    for key in ("description", "source", "license"):
        _str_field(meta, key, where)
    year = meta["year"]
    if isinstance(year, bool) or not isinstance(year, int):
        raise BiasampError(f"{where}: year must be an integer; got {year!r}")


def _parse_mask(value: Any, where: str, default: dict | None) -> dict | None:
    if value is None:
        return default
    if not isinstance(value, dict):
        raise BiasampError(f"{where}: mask must be a table with keys {list(DIRECTIONS)}; got {value!r}")
    out = dict(default or {})
    for key, names in value.items():
        if key not in DIRECTIONS:
            raise BiasampError(f"{where}: mask key must be one of {_one_of(DIRECTIONS)}; got {key!r}")
        if (not isinstance(names, list) or not names
                or not all(isinstance(n, str) for n in names)):
            raise BiasampError(f"{where}: mask.{key} must be a non-empty list of slot names; "
                               f"got {names!r}")
        out[key] = tuple(n[:1].lower() + n[1:] for n in names)
    return out


def _default_mask(parts: tuple, agreement: bool) -> dict:
    dep = _dependent_slots(agreement)
    t2a = tuple(dict.fromkeys(p.name for p in parts if isinstance(p, _Slot) and p.name in dep))
    return {"task_to_attribute": t2a, "attribute_to_task": ("task",)}


def _read_words_file(path: Path, where: str) -> tuple[list[str], str]:
    if not path.is_file():
        raise BiasampError(f"{where}: words_file not found: {str(path)!r}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BiasampError(f"{where}: words_file {str(path)!r} is not UTF-8: {exc}") from None
    words = [w.strip() for w in text.splitlines()]
    return [w for w in words if w and not w.startswith("#")], _sha256(data)


def _expand_generator(gen: dict, k: int, base: Path, provenance: dict) -> list[dict]:
    where = f"[[generate]] #{k + 1}"
    _check_keys(gen, _GENERATE_KEYS, ("id_prefix", "text"), where)
    if ("words" in gen) == ("words_file" in gen):
        raise BiasampError(f"{where}: give exactly one of 'words' (a list) or 'words_file'")
    if "words" in gen:
        words = gen["words"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise BiasampError(f"{where}: words must be a list of strings; got {words!r}")
        words = [w.strip() for w in words]
    else:
        wpath = base / _str_field(gen, "words_file", where)
        words, digest = _read_words_file(wpath, where)
        provenance.setdefault("words_files", {})[gen["words_file"]] = digest
    if not words or not all(words):
        raise BiasampError(f"{where}: the word list is empty or has an empty word")
    policy = gen.get("duplicates", "error")
    if policy not in ("error", "drop"):
        raise BiasampError(f"{where}: duplicates must be one of {{'error', 'drop'}}; got {policy!r}")
    text = _str_field(gen, "text", where)
    if "{word}" not in text:
        raise BiasampError(f"{where}: text must contain the {{word}} placeholder; got {text!r}")
    seen: dict[str, int] = {}
    dropped: list[str] = []
    out = []
    for line_no, word in enumerate(words, 1):
        if any(c in word for c in "{}"):
            raise BiasampError(f"{where}: word {word!r} contains a brace")
        if word in seen:
            if policy == "error":
                raise BiasampError(f"{where}: duplicate word {word!r} (entries {seen[word]} and "
                                   f"{line_no}); set duplicates = \"drop\" to keep the first")
            dropped.append(word)
            continue
        seen[word] = line_no
        entry = {"id": f"{gen['id_prefix']}{line_no:04d}-{word}", "text": text.replace("{word}", word)}
        for key in ("family", "tense", "source", "mask"):
            if key in gen:
                entry[key] = gen[key]
        out.append(entry)
    if dropped:
        provenance.setdefault("dropped_duplicates", []).extend(dropped)
        log.info("%s: dropped %d duplicate word(s): %s", where, len(dropped), ", ".join(dropped))
    return out


def load_template_set(name_or_path: str | Path) -> TemplateSet:
    """Load a template set by name (see :func:`list_template_sets`) or from a TOML file.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        A shipped set's name or the path of a TOML file in the documented format.

    Returns
    -------
    TemplateSet

    Raises
    ------
    BiasampError
        Unknown name (with "did you mean"), missing file, malformed TOML, unknown or
        missing keys, unknown slots, duplicate ids, a mask that leaks the answer.

    Examples
    --------
    >>> s = load_template_set("wang2021")
    >>> len(s), s.agreement, s.templates[0].text
    (20, False, '{attribute} {be} {a} new {task}.')
    """
    path = _resolve_file(name_or_path, _registry(data_dir("templates")), "template set",
                         "template_set")
    doc, raw = _read_toml(path, "template set")
    where_file = f"template set file {str(path)!r}"
    _check_keys(doc, ("set", "template", "generate"), ("set",), where_file)
    meta = _check_keys(doc["set"], _SET_REQUIRED + _SET_OPTIONAL, _SET_REQUIRED,
                       f"{where_file} [set]")
    name = _str_field(meta, "name", f"{where_file} [set]")
    _check_metadata(meta, f"{where_file} [set]")
    if not isinstance(meta["agreement"], bool):
        raise BiasampError(f"{where_file} [set]: agreement must be true or false; "
                           f"got {meta['agreement']!r}")
    article = meta.get("article", "sound")
    if article not in _ARTICLE_RULES:
        raise BiasampError(f"{where_file} [set]: article must be one of {_one_of(_ARTICLE_RULES)}; "
                           f"got {article!r}")
    info = _SetInfo(meta["agreement"], article)
    set_mask = _parse_mask(meta.get("mask"), f"{where_file} [set]", None)
    provenance = {k: v for k, v in meta.items() if k not in ("mask",)}
    entries = doc.get("template", [])
    if not isinstance(entries, list):
        raise BiasampError(f"{where_file}: 'template' must be an array of tables ([[template]])")
    entries = list(entries)
    gens = doc.get("generate", [])
    if not isinstance(gens, list):
        raise BiasampError(f"{where_file}: 'generate' must be an array of tables ([[generate]])")
    for k, gen in enumerate(gens):
        entries += _expand_generator(gen, k, path.parent, provenance)
    if not entries:
        raise BiasampError(f"{where_file}: the set has no templates (add [[template]] entries)")
    templates = []
    seen: set[str] = set()
    for k, entry in enumerate(entries):
        where = f"{where_file} template #{k + 1}"
        _check_keys(entry, _TEMPLATE_KEYS, ("id", "text"), where)
        tid = _str_field(entry, "id", where)
        where = f"{where_file} template {tid!r}"
        if not _ID_RE.match(tid):
            raise BiasampError(f"{where}: id must be letters, digits, '-', '_' or '.'; got {tid!r}")
        if tid in seen:
            raise BiasampError(f"{where_file}: duplicate template id {tid!r}")
        seen.add(tid)
        text = _str_field(entry, "text", where)
        if BLANK in text:
            raise BiasampError(f"{where}: text must not contain {BLANK!r}; got {text!r}")
        parts = _parse_text(text, where)
        default = dict(set_mask) if set_mask else {}
        inferred = _default_mask(parts, info.agreement)
        mask = _parse_mask(entry.get("mask"), where, {**inferred, **default})
        t = Template(id=tid, text=text,
                     family=_str_field(entry, "family", where, "default"),
                     tense=_str_field(entry, "tense", where, "unspecified"),
                     source=_str_field(entry, "source", where, meta["source"]),
                     mask=MappingProxyType(mask), parts=parts)
        _validate_template(t, info, where)
        templates.append(t)
    digest = _sha256(raw)
    provenance.update(file=path.name, sha256=digest, n_templates=len(templates))
    log.debug("loaded template set %r (%d templates) from %s", name, len(templates), path)
    return TemplateSet(name=name, description=str(meta["description"]), templates=tuple(templates),
                       agreement=info.agreement, article=article, provenance=provenance,
                       sha256=digest, path=path)


# ---------------------------------------------------------------------------------------
# task vocabularies
# ---------------------------------------------------------------------------------------

def _validate_words(words: list[str], where: str) -> None:
    if not words:
        raise BiasampError(f"{where}: the vocabulary is empty")
    seen: dict[str, int] = {}
    for i, w in enumerate(words, 1):
        if not w:
            raise BiasampError(f"{where}: entry {i} is empty")
        if any(c in w for c in "{}") or BLANK in w:
            raise BiasampError(f"{where}: entry {i} {w!r} contains a brace or {BLANK!r}")
        if w in seen:
            raise BiasampError(f"{where}: duplicate word {w!r} (entries {seen[w]} and {i})")
        seen[w] = i


def _read_table(path: Path, word_column: str | None, group_column: str | None,
                where: str) -> tuple[list[str], dict[str, str]]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BiasampError(f"{where}: not UTF-8: {exc}") from None
    if path.suffix.lower() == ".txt":
        words = [w.strip() for w in text.splitlines()]
        return [w for w in words if w and not w.startswith("#")], {}
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise BiasampError(f"{where}: the file is empty (a header row is required)")
    header = [h.strip() for h in rows[0]]
    if word_column is None:
        word_column = next((c for c in ("task", "occupation") if c in header), None)
        if word_column is None:
            raise BiasampError(f"{where}: needs a 'task' or 'occupation' column; columns are "
                               f"{header}")
        if group_column is None and "group" in header:
            group_column = "group"
    for col in (word_column, group_column):
        if col is not None and col not in header:
            raise BiasampError(f"{where}: column {col!r} not found; columns are {header}")
    wi = header.index(word_column)
    gi = header.index(group_column) if group_column is not None else None
    words, groups = [], {}
    for line_no, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise BiasampError(f"{where}: row {line_no} has {len(row)} fields, the header has "
                               f"{len(header)}: {row!r}")
        word = row[wi].strip()
        words.append(word)
        if gi is not None:
            g = row[gi].strip()
            if g:
                if g not in _GROUPS:
                    raise BiasampError(f"{where}: row {line_no}: {group_column} must be one of "
                                       f"{_one_of(_GROUPS)} or empty; got {g!r}")
                groups[word] = g
    return words, groups


def load_tasks(name_or_path: str | Path) -> TaskVocabulary:
    """Load a task vocabulary by name (see :func:`list_task_sets`) or from a file.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        A shipped vocabulary's name, or a file: ``.csv``/``.tsv`` with a header and a
        ``task`` (or ``occupation``) column and an optional ``group`` column
        (``male_biased``, ``female_biased`` or empty); ``.txt`` with one word per line
        (blank lines and ``#`` comments ignored); or a ``.toml`` description like the
        shipped ones.

    Returns
    -------
    TaskVocabulary

    Examples
    --------
    >>> v = load_tasks("winobias32")
    >>> len(v), v.words[:3], v.groups["nurse"]
    (32, ['janitor', 'cook', 'mover'], 'female_biased')
    """
    path = _resolve_file(name_or_path, _registry(data_dir("templates") / "tasks"),
                         "task vocabulary", "tasks")
    if path.suffix.lower() == ".toml":
        doc, raw = _read_toml(path, "task vocabulary")
        where_file = f"task vocabulary file {str(path)!r}"
        _check_keys(doc, ("vocabulary",), ("vocabulary",), where_file)
        meta = _check_keys(doc["vocabulary"], _VOCAB_REQUIRED + _VOCAB_OPTIONAL, _VOCAB_REQUIRED,
                           f"{where_file} [vocabulary]")
        name = _str_field(meta, "name", where_file)
        _check_metadata(meta, f"{where_file} [vocabulary]")
        data_path = path.parent / _str_field(meta, "file", where_file)
        if not data_path.is_file():
            raise BiasampError(f"{where_file}: data file not found: {str(data_path)!r}")
        words, groups = _read_table(data_path, _str_field(meta, "word_column", where_file),
                                    meta.get("group_column"), f"task file {str(data_path)!r}")
        provenance = {k: v for k, v in meta.items()}
        provenance["metadata_file"] = path.name
        provenance["metadata_sha256"] = _sha256(raw)
        description = str(meta["description"])
    else:
        data_path = path
        words, groups = _read_table(path, None, None, f"task file {str(path)!r}")
        name = path.stem
        description = f"user task vocabulary from {path.name}"
        provenance = {"name": name, "source": str(path)}
    _validate_words(words, f"task vocabulary {name!r} ({data_path.name})")
    digest = _sha256(data_path.read_bytes())
    provenance.update(file=data_path.name, sha256=digest, n_words=len(words))
    return TaskVocabulary(name=name, description=description, words=words, groups=groups,
                          provenance=provenance, sha256=digest, path=data_path)


# ---------------------------------------------------------------------------------------
# attributes, directions, prompts
# ---------------------------------------------------------------------------------------

def _attribute_hint(a: Any) -> str:
    low = str(a).strip().lower()
    return f" (did you mean {low!r}?)" if low in ATTRIBUTES else did_you_mean(str(a), ATTRIBUTES)


def _check_attribute(a: Any, param: str) -> None:
    if a not in ATTRIBUTES:
        raise BiasampError(f"{param} must be one of {_one_of(ATTRIBUTES)}; got {a!r}"
                           f"{_attribute_hint(a)}")


def resolve_attributes(spec: str | Iterable[str]) -> list[str]:
    """Turn ``"he,she,they"`` (or a list) into a validated list of attributes.

    Parameters
    ----------
    spec : str or iterable of str
        Comma-separated names or a sequence; at least two distinct attributes out of
        ``he``, ``she``, ``they``. Order is kept (it is the column order downstream).

    Returns
    -------
    list of str

    Examples
    --------
    >>> resolve_attributes("he, she,they")
    ['he', 'she', 'they']
    >>> resolve_attributes(["she", "he"])
    ['she', 'he']
    """
    if isinstance(spec, str):
        items = [s.strip() for s in spec.split(",")]
    elif isinstance(spec, Iterable):
        items = list(spec)
    else:
        raise BiasampError(f"attributes must be a comma-separated string or a list; got {spec!r}")
    for a in items:
        if not isinstance(a, str) or a not in ATTRIBUTES:
            raise BiasampError(f"attributes must be a subset of {_one_of(ATTRIBUTES)}; got {a!r}"
                               f"{_attribute_hint(a)} in {spec!r}")
    if len(set(items)) != len(items):
        raise BiasampError(f"attributes must not repeat a name; got {spec!r}")
    if len(items) < 2:
        raise BiasampError(f"attributes must name at least two attributes; got {spec!r}")
    return items


def normalize_direction(direction: str) -> str:
    """Return the canonical direction name (aliases ``A->T``, ``T->A`` accepted).

    >>> normalize_direction("T->A")
    'task_to_attribute'
    """
    if direction not in _DIRECTION_ALIASES:
        raise BiasampError(f"direction must be one of {_one_of(_DIRECTION_ALIASES)}; got {direction!r}")
    return _DIRECTION_ALIASES[direction]


def _as_set(template_set: TemplateSet | str | Path) -> TemplateSet:
    if isinstance(template_set, TemplateSet):
        return template_set
    return load_template_set(template_set)


def _as_tasks(tasks: TaskVocabulary | str | Path | Sequence[str]) -> list[str]:
    if isinstance(tasks, TaskVocabulary):
        return list(tasks.words)
    if isinstance(tasks, (str, Path)):
        return list(load_tasks(tasks).words)
    try:
        words = list(tasks)
    except TypeError:
        raise BiasampError(f"tasks must be a vocabulary name, a file path or a list of words; "
                           f"got {tasks!r}") from None
    if not all(isinstance(w, str) for w in words):
        raise BiasampError(f"tasks must be strings; got {words!r}")
    words = [w.strip() for w in words]
    _validate_words(words, "tasks")
    return words


def _masked(t: Template, direction: str, attribute: str, task: str,
            tset: TemplateSet) -> tuple[str, str]:
    """Return (prompt with BLANK, text of the masked span) for one rendering."""
    rendered = _render_parts(t, attribute, task, tset)
    masked = t.mask[direction]
    idx = [i for i, p in enumerate(t.parts) if isinstance(p, _Slot) and p.name in masked]
    lo, hi = idx[0], idx[-1] + 1
    prompt = "".join(rendered[:lo]) + BLANK + "".join(rendered[hi:])
    return prompt, "".join(rendered[lo:hi])



def _shared_prompt(t, direction, pairs, tset, *, varying):
    """The one masked prompt of template ``t`` for (attribute, task) ``pairs`` and their spans.

    Only the blank may change along ``pairs``; ``varying`` names what changes (for the error).
    """
    spans = []
    prompt = None
    for a, task in pairs:
        p, span = _masked(t, direction, a, task, tset)
        if prompt is None:
            prompt = p
        elif p != prompt:  # pragma: no cover - excluded by _validate_template
            raise BiasampError(f"template {t.id!r}: the prompt depends on the {varying} "
                               f"outside the blank ({prompt!r} vs {p!r})")
        spans.append(span)
    return prompt, tuple(spans)

def build_prompts(template_set: TemplateSet | str | Path, attributes: str | Sequence[str],
                  tasks: TaskVocabulary | str | Path | Sequence[str], *,
                  direction: str) -> pd.DataFrame:
    """Build the masked prompts and their candidates for one direction.

    Parameters
    ----------
    template_set : TemplateSet or str or pathlib.Path
        A loaded set, a set name or a TOML path.
    attributes : str or sequence of str
        See :func:`resolve_attributes`.
    tasks : TaskVocabulary, str, pathlib.Path or sequence of str
        A vocabulary, its name or path, or the words themselves.
    direction : {"attribute_to_task", "task_to_attribute", "A->T", "T->A"}

    Returns
    -------
    pandas.DataFrame
        Columns ``template_id, direction, attribute, task, prompt, candidates``.
        ``task_to_attribute``: one row per (template, task) in that order,
        ``attribute`` is None and ``candidates`` is a tuple of length
        ``n_attributes`` (in ``attributes`` order). ``attribute_to_task``: one row per
        (template, attribute), ``task`` is None and ``candidates`` has length
        ``n_tasks`` (in ``tasks`` order). ``prompt`` contains :data:`BLANK` once.

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
    direction = normalize_direction(direction)
    tset = _as_set(template_set)
    attrs = resolve_attributes(attributes)
    words = _as_tasks(tasks)
    rows: list[tuple] = []
    for t in tset.templates:
        if direction == "task_to_attribute":
            for task in words:
                prompt, spans = _shared_prompt(t, direction, [(a, task) for a in attrs], tset,
                                               varying="attribute")
                rows.append((t.id, direction, None, task, prompt, spans))
        else:
            for a in attrs:
                prompt, spans = _shared_prompt(t, direction, [(a, task) for task in words], tset,
                                               varying="task")
                rows.append((t.id, direction, a, None, prompt, spans))
    return _frame(rows, ["template_id", "direction", "attribute", "task", "prompt", "candidates"],
                  object_cols=("attribute", "task", "candidates"))


def _frame(rows: list[tuple], columns: list[str], object_cols: Sequence[str]) -> pd.DataFrame:
    cols = list(zip(*rows)) if rows else [()] * len(columns)
    data = {}
    for name, values in zip(columns, cols):
        if name in object_cols:
            data[name] = pd.Series(list(values), dtype=object)
        else:
            data[name] = pd.Series(list(values), dtype="str")
    return pd.DataFrame(data, columns=columns)


def render_sentences(template_set: TemplateSet | str | Path, attributes: str | Sequence[str],
                     tasks: TaskVocabulary | str | Path | Sequence[str]) -> pd.DataFrame:
    """Render every full sentence (no blank) of a set.

    Returns
    -------
    pandas.DataFrame
        Columns ``template_id, attribute, task, sentence``; one row per (template,
        attribute, task), in that nesting order.

    Examples
    --------
    >>> df = render_sentences("wang2021", "he,they", ["nurse"])
    >>> df["sentence"].tolist()[:3]
    ['he is a new nurse.', 'they is a new nurse.', 'he is a known nurse.']
    """
    tset = _as_set(template_set)
    attrs = resolve_attributes(attributes)
    words = _as_tasks(tasks)
    rows = [(t.id, a, task, "".join(_render_parts(t, a, task, tset)))
            for t in tset.templates for a in attrs for task in words]
    return _frame(rows, ["template_id", "attribute", "task", "sentence"], object_cols=())
