"""One output file (``biasamp count -o``, ``biasamp templates convert -o``), under the rules of
:mod:`biasamp._output`: a device, FIFO, socket or folder is refused; a link is followed to the
file it names; an existing file is replaced only with ``overwrite`` and only when biasamp wrote
it (``owned``); the file is written beside the target and renamed into place with the stop
signals held, so an interrupted or failed write leaves the old file or the new one.

>>> import tempfile, pathlib
>>> out = OutputFile(pathlib.Path(tempfile.mkdtemp()) / "a.csv")
>>> with out.open() as f:
...     _ = f.write("task,he,she\\n")
>>> out.target.read_text()
'task,he,she\\n'
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable
from pathlib import Path

from ._errors import BiasampError
from ._output_checks import check_name_fits, fail_write, follow_link, kind_of, writable_ancestor
from ._signals import signals_deferred

__all__ = ["OutputFile"]

_COUNTER = itertools.count()


class OutputFile:
    """A file written as one transaction.

    Parameters
    ----------
    target : path
        The file to write (a link is followed to the file it names).
    overwrite : bool
        Replace an existing file (one ``owned`` accepts).
    param : str
        The option name for messages.
    owned : callable, optional
        ``owned(path) -> bool``: whether an existing file is one biasamp wrote (of the kind
        about to be written); None accepts any regular file.
    what : str
        What the file is, for messages (``a counts CSV``).
    """

    def __init__(self, target, *, overwrite: bool = False, param: str = "--out",
                 owned: Callable[[Path], bool] | None = None, what: str = "a file"):
        self.named = Path(os.path.expanduser(str(target)))
        self.param, self.overwrite, self.owned, self.what = param, overwrite, owned, what
        self.target = follow_link(self.named, param)

    def _where(self) -> str:
        t = repr(str(self.named))
        return t if self.named == self.target else f"{t} (a link to {str(self.target)!r})"

    def check(self) -> None:
        """Refuse a target that cannot or must not be written (before any long work)."""
        t, p, where = self.target, self.param, self._where()
        if not t.name or t.name in (".", ".."):
            raise BiasampError(f"{p} must name a file; got {str(self.named)!r}")
        check_name_fits(t, writable_ancestor(t, p), p)
        kind = kind_of(t)
        if kind not in (None, "a file"):
            raise BiasampError(f"{p} {where} is {kind}, not a regular file: biasamp writes a "
                               "new file and renames it into place, which would replace it")
        if kind is None:
            return
        if not self.overwrite:
            raise BiasampError(f"{p} {where} exists; choose a new file or pass --overwrite to "
                               "replace it")
        if self.owned is not None and not self.owned(t):
            raise BiasampError(f"{p} {where} is not {self.what} biasamp wrote; --overwrite "
                               "replaces only such a file: choose another name")

    @contextlib.contextmanager
    def open(self, *, newline: str = ""):
        """Check, then yield a text file (UTF-8) that becomes the target when the block ends
        without an error; on an error the target is untouched."""
        self.check()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}-{next(_COUNTER)}.tmp")
        try:
            with open(tmp, "x", encoding="utf-8", newline=newline) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            with signals_deferred():
                os.replace(tmp, self.target)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            fail_write(exc, f"{self.param} {self._where()}", self.target.parent)
            raise
