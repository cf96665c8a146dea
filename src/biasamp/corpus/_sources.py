"""Opening a corpus: shards of files for the workers, streams of ``datasets`` records for the
driver (a ``datasets`` iterator cannot be split), and its provenance."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .._errors import BiasampError, MissingDependencyError
from ._formats import record_chunks, record_text
from ._inputs import Input, resolve_inputs
from ._shards import ReadOptions, Shard, check_input, make_shards

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
            "n_records": _len_or_none(corpus),
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
        "name": inp.name,
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


def _len_or_none(obj):
    try:
        return len(obj)
    except TypeError:
        return None
