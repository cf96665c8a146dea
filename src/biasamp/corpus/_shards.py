"""Opening a corpus: files become shards (a byte range, a whole file, Parquet row groups) read in
chunks where they are counted; ``datasets`` records become streams the driver reads.

long on purpose: a corpus from its names to the chunks of text the rules count.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import itertools
import lzma
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .._errors import BiasampError, MissingDependencyError
from ._formats import (
    check_parquet_column,
    iter_text,
    iter_wiki_articles,
    jsonl_texts,
    parquet_file,
    parquet_texts,
    record_chunks,
    record_text,
)
from ._inputs import Input, decompressed, open_raw, resolve_inputs


@functools.lru_cache(maxsize=1)
def _damage_errors() -> tuple:
    """Errors of a damaged file: gzip, bz2, xz, zstandard, Parquet (pyarrow)."""
    errors: list = [OSError, EOFError, zlib.error, lzma.LZMAError]
    for module, name in (("zstandard", "ZstdError"), ("pyarrow", "ArrowException")):
        try:
            errors.append(getattr(__import__(module), name))
        except (ImportError, AttributeError):
            pass
    return tuple(errors)


_SNIFF = 1 << 16


@dataclass(frozen=True)
class ReadOptions:
    """How shards are read: the records' text column, the chunk size, fsspec options."""

    text_column: str = "text"
    chunk_bytes: int = 4 << 20
    storage_options: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Shard:
    """One unit of work: the byte range ``start``, ``length`` of ``inp`` (``length`` None:
    the whole file) or its Parquet ``row_groups`` (empty: all); ``size``: the progress it
    stands for (bytes on storage)."""

    inp: Input
    start: int = 0
    length: int | None = None
    row_groups: tuple = ()
    size: int = 0

    def describe(self) -> str:
        if self.length is not None:
            return f"{self.inp.url} bytes {self.start}-{self.start + self.length}"
        if self.row_groups:
            return f"{self.inp.url} row groups {list(self.row_groups)}"
        return self.inp.url


def make_shards(inputs: list[Input], opts: ReadOptions, shard_bytes: int) -> list[Shard]:
    """Byte ranges of about ``shard_bytes`` for uncompressed text and JSON Lines, row groups for
    Parquet, whole files otherwise."""
    shards: list[Shard] = []
    for inp in inputs:
        if inp.compression is None and inp.fmt in ("text", "jsonl") and inp.size > shard_bytes:
            for start in range(0, inp.size, shard_bytes):
                length = min(shard_bytes, inp.size - start)
                shards.append(Shard(inp, start, length, size=length))
        elif inp.fmt == "parquet":
            with open_raw(inp, opts.storage_options) as raw:
                meta = parquet_file(decompressed(raw, inp), inp.url).metadata
            rows = max(meta.num_rows, 1)
            for g in range(meta.num_row_groups):
                n = meta.row_group(g).num_rows
                shards.append(Shard(inp, row_groups=(g,), size=inp.size * n // rows))
        else:
            shards.append(Shard(inp, size=inp.size))
    return shards


def check_input(inp: Input, opts: ReadOptions) -> None:
    """Fail before counting on a file that cannot be counted (from its first 64 KiB)."""
    where = repr(inp.url)
    try:
        with open_raw(inp, opts.storage_options) as raw:
            if inp.fmt == "parquet":
                check_parquet_column(
                    parquet_file(decompressed(raw, inp), where), opts.text_column, where
                )
                return
            head = decompressed(raw, inp).read(_SNIFF)
    except BiasampError:
        raise
    except _damage_errors() + (ValueError,) as exc:
        raise BiasampError(
            f"corpus file {where} is not a valid {inp.compression or 'file'} archive: {exc}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - zstandard.ZstdError and file-system errors
        raise BiasampError(f"corpus file {where} cannot be read: {exc}") from None
    if not head.strip():
        raise BiasampError(f"corpus file {where} is empty (no text)")
    if inp.fmt == "wikixml":
        if b"<mediawiki" not in head:
            raise BiasampError(
                f"corpus file {where} is not a Wikipedia XML dump (no "
                "<mediawiki> element at its start)"
            )
        return
    nul = head.find(b"\x00")
    if nul >= 0:
        raise BiasampError(
            f"corpus file {where} is binary (a NUL byte at offset {nul}), not UTF-8 text"
        )
    try:  # final=False: a character cut at the end of the head is fine
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        raise BiasampError(
            f"corpus file {where} is not UTF-8 text (byte 0x{head[exc.start]:02x} at offset "
            f"{exc.start})"
        ) from None
    if inp.fmt == "jsonl":
        first = next((line for line in head.splitlines() if line.strip()), b"")
        if len(head) == _SNIFF and not head.endswith(b"\n") and first == head.splitlines()[-1]:
            return  # a first record longer than the sniffed head: checked while counting
        for _ in jsonl_texts([first + b"\n"], opts.text_column, where):
            pass


class _ByteRange:
    """The lines of a binary file whose first byte lies in ``[start, start + length)`` (as
    ``fsspec.utils.read_block`` with a newline delimiter), read with ``read(n)``."""

    def __init__(self, raw, start: int, length: int):
        from fsspec.utils import seek_delimiter

        raw.seek(start + length)
        seek_delimiter(raw, b"\n", 1 << 16)
        end = raw.tell()
        raw.seek(start)
        seek_delimiter(raw, b"\n", 1 << 16)  # no-op at 0, else just after a newline
        self._raw, self.size = raw, end - raw.tell()
        self._left = self.size

    def read(self, n: int = -1) -> bytes:
        n = self._left if n is None or n < 0 else min(n, self._left)
        data = self._raw.read(n) if n else b""
        self._left -= len(data)
        return data


class _CountingReader:
    """A binary file that reports how many bytes were read from it (for progress bars)."""

    def __init__(self, raw, on_read):
        self._raw, self._on_read = raw, on_read

    def read(self, n=-1):
        data = self._raw.read(n)
        self._on_read(len(data))
        return data

    def read1(self, n=-1):
        data = self._raw.read1(n) if hasattr(self._raw, "read1") else self._raw.read(n)
        self._on_read(len(data))
        return data

    def readinto(self, buf):
        n = self._raw.readinto(buf)
        self._on_read(n or 0)
        return n

    def __getattr__(self, name):
        return getattr(self._raw, name)


def shard_chunks(shard: Shard, opts: ReadOptions, on_read=None):
    """The shard's text, as UTF-8 chunks of whole lines; ``on_read(n)`` is told the stored
    bytes read, for whole-file shards."""
    inp, where, column = shard.inp, repr(shard.inp.url), opts.text_column
    with open_raw(inp, opts.storage_options) as raw:
        if shard.length is not None:  # read in chunks: a shard may be larger than a chunk
            f = _ByteRange(raw, shard.start, shard.length)
            if f.size <= 2 * opts.chunk_bytes:  # one read, no copies to cut lines
                chunks = iter([f.read()] if f.size else [])
            else:
                chunks = iter_text(f, opts.chunk_bytes)
        else:
            f = decompressed(raw if on_read is None else _CountingReader(raw, on_read), inp)
            chunks = iter_text(f, opts.chunk_bytes)
        if inp.fmt == "text":
            yield from chunks
            return
        if inp.fmt == "jsonl":
            texts = jsonl_texts(chunks, column, where)
        elif inp.fmt == "parquet":
            texts = parquet_texts(f, column, shard.row_groups, where)
        else:
            texts = iter_wiki_articles(f, where)
        yield from record_chunks(texts, opts.chunk_bytes)


def guarded(chunks, where: str):
    """The chunks; a damaged file or a NUL byte (binary data) becomes a one-line error."""
    try:
        for chunk in chunks:
            if b"\x00" in chunk:
                raise BiasampError(f"corpus {where} is binary (a NUL byte), not UTF-8 text")
            yield chunk
    except BiasampError:
        raise
    except _damage_errors() as exc:
        raise BiasampError(
            f"corpus {where} cannot be read (damaged or unreadable): {type(exc).__name__}: {exc}"
        ) from None


def count_chunks(rule, chunks, where: str, on_bytes=None):
    """Sum of ``rule.count_bytes`` over text chunks (through :func:`guarded`); ``on_bytes(n)``
    is told the chunks' bytes as they are counted, within a chunk too."""
    counts = (rule.count_bytes(chunk, on_bytes) for chunk in guarded(chunks, where))
    return functools.reduce(add_counts, counts, (rule._zeros(), 0, 0, 0))


def add_counts(a: tuple, b: tuple) -> tuple:
    """The sum of two ``(counts, n_lines, n_sentences, n_kept)``."""
    return tuple(x + y for x, y in zip(a, b))


def hash_input(inp: Input, opts: ReadOptions, stop=None) -> str | None:
    """Hex sha256 of a file's bytes as stored, read in 1 MiB blocks (None once ``stop`` is
    set: a ``threading.Event`` that ends the work when the count fails)."""
    h = hashlib.sha256()
    with open_raw(inp, opts.storage_options) as raw:
        for block in iter(lambda: raw.read(1 << 20), b""):
            if stop is not None and stop.is_set():
                return None
            h.update(block)
    return h.hexdigest()


#: Default shard size of the local engine (~4 MB) and of the Dask engine (64 MiB).
CHUNK_BYTES = 4 << 20
DASK_SHARD_BYTES = 64 << 20


@dataclass
class CorpusPlan:
    """An opened corpus: ``shards`` that workers read, ``streams`` of ``(where, text chunks)``
    the driver reads, the files, the provenance's ``corpus`` and the bytes in all (or None)."""

    shards: list[Shard]
    streams: list[tuple[str, Iterable[bytes]]]
    inputs: list[Input]
    provenance: dict
    total: int | None
    opts: ReadOptions = field(default_factory=ReadOptions)


def plan_corpus(
    corpus,
    *,
    opts: ReadOptions,
    fmt: str | None,
    dataset_config: str | None,
    split: str,
    streaming: bool,
    shard_bytes: int | None,
    n_jobs: int,
    corpus_name: str | None,
) -> CorpusPlan:
    """Open files/globs/URLs (every local file and the first remote one of each kind checked
    before counting starts), an ``hf:NAME`` dataset or a ``datasets`` object."""
    hub = isinstance(corpus, (str, os.PathLike)) and str(corpus).startswith("hf:")
    if hub and "://" not in str(corpus):
        plan = _open_hub(
            str(corpus)[3:], opts, dataset_config=dataset_config, split=split, streaming=streaming
        )
    elif (type(corpus).__module__ or "").startswith("datasets"):
        _check_column(opts.text_column, getattr(corpus, "column_names", None))
        prov = {
            "kind": "datasets-object",
            "text_column": opts.text_column,
            "fingerprint": getattr(corpus, "_fingerprint", None),
            "n_records": len(corpus) if hasattr(corpus, "__len__") else None,
        }
        plan = _records_plan(corpus, "the dataset", prov, opts)
    else:
        plan = _open_files(corpus, opts, fmt=fmt, shard_bytes=shard_bytes, n_jobs=n_jobs)
    prov = plan.provenance
    prov["name"] = (
        corpus_name
        or prov.get("name")
        or ", ".join(f["name"] for f in prov.get("files", []))
        or "dataset"
    )
    return plan


def _open_files(corpus, opts: ReadOptions, *, fmt, shard_bytes, n_jobs) -> CorpusPlan:
    inputs = resolve_inputs(corpus, fmt=fmt, storage_options=opts.storage_options)
    checked: set = set()
    for inp in inputs:
        kind = (inp.fmt, inp.compression)
        if inp.local or kind not in checked:
            check_input(inp, opts)
            checked.add(kind)
    total = sum(inp.size for inp in inputs)
    if shard_bytes is None:  # small corpora: about four shards per worker
        shard_bytes = min(CHUNK_BYTES, max(1 << 18, total // (4 * n_jobs) + 1))
    prov = {"kind": "files", "files": [_file_provenance(inp) for inp in inputs]}
    if any(inp.fmt in ("jsonl", "parquet") for inp in inputs):
        prov["text_column"] = opts.text_column
    return CorpusPlan(make_shards(inputs, opts, shard_bytes), [], inputs, prov, total, opts)


def _file_provenance(inp: Input) -> dict:
    entry = {
        "path" if inp.local and "://" not in inp.url else "url": inp.url,
        "name": inp.url.rstrip("/").rsplit("/", 1)[-1],
        "bytes": inp.size,
        "format": inp.fmt,
    }
    if inp.compression:
        entry["compression"] = inp.compression
    entry.update(dict(inp.info))
    return entry


def _records_plan(records, where: str, prov: dict, opts: ReadOptions) -> CorpusPlan:
    """A plan of one stream: the records' texts, read by the driver."""

    def texts() -> Iterator[str]:
        for record in records:
            _check_column(opts.text_column, record)
            yield record_text(record[opts.text_column], opts.text_column, where)

    stream = record_chunks(texts(), opts.chunk_bytes)
    return CorpusPlan([], [(where, stream)], [], prov, None, opts)


def _open_hub(name: str, opts: ReadOptions, *, dataset_config, split, streaming) -> CorpusPlan:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a dependency
        raise MissingDependencyError("hf: corpora need `pip install datasets`") from exc
    try:
        ds = datasets.load_dataset(name, dataset_config, split=split, streaming=streaming)
        records = iter(ds)
        first = next(records, None)
    except BiasampError:
        raise
    except Exception as exc:  # noqa: BLE001 - offline, unknown name, bad config or split
        reason = " ".join(str(exc).split())[:300]
        raise BiasampError(
            f"dataset {name!r} (corpus 'hf:{name}', config {dataset_config!r}, "
            f"split {split!r}) cannot be loaded: {type(exc).__name__}: "
            f"{reason}"
        ) from None
    if first is None:
        raise BiasampError(f"dataset {name!r} (corpus 'hf:{name}', split {split!r}) is empty")
    _check_column(opts.text_column, first)
    prov = {
        "kind": "datasets",
        "name": name,
        "config": dataset_config,
        "split": split,
        "streaming": streaming,
        "text_column": opts.text_column,
        "datasets_version": datasets.__version__,
        "fingerprint": getattr(ds, "_fingerprint", None),
    }
    return _records_plan(itertools.chain([first], records), f"hf:{name}", prov, opts)


def _check_column(column: str, columns) -> None:
    if columns is not None and column not in columns:
        raise BiasampError(f"text_column {column!r} not in the dataset's columns {sorted(columns)}")
