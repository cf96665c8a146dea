"""Groups as attributes (docs/groups.md): attribute sets, realisations and their pooling."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, ATTRIBUTES, TASK_TO_ATTRIBUTE
from .._errors import BiasampError
from .._files import (
    check_keys,
    check_metadata,
    data_dir,
    looks_like_path,
    read_toml,
    resolve_name_or_path,
    sha256_bytes,
    str_field,
)
from .._registry import Registry
from ._model import attribute_hint
from ._slots import GROUP_SLOTS

#: What the groups of a set partition (the base-rate sources read it).
KINDS = ("race", "ethnicity", "gender-race")

_SET_REQUIRED = ("name", "description", "source", "year", "license", "kind", "noun")
_SET_OPTIONAL = ("url", "notes")
_GROUP_KEYS = ("terms", "noun", "description")


@dataclass(frozen=True)
class Realisation:
    """One surface form of a group: its term and its person noun.

    >>> r = Realisation("asian", "Asian", "person")
    >>> r.form("group"), r.form("group_noun")
    ('Asian', 'Asian person')
    """

    group: str
    term: str
    noun: str

    def form(self, slot: str) -> str:
        """The rendering of a group slot (:data:`GROUP_SLOTS`)."""
        forms = dict(zip(GROUP_SLOTS, (self.term, f"{self.term} {self.noun}")))
        if slot in forms:
            return forms[slot]
        raise BiasampError(
            f"group {self.group!r} has no realisation for the pronoun slot {{{slot}}}: a group "
            "renders {group} and {group_noun} only; probe groups with a group template set "
            "(templates = 'groups')"
        )


@dataclass(frozen=True)
class AttributeSet:
    """A named set of groups (one TOML file): ``groups`` maps a group to its realisations."""

    name: str
    description: str
    kind: str
    groups: MappingProxyType
    provenance: dict
    path: Path


#: Shipped attribute sets: name -> TOML path (``templates/attributes/*.toml``).
ATTRIBUTE_SETS = Registry(
    "attribute set", files=lambda: data_dir("templates").glob("attributes/*.toml")
)


def list_attribute_sets() -> list[str]:
    """Names of the shipped attribute sets.

    >>> list_attribute_sets()
    ['ethnicity', 'gender-race', 'race']
    """
    return sorted(ATTRIBUTE_SETS.names())


def _realisations(name: str, entry: dict, noun: str, where: str) -> tuple:
    check_keys(entry, _GROUP_KEYS, ("terms",), where)
    terms = entry["terms"]
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise BiasampError(f"{where}: terms must be a list of strings; got {terms!r}")
    if not terms:
        raise BiasampError(
            f"{where}: group {name!r} has no realisation (terms = []); give at least one term"
        )
    bad = [t for t in terms if not t.strip() or t != t.strip() or any(c in t for c in "{}[]")]
    if bad or len(set(terms)) != len(terms):
        raise BiasampError(
            f"{where}: terms must be distinct, non-empty, without surrounding spaces, braces "
            f"or brackets; got {terms!r}"
        )
    own = str_field(entry, "noun", where, noun)
    return tuple(Realisation(name, t, own) for t in terms)


def load_attribute_set(name_or_path: str | os.PathLike) -> AttributeSet:
    """Load a shipped attribute set by name or an attribute-set TOML file by path.

    >>> s = load_attribute_set("race")
    >>> list(s.groups), [r.term for r in s.groups["black"]]
    (['white', 'black', 'asian'], ['Black', 'black', 'African American'])
    """
    path = resolve_name_or_path(name_or_path, ATTRIBUTE_SETS, "attribute set")
    where_file = f"attribute set {str(path)!r}"
    doc, data = read_toml(path, "attribute set")
    check_keys(doc, ("set", "groups"), ("set", "groups"), where_file)
    meta = check_keys(doc["set"], _SET_REQUIRED + _SET_OPTIONAL, _SET_REQUIRED, where_file)
    check_metadata(meta, where_file)
    if meta["kind"] not in KINDS:
        raise BiasampError(f"{where_file}: kind must be one of {KINDS}; got {meta['kind']!r}")
    groups = doc["groups"]
    if not isinstance(groups, dict) or len(groups) < 2:
        raise BiasampError(f"{where_file}: [groups] must hold at least two groups")
    out = {}
    for name, entry in groups.items():
        if name in ATTRIBUTES:
            raise BiasampError(f"{where_file}: a group may not be named like a pronoun: {name!r}")
        out[name] = _realisations(name, entry, meta["noun"], f"{where_file} [groups.{name}]")
    return AttributeSet(
        name=meta["name"],
        description=meta["description"],
        kind=meta["kind"],
        groups=MappingProxyType(out),
        provenance={**meta, "file": str(path), "sha256": sha256_bytes(data)},
        path=path,
    )


def word_groups(name_or_path: str | os.PathLike) -> dict[str, list[str]]:
    """The word groups of ``biasamp count --groups``: group -> its terms (docs/groups.md).

    Examples
    --------
    >>> word_groups("race")["black"]
    ['black', 'african american']
    >>> word_groups("gender-race")["asian-man"]
    ['asian man', 'asian american man']
    """
    s = load_attribute_set(name_or_path)
    terms = [t for rs in s.groups.values() for t in {r.term.lower() for r in rs}]
    shared = len(set(terms)) < len(terms)  # a term of two groups: say the noun too
    return {
        g: list(dict.fromkeys(r.form("group_noun" if shared else "group").lower() for r in rs))
        for g, rs in s.groups.items()
    }


@lru_cache(maxsize=1)
def shipped_groups() -> MappingProxyType:
    """Group name -> its shipped set (names are unique across the shipped sets)."""
    sets = [load_attribute_set(name) for name in list_attribute_sets()]
    return MappingProxyType({g: s for s in sets for g in s.groups})


def uses_groups(t) -> bool:
    """Whether template ``t`` realises groups, not pronouns."""
    return any(n in GROUP_SLOTS for n in t.slot_names())


def is_attribute_set(item) -> bool:
    """Whether an item of ``attributes`` names an attribute set (a shipped name or a path)."""
    return (
        isinstance(item, str)
        and item not in ATTRIBUTES
        and item not in shipped_groups()
        and (item in ATTRIBUTE_SETS or looks_like_path(item))
    )


def checked_sets(attributes, spec) -> tuple[list, dict]:
    """``attributes`` with each set replaced by its groups, and group -> its
    :class:`AttributeSet`; unknown names and mixed kinds (``spec``: as given) are refused."""
    known, names = dict(shipped_groups()), []
    for a in attributes:
        if not is_attribute_set(a):
            names.append(a)
            continue
        path = resolve_name_or_path(a, ATTRIBUTE_SETS, "attributes")
        try:
            s = load_attribute_set(path)
        except BiasampError as exc:
            raise BiasampError(f"attributes: {exc}") from None
        known.update(dict.fromkeys(s.groups, s))
        names += list(s.groups)
    allowed = "{" + ", ".join(map(repr, ATTRIBUTES)) + "}"
    for a in names:
        if not isinstance(a, str) or (a not in ATTRIBUTES and a not in known):
            listing = "; ".join(
                f"{s}: {', '.join(load_attribute_set(s).groups)}" for s in list_attribute_sets()
            )
            raise BiasampError(
                f"attributes must be a subset of {allowed}; got {a!r}"
                f"{attribute_hint(a)} in {spec!r} (or groups of one attribute set, which "
                f"have realisations: {listing})"
            )
    pronouns = [a for a in names if a in ATTRIBUTES]
    if pronouns and len(pronouns) < len(names):
        raise BiasampError(
            f"attributes must be all pronouns or all groups; got pronouns {pronouns} with "
            f"groups {[a for a in names if a not in ATTRIBUTES]}"
        )
    return names, known


def realisations(template_set, attributes) -> dict[str, tuple]:
    """Each attribute's realisations in ``template_set`` (a pronoun: its name; docs/groups.md).

    >>> from biasamp.templates import load_template_set
    >>> forms = realisations(load_template_set("groups"), ["white", "black"])
    >>> {a: len(r) for a, r in forms.items()}
    {'white': 2, 'black': 3}
    """
    tset, attrs = template_set, list(attributes)
    names, known = checked_sets(attrs, attrs)
    pronouns = all(a in ATTRIBUTES for a in names)
    kinds = {uses_groups(t) for t in tset.templates}
    if not pronouns and False in kinds:
        raise BiasampError(
            f"attributes: the groups {names} have no realisation in template set "
            f"{tset.name!r}, whose templates realise pronouns ({{attribute}}, ...); use a "
            "group template set (templates = 'groups')"
        )
    if pronouns and True in kinds:
        raise BiasampError(
            f"attributes: the pronouns {attrs} have no realisation in template set "
            f"{tset.name!r}, whose templates realise groups ({{group}}, {{group_noun}}); probe "
            "groups (e.g. attributes = white,black,asian) or a pronoun template set"
        )
    return {a: (a,) for a in attrs} if pronouns else {a: known[a].groups[a] for a in names}


def attribute_sets_of(attributes) -> list[dict]:
    """The provenance of the attribute sets the groups of ``attributes`` come from."""
    names, known = checked_sets(attributes, attributes)
    sets = {known[a].path: known[a] for a in names if a not in ATTRIBUTES}
    return [
        {k: s.provenance[k] for k in ("name", "kind", "source", "license", "year", "sha256")}
        for s in sets.values()
    ]


def pool_realisations(
    direction: str, prompts: pd.DataFrame, prob: list, log_prob: list, *, sizes: dict
) -> tuple[pd.DataFrame, list, list]:
    """Scored prompt rows of realisations -> rows of groups (one probability per group).

    Parameters
    ----------
    direction
        The canonical direction of ``prompts``.
    prompts
        :func:`~biasamp.templates.build_prompts`' rows of groups with realisations.
    prob, log_prob
        Per row, the candidates' renormalised and raw log probabilities.
    sizes
        Group -> its number of realisations, in attribute order.

    Returns
    -------
    (rows, prob, log_prob)
        Pooled as docs/groups.md says (T->A the sum, A->T the mean over realisations).
    """
    counts = np.asarray(list(sizes.values()))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if direction == TASK_TO_ATTRIBUTE and prompts["attribute"].isna().all():
        out_p = [np.add.reduceat(np.asarray(p, dtype=np.float64), starts) for p in prob]
        out_lp = [
            np.logaddexp.reduceat(np.asarray(lp, dtype=np.float64), starts) for lp in log_prob
        ]
        return prompts, out_p, out_lp
    keys = ["template_id", "attribute"] + (["task"] if direction == TASK_TO_ATTRIBUTE else [])
    frame = prompts.reset_index(drop=True)
    rows, out_p, out_lp = [], [], []
    for _, idx in frame.groupby(keys, sort=False).indices.items():
        rows.append(idx[0])
        lp = np.stack([np.asarray(log_prob[i], dtype=np.float64) for i in idx])
        if direction == ATTRIBUTE_TO_TASK:
            out_p.append(np.mean([np.asarray(prob[i], dtype=np.float64) for i in idx], axis=0))
            out_lp.append(np.logaddexp.reduce(lp, axis=0) - math.log(len(idx)))
        else:
            out_p.append(np.ones(1))
            out_lp.append(np.logaddexp.reduce(lp[:, :1], axis=0))
    return frame.iloc[rows].reset_index(drop=True), out_p, out_lp
