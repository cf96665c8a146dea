"""Corpus inputs: paths, globs and fsspec URLs -> files with a format and a compression.

>>> _detect("enwiki-20240601-pages-articles1.xml-p1p41242.bz2", None)
('wikixml', 'bz2')
>>> _detect("c4-train.00000-of-01024.json.gz", None), _detect("wiki.valid.tokens", None)
(('jsonl', 'gzip'), ('text', None))
"""

from __future__ import annotations

import glob as _glob
import os
from dataclasses import dataclass

from .._errors import BiasampError, MissingDependencyError
from .._registry import Registry

#: Corpus formats: name -> description (how a file's text is read: ``_formats``).
FORMATS = Registry("corpus format")
for _name, _description in {
    "text": "UTF-8 text, one paragraph per line",
    "jsonl": "JSON Lines, one record per line; its text_column is the text",
    "parquet": "Parquet with a text_column (pyarrow)",
    "wikixml": "a Wikipedia XML dump (pages-articles), "
    "articles' wikitext stripped with mwparserfromhell",
}.items():
    FORMATS.register(_name, _name, description=_description)

#: File-name suffix -> fsspec compression name.
COMPRESSIONS = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".lzma": "lzma",
    ".zst": "zstd",
    ".zstd": "zstd",
}
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xml": "wikixml",
}
_GLOB_CHARS = ("*", "?", "[")


@dataclass(frozen=True)
class Input:
    """One corpus file: a local path or fsspec ``url``, its :data:`FORMATS` format, fsspec
    ``compression`` name or None, ``size`` on storage, whether it is ``local``, and the
    ``info`` its file system gives that identifies its content (ETag, checksum, mtime)."""

    url: str
    fmt: str
    compression: str | None
    size: int
    local: bool
    info: tuple = ()


def _fs(url: str, storage_options: dict | None):
    import fsspec

    try:
        return fsspec.core.url_to_fs(url, **(storage_options or {}))
    except ImportError as exc:
        raise MissingDependencyError(f"corpus {url!r} needs a file-system package: {exc}") from exc
    except (ValueError, OSError) as exc:
        raise BiasampError(f"corpus {url!r} cannot be opened: {exc}") from exc


def _detect(name: str, fmt: str | None) -> tuple[str, str | None]:
    base, ext = os.path.splitext(name.lower())
    compression = COMPRESSIONS.get(ext)
    if compression is None:
        base = name.lower()
    if fmt is not None:
        return fmt, compression
    ext = os.path.splitext(base)[1]
    if ext.startswith(".xml-"):  # Wikipedia's parts: pages-articles1.xml-p1p41242.bz2
        return "wikixml", compression
    return _EXTENSIONS.get(ext, "text"), compression


_INFO_KEYS = tuple(
    "ETag etag md5 md5Hash crc32c checksum sha256 blob_id LastModified"  # noqa: SIM905 - a word list
    " last_modified mtime updated version_id VersionId".split()
)


def resolve_inputs(
    corpus, *, fmt: str | None = None, storage_options: dict | None = None
) -> list[Input]:
    """Expand paths, globs and URLs into :class:`Input` files (in the order given, globs sorted).

    Raises
    ------
    BiasampError
        An entry that names no file (missing, a folder, a glob matching nothing).
    """
    entries = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    if not entries:
        raise BiasampError("corpus must name at least one file; got []")
    out: list[Input] = []
    for entry in entries:
        text = os.fspath(entry)
        if "://" not in text:
            out += _local_inputs(text, fmt)
            continue
        fs, path = _fs(text, storage_options)
        protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        paths = sorted(fs.glob(path)) if any(c in path for c in _GLOB_CHARS) else [path]
        if not paths:
            raise BiasampError(f"corpus glob {text!r} matches no file")
        for p in paths:
            try:
                info = fs.info(p)
            except (FileNotFoundError, OSError) as exc:
                raise BiasampError(f"corpus file not found: {text!r} ({exc})") from exc
            if info.get("type") == "directory":
                raise BiasampError(
                    f"corpus {text!r} is a folder; give files or a glob such as "
                    f"'{text.rstrip('/')}/*.txt'"
                )
            url = fs.unstrip_protocol(p)
            kept = tuple((k, str(info[k])) for k in _INFO_KEYS if info.get(k) is not None)
            f, c = _detect(p, fmt)
            out.append(
                Input(url, f, c, int(info.get("size") or 0), protocol in ("file", "local"), kept)
            )
    seen: dict[str, str] = {}
    for inp in out:  # one file named twice (a path and a glob that matches it): counted twice
        key = os.path.realpath(inp.url) if inp.local and "://" not in inp.url else inp.url
        if key in seen:
            raise BiasampError(
                f"corpus file {inp.url!r} is given twice (its sentences would be counted "
                "twice); name each file once"
            )
        seen[key] = inp.url
    return out


def _local_inputs(text: str, fmt: str | None) -> list[Input]:
    paths = [text]
    if not os.path.exists(text) and any(c in text for c in _GLOB_CHARS):
        paths = sorted(_glob.glob(text, recursive=True))
        if not paths:
            raise BiasampError(f"corpus glob {text!r} matches no file")
    out = []
    for p in paths:
        if os.path.isdir(p):
            raise BiasampError(
                f"corpus {p!r} is a folder; give files or a glob such as "
                f"'{os.path.join(p, '*.txt')}'"
            )
        if not os.path.isfile(p):
            raise BiasampError(f"corpus file(s) not found: [{p!r}]")
        f, c = _detect(p, fmt)  # absolute: workers of a cluster may run elsewhere
        out.append(Input(os.path.abspath(p), f, c, os.path.getsize(p), True))
    return out


def open_raw(inp: Input, storage_options: dict | None = None):
    """The file's bytes as stored (a binary file object; the caller closes it)."""
    if inp.local and "://" not in inp.url:
        return open(inp.url, "rb")
    fs, path = _fs(inp.url, storage_options)
    return fs.open(path, "rb")


def decompressed(raw, inp: Input):
    """A binary file object of the decompressed bytes (``raw`` itself when uncompressed)."""
    if inp.compression is None:
        return raw
    from fsspec.compression import compr

    if inp.compression not in compr or compr[inp.compression] is None:
        raise MissingDependencyError(
            f"corpus {inp.url!r} is {inp.compression}-compressed: "
            "`pip install zstandard` (or biasamp[formats])"
        )
    return compr[inp.compression](raw, mode="rb")
