"""A line at least every few seconds while long work runs, whatever runs it.

Epoch lines, per-run lines and per-trial lines say what finished; between them (the first epoch's tracing, scoring
a 1428-series panel, a statistical method refitted at hundreds of origins, a comparison's first run) nothing did,
and a user off a terminal (a log, CI) saw nothing for minutes. :class:`Heartbeat` watches the lines the work
prints through it and, when none came for ``every`` seconds, prints what is running and for how long:

    with Heartbeat(echo, "compare") as beat:
        beat.stage("sunspots attention-rnn seed 0")
        ...                                           # echo(...) through beat.echo resets the clock

A daemon thread waits on an event, so it costs nothing while lines flow and stops with the block.
"""

from __future__ import annotations

import threading
import time

EVERY_SECONDS = 10.0


class Heartbeat:
    """Prints ``"<what>: <stage>, elapsed Ns"`` through ``echo`` whenever ``every`` seconds pass without a line.

    With ``total`` (runs, trials, refits) and an ``echo`` that names a terminal (its ``terminal`` attribute: the
    CLI's progress output on a terminal, never with --quiet or --json), a tqdm bar counts the units done at the
    bottom of the screen, the work's lines print above it, and the bar's own clock replaces the quiet lines."""

    def __init__(self, echo, what: str, every: float = EVERY_SECONDS, total: int | None = None, unit: str = "run"):
        self._echo, self.what, self.every = echo, what, float(every)
        self.text = "working"
        self._started = self._last = time.perf_counter()
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()
        self.bar = None
        if total:
            self.count(total, unit)

    @property
    def terminal(self):
        """The terminal a bar may be drawn on (the echo's ``terminal``: the CLI's stderr on a terminal, without
        --quiet or --json), or None."""
        return getattr(self._echo, "terminal", None)

    def count(self, total: int, unit: str = "run") -> None:
        """From now on ``total`` units are to be done (on a terminal: a bar of them)."""
        if self.bar is None and total and self.terminal is not None:
            self.bar = progress_bar(total, self.what, unit, self.terminal)

    def __call__(self, line: str) -> None:
        """The heartbeat as an echo: :meth:`echo`."""
        self.echo(line)

    def echo(self, line: str) -> None:
        """Print ``line`` (the work's own progress) and restart the quiet clock."""
        with self._lock:
            self._last = time.perf_counter()
            if self.bar is not None:
                self.bar.write(line, file=self.bar.fp)  # above the bar, which is drawn again below it
            else:
                self._echo(line)

    def advance(self) -> None:
        """One unit is done (the bar moves; nothing is printed)."""
        if self.bar is not None:
            with self._lock:
                self.bar.set_postfix_str("", refresh=False)  # the quiet stage said beside it is over
                self.bar.update(1)

    def stage(self, text) -> None:
        """What is running now (said by the next heartbeat line)."""
        self.text = text

    def touch(self) -> None:
        """A line went out another way (an epoch line written to the stream): restart the quiet clock."""
        self._last = time.perf_counter()

    def stream(self, stream):
        """``stream`` (sys.stderr) wrapped so that every write restarts the quiet clock (for Keras callbacks)."""
        return _TouchingStream(stream, self)

    def _run(self) -> None:
        limit = 0.95 * self.every  # a line a little before the limit: thread wake-ups are late, never early
        while True:
            now = time.perf_counter()
            wait = self._last + limit - now
            if wait > 0:
                if self._stop.wait(min(wait, 0.5)):
                    return
                continue
            with self._lock:
                self._last = now
                text = self.text() if callable(self.text) else self.text  # a callable: read when the line is due
                if self.bar is not None:  # on a terminal the bar says it: its clock moves, the stage beside it
                    self.bar.set_postfix_str(text[:60])
                else:
                    self._echo(f"{self.what}: {text}, elapsed {now - self._started:.0f}s")

    def __enter__(self) -> "Heartbeat":
        self._thread = threading.Thread(target=self._run, name="tsattn-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.bar is not None:
            self.bar.close()


def progress_bar(total: int, what: str, unit: str, stream):
    """A tqdm bar of ``total`` units on ``stream`` (a terminal), redrawn in place and kept when done: the one bar
    of every long work (a fit's epochs, compare's runs, tune's trials, backtest's refits)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit=unit, file=stream, dynamic_ncols=True, leave=True)


class _TouchingStream:
    def __init__(self, stream, beat: Heartbeat):
        self._stream, self._beat = stream, beat

    def write(self, text: str) -> int:
        self._beat.touch()
        return self._stream.write(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return hasattr(self._stream, "isatty") and self._stream.isatty()
