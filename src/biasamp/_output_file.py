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
from ._output_checks import Target, fail_write
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
        self.out = Target(target, param)
        self.named, self.target = self.out.named, self.out.path
        self.overwrite, self.owned, self.what = overwrite, owned, what

    def check(self) -> None:
        """Refuse a target that cannot or must not be written (before any long work)."""
        where = self.out.where
        if self.out.check("a file", ": biasamp writes a new file and renames it into place, "
                                    "which would replace it") is None:
            return
        if not self.overwrite:
            raise BiasampError(f"{where} exists; choose a new file or pass --overwrite to "
                               "replace it")
        if self.owned is not None and not self.owned(self.target):
            raise BiasampError(f"{where} is not {self.what} biasamp wrote; --overwrite "
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
            fail_write(exc, self.out.where, self.target.parent)
            raise
