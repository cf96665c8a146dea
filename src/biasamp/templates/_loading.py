"""Loading template sets: the shipped ones by name, any TOML file by path (format:
``templates/README.md``), with ``[[generate]]`` tables expanded into templates."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._conventions import BLANK, DIRECTIONS
from .._errors import BiasampError
from .._files import (
    check_keys,
    check_metadata,
    data_dir,
    read_toml,
    resolve_name_or_path,
    sha256_bytes,
    str_field,
)
from .._registry import Registry
from .._validation import OneOf, check
from ..tasks import read_words
from ._checks import (
    LABEL_RE,
    check_bindings,
    check_template,
    default_mask,
    read_groups,
    read_label_list,
    read_task_binding,
)
from ._model import Template, TemplateSet
from ._slots import ARTICLE_RULES, CONTEXTS, parse_text

log = logging.getLogger("biasamp.templates")

_BINDING_KEYS = ("task", "tasks", "groups", "context")
_SET_META = ("article", "mask", "url", "citation", "notes", "transcribed")
_SET_REQUIRED = ("name", "description", "source", "year", "license", "agreement")
_SET_OPTIONAL = _SET_META + _BINDING_KEYS[1:] + ("converted",)
_TEMPLATE_KEYS = ("id", "text", "family", "tense", "source", "mask") + _BINDING_KEYS
_GENERATE_KEYS = ("id_prefix", "text", "words", "words_file", "duplicates") + _TEMPLATE_KEYS[2:]
_DUPLICATE_POLICIES = ("error", "drop")


#: Shipped template sets: name -> TOML path (``templates/*.toml``).
TEMPLATE_SETS = Registry("template set", files=lambda: data_dir("templates").glob("*.toml"))


def list_template_sets() -> list[str]:
    """Names of the template sets shipped in ``templates/``.

    Examples
    --------
    >>> list_template_sets()
    ['adjectives', 'adjectives-large', 'groups', 'lu2019', 'lu2019-extended', 'wang2021', 'winobias', 'winogender']
    """
    return sorted(TEMPLATE_SETS.names())


def _parse_mask(value: Any, where: str, default: dict | None) -> dict | None:
    if value is None:
        return default
    if not isinstance(value, dict):
        raise BiasampError(
            f"{where}: mask must be a table with keys {list(DIRECTIONS)}; got {value!r}"
        )
    out = dict(default or {})
    for key, names in value.items():
        check(key, OneOf(DIRECTIONS), f"{where}: mask key")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise BiasampError(
                f"{where}: mask.{key} must be a non-empty list of slot names; got {names!r}"
            )
        out[key] = tuple(n[:1].lower() + n[1:] for n in names)
    return out


def _expand_generator(gen: dict, k: int, base: Path, provenance: dict) -> list[dict]:
    """The ``[[template]]`` entries of one ``[[generate]]`` table (one per distinct word)."""
    where = f"[[generate]] #{k + 1}"
    check_keys(gen, _GENERATE_KEYS, ("id_prefix", "text"), where)
    if ("words" in gen) == ("words_file" in gen):
        raise BiasampError(f"{where}: give exactly one of 'words' (a list) or 'words_file'")
    if "words" in gen:
        words = gen["words"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise BiasampError(f"{where}: words must be a list of strings; got {words!r}")
        words = [w.strip() for w in words]
    else:
        wpath = base / str_field(gen, "words_file", where)
        if not wpath.is_file():
            raise BiasampError(f"{where}: words_file not found: {str(wpath)!r}")
        words, data = read_words(wpath, "words")
        provenance.setdefault("words_files", {})[gen["words_file"]] = sha256_bytes(data)
    if not words or not all(words):
        raise BiasampError(f"{where}: the word list is empty or has an empty word")
    policy = check(
        gen.get("duplicates", "error"), OneOf(_DUPLICATE_POLICIES), f"{where}: duplicates"
    )
    text = str_field(gen, "text", where)
    if "{word}" not in text:
        raise BiasampError(f"{where}: text must contain the {{word}} placeholder; got {text!r}")
    shared = {k: gen[k] for k in _TEMPLATE_KEYS[2:] if k in gen}  # family, tense, mask, ...
    seen: dict[str, int] = {}
    dropped: list[str] = []
    out = []
    for line_no, word in enumerate(words, 1):
        if any(c in word for c in "{}"):
            raise BiasampError(f"{where}: word {word!r} contains a brace")
        if word in seen:
            if policy == "error":
                raise BiasampError(
                    f"{where}: duplicate word {word!r} (entries {seen[word]} and "
                    f'{line_no}); set duplicates = "drop" to keep the first'
                )
            dropped.append(word)
            continue
        seen[word] = line_no
        tid = f"{gen['id_prefix']}{line_no:04d}-{word}"
        out.append({"id": tid, "text": text.replace("{word}", word), **shared})
    if dropped:
        provenance.setdefault("dropped_duplicates", []).extend(dropped)
        log.info("%s: dropped %d duplicate word(s): %s", where, len(dropped), ", ".join(dropped))
    return out


def _array(doc: dict, key: str, where_file: str) -> list:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise BiasampError(f"{where_file}: {key!r} must be an array of tables ([[{key}]])")
    return list(value)


def _read_set_meta(doc: dict, where_file: str) -> tuple[dict, str, dict | None]:
    """The checked ``[set]`` table, its a/an rule and its mask."""
    check_keys(doc, ("set", "template", "generate"), ("set",), where_file)
    where = f"{where_file} [set]"
    meta = check_keys(doc["set"], _SET_REQUIRED + _SET_OPTIONAL, _SET_REQUIRED, where)
    str_field(meta, "name", where)
    check_metadata(meta, where)
    if not isinstance(meta["agreement"], bool):
        raise BiasampError(f"{where}: agreement must be true or false; got {meta['agreement']!r}")
    article = check(meta.get("article", "sound"), OneOf(ARTICLE_RULES), f"{where}: article")
    check(meta.get("context", "shared"), OneOf(CONTEXTS), f"{where}: context")
    if "converted" in meta and not isinstance(meta["converted"], dict):
        raise BiasampError(
            f"{where}: converted must be a table ([set.converted]); got {meta['converted']!r}"
        )
    return meta, article, _parse_mask(meta.get("mask"), where, None)


def _templates(entries: list, meta: dict, article: str, where_file: str, *, set_mask) -> list:
    """The checked templates of the ``[[template]]`` entries (and the generated ones)."""
    seen: set[str] = set()
    out = []
    for k, entry in enumerate(entries):
        where = f"{where_file} template #{k + 1}"
        check_keys(entry, _TEMPLATE_KEYS, ("id", "text"), where)
        tid = str_field(entry, "id", where)
        where = f"{where_file} template {tid!r}"
        if not LABEL_RE.match(tid):
            raise BiasampError(f"{where}: id must be letters, digits, '-', '_' or '.'; got {tid!r}")
        if tid in seen:
            raise BiasampError(f"{where_file}: duplicate template id {tid!r}")
        seen.add(tid)
        text = str_field(entry, "text", where)
        if BLANK in text:
            raise BiasampError(f"{where}: text must not contain {BLANK!r}; got {text!r}")
        parts = parse_text(text, where)
        default = {**default_mask(parts, meta["agreement"]), **(set_mask or {})}
        mask = _parse_mask(entry.get("mask"), where, default)
        t = Template(
            id=tid,
            text=text,
            family=str_field(entry, "family", where, "default"),
            tense=str_field(entry, "tense", where, "unspecified"),
            source=str_field(entry, "source", where, meta["source"]),
            mask=MappingProxyType(mask),
            parts=parts,
            tasks=read_task_binding(entry, where),
            groups=read_label_list(entry.get("groups", []), f"{where}: groups"),
            context=check(
                entry.get("context", meta.get("context", "shared")),
                OneOf(CONTEXTS),
                f"{where}: context",
            ),
        )
        check_template(t, meta["agreement"], article, where)
        out.append(t)
    return out


def load_template_set(name_or_path: str | os.PathLike) -> TemplateSet:
    """Load a template set by name (:func:`list_template_sets`) or from a TOML file.

    Parameters
    ----------
    name_or_path
        A shipped set's name or the path of a TOML file (format: ``templates/README.md``).

    Returns
    -------
    TemplateSet

    Examples
    --------
    >>> s = load_template_set("wang2021")
    >>> len(s), s.agreement, s.templates[0].text
    (20, False, '{attribute} {be} {a} new {task}.')
    """
    path = resolve_name_or_path(name_or_path, TEMPLATE_SETS, "template_set")
    doc, raw = read_toml(path, "template set")
    where_file = f"template set file {str(path)!r}"
    meta, article, set_mask = _read_set_meta(doc, where_file)
    provenance = {k: v for k, v in meta.items() if k != "mask"}
    entries = _array(doc, "template", where_file)
    for k, gen in enumerate(_array(doc, "generate", where_file)):
        entries += _expand_generator(gen, k, path.parent, provenance)
    if not entries:
        raise BiasampError(f"{where_file}: the set has no templates (add [[template]] entries)")
    templates = _templates(entries, meta, article, where_file, set_mask=set_mask)
    where = f"{where_file} [set]"
    own_tasks = check_bindings(templates, meta.get("tasks"), where)
    groups = read_groups(meta.get("groups"), templates, where)
    digest = sha256_bytes(raw)
    provenance.update(file=path.name, sha256=digest, n_templates=len(templates))
    log.debug("loaded template set %r (%d templates) from %s", meta["name"], len(templates), path)
    return TemplateSet(
        name=meta["name"],
        description=str(meta["description"]),
        templates=tuple(templates),
        agreement=meta["agreement"],
        article=article,
        provenance=provenance,
        sha256=digest,
        path=path,
        tasks=own_tasks,
        groups=MappingProxyType(groups),
    )
