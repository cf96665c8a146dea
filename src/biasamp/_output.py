"""The one output layer: every file and folder biasamp writes goes through here.

Rules (for folders, :class:`OutputFolder`; for single files, :class:`biasamp._output_file.
OutputFile`):

- **Checked before long work.** A target that is a device, FIFO or socket is refused (writing
  means renaming over it, which would replace ``/dev/null`` for the whole machine when run as
  root); so is a name too long to stage beside it.
- **Symbolic links are followed on purpose**: a link given as the target stands for the path it
  names, which is written (and replaced) there; the link itself stays. A link into a folder
  that does not exist, or a loop of links, is refused before any work.
- **Nothing biasamp did not write is deleted.** Every folder it writes holds a mark,
  ``.biasamp.json``, with its kind (a probe result, a report, a comparison, a pairs result) and
  the files it wrote. ``overwrite`` replaces a folder only when it holds a complete biasamp
  result of the same kind and nothing else (results of biasamp 0.2, written before the mark,
  are recognised by their own files); a folder with a file biasamp did not write (a model, an
  input, a note) is refused, naming the file. :meth:`OutputFolder.carry_over` (``biasamp
  report DIR`` in place) keeps every file of the folder, its own or not.
- **One transaction.** Everything is staged in a hidden folder beside the target, and renamed
  into place when complete; the stop signals are held during the renames
  (:func:`biasamp._signals.signals_deferred`). An error, Ctrl-C, SIGTERM or SIGHUP leaves the
  previous result or nothing; a failed write (disk full, read-only folder) is one line naming
  the path, with the staging removed.
- **A lock** beside the target (pid, host, start time; refreshed while held:
  :class:`~biasamp._output_lock.FolderLock`) refuses a second writer. A lock left by a dead
  process of this host is taken over; one of another host, whose pid cannot be checked from
  here, is taken over when it has not been refreshed for
  :data:`~biasamp._output_lock.STALE_AFTER_S` seconds.

Files beside a target ``out`` (same parent): ``.out.lock``, ``.out.staging-<pid>-<n>`` (while
writing), ``.out.replaced-<pid>-<n>`` (for an instant during the swap; put back if a run died
there).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import os
import shutil
from pathlib import Path

from ._errors import BiasampError
from ._output_checks import MARK, Target, entries, fail_write, found_kind
from ._output_lock import FolderLock
from ._signals import signals_deferred

__all__ = ["KINDS", "MARK", "OutputFolder"]

#: The kinds of folder biasamp writes, as messages name them.
KINDS = {"probe": "a probe result", "report": "a report folder", "compare": "a comparison",
         "pairs": "a pairs result"}

_COUNTER = itertools.count()


class OutputFolder:
    """The target folder of a run, written as one transaction.

    Parameters
    ----------
    target : path
        The folder the run produces (a link is followed to the folder it names).
    kind : str
        What the folder holds, a key of :data:`KINDS`.
    overwrite : bool
        Replace a folder that holds a complete result of the same ``kind`` (and nothing else).
    param : str
        The option name for messages (``--out``).
    update : bool
        The target is an existing result of ``kind`` to which files are added
        (:meth:`carry_over`); ``overwrite`` is then implied.
    failure_note : str
        Said after the one line of a failed write (what was kept, what to do).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with OutputFolder(out, kind="report") as staging:
    ...     _ = (staging / "a.txt").write_text("done")
    >>> sorted(p.name for p in out.iterdir())
    ['.biasamp.json', 'a.txt']
    """

    def __init__(self, target, *, kind: str, overwrite: bool = False, param: str = "--out",
                 update: bool = False, failure_note: str = ""):
        if kind not in KINDS:  # pragma: no cover - programming error
            raise ValueError(f"kind must be one of {sorted(KINDS)}; got {kind!r}")
        self.out = Target(target, param)
        self.named, self.target = self.out.named, self.out.path
        self.kind, self.update = kind, update
        self.overwrite = overwrite or update
        self.failure_note = failure_note
        self.lock = FolderLock(self.target.parent / f".{self.target.name}.lock", self.out.where)
        self.staging: Path | None = None
        self._foreign: set[str] = set()

    # ------------------------------------------------------------------ checks
    def check(self) -> None:
        """Refuse a target that cannot or must not be written (call before any long work)."""
        t, where = self.target, self.out.where
        kind = self.out.check("a folder")
        if kind is None:
            if self.update:
                raise BiasampError(f"{where} does not exist")
            return
        present = entries(t)
        if not present and not self.update:
            return
        if not self.overwrite:
            raise BiasampError(f"{where} exists and is not empty; choose a new folder or "
                               "pass --overwrite (overwrite=True) to replace the result it holds")
        found, owned = found_kind(t)
        if found != self.kind:
            held = "no biasamp result" if found is None else KINDS[found]
            raise BiasampError(f"{where} holds {held}, not {KINDS[self.kind]}: biasamp "
                               f"replaces only {KINDS[self.kind]} it wrote; choose another folder")
        foreign = sorted(set(present) - owned - {MARK})
        special = [f for f in foreign if present[f] not in ("a file", "a folder",
                                                            "a symbolic link")]
        if special:
            raise BiasampError(f"{where} holds {present[special[0]]}, {special[0]!r}; "
                               "move it away first")
        if foreign and not self.update:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise BiasampError(
                f"{where} holds {len(foreign)} file(s) biasamp did not write "
                f"({foreign[0]!r}{more}); --overwrite replaces the folder as a whole, so move "
                "them away or choose another folder")
        self._foreign = set(foreign)

    # ------------------------------------------------------------------ lock
    def acquire(self) -> None:
        """Take the lock beside the target, then clean up after a run that died here."""
        if not self.lock.held:
            self.lock.acquire()
            self._recover()

    def release(self) -> None:
        self.lock.release()

    def _recover(self) -> None:
        """Under the lock: put back a folder a dead run had swapped out; drop its leftovers."""
        parent, name = self.target.parent, self.target.name
        replaced = sorted(parent.glob(f".{name}.replaced-*"))
        if replaced and not self.target.exists():
            os.replace(replaced.pop(), self.target)
        for left in replaced + sorted(parent.glob(f".{name}.staging-*")):
            shutil.rmtree(left, ignore_errors=True)

    # ------------------------------------------------------------------ transaction
    def begin(self) -> Path:
        """Check, lock and create the staging folder; return it."""
        self.check()
        self.acquire()
        try:
            self.check()  # again under the lock: another run may have finished meanwhile
            n = next(_COUNTER)
            self.staging = self.target.parent / f".{self.target.name}.staging-{os.getpid()}-{n}"
            self.staging.mkdir()
        except BaseException:
            self.release()
            raise
        return self.staging

    def carry_over(self) -> None:
        """Copy everything the target holds into the staging folder (links as links), so
        that it survives the swap; files biasamp did not write stay out of the mark. Copies,
        not hard links: a file rewritten in the staging folder must not change the old one."""
        for f in self.target.iterdir():
            if f.name == MARK:
                continue
            if f.is_dir() and not f.is_symlink():
                shutil.copytree(f, self.staging / f.name, symlinks=True)
            else:
                shutil.copy2(f, self.staging / f.name, follow_symlinks=False)

    def foreign(self) -> set[str]:
        """Paths (relative, POSIX) in the target that biasamp did not write."""
        return set(self._foreign)

    def commit(self) -> Path:
        """Write the mark, then move the staged folder into place (replacing the old one as a
        whole); the stop signals are held meanwhile. A failed move removes the staging."""
        if self.staging is None:  # pragma: no cover - programming error
            raise RuntimeError("commit() without begin()")
        try:
            written = sorted(set(entries(self.staging)) - self._foreign - {MARK})
            mark = {"kind": self.kind, "files": written,
                    "written": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
            (self.staging / MARK).write_text(json.dumps(mark, indent=1) + "\n", encoding="utf-8")
            with signals_deferred():
                return self._swap()
        except BaseException as exc:
            self.abort()
            self.raise_write_error(exc)
            raise

    def _swap(self) -> Path:
        old = None
        if os.path.lexists(self.target):
            n = next(_COUNTER)
            old = self.target.parent / f".{self.target.name}.replaced-{os.getpid()}-{n}"
            os.replace(self.target, old)
        try:
            os.replace(self.staging, self.target)
        except OSError:
            if old is not None:
                os.replace(old, self.target)
            raise
        self.staging = None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        self.release()
        return self.target

    def abort(self) -> None:
        """Remove the staged folder and release the lock (the target is untouched)."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        self.release()

    def raise_write_error(self, exc: BaseException) -> None:
        """Raise an OS error met while writing as one line naming the path (else return)."""
        fail_write(exc, self.out.where, self.target.parent, self.failure_note)

    def __enter__(self) -> Path:
        return self.begin()

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
            self.raise_write_error(exc)
        return False
