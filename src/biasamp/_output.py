"""Output folders written as one transaction: checked, locked, staged, renamed into place.

A run never writes into its target folder directly. :class:`OutputFolder` checks the target
before any long work (not a file, writable, empty unless ``overwrite``), takes a lock beside it
(a second writer is refused), stages everything in a hidden folder beside it, and on success
renames the staged folder into place (the previous folder, with ``overwrite``, is replaced as a
whole: no stale file survives). On an error or Ctrl-C the staged folder is removed: the target
holds either the previous complete result or nothing.

Files beside a target ``out`` (same parent): ``.out.lock`` (pid, host, start time),
``.out.staging-<pid>-<n>`` (while writing), ``.out.replaced-<pid>-<n>`` (for an instant while an
old folder is swapped out; put back if a run died there).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import itertools
import json
import os
import shutil
import signal
import socket
import threading
from pathlib import Path

from ._errors import BiasampError

__all__ = ["OutputFolder"]

_COUNTER = itertools.count()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a process of another user
        return True
    return True


@contextlib.contextmanager
def _signals_held():
    """Block SIGINT/SIGTERM in the main thread for the duration (POSIX); they are delivered
    when the block is lifted."""
    can = (hasattr(signal, "pthread_sigmask")
           and threading.current_thread() is threading.main_thread())
    if not can:  # pragma: no cover - Windows or a worker thread
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class OutputFolder:
    """The target folder of a run, written as one transaction.

    Parameters
    ----------
    target : path
        The folder the run produces.
    overwrite : bool
        Replace an existing non-empty folder (as a whole). Without it such a folder is refused.
    param : str
        The option name for messages (``--out``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with OutputFolder(out) as staging:
    ...     _ = (staging / "a.txt").write_text("done")
    >>> sorted(p.name for p in out.iterdir())
    ['a.txt']
    """

    def __init__(self, target, *, overwrite: bool = False, param: str = "out"):
        self.target = Path(os.path.expanduser(str(target)))
        self.overwrite = overwrite
        self.param = param
        self.lock_path = self.target.parent / f".{self.target.name}.lock"
        self.staging: Path | None = None
        self._locked = False

    # ------------------------------------------------------------------ checks
    def check(self) -> None:
        """Refuse a target that cannot be written (call before any long work)."""
        t, p = self.target, self.param
        if not t.name or t.name in (".", ".."):
            raise BiasampError(f"{p} must name a folder; got {str(t)!r}")
        if t.exists() and not t.is_dir():
            raise BiasampError(f"{p} {str(t)!r} is a file; give a folder")
        if t.is_dir() and any(t.iterdir()) and not self.overwrite:
            raise BiasampError(f"{p} {str(t)!r} exists and is not empty; choose a new folder or "
                               "pass --overwrite (overwrite=True) to replace it as a whole")
        parent = t.parent
        existing = next((a for a in (parent, *parent.parents) if a.exists()), None)
        if existing is None or not existing.is_dir():
            raise BiasampError(f"{p} {str(t)!r}: {str(existing)!r} is not a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise BiasampError(f"{p} {str(t)!r}: no permission to write in {str(existing)!r}")

    # ------------------------------------------------------------------ lock
    def _read_lock(self) -> dict:
        try:
            return json.loads(self.lock_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def acquire(self) -> None:
        """Take the lock beside the target (stale locks of dead processes are taken over)."""
        if self._locked:
            return
        self.target.parent.mkdir(parents=True, exist_ok=True)
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        for _ in range(2):
            try:
                fd = os.open(self.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                held = self._read_lock()
                same_host = held.get("host") == info["host"]
                if same_host and isinstance(held.get("pid"), int) and not _pid_alive(held["pid"]):
                    self.lock_path.unlink(missing_ok=True)  # its writer died: take over
                    continue
                raise BiasampError(
                    f"{self.param} {str(self.target)!r} is being written by another biasamp run "
                    f"(pid {held.get('pid', '?')} on {held.get('host', '?')} since "
                    f"{held.get('since', '?')}); wait for it, or delete "
                    f"{str(self.lock_path)!r} if no such run is active") from None
            except OSError as exc:
                raise BiasampError(f"{self.param} {str(self.target)!r}: cannot create the lock "
                                   f"file beside it: {exc.strerror}") from None
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(info, f)
            self._locked = True
            self._recover()
            return
        raise BiasampError(f"{self.param} {str(self.target)!r}: could not take the lock "
                           f"{str(self.lock_path)!r}")  # pragma: no cover

    def release(self) -> None:
        if self._locked:
            self.lock_path.unlink(missing_ok=True)
            self._locked = False

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

    def commit(self) -> Path:
        """Move the staged folder into place (replacing the old one as a whole).

        Ctrl-C (SIGINT/SIGTERM) is held back during the swap and delivered after it, so the
        target is never left half swapped by an interrupt.
        """
        if self.staging is None:  # pragma: no cover - programming error
            raise RuntimeError("commit() without begin()")
        with _signals_held():
            return self._swap()

    def _swap(self) -> Path:
        old = None
        if self.target.exists():
            n = next(_COUNTER)
            old = self.target.parent / f".{self.target.name}.replaced-{os.getpid()}-{n}"
            os.replace(self.target, old)
        try:
            os.replace(self.staging, self.target)
        except OSError as exc:
            if old is not None:
                os.replace(old, self.target)
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):  # pragma: no cover
                raise BiasampError(f"{self.param} {str(self.target)!r} appeared during the "
                                   "run; nothing was written") from None
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

    def __enter__(self) -> Path:
        return self.begin()

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False
