"""The lock beside an output folder: one writer at a time, and a rule for the lock of a run that
is gone.

The lock file holds the writer's pid, host and start time, and its modification time is
refreshed every :data:`HEARTBEAT_S` seconds while it is held. A lock of this host whose process
is dead is taken over. A lock of another host (a cluster's shared file system: the rerun comes
from another node) cannot have its pid checked from here; it is taken over once it has not been
refreshed for :data:`STALE_AFTER_S` seconds, with a :class:`~biasamp.StaleLockWarning` naming
its host and pid. Taking over moves the stale file aside first and checks it is the one that
was read, so two runs that find the same stale lock do not both win.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import threading
import time
import warnings
from pathlib import Path

from ._errors import BiasampError, StaleLockWarning

__all__ = ["FolderLock", "HEARTBEAT_S", "STALE_AFTER_S"]

#: Seconds between two refreshes of a held lock (its modification time).
HEARTBEAT_S = 30.0
#: A lock of another host not refreshed for this long belongs to a run that is gone.
STALE_AFTER_S = 600.0

_IDENTITY = ("pid", "host", "since")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a process of another user
        return True
    return True


def _read(path: Path) -> dict:
    """The lock's content plus ``age`` (seconds since its last refresh); {} when unreadable."""
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(held, dict):
            return {}
        held["age"] = time.time() - path.stat().st_mtime
        return held
    except (OSError, ValueError):
        return {}


class _Heartbeat(threading.Thread):
    """Touches the lock file every :data:`HEARTBEAT_S` seconds until ``done`` is set."""

    def __init__(self, path: Path):
        super().__init__(name="biasamp-lock-heartbeat", daemon=True)
        self.path, self.done = path, threading.Event()

    def run(self) -> None:
        while not self.done.wait(HEARTBEAT_S):
            try:
                os.utime(self.path)
            except OSError:  # pragma: no cover - the folder went away; the run will fail
                return


class FolderLock:
    """The lock file ``path``; ``where`` names the target in messages."""

    def __init__(self, path: Path, where: str):
        self.path, self.where = path, where
        self._heartbeat: _Heartbeat | None = None

    @property
    def held(self) -> bool:
        return self._heartbeat is not None

    def _stale(self, held: dict, host: str) -> bool:
        if held.get("host") == host:
            return isinstance(held.get("pid"), int) and not _pid_alive(held["pid"])
        return held.get("age", 0.0) > STALE_AFTER_S

    def _take_over(self, held: dict) -> bool:
        """Move the stale lock aside; False when it changed meanwhile (another run took it)."""
        aside = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return True
        now = _read(aside)
        if {k: now.get(k) for k in _IDENTITY} != {k: held.get(k) for k in _IDENTITY}:
            os.rename(aside, self.path)  # pragma: no cover - a race lost
            return False
        aside.unlink(missing_ok=True)
        if held.get("host") != socket.gethostname():
            warnings.warn(f"{self.where}: took over the lock of pid {held.get('pid')} on "
                          f"{held.get('host')}, not refreshed for {held.get('age', 0.0):.0f} s",
                          StaleLockWarning, stacklevel=2)
        return True

    def acquire(self) -> None:
        """Take the lock (a stale one is taken over; see the module); refuse a live one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        host = socket.gethostname()
        info = {"pid": os.getpid(), "host": host,
                "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                held = _read(self.path)
                if self._stale(held, host) and self._take_over(held):
                    continue
                rule = ("" if held.get("host") == host else
                        "; a lock of another host is taken over once it has not been "
                        f"refreshed for {STALE_AFTER_S:.0f} s (this one: "
                        f"{held.get('age', 0.0):.0f} s)")
                raise BiasampError(
                    f"{self.where} is being written by another biasamp run "
                    f"(pid {held.get('pid', '?')} on {held.get('host', '?')} since "
                    f"{held.get('since', '?')}); wait for it, or delete {str(self.path)!r} "
                    f"if no such run is active{rule}") from None
            except OSError as exc:
                raise BiasampError(f"{self.where}: cannot create the lock file beside it: "
                                   f"{exc.strerror}") from None
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(info, f)
            self._heartbeat = _Heartbeat(self.path)
            self._heartbeat.start()
            return
        raise BiasampError(f"{self.where}: could not take the lock "
                           f"{str(self.path)!r}")  # pragma: no cover

    def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.done.set()
            self._heartbeat = None
            self.path.unlink(missing_ok=True)
