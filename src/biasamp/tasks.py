"""Task vocabularies (occupations): one loader for templates, base rates, corpus and CLI."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ._conventions import BLANK
from ._errors import BiasampError
from ._files import (
    check_keys,
    check_metadata,
    data_dir,
    decode_text,
    looks_like_path,
    read_toml,
    resolve_name_or_path,
    sha256_bytes,
    str_field,
)
from ._registry import Registry, did_you_mean
from ._validation import check_visible

__all__ = ["TaskVocabulary", "list_task_sets", "load_tasks", "task_aliases"]

#: Groups a vocabulary may declare per word.
GROUPS = ("male_biased", "female_biased")

_VOCAB_REQUIRED = ("name", "description", "file", "word_column", "source", "year", "license")
_VOCAB_OPTIONAL = ("group_column", "url", "notes")


#: Shipped vocabularies: name -> TOML path (``templates/tasks/*.toml``).
TASK_SETS = Registry(
    "task vocabulary",
    extra_names=("a,b,c", "@FILE", "PATH.csv"),
    files=lambda: data_dir("templates").glob("tasks/*.toml"),
)


@dataclass(frozen=True)
class TaskVocabulary:
    """Task words in file order; ``groups``: word -> one of :data:`GROUPS` where the source
    says so; ``sha256`` and ``path``: the data file's (None for words given inline)."""

    name: str
    description: str
    words: list
    groups: dict
    provenance: dict
    sha256: str | None
    path: Path | None

    def __len__(self) -> int:
        return len(self.words)


def list_task_sets() -> list[str]:
    """Names of the shipped task vocabularies.

    >>> list_task_sets()
    ['winobias32', 'winobias40', 'winogender60']
    """
    return sorted(TASK_SETS.names())


def check_words(words: Sequence[str], where: str) -> None:
    """Refuse empty or repeated words and words with braces, the blank or invisible characters."""
    if not words:
        raise BiasampError(f"{where}: the vocabulary is empty")
    seen = {}
    for i, w in enumerate(words, 1):
        if not isinstance(w, str):
            raise BiasampError(f"{where}: entry {i} must be a string; got {w!r}")
        if not w:
            raise BiasampError(f"{where}: entry {i} is empty")
        if any(c in w for c in "{}") or BLANK in w:
            raise BiasampError(f"{where}: entry {i} {w!r} contains a brace or {BLANK!r}")
        check_visible(w, f"{where}: entry {i}")
        if w in seen:
            raise BiasampError(f"{where}: duplicate word {w!r} (entries {seen[w]} and {i})")
        seen[w] = i


def _read(path: Path, kind: str) -> tuple[str, bytes]:
    """The text (a BOM dropped) and the bytes of a UTF-8 file."""
    data = path.read_bytes()
    if b"\x00" in data:
        raise BiasampError(f"{kind} file {str(path)!r}: not a text file (it contains NUL bytes)")
    return decode_text(data, path, kind, "utf-8-sig"), data


def read_words(path: Path, kind: str) -> tuple[list[str], bytes]:
    """The words of a word file (one a line; blank lines and ``#`` comments skipped), bytes."""
    text, data = _read(path, kind)
    words = (w.strip() for w in text.splitlines())
    return [w for w in words if w and not w.startswith("#")], data


def _read_table(
    path: Path, word_column: str | None = None, group_column: str | None = None
) -> tuple[list[str], dict[str, str], bytes]:
    """The words, their groups and the bytes of a task file."""
    if path.suffix.lower() == ".txt":
        words, data = read_words(path, "task")
        return words, {}, data
    text, data = _read(path, "task")
    where = f"task file {str(path)!r}"
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    rows = [
        r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in r)
    ]
    if not rows:
        raise BiasampError(f"{where}: the file is empty (a header row is required)")
    header = [h.strip() for h in rows[0]]
    if word_column is None:
        word_column = next((c for c in ("task", "occupation") if c in header), None)
        if word_column is None:
            raise BiasampError(
                f"{where}: needs a 'task' or 'occupation' column; columns are {header}"
            )
        group_column = "group" if "group" in header else None  # a plain file's optional groups
    for col in (word_column, group_column):
        if col is not None and col not in header:
            raise BiasampError(f"{where}: column {col!r} not found; columns are {header}")
    wi = header.index(word_column)
    gi = header.index(group_column) if group_column is not None else None
    words, groups = [], {}
    for line_no, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise BiasampError(
                f"{where}: row {line_no} has {len(row)} fields, the header has "
                f"{len(header)}: {row!r}"
            )
        word = row[wi].strip()
        words.append(word)
        if gi is not None and (g := row[gi].strip()):
            if g not in GROUPS:
                raise BiasampError(
                    f"{where}: row {line_no}: {group_column} must be one of "
                    f"{', '.join(map(repr, GROUPS))} or empty; got {g!r}"
                )
            groups[word] = g
    return words, groups, data


def _from_toml(path: Path) -> TaskVocabulary:
    doc, raw = read_toml(path, "task vocabulary")
    where_file = f"task vocabulary file {str(path)!r}"
    check_keys(doc, ("vocabulary",), ("vocabulary",), where_file)
    where = f"{where_file} [vocabulary]"
    meta = check_keys(doc["vocabulary"], _VOCAB_REQUIRED + _VOCAB_OPTIONAL, _VOCAB_REQUIRED, where)
    name = str_field(meta, "name", where_file)
    check_metadata(meta, where)
    data_path = (path.parent / str_field(meta, "file", where_file)).resolve()
    if not data_path.is_file():
        raise BiasampError(f"{where_file}: data file not found: {str(data_path)!r}")
    word_column = str_field(meta, "word_column", where_file)
    words, groups, data = _read_table(data_path, word_column, meta.get("group_column"))
    check_words(words, f"task vocabulary {name!r} ({data_path.name})")
    prov = dict(meta, metadata_file=path.name, metadata_sha256=sha256_bytes(raw))
    prov.update(file=data_path.name, sha256=sha256_bytes(data), n_words=len(words))
    return TaskVocabulary(name, meta["description"], words, groups, prov, prov["sha256"], data_path)


def _from_file(path: Path) -> TaskVocabulary:
    if path.suffix.lower() == ".toml":
        return _from_toml(path)
    if path.suffix.lower() not in (".csv", ".tsv", ".txt"):
        raise BiasampError(f"tasks: file {str(path)!r} must end in .csv, .tsv, .txt or .toml")
    words, groups, data = _read_table(path)
    check_words(words, f"task file {str(path)!r}")
    digest = sha256_bytes(data)
    prov = dict(name=path.stem, source=str(path), file=path.name, sha256=digest, n_words=len(words))
    description = f"user task vocabulary from {path.name}"
    return TaskVocabulary(path.stem, description, words, groups, prov, digest, path)


def _inline(words, where: str = "tasks") -> TaskVocabulary:
    words = [w.strip() if isinstance(w, str) else w for w in words]  # inline words enter here
    check_words(words, where)
    provenance = {"name": "custom", "source": "given inline", "n_words": len(words)}
    return TaskVocabulary("custom", "task words given inline", words, {}, provenance, None, None)


def load_tasks(spec) -> TaskVocabulary:
    """Load a task vocabulary.

    Parameters
    ----------
    spec
        A name, a file (``.csv``/``.tsv``/``.txt``/``.toml``: ``templates/README.md``), ``"@FILE"``,
        comma-separated words (one word: ``"nurse,"``) or a list of words.

    Returns
    -------
    TaskVocabulary

    Examples
    --------
    >>> v = load_tasks("winobias32")
    >>> len(v), v.words[:3], v.groups["nurse"]
    (32, ['janitor', 'cook', 'mover'], 'female_biased')
    >>> load_tasks("nurse, cook").words
    ['nurse', 'cook']
    """
    if isinstance(spec, TaskVocabulary):
        return spec
    if isinstance(spec, os.PathLike):
        return _from_file(resolve_name_or_path(spec, TASK_SETS, "tasks"))
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("@"):
            path = Path(text[1:]).expanduser()
            if not path.is_file():
                raise BiasampError(f"tasks: file not found: {text[1:]!r}")
            return _from_file(path)
        path = Path(text).expanduser()
        if "," in text and text not in TASK_SETS and not path.is_file():
            words = text.split(",")  # one trailing comma marks a list; other empties are refused
            return _inline(words[:-1] if not words[-1].strip() else words, f"tasks {text!r}")
        if text and not looks_like_path(text) and text not in TASK_SETS and not path.is_file():
            raise BiasampError(
                f"tasks: unknown task vocabulary {text!r}"
                f"{did_you_mean(text, list_task_sets())}; give a name ({', '.join(list_task_sets())}), a file, "
                f"'@FILE' or comma-separated words (a single word: {text + ','!r})"
            )
        return _from_file(resolve_name_or_path(text, TASK_SETS, "tasks"))
    if isinstance(spec, Sequence) and not isinstance(spec, (bytes,)):
        return _inline(spec)
    raise BiasampError(
        f"tasks must be a vocabulary name, a file path, comma-separated words or "
        f"a list of words; got {spec!r}"
    )


@dataclass(frozen=True)
class TaskAliases:
    """Spellings of one occupation that sources use: ``pairs`` maps an alias to the canonical
    spelling (that of the shipped base-rate tables)."""

    pairs: dict
    file: str
    sha256: str

    def canonical(self, word: str) -> str:
        """The canonical spelling of ``word`` (``word`` itself when it has no alias)."""
        return self.pairs.get(word, word)

    def spellings(self, word: str) -> tuple:
        """``word`` and the other spellings of its occupation (canonical one first)."""
        key = self.canonical(word)
        others = [key] + [a for a, c in self.pairs.items() if c == key]
        return (word,) + tuple(w for w in others if w != word)


@lru_cache(maxsize=1)
def task_aliases() -> TaskAliases:
    """The one task alias table (``base_rates/task_aliases.csv``: ``task`` = canonical
    spelling, ``alias``, ``source``), checked: no alias twice, no chains."""
    path = data_dir("base_rates") / "task_aliases.csv"
    text, data = _read(path, "task alias")
    where = f"task alias table {str(path)!r}"
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [h.strip() for h in rows[0]] != ["task", "alias", "source"]:
        raise BiasampError(f"{where}: the header must be task,alias,source")
    pairs = {}
    for line_no, row in enumerate(rows[1:], 2):
        if len(row) != 3 or not all(c.strip() for c in row):
            raise BiasampError(
                f"{where}: row {line_no} must have three non-empty fields; got {row!r}"
            )
        task, alias, _source = (c.strip() for c in row)
        if alias in pairs or alias == task:
            raise BiasampError(
                f"{where}: row {line_no}: alias {alias!r} is listed twice or equals its task"
            )
        pairs[alias] = task
    chained = sorted(set(pairs) & set(pairs.values()))
    if chained:
        raise BiasampError(f"{where}: {chained} are both an alias and a canonical spelling")
    return TaskAliases(pairs, path.name, sha256_bytes(data))
