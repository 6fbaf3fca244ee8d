"""Progress of a long command on stderr: one line with the estimate up front, then a bar.

The command line (:mod:`aimrepro.cli`) announces a run whose estimated time
(``aimrepro.resources``: ``Estimate.seconds``) exceeds a few seconds with one
line, then shows how far the run is while it goes.  Stdout, where the JSON
lines go, is never touched.

* On a terminal the bar is redrawn in place (carriage return), at most ten
  times a second: ``sgd [########------------] 40% 1.2e5/3e5 steps, 8 s, ~12 s left``.
* Elsewhere (a log file, a pipe, a batch job) a full line is written at each
  tenth of the run, so the log has at most ten lines and no control
  characters.

The solvers know nothing of this module: they take an optional callback
``progress(done, total)`` (SGD steps, Fisher-table samples) or a per-iteration
callback (AMP, GD), and :class:`ProgressBar` is one such callable.  Only the
standard library is used, so that importing it costs nothing.
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

__all__ = ["ProgressBar", "format_seconds"]

#: Characters of the bar on a terminal.
_BAR_WIDTH = 24
#: Least seconds between two redraws on a terminal.
_REDRAW_SECONDS = 0.1
#: Lines written when the stream is not a terminal: one at each tenth.
_STEPS_OFF_TERMINAL = 10


def format_seconds(seconds: float) -> str:
    """A duration for people: ``0.4 s``, ``12 s``, ``3.5 min``, ``2.1 h``, ``4e+03 days``, ``forever``."""
    if not math.isfinite(seconds):
        return "forever"
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.2g} min"
    if seconds < 172800:
        return f"{seconds / 3600:.2g} h"
    return f"{seconds / 86400:.2g} days"


class ProgressBar:
    """A progress bar on ``stream`` for a loop of ``total`` units; call it as ``bar(done)``.

    Parameters
    ----------
    label : str
        What runs (``"sgd"``, ``"Fisher table"``), the start of every line.
    total : int
        Units of the whole loop (steps, iterations, samples); the bar is full
        at ``total``.  A loop that stops early (AMP converging) ends with
        :meth:`close`.
    unit : str
        The units' name in the line (``"steps"``).
    stream : text file
        Default stderr.  Whether it is a terminal decides the form.
    """

    def __init__(self, label: str, total: int, *, unit: str = "steps",
                 stream: TextIO | None = None) -> None:
        self.label, self.total, self.unit = label, max(1, int(total)), unit
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.started = time.monotonic()
        self._last_draw = -math.inf
        self._last_tenth = 0
        self._done = 0
        self._open = True

    def __call__(self, done: int, total: int | None = None) -> None:
        """Record that ``done`` units are finished (``total`` may restate the loop's size)."""
        if total is not None:
            self.total = max(1, int(total))
        self._done = min(int(done), self.total)
        if self.terminal:
            now = time.monotonic()
            if now - self._last_draw >= _REDRAW_SECONDS or self._done >= self.total:
                self._last_draw = now
                self.stream.write("\r" + self._line() + "\033[K")
                self.stream.flush()
            return
        tenth = self._done * _STEPS_OFF_TERMINAL // self.total
        if tenth > self._last_tenth:
            self._last_tenth = tenth
            self.stream.write(self._line() + "\n")
            self.stream.flush()

    def close(self, message: str | None = None) -> None:
        """End the bar (a terminal line is finished); ``message`` replaces the last state."""
        if not self._open:
            return
        self._open = False
        elapsed = format_seconds(time.monotonic() - self.started)
        text = message if message is not None else f"done in {elapsed}"
        if self.terminal:
            self.stream.write("\r" + self._line() + "\033[K\n")
        self.stream.write(f"{self.label}: {text}\n")
        self.stream.flush()

    def _line(self) -> str:
        fraction = self._done / self.total
        elapsed = time.monotonic() - self.started
        left = (elapsed * (1 - fraction) / fraction) if fraction > 0 else math.inf
        filled = int(round(fraction * _BAR_WIDTH))
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        return (f"{self.label} [{bar}] {fraction:4.0%} {self._done:.3g}/{self.total:.3g} {self.unit}, "
                f"{format_seconds(elapsed)}" + (f", ~{format_seconds(left)} left" if fraction < 1 else ""))
