"""One small registry class behind every named thing (template sets, task vocabularies,
base-rate sources, scoring modes, compat modes, report formats, subcommands).

>>> r = Registry("colour")
>>> r.register("red", 1, description="warm")
1
>>> r.get("red"), r.names(), "red" in r
(1, ['red'], True)
>>> r.get("rde")
Traceback (most recent call last):
...
biasamp._errors.UnknownNameError: unknown colour 'rde' (did you mean 'red'?); available: red
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ._errors import BiasampError, UnknownNameError


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``.

    >>> did_you_mean("wikipdia", ["uniform", "wikipedia"])
    " (did you mean 'wikipedia'?)"
    """
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> UnknownNameError:
    """Build the error for an unknown name, listing what exists.

    >>> str(unknown_name("template set", "wang", ["wang2021", "lu2019"]))
    "unknown template set 'wang' (did you mean 'wang2021'?); available: lu2019, wang2021"
    """
    choices = sorted(map(str, choices))
    return UnknownNameError(
        f"unknown {kind} {name!r}{did_you_mean(name, choices)}; available: {', '.join(choices)}"
    )


class _Ref(str):
    """A registered ``"module:object"`` not imported yet (see :meth:`Registry.register_lazy`)."""


class Registry:
    """Names mapped to objects, with descriptions and "did you mean" errors.

    Parameters
    ----------
    kind
        What the registry holds, for messages ("base-rate source").
    extra_names
        Spellings shown in "available" lists that are not plain entries (``file:PATH.csv``).
    files
        Returns data files (``lambda: data_dir("templates").glob("*.toml")``), registered
        under their stems, sorted, before the first lookup.
    """

    def __init__(
        self,
        kind: str,
        *,
        extra_names: Iterable[str] = (),
        files: Callable[[], Iterable[Path]] | None = None,
    ):
        self.kind = kind
        self.extra_names = tuple(extra_names)
        self._items: dict[str, Any] = {}
        self._descriptions: dict[str, str] = {}
        self._files = files

    def _load(self) -> None:
        if self._files is not None:
            files, self._files = self._files, None
            for path in sorted(files()):
                self.register(path.stem, path)

    def register(self, name: str, obj: Any, *, description: str = ""):
        """Register ``obj`` under ``name``; return it."""
        if not isinstance(name, str) or not name:
            raise BiasampError(f"{self.kind} name must be a non-empty string; got {name!r}")
        if name in self._items:
            raise BiasampError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj
        self._descriptions[name] = description
        return obj

    def register_lazy(self, name: str, target: str, *, description: str = "") -> None:
        """Register ``"module:object"`` under ``name``, imported on its first :meth:`get`.

        >>> r = Registry("thing")
        >>> r.register_lazy("join", "os.path:join")
        >>> r.get("join")("a", "b")
        'a/b'
        """
        self.register(name, _Ref(target), description=description)

    def get(self, name: str) -> Any:
        """The object registered as ``name``; :class:`UnknownNameError` with "did you mean"."""
        self._load()
        if not (isinstance(name, str) and name in self._items):
            raise unknown_name(self.kind, name, [*self._items, *self.extra_names])
        obj = self._items[name]
        if isinstance(obj, _Ref):
            module, _, attr = obj.partition(":")
            obj = self._items[name] = getattr(importlib.import_module(module), attr)
        return obj

    def names(self) -> list[str]:
        """Registered names in registration order."""
        self._load()
        return list(self._items)

    def description(self, name: str) -> str:
        """The description given at registration (a lazy entry is not imported)."""
        if name not in self:
            raise unknown_name(self.kind, name, [*self._items, *self.extra_names])
        return self._descriptions[name]

    def module_getattr(self, module: str) -> Callable[[str], Any]:
        """A module's ``__getattr__`` serving this registry's names (PEP 562)."""

        def getattr_(name: str) -> Any:
            if name in self:
                return self.get(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        return getattr_

    def __contains__(self, name) -> bool:
        self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"
