"""The entry points: count a corpus with an engine or a text in-process; the CSV writer."""

from __future__ import annotations

import datetime
import json
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import BiasampError, ZeroRowWarning
from .._files import read_text
from .._output import OutputFile
from .._progress import SILENT, as_progress
from .._validation import (
    Bool,
    Integer,
    NonEmptyStr,
    OneOf,
    Optional,
    PositiveInt,
    normalised,
    validate_params,
)
from ._engines import ENGINES
from ._inputs import FORMATS
from ._matching import MATCHERS, default_matcher
from ._rule_base import CountingRule, TaskList, WordGroups, _rebuild, encode_text
from ._rules import RULES
from ._shards import DASK_SHARD_BYTES, ReadOptions, plan_corpus

_VOCAB_PARAMS = {
    "rule": OneOf(RULES),
    "tasks": TaskList,
    "word_groups": Optional(WordGroups),
    "matcher": Optional(OneOf(MATCHERS)),
}


def _build_rule(rule: str, tasks, *, word_groups, plurals, matcher) -> CountingRule:
    """The rule for these checked words, compiled once per process (``_rule_base._rebuild``)."""
    tasks, word_groups = normalised(_VOCAB_PARAMS, tasks=tasks, word_groups=word_groups)
    cls = RULES.get(rule)
    groups = cls.default_groups if word_groups is None else word_groups
    return _rebuild(cls, tasks, groups, plurals, matcher)


def _frame(counts: np.ndarray, counter: CountingRule) -> pd.DataFrame:
    return pd.DataFrame(
        counts,
        index=pd.Index(counter.tasks, name="task"),
        columns=pd.Index(list(counter.groups), name="attribute"),
    )


@validate_params(_VOCAB_PARAMS)
def count_text(
    text: str | Sequence[str],
    tasks: Sequence[str],
    *,
    rule: str = "default",
    word_groups: Mapping[str, Sequence[str]] | None = None,
    plurals: bool = True,
    matcher: str | None = None,
) -> pd.DataFrame:
    """Count co-occurrences in an in-memory text (single process; rules: docs/corpus-counts.md).

    Parameters
    ----------
    text : str or list of str
        The text (split as a text-mode read would) or its lines (used as given).
    tasks, rule, word_groups, plurals, matcher
        As for :func:`count_cooccurrences`.

    Returns
    -------
    pandas.DataFrame of shape (n_tasks, n_groups)
        Integer counts; index = tasks, columns = the word-group names.

    Examples
    --------
    >>> t = "He is a cook .\\nher cookie was good .\\n"
    >>> count_text(t, ["cook"], rule="default").loc["cook"].tolist()
    [1, 0]
    >>> count_text(t, ["cook"], rule="wang2021").loc["cook"].tolist()
    [0, 1]
    """
    counter = _build_rule(rule, tasks, word_groups=word_groups, plurals=plurals, matcher=matcher)
    if isinstance(text, str):
        counts, *_ = counter.count_bytes(encode_text(text))
    else:
        counts, *_ = counter.count(list(text))
    return _frame(counts, counter)


@dataclass
class CorpusCounts:
    """Result of :func:`count_cooccurrences`: ``counts`` (tasks x word groups), lines read,
    sentences scanned and kept (= ``counts.values.sum()``), ``provenance``
    (docs/corpus-counts.md)."""

    counts: pd.DataFrame
    n_lines: int
    n_sentences: int
    n_kept: int
    provenance: dict = field(default_factory=dict)

    @property
    def zero_rows(self) -> list[str]:
        """Tasks with no counted sentence at all."""
        return [t for t, s in zip(self.counts.index, self.counts.sum(axis=1)) if s == 0]

    def to_csv(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write a base-rate CSV readable by ``get_source("file:PATH")``."""
        return write_counts_csv(self, path, overwrite=overwrite)


def is_counts_csv(path: Path) -> bool:
    """Whether ``path`` is a counts CSV biasamp wrote (first line ``# provenance: {"rule": ...}``)."""
    try:
        first = read_text(path, "counts CSV").partition("\n")[0]
        head, _, blob = first.partition("# provenance: ")
        prov = json.loads(blob) if not head else None
    except (OSError, ValueError):  # BiasampError (not UTF-8) is a ValueError
        return False
    return isinstance(prov, dict) and "rule" in prov


def counts_output(
    path: str | os.PathLike, *, overwrite: bool = False, param: str = "path"
) -> OutputFile:
    """The output file of a counts CSV (``overwrite`` replaces only one biasamp wrote)."""
    return OutputFile(
        path, overwrite=overwrite, param=param, owned=is_counts_csv, what="a counts CSV"
    )


def write_counts_csv(
    result: CorpusCounts, path: str | os.PathLike | OutputFile, *, overwrite: bool = False
) -> Path:
    """Write a wide base-rate CSV (``task,he,she,...``) after a ``# provenance: {json}`` line."""
    out = path if isinstance(path, OutputFile) else counts_output(path, overwrite=overwrite)
    with out.open() as f:
        f.write(
            "# provenance: " + json.dumps(result.provenance, sort_keys=True, allow_nan=False) + "\n"
        )
        df = result.counts.copy()
        df.index.name = "task"
        df.columns.name = None
        df.to_csv(f, lineterminator="\n")
    return out.named


_COUNT_PARAMS = {
    **_VOCAB_PARAMS,
    "chunk_chars": Optional(PositiveInt),
    "n_jobs": Optional(PositiveInt),
    "engine": OneOf(ENGINES),
    "fmt": Optional(OneOf(FORMATS)),
    "text_column": NonEmptyStr,
    "retries": Integer(0),
    "hash_inputs": Bool,
    "scheduler": Optional(NonEmptyStr),
}


@validate_params(_COUNT_PARAMS)
def count_cooccurrences(
    corpus,
    tasks: Sequence[str],
    *,
    rule: str = "default",
    word_groups: Mapping[str, Sequence[str]] | None = None,
    plurals: bool = True,
    dataset_config: str | None = None,
    split: str = "train",
    text_column: str = "text",
    streaming: bool = True,
    fmt: str | None = None,
    n_jobs: int | None = None,
    chunk_chars: int | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    retries: int = 1,
    matcher: str | None = None,
    hash_inputs: bool = True,
    storage_options: Mapping | None = None,
    progress=False,
    corpus_name: str | None = None,
) -> CorpusCounts:
    """Count (task, attribute-group) co-occurrences per sentence over a corpus.

    Formats, rules, engines, shards and the provenance: docs/corpus-counts.md.

    Parameters
    ----------
    corpus
        Path, URL, glob or a list of them (:data:`FORMATS`), ``"hf:NAME"`` or a dataset.
    tasks
        Occupations (rows of the result, in this order).
    rule
        The counting rule.
    word_groups
        Attribute word groups (columns, in mapping order); default: the rule's own.
    plurals
        Default rule: also match plural occupations.
    dataset_config, split, streaming
        Options for ``hf:`` corpora.
    text_column
        The text of JSON Lines / Parquet / ``datasets`` records.
    fmt
        Read every file as this format (default: from each file name).
    n_jobs
        Worker processes (local; 1 = this process) or local Dask workers; default all cores.
    chunk_chars
        Shard size in bytes (default: docs/corpus-counts.md).
    engine
        Who counts the shards (:data:`ENGINES`).
    scheduler
        Dask engine: the scheduler's address (``tcp://HOST:8786``); default a local cluster.
    retries
        Dask engine: how often a failed shard is run again (it is counted once).
    matcher
        The scanner that finds occupations; speed only (default: Hyperscan if it imports).
    hash_inputs
        Record the sha256 of local files in the provenance (read once more, while counting).
    storage_options
        fsspec options for URLs (credentials, endpoints).
    progress
        Where the ``counting`` stage reports the bytes scanned (True: stderr).
    corpus_name
        Name recorded in the provenance (default: the file names / dataset name).

    Returns
    -------
    CorpusCounts
        A :class:`ZeroRowWarning` names the tasks never counted (``zero_rows``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("The nurses said she was tired . The cook left .\\n")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = count_cooccurrences(d / "a.txt", ["nurse", "cook"], n_jobs=1)
    >>> r.counts.loc["nurse"].tolist(), r.n_sentences, r.n_kept
    ([0, 1], 2, 1)
    >>> r.zero_rows, [str(w.message) for w in caught]
    (['cook'], ["1 task(s) never counted: ['cook']"])
    """
    from .. import __version__

    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.perf_counter()
    reporter = as_progress(progress)
    n_jobs = n_jobs or os.cpu_count() or 1
    if scheduler is not None and engine != "dask":
        raise BiasampError(
            f"scheduler needs engine 'dask'; got engine={engine!r}, scheduler={scheduler!r}"
        )
    counter = _build_rule(rule, tasks, word_groups=word_groups, plurals=plurals, matcher=matcher)
    opts = ReadOptions(text_column, storage_options=dict(storage_options or {}))
    plan = plan_corpus(
        corpus,
        opts=opts,
        fmt=fmt,
        dataset_config=dataset_config,
        split=split,
        streaming=streaming,
        shard_bytes=chunk_chars or (DASK_SHARD_BYTES if engine == "dask" else None),
        n_jobs=n_jobs,
        corpus_name=corpus_name,
    )
    reporter.stage(f"counting ({rule})", plan.total, "B")
    bar = None if reporter is SILENT else reporter  # the engines count no bytes for none
    run = ENGINES.get(engine)
    kwargs = {"scheduler": scheduler, "retries": retries} if engine == "dask" else {}
    try:
        out = run(counter, plan, n_jobs=n_jobs, bar=bar, hash_inputs=hash_inputs, **kwargs)
    finally:
        if progress is True:  # the display made here (a caller's reporter is the caller's)
            reporter.close()
    counts, n_lines, n_sentences, n_kept = out.totals
    for entry in plan.provenance.get("files", []):
        key = entry.get("path") or entry.get("url")
        if key in out.hashes:
            entry["sha256"] = out.hashes[key]
    prov: dict = {
        "rule": rule,
        "word_groups": {k: list(v) for k, v in counter.groups.items()},
        "tasks": list(counter.tasks),
        "plurals": bool(plurals) if counter.uses_plurals else None,
        "corpus": plan.provenance,
        "engine": out.info,
        "matcher": matcher or default_matcher(),
        "n_lines": n_lines,
        "n_sentences": n_sentences,
        "n_kept": n_kept,
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - clock, 3),
        "biasamp_version": __version__,
    }
    result = CorpusCounts(_frame(counts, counter), n_lines, n_sentences, n_kept, prov)
    if result.zero_rows:
        warnings.warn(
            ZeroRowWarning(f"{len(result.zero_rows)} task(s) never counted: {result.zero_rows}"),
            stacklevel=3,
        )
    return result
