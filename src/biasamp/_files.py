"""File helpers shared by the data loaders: hashes, TOML reading, names-or-paths.

>>> sha256_bytes(b"")[:12]
'e3b0c44298fc'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._errors import BiasampError, MissingDependencyError
from ._registry import Registry, did_you_mean

try:  # Python >= 3.11
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml
    except ModuleNotFoundError:
        _toml = None

__all__ = ["check_keys", "check_metadata", "read_toml",
           "resolve_name_or_path", "sha256_bytes", "sha256_file", "str_field", "toml_loads"]


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


def toml_loads(text: str) -> dict:
    """Parse TOML text (tomllib, or tomli on Python 3.10)."""
    if _toml is None:  # pragma: no cover - Python 3.10 without tomli
        raise MissingDependencyError("reading TOML files on Python 3.10 needs the 'tomli' "
                                     "package: pip install tomli")
    return _toml.loads(text)


def read_toml(path: Path, kind: str) -> tuple[dict, bytes]:
    """Parse a TOML file; return (document, raw bytes). Errors name the file and the kind."""
    data = path.read_bytes()
    try:
        doc = toml_loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BiasampError(f"malformed {kind} file {str(path)!r}: {exc}") from None
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
        raise BiasampError(f"{where}: unknown key(s) {unknown}{did_you_mean(unknown[0], allowed)}; "
                           f"allowed: {', '.join(allowed)}")
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


def resolve_name_or_path(name_or_path: str | os.PathLike, registry: Registry,
                         param: str) -> Path:
    """The file of a registered name, or a user's file path.

    ``registry`` maps names to paths. A string that is not registered and does not look like a
    path gives the registry's "unknown name" error (with "did you mean").
    """
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path)
    else:
        if not isinstance(name_or_path, str) or not name_or_path.strip():
            raise BiasampError(f"{param} must be a {registry.kind} name or a file path; got "
                               f"{name_or_path!r}")
        if name_or_path in registry:
            return registry.get(name_or_path)
        path = Path(name_or_path).expanduser()
        if not looks_like_path(name_or_path) and not path.exists():
            registry.get(name_or_path)  # raises the unknown-name error
    if not path.is_file():
        raise BiasampError(f"{param}: {registry.kind} file not found: {str(path)!r}")
    return path
