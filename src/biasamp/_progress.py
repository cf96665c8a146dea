"""Progress of long work: the library reports it (:meth:`Progress.stage` with its total, then
:meth:`Progress.advance`) and never prints; the caller shows it (:class:`Display`: one tqdm bar
on a terminal, else plain lines such as ``progress: scoring T->A 480/960 ctx, 12 s left``).

>>> import io
>>> out = io.StringIO()
>>> show = Display(out, terminal=False, interval=0)
>>> show.stage("bootstrap", 4, "tables")
>>> show.advance(4)
>>> print(out.getvalue(), end="")
progress: bootstrap 4/4 tables
>>> as_progress(None) is SILENT
True
"""

from __future__ import annotations

import sys
import time

from ._errors import BiasampError


class Progress:
    """A progress reporter: a ``stage`` starts (its ``total`` in ``unit``, None: unknown),
    ``advance`` by ``n`` units, ``write`` a line (a warning) without breaking the display,
    ``close`` at the end. This base class shows nothing."""

    def stage(self, name: str, total: int | None, unit: str = "it") -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def write(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


#: The silent reporter (what library code gets when it is given None or False).
SILENT = Progress()


def as_progress(value) -> Progress:
    """The reporter of a ``progress`` argument: None/False silent (:data:`SILENT`), True the
    standard display on stderr, a :class:`Progress` itself.

    >>> as_progress("yes")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: progress must be a bool or a biasamp Progress reporter; got 'yes'
    """
    if value is None or value is False:
        return SILENT
    if value is True:
        return Display()
    if isinstance(value, Progress):
        return value
    raise BiasampError(f"progress must be a bool or a biasamp Progress reporter; got {value!r}")


def _duration(seconds: float) -> str:
    """``12 s``, ``3 min 5 s``, ``2 h 10 min``.

    >>> _duration(12.4), _duration(185), _duration(7800)
    ('12 s', '3 min 5 s', '2 h 10 min')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _amount(n: float, unit: str) -> str:
    if unit == "B":
        from tqdm import tqdm

        return tqdm.format_sizeof(n, "B") if n else "0B"
    return f"{int(n):,}"


#: Off a terminal: seconds into a stage before its first plain line, and between two lines.
PLAIN_INTERVAL = 10.0


class Display(Progress):
    """The one progress display of a ``biasamp`` run, on ``stream`` (default ``sys.stderr``,
    looked up when used): a bar if ``terminal`` (default: whether the stream is one), else
    plain lines at most every ``interval`` seconds (default :data:`PLAIN_INTERVAL`)."""

    def __init__(self, stream=None, *, interval: float | None = None, terminal: bool | None = None):
        self._stream = stream
        self.interval = float(PLAIN_INTERVAL if interval is None else interval)
        self._terminal = terminal
        self._bar = None
        self._name, self._unit, self._total, self._n = "", "it", 0, 0
        self._start = self._last = 0.0

    @property
    def stream(self):
        return sys.stderr if self._stream is None else self._stream

    @property
    def terminal(self) -> bool:
        if self._terminal is None:
            isatty = getattr(self.stream, "isatty", None)
            return bool(isatty and isatty())
        return self._terminal

    def stage(self, name: str, total: int | None, unit: str = "it") -> None:
        self._name, self._unit, self._n = str(name), str(unit), 0
        self._total = None if total is None else int(total)
        self._start = self._last = time.monotonic()
        if not self.terminal:  # its first line once it has run `interval` seconds
            return
        from tqdm.auto import tqdm

        if self._bar is None:  # one bar for the run: later stages reset it
            self._bar = tqdm(
                total=self._total,
                desc=self._name,
                unit=self._unit,
                unit_scale=self._unit == "B",
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
            )
            return
        self._bar.unit, self._bar.unit_scale = self._unit, self._unit == "B"
        self._bar.set_description_str(self._name, refresh=False)
        self._bar.reset(total=self._total)

    def advance(self, n: int = 1) -> None:
        self._n += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._name:
            now = time.monotonic()
            if now - self._last >= self.interval:
                self._line(now)

    def _line(self, now: float) -> None:
        self._last = now
        unit = "" if self._unit == "B" else f" {self._unit}"  # 52.4MB/100MB, 480/960 ctx
        total = "" if self._total is None else "/" + _amount(self._total, self._unit)
        text = f"progress: {self._name} {_amount(self._n, self._unit)}{total}{unit}"
        if self._total is not None and 0 < self._n < self._total and now > self._start:
            left = (now - self._start) / self._n * (self._total - self._n)
            text += f", {_duration(left)} left"
        print(text, file=self.stream, flush=True)

    def write(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._name = ""
