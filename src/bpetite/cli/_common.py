"""What every command shares: reading input, loading and saving models, output, progress.

Every expected failure becomes a :class:`~bpetite.cli.CliError` with one line that names
the file, the value or the byte that is wrong, so ``main`` can print it without a
traceback. Nothing here imports ``rich`` at module level: it is loaded only when
something is actually drawn on a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from bpetite import Tokenizer
from bpetite._progress import Progress, ProgressCallback
from bpetite.cli import CliError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

#: The path that means "standard input" wherever a command reads a file.
STDIN = "-"
#: Help descriptions are wrapped to this width (argparse's own default is the terminal's).
_HELP_WIDTH = 79


# --------------------------------------------------------------------------- input


def describe_input(path: str) -> str:
    """How error messages name an input: the path in quotes, or standard input."""
    return "standard input" if path == STDIN else f"'{path}'"


def read_input_bytes(path: str, option: str = "--input") -> bytes:
    """Return the exact bytes of `path`, or of standard input for ``-``.

    Bytes, not text: opening in text mode would translate ``\\r\\n`` and use the
    locale's encoding, and a corpus must train exactly as its bytes say.
    """
    if path == STDIN:
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CliError(f"{option} file '{path}' does not exist") from None
    except IsADirectoryError:
        raise CliError(f"{option} '{path}' is a directory, not a file") from None
    except PermissionError:
        raise CliError(f"{option} file '{path}' cannot be read: permission denied") from None
    except OSError as error:
        raise CliError(f"{option} file '{path}' cannot be read: {_reason(error)}") from None


def decode_utf8(data: bytes, source: str) -> str:
    """Decode `data` as strict UTF-8, or fail naming `source` and the first bad byte's offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CliError(
            f"{source} is not valid UTF-8: byte 0x{data[error.start]:02x} at byte offset "
            f"{error.start} ({error.reason})"
        ) from None


def read_input_text(path: str, option: str = "--input") -> str:
    """The text of `path` (``-`` for standard input): its exact bytes as strict UTF-8."""
    return decode_utf8(read_input_bytes(path, option), describe_input(path))


def check_argument_text(text: str, option: str) -> str:
    """Return `text` if it is valid Unicode; argv can smuggle in raw non-UTF-8 bytes.

    On POSIX, Python turns argv bytes that are not UTF-8 into lone surrogates
    (``surrogateescape``), which cannot be encoded; name the original byte instead.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = text[error.start]
        code = ord(bad)
        shown = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else repr(bad)
        raise CliError(f"{option} is not valid UTF-8: {shown} at character {error.start}") from None
    return text


def parse_id_list(text: str, source: str) -> list[int]:
    """Parse a JSON array of token ids, as ``bpetite encode`` prints it."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise CliError(f"{source} is not valid JSON: {error}") from None
    if not isinstance(value, list):
        raise CliError(f"{source} must hold a JSON array of token ids, got {type(value).__name__}")
    for position, item in enumerate(value):
        if type(item) is not int:  # bool is an int subclass, and 1.0 is not an id
            raise CliError(
                f"{source} must hold a JSON array of integers, but item {position} is "
                f"{json.dumps(item)}"
            )
    return value


# --------------------------------------------------------------------------- models


def load_model(path: str) -> Tokenizer:
    """Load and validate the artifact at `path`; every defect becomes one clear line."""
    try:
        return Tokenizer.load(path)
    except FileNotFoundError:
        raise CliError(f"model file '{path}' does not exist") from None
    except IsADirectoryError:
        raise CliError(f"model '{path}' is a directory, not a tokenizer artifact") from None
    except PermissionError:
        raise CliError(f"model file '{path}' cannot be read: permission denied") from None
    except OSError as error:
        raise CliError(f"model file '{path}' cannot be read: {_reason(error)}") from None
    except (KeyError, ValueError) as error:
        detail = str(error.args[0]) if error.args else type(error).__name__
        # The loader starts its messages with the path; say it once.
        detail = detail.removeprefix(f"{path}: ")
        raise CliError(f"model '{path}' is not a valid bpetite artifact: {detail}") from None


def check_output_path(path: str, *, force: bool, option: str = "--output") -> None:
    """Refuse an output path that cannot be written, before any slow work starts.

    Training can take minutes; finding out afterwards that the file exists or the
    directory is missing would waste them. The save itself checks again (atomically).
    """
    destination = Path(path)
    if destination.is_dir():
        raise CliError(f"{option} '{path}' is a directory; give the path of a file")
    if not force and (destination.exists() or destination.is_symlink()):
        raise CliError(f"{option} '{path}' already exists; pass --force to replace it")
    parent = destination.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise CliError(f"cannot write {option} '{path}': directory '{parent}' {problem}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"cannot write {option} '{path}': directory '{parent}' is not writable")


def save_model(tokenizer: Tokenizer, path: str, *, force: bool, option: str = "--output") -> None:
    """Save atomically: an interrupted or failed save leaves no file and no temp file."""
    try:
        tokenizer.save(path, overwrite=force)
    except FileExistsError:
        raise CliError(f"{option} '{path}' already exists; pass --force to replace it") from None
    except OSError as error:
        raise CliError(f"cannot write {option} '{path}': {_reason(error)}") from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


# --------------------------------------------------------------------------- output


def write_json(value: object, *, compact: bool = False) -> None:
    """Write `value` as one line of JSON to stdout: the command's whole result.

    ``ensure_ascii`` keeps the bytes identical whatever the terminal's locale.
    """
    separators = (",", ":") if compact else (", ", ": ")
    write_stdout_bytes((json.dumps(value, separators=separators) + "\n").encode("ascii"))


def write_stdout_bytes(data: bytes) -> None:
    """Write raw bytes to stdout: no newline translation, no locale encoding."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream someone swapped in; text is all it takes
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()
        return
    buffer.write(data)
    buffer.flush()


def is_terminal(stream: TextIO) -> bool:
    """True when `stream` is an interactive terminal that can draw live output.

    ``TERM=dumb`` (Emacs shells, some CI logs) is a terminal that cannot move the
    cursor, so it gets the plain lines too.
    """
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or the stream is closed
        return False
    return interactive and os.environ.get("TERM", "") != "dumb"


def stderr_console(stream: TextIO | None = None) -> Console:
    """A rich Console on stderr (imports rich: call it only when drawing to a terminal)."""
    from rich.console import Console

    return Console(file=stream if stream is not None else sys.stderr, highlight=False)


# --------------------------------------------------------------------------- progress


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
        self._stream = stream if stream is not None else sys.stderr
        self._terminal = is_terminal(self._stream) if terminal is None else terminal
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
        print(f"{self.label}: {text}", file=self._stream, flush=True)


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


def add_command(
    subparsers: Subparsers, name: str, *, summary: str, description: str, examples: Sequence[str]
) -> argparse.ArgumentParser:
    """Add a subcommand parser whose --help ends with worked examples."""
    # Raw formatting keeps each example on one line, so the description is wrapped here.
    epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)
    return subparsers.add_parser(
        name,
        help=summary,
        description=textwrap.fill(description, width=_HELP_WIDTH),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
