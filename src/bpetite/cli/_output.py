"""What a command writes: its result on stdout, notes and errors on stderr.

Every byte of a result reaches stdout or the command fails: a raw or non-blocking
stream may accept only part of a write, so writes loop until the last byte is taken.
Every byte taken is counted, so a command that fails or is stopped after writing part
of its result says how much there is and that it is incomplete (``_delivered``).
stdout or stderr may also be closed (``>&-``), in which case Python sets them to None;
a result then fails with one line on stderr, and a note is dropped rather than ever
falling back onto stdout, which only ``print(file=None)`` would do.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import stat
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Final, Protocol, TextIO

from bpetite._internal import SHOWN_CHARS, shown
from bpetite.cli._delivered import count_stdout
from bpetite.cli._errors import CliError
from bpetite.cli._signals import signals_deferred

if TYPE_CHECKING:
    from rich.console import Console

#: A whole error line is elided past this many characters: room for a few whole paths
#: (each up to SHOWN_CHARS, PATH_MAX) and the words around them; only a message that
#: quotes pathological values reaches it.
ERROR_LINE_CHARS: Final = 5 * SHOWN_CHARS
#: Bytes copied to stdout at a time from a finished result, and offered per write to a
#: regular file.
COPY_BYTES: Final = 1 << 20
#: Bytes offered per write to a pipe or terminal: POSIX lets a pipe with room take this
#: many in one go, so the write does not wait on the reader while signals are held.
PIPE_CHUNK_BYTES: Final = getattr(select, "PIPE_BUF", 4096)


class _BinaryWriter(Protocol):
    def write(self, data: memoryview, /) -> int | None: ...


def exists_message(option: str, path: str) -> str:
    """The one wording for an output that is already there."""
    return f"{option} '{shown(path)}' already exists; pass --force to replace it"


#: What a write that fails for want of room raises: a full disk, a quota, a size limit.
_NO_ROOM: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@contextlib.contextmanager
def writing_output(option: str, path: str) -> Iterator[None]:
    """Report a failure to write `option`'s output as one line naming it.

    For the commands whose library call writes the output (``dataset``, ``export``):
    an OSError that names no file, or says the disk is full, is about the output; one
    that names another file (an input that cannot be read) keeps its own words.
    """
    try:
        yield
    except OSError as error:
        if isinstance(error, FileExistsError) or (
            error.filename is not None and error.errno not in _NO_ROOM
        ):
            raise
        reason = error.strerror or error
        raise CliError(f"cannot write {option} '{shown(path)}': {reason}") from None


# --------------------------------------------------------------------------- stdout


def write_json(value: object, *, compact: bool = False) -> None:
    """Write `value` as one line of JSON to stdout: the command's whole result.

    ``ensure_ascii`` keeps the bytes identical whatever the terminal's locale.
    """
    separators = (",", ":") if compact else (", ", ": ")
    write_result((json.dumps(value, separators=separators) + "\n").encode("ascii"))


def write_result(data: bytes) -> None:
    """Write all of `data` to stdout, raw, as the command's whole result.

    No newline translation, no locale encoding. Raises CliError when stdout is closed or
    refuses the bytes (a full disk); a reader that went away raises BrokenPipeError,
    which ``main`` turns into a quiet exit 1. Every byte taken is counted
    (``_delivered``), and the last one marks the result complete.
    """
    _write_stdout(data, completes=True)


def write_result_from(stream: IO[bytes]) -> None:
    """Copy a finished result from `stream` (from its start) to stdout, a block at a time."""
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    if sys.stdout is not None and getattr(sys.stdout, "buffer", None) is None:
        # A text-only stream takes whole characters: give it the result in one piece.
        _write_stdout(stream.read(), completes=True)
        return
    while True:
        block = stream.read(COPY_BYTES)
        last = stream.tell() >= size
        _write_stdout(block, completes=last)
        if last:
            return


def _write_stdout(data: bytes, *, completes: bool) -> None:
    stream = sys.stdout
    if stream is None:
        raise CliError("standard output is closed; the result was not written")
    try:
        stream.flush()  # whatever was printed before comes first
        buffer = getattr(stream, "buffer", None)
        if buffer is None:  # a text-only stream someone swapped in; text is all it takes
            with signals_deferred():
                stream.write(data.decode("utf-8"))
                stream.flush()
                count_stdout(len(data), completes=completes)
            return
        buffer.flush()
        fd = _fileno(buffer)
        if fd is None:
            write_all(buffer, data, completes=completes)
            buffer.flush()
        else:
            write_all_fd(fd, data, completes=completes)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise CliError(f"cannot write to standard output: {error.strerror or error}") from None


def write_all(stream: _BinaryWriter, data: bytes, *, completes: bool = False) -> None:
    """Write `data` to a binary stream that may take fewer bytes than offered."""
    view = memoryview(data)
    if not view:
        count_stdout(0, completes=completes)
    while view:
        with signals_deferred():
            try:
                written = stream.write(view)
            except BlockingIOError as error:
                written = error.characters_written
            if written:
                view = view[written:]
                count_stdout(written, completes=completes and not view)
        if not written:  # None (would block) or 0: no progress, and no fd to wait on
            raise CliError("standard output accepted no more bytes")


def write_all_fd(fd: int, data: bytes, *, completes: bool = False) -> None:
    """Write `data` to file descriptor `fd`, waiting while it is full.

    Each write waits for room first (a signal can stop the wait), then offers what a
    pipe takes without blocking, so the write and the count of its bytes run with
    signals held and never wait on the reader.
    """
    view = memoryview(data)
    if not view:
        count_stdout(0, completes=completes)
    chunk = _chunk_bytes(fd)
    while view:
        select.select([], [fd], [])
        with signals_deferred():
            try:
                written = os.write(fd, view[:chunk])
            except BlockingIOError:  # another writer took the room first
                written = 0
            view = view[written:]
            count_stdout(written, completes=completes and not view)


def _chunk_bytes(fd: int) -> int:
    """Bytes offered per write: a pipe or terminal takes PIPE_BUF without blocking once
    ``select`` says it has room; a regular file never blocks on a reader."""
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    return COPY_BYTES if regular else PIPE_CHUNK_BYTES


def _fileno(stream: object) -> int | None:
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation, a closed stream
        return None
    return fd if isinstance(fd, int) else None


# --------------------------------------------------------------------------- stderr


def note(text: str) -> None:
    """Write one line to stderr; dropped when stderr is closed or cannot take it."""
    write_stderr(text + "\n")


def write_stderr(text: str, stream: TextIO | None = None) -> None:
    """Write `text` to `stream` (default stderr) and flush; never to stdout, never raises
    for a stream that is gone: a note is not worth failing a command for."""
    target = stream if stream is not None else sys.stderr
    if target is None:
        return
    try:
        target.write(text)
        target.flush()
    except (OSError, ValueError):  # a full device, a closed stream
        pass


def error_line(message: object) -> str:
    """The one line a failure prints, bounded in length whatever the message holds."""
    text = " ".join(str(message).splitlines()) or "error"
    return f"bpetite: error: {shown(text, ERROR_LINE_CHARS)}"


def is_terminal(stream: TextIO | None) -> bool:
    """True when `stream` is an interactive terminal that can draw live output.

    ``TERM=dumb`` (Emacs shells, some CI logs) is a terminal that cannot move the
    cursor, so it gets the plain lines too. A closed stream (None) is not a terminal.
    """
    if stream is None:
        return False
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or the stream is closed
        return False
    return interactive and os.environ.get("TERM", "") != "dumb"


def stderr_console(stream: TextIO | None = None) -> Console:
    """A rich Console on stderr (imports rich: call it only when drawing to a terminal).

    Only call it for a stream that exists: rich, like print, falls back to stdout.
    """
    from rich.console import Console

    target = stream if stream is not None else sys.stderr
    if target is None:
        raise ValueError("stderr is closed: nothing to draw on")
    return Console(file=target, highlight=False)
