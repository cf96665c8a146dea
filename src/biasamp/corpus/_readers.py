"""Corpus readers: text-mode lines, line-aligned byte ranges of files, ``datasets`` chunks.

Files are cut into byte ranges that end after a newline; each worker reads its own ranges
(little inter-process traffic) and splits them into lines exactly as text-mode iteration
over the file would. Datasets are read here, a chunk of records (one line each) at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._errors import BiasampError, MissingDependencyError
from .._files import sha256_file

__all__ = ["CHUNK_CHARS", "CorpusSource", "dataset_chunks", "file_ranges", "open_corpus",
           "read_range", "split_lines"]

#: Default amount of text per work item (~4 MB).
CHUNK_CHARS = 4 << 20


def split_lines(text: str) -> list[str]:
    """Lines as text-mode file iteration gives them (universal newlines, ``\\n`` kept).

    >>> split_lines("a\\r\\nb\\rc\\n\\nd")
    ['a\\n', 'b\\n', 'c\\n', '\\n', 'd']
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = text.split("\n")
    lines = [s + "\n" for s in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def file_ranges(paths: Sequence[Path], chunk_bytes: int) -> Iterator[tuple[str, int, int]]:
    """(path, start, end) byte ranges of about chunk_bytes, each ending after a newline."""
    for path in paths:
        size = path.stat().st_size
        with open(path, "rb") as f:
            pos = 0
            while pos < size:
                end = min(pos + chunk_bytes, size)
                if end < size:
                    f.seek(end)
                    end += len(f.readline())
                yield str(path), pos, end
                pos = end


def read_range(path: str, start: int, end: int) -> list[str]:
    """The lines of a byte range, as text-mode file iteration would give them.

    UTF-8 (undecodable bytes replaced), universal newlines (``\\r\\n`` and ``\\r`` become
    ``\\n``), lines split on ``\\n`` only and keeping it.
    """
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8", errors="replace")
    return split_lines(text)


def dataset_chunks(ds, text_column: str, chunk_chars: int) -> Iterator[list[str]]:
    """Lists of records' texts (one line each) of about ``chunk_chars`` characters."""
    lines: list[str] = []
    size = 0
    for record in ds:
        if text_column not in record:
            raise BiasampError(f"text_column {text_column!r} not in the dataset's columns "
                               f"{sorted(record)}")
        text = record[text_column] or ""
        lines.append(text)
        size += len(text)
        if size >= chunk_chars:
            yield lines
            lines, size = [], 0
    if lines:
        yield lines


@dataclass
class CorpusSource:
    """An opened corpus: its work items and its provenance.

    Attributes
    ----------
    items : iterable
        ``(path, start, end)`` byte ranges (``ranged``) or lists of lines.
    ranged : bool
        Whether the items are byte ranges of files (read with :func:`read_range`).
    provenance : dict
        The ``corpus`` entry of the counts' provenance.
    total, unit
        Progress bar total (None when unknown) and unit (``"B"`` or ``"records"``).
    """

    items: Iterable
    ranged: bool
    provenance: dict
    total: int | None
    unit: str

    def lines(self, item) -> list[str]:
        """The lines of one work item."""
        return read_range(*item) if self.ranged else item

    def size(self, item) -> int:
        """Progress made by one work item (bytes or records)."""
        return item[2] - item[1] if self.ranged else len(item)


def open_corpus(corpus, *, dataset_config: str | None, split: str, text_column: str,
                streaming: bool, chunk_chars: int | None, n_jobs: int,
                corpus_name: str | None) -> CorpusSource:
    """Open files, an ``hf:NAME`` dataset or a ``datasets`` object (see ``count_cooccurrences``)."""
    if isinstance(corpus, (str, os.PathLike)) and str(corpus).startswith("hf:"):
        source = _open_hub(str(corpus)[3:], dataset_config, split, text_column, streaming,
                           chunk_chars or CHUNK_CHARS)
    elif _is_dataset(corpus):
        n_records = _len_or_none(corpus)
        source = CorpusSource(
            dataset_chunks(corpus, text_column, chunk_chars or CHUNK_CHARS), False,
            {"kind": "datasets-object", "text_column": text_column,
             "fingerprint": getattr(corpus, "_fingerprint", None), "n_records": n_records},
            n_records, "records")
    else:
        source = _open_files(corpus, chunk_chars, n_jobs)
    prov = source.provenance
    prov["name"] = corpus_name or prov.get("name") or ", ".join(
        f["name"] for f in prov.get("files", [])) or "dataset"
    return source


def _open_hub(name: str, dataset_config, split, text_column, streaming,
              chunk_chars: int) -> CorpusSource:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a dependency
        raise MissingDependencyError("hf: corpora need `pip install datasets`") from exc
    ds = datasets.load_dataset(name, dataset_config, split=split, streaming=streaming)
    prov = {"kind": "datasets", "name": name, "config": dataset_config, "split": split,
            "streaming": streaming, "text_column": text_column,
            "datasets_version": datasets.__version__,
            "fingerprint": getattr(ds, "_fingerprint", None)}
    return CorpusSource(dataset_chunks(ds, text_column, chunk_chars), False, prov, None,
                        "records")


def _open_files(corpus, chunk_chars: int | None, n_jobs: int) -> CorpusSource:
    if isinstance(corpus, (str, os.PathLike)):
        paths = [Path(corpus)]
    else:
        paths = [Path(p) for p in corpus]
    if not paths:
        raise BiasampError("corpus must name at least one file; got []")
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise BiasampError(f"corpus file(s) not found: {missing}")
    prov = {"kind": "files",
            "files": [{"path": str(p), "name": p.name, "bytes": p.stat().st_size,
                       "sha256": sha256_file(p)} for p in paths]}
    total = sum(p.stat().st_size for p in paths)
    if chunk_chars is None:
        chunk_chars = min(CHUNK_CHARS, max(1 << 18, total // (4 * n_jobs) + 1))
    return CorpusSource(file_ranges(paths, chunk_chars), True, prov, total, "B")


def _is_dataset(obj) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("datasets")


def _len_or_none(obj):
    try:
        return len(obj)
    except TypeError:
        return None
