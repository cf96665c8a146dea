"""Readers: a binary stream of one format -> chunks of UTF-8 text (bytes, whole lines); a
record is written as the text a file would hold, ending with a line break."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator

from .._errors import BiasampError, MissingDependencyError
from ._rule_base import encode_text


def record_text(value, column: str, where: str) -> str:
    """The text of one record's ``column`` (None -> ``""``)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BiasampError(
            f"text_column {column!r} must hold strings; got "
            f"{type(value).__name__} {str(value)[:40]!r} in {where}"
        )
    return value


def record_chunks(texts: Iterable[str], chunk_bytes: int) -> Iterator[bytes]:
    """Records' texts -> UTF-8 chunks of whole lines, each record ending with a line break.

    >>> list(record_chunks(["a\\nb", "c\\n", ""], 100))
    [b'a\\nb\\nc\\n\\n']
    """
    parts: list[str] = []
    size = 0
    for text in texts:
        parts.append(text if text.endswith("\n") else text + "\n")
        size += len(text) + 1
        if size >= chunk_bytes:
            yield encode_text("".join(parts))
            parts, size = [], 0
    if parts:
        yield encode_text("".join(parts))


def iter_text(f, chunk_bytes: int) -> Iterator[bytes]:
    """Chunks of a binary stream, each ending after a ``\\n`` (or at the end)."""
    carry = b""
    while True:
        block = f.read(chunk_bytes)
        if not block:
            break
        data = carry + block if carry else block
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # no line end yet: hold on (a line is read whole)
            carry = data
            continue
        carry = data[cut:]
        yield data[:cut]
    if carry:
        yield carry


def _json_records(data: bytes, where: str) -> list:
    """The JSON values of the non-blank lines (one parse for the chunk when it is valid)."""
    lines = [line for line in data.splitlines() if line.strip()]
    try:
        records = json.loads(b"[" + b",".join(lines) + b"]")
        if len(records) == len(lines):
            return records
    except ValueError:
        pass
    records = []
    for line in lines:  # find the bad line
        try:
            records.append(json.loads(line))
        except ValueError as exc:
            raise BiasampError(
                f"corpus file {where} is not JSON Lines: {exc} in {line[:60]!r}"
            ) from None
    return records


def jsonl_texts(data_chunks: Iterable[bytes], column: str, where: str) -> Iterator[str]:
    """The ``column`` of each JSON object of newline-terminated JSON Lines chunks."""
    for data in data_chunks:
        for record in _json_records(data, where):
            if not isinstance(record, dict):
                raise BiasampError(
                    f"corpus file {where} holds a JSON {type(record).__name__}, "
                    f"not an object with a text_column: {str(record)[:60]!r}"
                )
            if column not in record:
                raise BiasampError(
                    f"text_column {column!r} is not in the records of {where}; "
                    f"they have {sorted(record)}"
                )
            yield record_text(record[column], column, where)


def parquet_file(raw, where: str):
    """A ``pyarrow.parquet.ParquetFile`` of a binary file object."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise MissingDependencyError(
            "Parquet corpora need `pip install pyarrow` (or biasamp[formats])"
        ) from exc
    try:
        return pq.ParquetFile(raw)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a bad file
        raise BiasampError(f"corpus file {where} is not a valid Parquet file: {exc}") from None


def check_parquet_column(pf, column: str, where: str) -> None:
    """The column exists and holds strings."""
    names = pf.schema_arrow.names
    if column not in names:
        raise BiasampError(f"text_column {column!r} is not a column of {where}; it has {names}")
    kind = str(pf.schema_arrow.field(column).type)
    if "string" not in kind and kind not in ("null",):
        raise BiasampError(f"text_column {column!r} of {where} must hold strings; got {kind}")


def parquet_texts(raw, column: str, row_groups: tuple, where: str) -> Iterator[str]:
    """The ``column`` of the rows of some row groups (empty: all), read in record batches."""
    pf = parquet_file(raw, where)
    check_parquet_column(pf, column, where)
    groups = list(row_groups or range(pf.metadata.num_row_groups))
    for batch in pf.iter_batches(batch_size=8192, columns=[column], row_groups=groups):
        for value in batch.column(0).to_pylist():
            yield record_text(value, column, where)


# [[File:...]], [[Category:...]], [[de:...]]: a prefix, then a colon (not [[:Category:X]])
_PREFIXED_LINK = re.compile(r"^\s*[A-Za-z][A-Za-z0-9 _-]*:")
_REMOVED_TAGS = ("ref", "table", "gallery", "references")


def _remove(code, node) -> None:
    try:
        code.remove(node)
    except ValueError:  # inside a node removed before
        pass


def strip_wikitext(text: str) -> str:
    """Plain text of an article's wikitext (what is kept: docs/corpus-counts.md).

    >>> print(
    ...     strip_wikitext(
    ...         "'''Ada''' was a [[nurse|nurse]].<ref>x</ref>\\n== Life ==\\n"
    ...         "{{Infobox|a=b}}She wrote [[poetry]].[[Category:Nurses]]"
    ...     )
    ... )
    Ada was a nurse.
    == Life ==
    She wrote poetry.
    """
    try:
        import mwparserfromhell as mw
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise MissingDependencyError(
            "Wikipedia XML dumps need `pip install mwparserfromhell` (or biasamp[formats])"
        ) from exc
    code = mw.parse(text)
    for tag in code.filter_tags(matches=lambda n: str(n.tag).strip().lower() in _REMOVED_TAGS):
        _remove(code, tag)
    for link in code.filter_wikilinks():
        if _PREFIXED_LINK.match(str(link.title)):
            _remove(code, link)
    for heading in code.filter_headings():
        title = heading.title.strip_code().strip()
        marks = "=" * heading.level
        try:
            code.replace(heading, mw.nodes.Text(f"{marks} {title} {marks}"))
        except ValueError:
            pass
    return code.strip_code(normalize=True, collapse=True).strip()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def iter_wiki_articles(f, where: str) -> Iterator[str]:
    """Plain texts of the articles of a dump (a binary stream of its XML)."""
    root = None
    try:
        for event, elem in ET.iterparse(f, events=("start", "end")):
            if event == "start":
                if root is None:
                    root = elem
                    if _local(elem.tag) != "mediawiki":
                        raise BiasampError(
                            f"corpus file {where} is not a Wikipedia XML dump "
                            f"(root element <{_local(elem.tag)}>, not "
                            "<mediawiki>)"
                        )
                continue
            if _local(elem.tag) != "page":
                continue
            ns = elem.findtext("{*}ns", default="0").strip()
            text = elem.findtext("{*}revision/{*}text", default="")
            if ns == "0" and elem.find("{*}redirect") is None and text.strip():
                article = strip_wikitext(text)
                if article:
                    yield article
            root.clear()  # drop the pages read so far: bounded memory
    except ET.ParseError as exc:
        raise BiasampError(f"corpus file {where} is not well-formed XML: {exc}") from None
