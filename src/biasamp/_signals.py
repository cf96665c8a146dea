"""The signals that stop a run: SIGINT (Ctrl-C), SIGTERM (``kill``, ``timeout``, Slurm,
``docker stop``) and SIGHUP (a closed terminal or SSH session).

Two tools, both for the main thread (signal handlers can only be set there; elsewhere they do
nothing):

- :func:`stop_signals_raise` (the CLI, around a whole command): SIGTERM and SIGHUP raise
  :class:`Stopped` (a ``KeyboardInterrupt``), so every ``finally`` and ``except BaseException``
  that cleans up after Ctrl-C runs for them too: staging folder and lock removed, exit code
  ``128 + signal number``.
- :func:`signals_deferred` (around the renames that put a result in place): the three signals
  are recorded instead of acted on, then delivered once the block ends. A handler set from
  Python runs in the main thread whichever thread the kernel gave the signal to (torch's and
  tqdm's threads included), so no thread can stop the process inside the block; blocking the
  signals with ``pthread_sigmask`` would cover the calling thread only.

>>> with signals_deferred():
...     pass
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["STOP_SIGNALS", "Stopped", "signals_deferred", "stop_signals_raise"]

#: The signals a run treats as "stop now, cleanly".
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, n))


class Stopped(KeyboardInterrupt):
    """A stop signal other than Ctrl-C (SIGTERM, SIGHUP) received by the CLI."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise_stopped(signum, frame):
    raise Stopped(signum)


@contextlib.contextmanager
def stop_signals_raise():
    """SIGTERM and SIGHUP raise :class:`Stopped` for the duration (where they still have
    their default action; a handler someone else set is kept)."""
    old = {}
    if _main_thread():
        for s in STOP_SIGNALS:
            if s != signal.SIGINT and signal.getsignal(s) == signal.SIG_DFL:
                old[s] = signal.signal(s, _raise_stopped)
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def signals_deferred():
    """Hold the stop signals for the duration; deliver the first one received afterwards
    (to whatever handler was in place before: ``KeyboardInterrupt``, :class:`Stopped`, or
    the default action)."""
    if not _main_thread():  # pragma: no cover - a run in a worker thread
        yield
        return
    received: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: received.append(signum))
           for s in STOP_SIGNALS if signal.getsignal(s) is not None}  # None: set outside Python
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if received:
            signal.raise_signal(received[0])
