"""The entry points: count a corpus over a process pool, or a text in-process; the CSV writer."""

from __future__ import annotations

import json
import os
import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import ZeroRowWarning
from .._validation import OneOf, Optional, PositiveInt, validate_params
from ._readers import CorpusSource, open_corpus, read_range, split_lines
from ._rules import RULES, CountingRule
from ._words import TaskList, WordGroups

__all__ = ["CorpusCounts", "count_cooccurrences", "count_text", "write_counts_csv"]

_VOCAB_PARAMS = {"rule": OneOf(RULES), "tasks": TaskList, "word_groups": Optional(WordGroups)}


def _build_rule(rule: str, tasks: list[str], word_groups, plurals) -> CountingRule:
    cls = RULES.get(rule)
    groups = dict(cls.default_groups) if word_groups is None else word_groups
    return cls(tasks, groups, plurals)


def _frame(counts: np.ndarray, counter: CountingRule) -> pd.DataFrame:
    return pd.DataFrame(counts, index=pd.Index(counter.tasks, name="task"),
                        columns=pd.Index(list(counter.groups), name="attribute"))


@validate_params(_VOCAB_PARAMS)
def count_text(text: str | Sequence[str], tasks: Sequence[str], *, rule: str = "default",
               word_groups: Mapping[str, Sequence[str]] | None = None,
               plurals: bool = True) -> pd.DataFrame:
    """Count co-occurrences in an in-memory text (single process).

    Parameters
    ----------
    text : str or list of str
        The text (split into lines as a text-mode file read would: universal newlines,
        ``\\n`` kept) or its lines (used as given).
    tasks : list of str
        Occupations, in the row order wanted.
    rule : {"default", "wang2021"}
    word_groups : mapping attribute -> list of words, optional
        Defaults to :data:`DEFAULT_WORD_GROUPS` (default rule) or
        :data:`WANG2021_WORD_GROUPS` (wang2021 rule).
    plurals : bool, default True
        Default rule only: also match regular plurals of the occupations.

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
    counter = _build_rule(rule, tasks, word_groups, plurals)
    lines = split_lines(text) if isinstance(text, str) else list(text)
    counts, *_ = counter.count(lines)
    return _frame(counts, counter)


@dataclass
class CorpusCounts:
    """Result of :func:`count_cooccurrences`.

    Attributes
    ----------
    counts : pandas.DataFrame of shape (n_tasks, n_groups)
        Integer co-occurrence counts; rows = tasks, columns = attribute word groups.
    n_lines : int
        Lines (records) read.
    n_sentences : int
        Sentences scanned (wang2021: ``.``-separated pieces of lines without ``=``).
    n_kept : int
        Sentences that were counted (= ``counts.values.sum()``).
    provenance : dict
        Corpus name, files and sha256, rule, word groups, tasks, counts of lines and
        sentences, biasamp version.
    """

    counts: pd.DataFrame
    n_lines: int
    n_sentences: int
    n_kept: int
    provenance: dict = field(default_factory=dict)

    @property
    def zero_rows(self) -> list[str]:
        """Tasks with no counted sentence at all."""
        return [t for t, s in zip(self.counts.index, self.counts.sum(axis=1)) if s == 0]

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write a base-rate CSV readable by ``get_source("file:PATH")``."""
        return write_counts_csv(self, path)


def write_counts_csv(result: CorpusCounts, path: str | os.PathLike) -> Path:
    """Write counts as a wide base-rate CSV (``task,he,she,...``).

    The first line is ``# provenance: {json}``; :func:`biasamp.base_rates.read_table_csv`
    reads it back into the table's provenance.

    Parameters
    ----------
    result : CorpusCounts
    path : path-like

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("# provenance: " + json.dumps(result.provenance, sort_keys=True) + "\n")
        df = result.counts.copy()
        df.index.name = "task"
        df.columns.name = None
        df.to_csv(f, lineterminator="\n")
    return path


@validate_params({**_VOCAB_PARAMS, "chunk_chars": Optional(PositiveInt),
                  "n_jobs": Optional(PositiveInt)})
def count_cooccurrences(corpus, tasks: Sequence[str], *, rule: str = "default",
                        word_groups: Mapping[str, Sequence[str]] | None = None,
                        plurals: bool = True, dataset_config: str | None = None,
                        split: str = "train", text_column: str = "text", streaming: bool = True,
                        n_jobs: int | None = None, chunk_chars: int | None = None,
                        progress: bool = False, corpus_name: str | None = None) -> CorpusCounts:
    """Count (task, attribute-group) co-occurrences per sentence over a corpus.

    Parameters
    ----------
    corpus : path, list of paths, ``"hf:NAME"`` or a ``datasets`` dataset
        Local UTF-8 text files (read in chunks of lines), a Hugging Face dataset name
        prefixed with ``hf:`` (loaded with ``datasets.load_dataset(NAME, dataset_config,
        split=split, streaming=streaming)``), or an already loaded ``Dataset`` /
        ``IterableDataset``; each record's ``text_column`` is one line.
    tasks : list of str
        Occupations (rows of the result, in this order).
    rule : {"default", "wang2021"}, default "default"
        Counting rule (see the module docstring).
    word_groups : mapping attribute -> list of words, optional
        Attribute word groups (columns, in mapping order).
    plurals : bool, default True
        Default rule: also match plural occupations.
    dataset_config, split, text_column, streaming
        Options for ``hf:`` corpora.
    n_jobs : int, optional
        Worker processes; default all cores (``os.cpu_count()``); 1 = in-process.
    chunk_chars : int, optional
        Default: 4 MB, or less for small file corpora so that every worker gets about
        four chunks (at least 256 kB). About how much text goes to a worker at once (bytes
        for files, which workers read themselves as line-aligned byte ranges; characters for
        datasets); at most ``2 * n_jobs`` chunks are in flight, so memory does not depend on
        the corpus size.
    progress : bool, default False
        Show a tqdm progress bar (bytes for files, records for datasets).
    corpus_name : str, optional
        Name recorded in the provenance (default: the file names / dataset name).

    Returns
    -------
    CorpusCounts

    Warns
    -----
    ZeroRowWarning
        When some tasks are never counted (listed in :attr:`CorpusCounts.zero_rows`).

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

    if n_jobs is None:
        n_jobs = os.cpu_count() or 1
    counter = _build_rule(rule, tasks, word_groups, plurals)
    prov: dict = {"rule": rule, "word_groups": {k: list(v) for k, v in counter.groups.items()},
                  "tasks": list(tasks), "plurals": bool(plurals) if counter.uses_plurals else None,
                  "biasamp_version": __version__}
    source = open_corpus(corpus, dataset_config=dataset_config, split=split,
                         text_column=text_column, streaming=streaming, chunk_chars=chunk_chars,
                         n_jobs=n_jobs, corpus_name=corpus_name)
    prov["corpus"] = source.provenance
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=source.total, unit=source.unit, unit_scale=True, desc=f"count ({rule})")
    try:
        counts, n_lines, n_sent, n_kept = _run(counter, source, n_jobs, bar)
    finally:
        if bar is not None:
            bar.close()

    prov.update({"n_lines": n_lines, "n_sentences": n_sent, "n_kept": n_kept})
    result = CorpusCounts(_frame(counts, counter), n_lines, n_sent, n_kept, prov)
    if result.zero_rows:
        warnings.warn(ZeroRowWarning(f"{len(result.zero_rows)} task(s) never counted: "
                                     f"{result.zero_rows}"), stacklevel=3)
    return result


def _run(counter: CountingRule, source: CorpusSource, n_jobs: int, bar):
    """Sum the counts of every work item, in process or over a pool (bounded in flight)."""
    total = [np.zeros((counter.n_tasks, counter.n_groups), dtype=np.int64), 0, 0, 0]

    def add(res, item):
        for k, v in enumerate(res):
            total[k] += v
        if bar is not None:
            bar.update(source.size(item))

    if n_jobs == 1:
        for item in source.items:
            add(counter.count(source.lines(item)), item)
        return tuple(total)
    # files: workers read their own byte ranges (little IPC); datasets: lines are sent
    work = _work_range if source.ranged else _work
    with ProcessPoolExecutor(n_jobs, initializer=_init_worker, initargs=(counter,)) as pool:
        pending: deque = deque()
        for item in source.items:
            fut = pool.submit(work, *item) if source.ranged else pool.submit(work, item)
            pending.append((fut, item))
            while len(pending) >= 2 * n_jobs:
                fut, done = pending.popleft()
                add(fut.result(), done)
        while pending:
            fut, done = pending.popleft()
            add(fut.result(), done)
    return tuple(total)


_WORKER: CountingRule | None = None


def _init_worker(counter: CountingRule) -> None:
    global _WORKER
    _WORKER = counter


def _work(lines: list[str]):
    return _WORKER.count(lines)


def _work_range(path: str, start: int, end: int):
    return _WORKER.count(read_range(path, start, end))
