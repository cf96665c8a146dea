"""File helpers of the data loaders: data folders, hashes, text, TOML and JSON reading,
names-or-paths.

>>> sha256_bytes(b"")[:12]
'e3b0c44298fc'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ._errors import BiasampError
from ._registry import Registry, did_you_mean

try:  # Python >= 3.11
    from tomllib import loads as toml_loads
except ModuleNotFoundError:  # pragma: no cover - Python 3.10, where tomli is a dependency
    from tomli import loads as toml_loads

_DATA_NAMES = ("templates", "base_rates", "pairs")


@cache
def data_dir(name: str) -> Path:
    """The folder of biasamp's ``templates``, ``base_rates`` or ``pairs`` data:
    ``biasamp/_data/<name>`` in a wheel, the repository root in a checkout.

    >>> data_dir("templates").name
    'templates'
    """
    if name not in _DATA_NAMES:
        raise ValueError(f"name must be one of {_DATA_NAMES}; got {name!r}")
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / name, here.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"biasamp data folder {name!r} not found next to {here} (broken installation?)"
    )


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in 1 MB blocks (bounded memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def decode_text(data: bytes, path, kind: str, encoding: str = "utf-8") -> str:
    """``data`` (the bytes of the ``kind`` file ``path``) as text; bytes that are not UTF-8
    are one line naming the file, the line and the byte position.

    >>> decode_text("caf\u00e9".encode("latin-1"), "a.toml", "config")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: config file 'a.toml' is not UTF-8 text: byte 0xe9 at position 3 ...
    """
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BiasampError(
            f"{kind} file {str(path)!r} is not UTF-8 text: byte "
            f"0x{data[exc.start]:02x} at position {exc.start} (line {line}) cannot "
            f"be decoded ({exc.reason}); save the file as UTF-8"
        ) from None


def read_text(path: str | os.PathLike, kind: str, encoding: str = "utf-8") -> str:
    """The text of a UTF-8 file (``encoding`` "utf-8-sig" also drops a byte-order mark);
    see :func:`decode_text`."""
    return decode_text(Path(path).read_bytes(), path, kind, encoding)


def read_toml(path: Path, kind: str) -> tuple[dict, bytes]:
    """Parse a TOML file; return (document, raw bytes). Errors name the file and the kind."""
    data = path.read_bytes()
    try:
        doc = toml_loads(decode_text(data, path, kind))
    except Exception as exc:  # tomllib.TOMLDecodeError
        if isinstance(exc, BiasampError):
            raise
        raise BiasampError(f"malformed {kind} file {str(path)!r}: {exc}") from None
    return doc, data


def check_keys(table: Any, allowed: Sequence[str], required: Sequence[str], where: str) -> dict:
    """A TOML table with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(table, dict):
        raise BiasampError(f"{where} must be a table; got {type(table).__name__}")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise BiasampError(
            f"{where}: unknown key(s) {unknown}{did_you_mean(unknown[0], allowed)}; "
            f"allowed: {', '.join(allowed)}"
        )
    missing = [k for k in required if k not in table]
    if missing:
        raise BiasampError(f"{where}: missing required key(s) {missing}")
    return table


def str_field(table: dict, key: str, where: str, default: str | None = None) -> str:
    """``table[key]`` (or ``default``) as a non-empty string."""
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise BiasampError(f"{where}: {key} must be a non-empty string; got {value!r}")
    return value


def check_metadata(meta: dict, where: str) -> None:
    """The provenance keys every shipped data file declares: description, source, license, year."""
    for key in ("description", "source", "license"):
        str_field(meta, key, where)
    year = meta["year"]
    if isinstance(year, bool) or not isinstance(year, int):
        raise BiasampError(f"{where}: year must be an integer; got {year!r}")


def looks_like_path(text: str) -> bool:
    """A string that names a file rather than a registered name (a separator or a suffix)."""
    return any(c in text for c in "/\\") or Path(text).suffix != ""


def resolve_name_or_path(name_or_path: str | os.PathLike, registry: Registry, param: str) -> Path:
    """The file of a name ``registry`` maps to a path, or a user's file path (a string that is
    neither gives the registry's "did you mean")."""
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path)
    else:
        if not isinstance(name_or_path, str) or not name_or_path.strip():
            raise BiasampError(
                f"{param} must be a {registry.kind} name or a file path; got {name_or_path!r}"
            )
        if name_or_path in registry:
            return registry.get(name_or_path)
        path = Path(name_or_path).expanduser()
        if not looks_like_path(name_or_path) and not path.exists():
            registry.get(name_or_path)  # raises the unknown-name error
    if not path.is_file():
        raise BiasampError(f"{param}: {registry.kind} file not found: {str(path)!r}")
    return path


class _NotFinite(str):
    """A ``NaN``, ``Infinity`` or overflowing number met by :func:`json_loads` (its text)."""


def _finite(text: str):
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def _first_not_finite(obj, key: str):
    if isinstance(obj, _NotFinite):
        return key, str(obj)
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for k, v in items:
        found = _first_not_finite(
            v, f"{key}[{k}]" if isinstance(k, int) else f"{key}.{k}" if key else k
        )
        if found:
            return found
    return None


def json_loads(text: str, where: str):
    """Parse JSON as the standard defines it: ``NaN``, ``Infinity`` and numbers beyond the
    float range (``1e999``), which Python's reader accepts, are refused with one line naming
    ``where``, the key and the value.

    >>> json_loads('{"a": [1, 2.5]}', "x.json")
    {'a': [1, 2.5]}
    >>> json_loads('{"s": [{"mean": NaN}]}', "x.json")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: x.json: s[0].mean is NaN, not a finite number (JSON has no ...
    """
    try:
        data = json.loads(text, parse_constant=_NotFinite, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise BiasampError(f"{where} is not valid JSON: {exc}") from None
    found = _first_not_finite(data, "")
    if found:
        key, value = found
        raise BiasampError(
            f"{where}: {key or 'the value'} is {value}, not a finite number "
            "(JSON has no NaN or Infinity)"
        )
    return data
