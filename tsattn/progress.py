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
    """Prints ``"<what>: <stage>, elapsed Ns"`` through ``echo`` whenever ``every`` seconds pass without a line."""

    def __init__(self, echo, what: str, every: float = EVERY_SECONDS):
        self._echo, self.what, self.every = echo, what, float(every)
        self.text = "working"
        self._started = self._last = time.perf_counter()
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()

    def echo(self, line: str) -> None:
        """Print ``line`` (the work's own progress) and restart the quiet clock."""
        with self._lock:
            self._last = time.perf_counter()
            self._echo(line)

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
                self._echo(f"{self.what}: {text}, elapsed {now - self._started:.0f}s")

    def __enter__(self) -> "Heartbeat":
        self._thread = threading.Thread(target=self._run, name="tsattn-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


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
