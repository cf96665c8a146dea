"""The one output layer: each output checked before long work, staged beside, renamed in place."""

from __future__ import annotations

import contextlib
import datetime
import errno
import itertools
import json
import logging
import os
import shutil
import signal
import stat
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from ._errors import BiasampError

MARK = ".biasamp.json"  #: the mark of a folder biasamp wrote: {"kind", "files", "written"}
#: The kinds of folder biasamp writes, as messages name them.
KINDS = {
    "probe": "a probe result",
    "report": "a report folder",
    "compare": "a comparison",
    "pairs": "a pairs result",
}
#: The signals that stop a run: Ctrl-C; ``kill``, ``timeout``, Slurm; a closed terminal.
STOP_SIGNALS = tuple(s for s in signal.Signals if s.name in ("SIGINT", "SIGTERM", "SIGHUP"))
_SUFFIX_BYTES = len("..replaced-") + 7 + len("-") + 8  # the longest name: .NAME.replaced-PID-N
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO}
_WORDS = ("folder", "file", "symbolic link", "character device", "block device", "FIFO", "socket")
_MODES = dict(zip("d-lcbps", _WORDS))  # stat.filemode's letter -> the kind in words
_PLAIN = ("a file", "a folder", "a symbolic link")
_COUNTER = itertools.count()


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP under :func:`stop_signals_raise`: cleans up as Ctrl-C does."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum, self.name, self.exit_code = signum, signal.Signals(signum).name, 128 + signum

    @staticmethod
    def handler(signum, frame):
        raise Stopped(signum)


@contextlib.contextmanager
def _handling(signals, fn=None):
    """Handle ``signals`` with ``fn`` (main thread only), or hold them and then deliver one."""
    got: list[int] = []
    fn = fn or (lambda signum, frame: got.append(signum))
    main = threading.current_thread() is threading.main_thread()
    old = {s: signal.signal(s, fn) for s in signals if main and signal.getsignal(s) is not None}
    try:
        yield
    finally:
        for s, before in old.items():
            signal.signal(s, before)
        if got:
            signal.raise_signal(got[0])


def stop_signals_raise():
    """SIGTERM and SIGHUP raise :class:`Stopped` for the duration (where they are the default)."""
    default = [s for s in STOP_SIGNALS if signal.getsignal(s) == signal.SIG_DFL]
    return _handling([s for s in default if s != signal.SIGINT], Stopped.handler)


def signals_deferred():
    """Hold the stop signals for the duration (whichever thread gets them), then deliver one."""
    return _handling(STOP_SIGNALS)


def kind_of(path) -> str | None:
    """What is at ``path`` (not following a link), in words; None when nothing is there."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        return "a " + _MODES.get(stat.filemode(os.lstat(path).st_mode)[0], "special file")


def _entries(folder: Path) -> dict[str, str]:
    """Relative path -> kind of all but non-empty folders under ``folder`` (links not entered)."""
    out = {}
    for p in folder.rglob("*"):
        if (kind := kind_of(p)) != "a folder" or not any(p.iterdir()):
            out[p.relative_to(folder).as_posix() + ("/" if kind == "a folder" else "")] = kind
    return out


def found_kind(folder) -> tuple[str | None, set[str]]:
    """The kind and the files biasamp wrote of ``folder``, from its mark; or ``(None, set())``."""
    mark = Path(folder) / MARK
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):  # none, not JSON, ...
        data = json.loads(mark.read_text(encoding="utf-8"))
        kind, files = data["kind"], data["files"]
        if isinstance(kind, str) and isinstance(files, list) and not mark.is_symlink():
            return kind, {str(f) for f in files}
    return None, set()


class _Output:
    """An output path (option ``param``): ``named`` as given, ``target`` a link followed."""

    def __init__(self, target, param: str, failure_note: str = ""):
        self.param, self.failure_note = param, failure_note
        self.named = self.target = named = Path(os.path.expanduser(str(target)))
        if os.path.islink(named):  # a loop resolves to a link, which check() refuses
            self.target = Path(os.path.realpath(named))
            if not self.target.parent.is_dir():
                to = f"to {str(self.target)!r}, whose folder does not exist"
                raise BiasampError(f"{param} {str(named)!r} is a symbolic link {to}")
        link = "" if named == self.target else f" (a link to {str(self.target)!r})"
        self.where = f"{param} {str(named)!r}{link}"
        self.lock = FileLock(self.target.parent / f".{self.target.name}.lock", timeout=0)

    def _check(self, want: str, why: str = "") -> str | None:
        """Refuse a path that cannot be staged beside or holds other than ``want``; say what."""
        t, at = self.target, f"{self.param} {str(self.target)!r}"
        if not t.name or t.name in (".", ".."):
            raise BiasampError(f"{self.param} must name {want}; got {str(self.named)!r}")
        up = next(a for a in t.parents if os.path.lexists(a))
        if not up.is_dir() or not os.access(up, os.W_OK | os.X_OK):
            raise BiasampError(f"{at}: {str(up)!r} is not a {'writable ' * up.is_dir()}folder")
        most = (os.pathconf(up, "PC_NAME_MAX") if hasattr(os, "pathconf") else 255) - _SUFFIX_BYTES
        if (size := len(os.fsencode(t.name))) > most:
            how = f"at most {most} fit here (it is staged beside under a longer name)"
            raise BiasampError(f"{at}: the name is {size} bytes long; {how}")
        if (kind := kind_of(t)) not in (None, want):
            expected = want.replace("a file", "a regular file")
            raise BiasampError(f"{self.where} is {kind}, not {expected}{why}")
        return kind

    def _beside(self, what: str) -> Path:
        return self.target.parent / f".{self.target.name}.{what}-{os.getpid()}-{next(_COUNTER)}"

    def _left(self, what: str) -> list[Path]:
        """What runs that were killed left beside the target (call holding the lock)."""
        return sorted(self.target.parent.glob(f".{self.target.name}.{what}-*"))

    def _acquire(self) -> None:
        """Check; take the OS lock ``.NAME.lock`` beside the target (free when its process dies)."""
        self.check()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.lock.acquire()
        except Timeout:
            raise BiasampError(f"{self.where} is being written by another biasamp run") from None

    def abort(self) -> None:
        """Remove the lock file while still held; release the lock."""
        if self.lock.is_locked:
            Path(self.lock.lock_file).unlink(missing_ok=True)
            self.lock.release()

    def raise_write_error(self, exc: BaseException) -> None:
        """Abort; raise an OS error met while writing as one line naming the path, else return."""
        self.abort()
        name = str(exc.filename) if isinstance(exc, OSError) and exc.filename else None
        up = os.path.join(os.path.abspath(self.target.parent), "")
        ours = name and os.path.abspath(name).startswith(up)
        if isinstance(exc, OSError) and (exc.errno in _WRITE_ERRNOS or ours):
            what, note = (f" {name!r}" if name else ""), self.failure_note
            why = f"{exc.strerror or exc}; nothing was changed there{note and '; ' + note}"
            raise BiasampError(f"{self.where}: could not write{what}: {why}") from exc


class OutputFolder(_Output):
    """A folder of ``kind`` written as one transaction (``with`` gives the staging folder)."""

    def __init__(
        self, target, *, kind, overwrite=False, param="--out", update=False, failure_note=""
    ):
        super().__init__(target, param, failure_note)
        self.kind, self.update, self.overwrite = kind, update, overwrite or update
        self.staging, self.foreign = None, set()

    def check(self) -> None:
        """Refuse a target that cannot or must not be written (call before any long work)."""
        where, kind = self.where, KINDS[self.kind]
        present = {} if self._check("a folder") is None else _entries(self.target)
        if not present and not self.update:
            return
        if not self.overwrite:
            how = "choose a new folder or pass --overwrite"
            raise BiasampError(f"{where} exists and is not empty; {how}")
        found, owned = found_kind(self.target)
        if found is None and self.update and present:  # read by the caller; all is kept, unmarked
            found = self.kind
        if found != self.kind:
            held, how = KINDS.get(found, "no biasamp result"), f"replaces only {kind} it wrote"
            raise BiasampError(f"{where} holds {held}, not {kind}: biasamp {how}")
        self.foreign = set(present) - owned - {MARK}
        if bad := [f for f in sorted(self.foreign) if present[f] not in _PLAIN or not self.update]:
            more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
            what = f"{len(bad)} file(s) biasamp did not write ({bad[0]!r}, {present[bad[0]]}{more})"
            how = "biasamp replaces a folder as a whole: move them away or choose another folder"
            raise BiasampError(f"{where} holds {what}; {how}")

    def __enter__(self) -> Path:
        """Check; lock; put back what a dead run swapped out; check again; return the staging."""
        self._acquire()
        try:
            left = self._left("replaced")
            if left and not self.target.exists():
                os.replace(left.pop(), self.target)
            for dead in left + self._left("staging"):
                shutil.rmtree(dead, ignore_errors=True)
            self.check()
            self.staging = self._beside("staging")
            self.staging.mkdir()
            if self.update:  # add to a result: all it holds is kept (copied, not linked)
                shutil.copytree(self.target, self.staging, symlinks=True, dirs_exist_ok=True)
        except BaseException:
            self.abort()
            raise
        return self.staging

    begin = __enter__

    def commit(self) -> Path:
        """Write the mark; swap the staging into place with the stop signals held."""
        try:
            files = sorted(set(_entries(self.staging)) - self.foreign - {MARK})
            now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            mark = json.dumps({"kind": self.kind, "files": files, "written": now}, indent=1)
            (self.staging / MARK).unlink(missing_ok=True)  # a carried mark may be a link
            (self.staging / MARK).write_text(mark + "\n", encoding="utf-8")
            with signals_deferred():
                old, had = self._beside("replaced"), os.path.lexists(self.target)
                if had:
                    os.replace(self.target, old)
                try:
                    os.replace(self.staging, self.target)
                except OSError:
                    if had:
                        os.replace(old, self.target)
                    raise
                shutil.rmtree(old, ignore_errors=True)
                self.abort()  # the lock (the staging path is gone: it was renamed)
        except BaseException as exc:
            self.raise_write_error(exc)
            raise
        return self.target

    def abort(self) -> None:
        """Remove the staging; release the lock."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        super().abort()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.commit() if exc is None else self.raise_write_error(exc)


class OutputFile(_Output):
    """One file written beside and renamed into place (``with out.open() as f``); one there is
    replaced only with ``overwrite`` and when ``owned(path)`` says it is ``what`` biasamp wrote."""

    def __init__(self, target, *, overwrite=False, param="--out", owned=None, what="a file"):
        super().__init__(target, param)
        self.overwrite, self.owned, self.what = overwrite, owned, what

    def check(self) -> None:
        """Refuse a target that cannot or must not be written (call before any long work)."""
        if self._check("a file", ": biasamp writes beside and renames over the target") is None:
            return
        if not self.overwrite:
            raise BiasampError(f"{self.where} exists; choose a new file or pass --overwrite")
        if self.owned is not None and not self.owned(self.target):
            raise BiasampError(f"{self.where} is not {self.what} biasamp wrote: pick another name")

    @contextlib.contextmanager
    def open(self, *, newline: str = ""):
        """Lock; remove (and log) a dead writer's file; yield a UTF-8 file, renamed in after."""
        self._acquire()
        for dead in self._left("tmp"):  # its writer no longer holds the lock: it is gone
            dead.unlink(missing_ok=True)
            logging.getLogger(__name__).warning("removed %s, left by an interrupted run", dead)
        tmp = self._beside("tmp")
        try:
            with open(tmp, "x", encoding="utf-8", newline=newline) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            with signals_deferred():
                os.replace(tmp, self.target)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            self.raise_write_error(exc)
            raise
        finally:
            self.abort()
