"""Progress of long work on stderr: a live bar on a terminal, plain lines elsewhere.

Progress never goes to stdout, which holds only a command's result: with stderr
closed (``2>&-``) the lines are dropped.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Final, TextIO

from bpetite import Progress, ProgressCallback
from bpetite.cli._output import is_terminal, stderr_console, write_stderr

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

#: Off a terminal, counting writes a plain progress line about every this share of the bytes.
PLAIN_PROGRESS_STEP: Final = 0.1


class PhaseProgress:
    """Progress of one phase of work on stderr: merges learned, bytes counted, ...

    On a terminal it is a live rich bar (done/total, rate, elapsed, ETA); anywhere
    else one plain line per :meth:`update`, so a log or a pipe gets a readable record
    instead of cursor codes. The caller decides how often to update. Use it as a
    context manager so an exception (Ctrl-C included) still stops the live display
    and gives the terminal back.

    >>> import io
    >>> log = io.StringIO()
    >>> with PhaseProgress("count", "bytes", stream=log, terminal=False) as phase:
    ...     phase.start(10)
    ...     phase.advance(4)
    ...     phase.finish()
    >>> log.getvalue().splitlines()[0]
    'count: started, 0/10 bytes'
    """

    def __init__(
        self,
        label: str,
        unit: str,
        *,
        stream: TextIO | None = None,
        terminal: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.label = label
        self.unit = unit
        self.total = 0
        self.completed = 0
        self._stream: TextIO | None = stream if stream is not None else sys.stderr
        wanted = is_terminal(self._stream) if terminal is None else terminal
        self._terminal = wanted and self._stream is not None
        self._clock = clock
        self._started_at = 0.0
        self._live: tuple[RichProgress, TaskID] | None = None

    @property
    def terminal(self) -> bool:
        """Whether this reporter draws a live bar (True) or writes plain lines."""
        return self._terminal

    def start(self, total: int) -> None:
        """Begin the phase with `total` units to do."""
        self.total = total
        self.completed = 0
        self._started_at = self._clock()
        if self._terminal:
            progress = _rich_progress(stderr_console(self._stream), self.unit)
            progress.start()
            self._live = (progress, progress.add_task(self.label, total=total))
        else:
            self._line(f"started, 0/{total} {self.unit}")

    def update(self, completed: int) -> None:
        """Record that `completed` units are done in all."""
        self.completed = completed
        if self._live is not None:
            progress, task = self._live
            progress.update(task, completed=completed)
            return
        elapsed = self._clock() - self._started_at
        rate = completed / elapsed if elapsed > 0 else 0.0
        detail = f"{completed}/{self.total} {self.unit}"
        if rate > 0:
            eta = max(self.total - completed, 0) / rate
            detail += f" ({_rate(rate)} {self.unit}/s, ETA {_duration(eta)})"
        self._line(detail)

    def advance(self, amount: int = 1) -> None:
        """Record `amount` more units done."""
        self.update(self.completed + amount)

    def finish(self, completed: int | None = None, note: str = "") -> None:
        """End the phase (`completed` defaults to what is done so far); `note` explains why."""
        if completed is not None:
            self.completed = completed
        elapsed = self._clock() - self._started_at
        if self._live is not None:
            progress, task = self._live
            # A phase that ends early still ends: show a full bar at what was done.
            progress.update(task, completed=self.completed, total=max(self.completed, 1))
            self.close()
        summary = f"done, {self.completed}/{self.total} {self.unit} in {_duration(elapsed)}"
        self._line(summary + (f" ({note})" if note else ""))

    def close(self) -> None:
        """Stop the live display, if any; safe to call more than once."""
        if self._live is not None:
            progress, _ = self._live
            self._live = None
            progress.stop()

    def __enter__(self) -> PhaseProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _line(self, text: str) -> None:
        if self._stream is not None:
            write_stderr(f"{self.label}: {text}\n", self._stream)


def training_progress(phase: PhaseProgress) -> ProgressCallback:
    """Adapt the trainer's start/merge/done reports to a :class:`PhaseProgress`."""

    def report(event: Progress) -> None:
        if event.stage == "start":
            phase.start(event.total)
        elif event.stage == "update":
            phase.update(event.done)
        else:
            early = event.done < event.total
            note = "stopped early: no adjacent pair left to merge" if early else ""
            phase.finish(event.done, note)

    return report


def counting_progress(phase: PhaseProgress) -> ProgressCallback:
    """Adapt counting reports to a phase; off a terminal, about one line per tenth."""
    next_line = 0

    def report(event: Progress) -> None:
        nonlocal next_line
        if event.stage == "start":
            phase.start(event.total)
            next_line = round(event.total * PLAIN_PROGRESS_STEP)
        elif event.stage == "update":
            if phase.terminal or event.done >= next_line:
                phase.update(event.done)
                next_line = event.done + round(event.total * PLAIN_PROGRESS_STEP)
        else:
            phase.finish(event.done)

    return report


def _duration(seconds: float) -> str:
    """``0.35 s``, ``2 min 05 s``, ``3 h 07 min``: as precise as a person needs."""
    if seconds < 60:
        return f"{seconds:.2f} s"
    if seconds < 3600:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


def _rate(per_second: float) -> str:
    """Whole units when fast, two significant digits when slow (never a bare 0)."""
    return f"{per_second:.0f}" if per_second >= 10 else f"{per_second:.2g}"


def _rich_progress(console: Console, unit: str) -> RichProgress:
    """A rich Progress with the columns a long phase needs: done/total, rate, ETA."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Units per second; rich's own speed column only knows bytes."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            shown = "?" if speed is None else f"{speed:,.0f}"
            return Text(f"{shown} {unit}/s", style="progress.data.speed")

    from rich.progress import Progress as RichProgress

    return RichProgress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
