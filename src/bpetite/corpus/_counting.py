"""Count the chunks of many files in parallel; the counts never depend on how work is split.

Each file is one document: its chunks are exactly those of pre-tokenizing the whole
file, and no chunk spans two files. Files are streamed in blocks (see
:mod:`bpetite.corpus._streaming`), so memory grows with the number of distinct chunks, not
with the corpus. Counts are sums, so adding up the workers' counters in any order
gives the same result; only the progress reports depend on timing.

Parallelism. The files are cut into *pieces* (whole files, or byte ranges of a large
file), and every worker process claims the next piece from a shared index until none
are left, so a worker that gets small pieces simply takes more of them. Each worker
sends one counter of ``str`` chunks through a pipe of its own; the parent adds them up
and encodes each distinct chunk to bytes once.

Failure. Nothing waits on a worker that is gone: the parent watches each pipe and each
process, so a worker that dies (SIGKILL, the OOM killer) fails the count at once with
:class:`WorkerError`, and the others are killed. SIGINT and SIGTERM belong to the
parent, which stops every worker whatever ends the count; a worker whose parent was
killed outright stops by itself at its next block.

Splitting one file. A file is split only just after a ``\\n`` whose neighbours on both
sides are printable, non-space ASCII bytes, the one after it not ``/`` (``X\\nY``).
For every preset such a point is a chunk boundary of the whole text, and each side
tokenizes on its own exactly as inside the whole (docs/scaling.md has the argument per
preset: the ``\\n`` ends the chunk that holds it, which reads nothing past ``Y``, and
``Y`` is not one of the ``[\\r\\n/]`` that o200k lets follow a newline). A file
counted with a custom pattern is never split. ASCII bytes are never part of a
multi-byte character, so each range also decodes on its own, with the same error
offsets.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from bpetite.core._errors import WorkerError
from bpetite.core._patterns import PRESETS, SplitPattern, resolve_pattern
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.corpus._streaming import (
    DEFAULT_BLOCK_SIZE,
    check_block_size,
    check_file_utf8,
    count_pieces,
    stream_file_text,
)

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
    from multiprocessing.sharedctypes import Synchronized

#: Files are never split into pieces smaller than this: a piece should take much
#: longer to count (about 0.2 s per MiB) than a worker takes to start and claim it.
MIN_PIECE_BYTES: Final = 4 << 20

#: Aim for this many pieces per worker, so uneven pieces still balance out.
PIECES_PER_WORKER: Final = 4

#: How many bytes are searched for a safe split point at a time.
SPLIT_SEARCH_BYTES: Final = 1 << 20

#: How often the parent wakes up to report progress while workers count.
POLL_SECONDS: Final = 0.1

_SAFE_SPLIT: Final = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x2e\x30-\x7e])")

#: What stops a run: the parent handles these, workers ignore them.
_SHUTDOWN_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM})


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes ``start:end`` of the file at `path`; `end` None means to the end of the file."""

    path: str
    start: int
    end: int | None
    size: int


# --------------------------------------------------------------------------- inputs


def expand_inputs(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Return the files that `paths` name: a file itself, a directory every file under it.

    A directory contributes every regular file below it, recursively, sorted by path
    components; symbolic links inside a directory are skipped (no cycles, no file counted
    through two names), while a path named explicitly may be a link. A file named
    twice is counted twice: each path is one document, like ``cat a a``. A single
    ``str`` or path is one path.
    Raises FileNotFoundError for a missing path and ValueError for a directory with no
    files or a path that is neither a file nor a directory.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]  # one path, not an iterable of its characters
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        mode = path.stat().st_mode
        if stat.S_ISREG(mode):
            files.append(path)
        elif stat.S_ISDIR(mode):
            found = _files_under(path)
            if not found:
                raise ValueError(f"'{path}' is a directory with no regular files in it")
            files += found
        else:
            raise ValueError(f"'{path}' is neither a regular file nor a directory")
    return files


def _files_under(directory: Path) -> list[Path]:
    def fail(error: OSError) -> None:
        raise error  # os.walk skips unreadable directories silently unless told otherwise

    found: list[Path] = []
    for root, _, names in os.walk(directory, onerror=fail):
        for name in names:
            path = Path(root, name)
            if stat.S_ISREG(path.lstat().st_mode):
                found.append(path)
    found.sort(key=lambda path: path.parts)
    return found


def plan_pieces(
    files: Sequence[Path], piece_bytes: int, *, split_files: bool = True
) -> list[Piece]:
    """Cut `files` into pieces of at least `piece_bytes` (the last of a file may be smaller).

    A large file is split at the first safe point at least `piece_bytes` past the
    previous split; a file without safe points, or any file if not `split_files`,
    stays whole.
    """
    if isinstance(piece_bytes, bool) or not isinstance(piece_bytes, int) or piece_bytes < 1:
        raise ValueError(f"piece_bytes must be a positive integer, got {piece_bytes!r}")
    pieces: list[Piece] = []
    for path in files:
        # Every file is opened here, so an unreadable one fails before counting starts.
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            starts = [0]
            wanted = piece_bytes
            while split_files and wanted < size:
                point = _find_safe_point(stream, wanted)
                if point is None:  # none in this window: the piece grows to the next one
                    wanted += SPLIT_SEARCH_BYTES
                    continue
                starts.append(point)
                wanted = point + piece_bytes
        ends: list[int | None] = [*starts[1:], None]
        for start, end in zip(starts, ends, strict=True):
            pieces.append(Piece(str(path), start, end, (size if end is None else end) - start))
    return pieces


def _find_safe_point(stream: BinaryIO, offset: int) -> int | None:
    """The first split point at or after `offset`, within SPLIT_SEARCH_BYTES of it, if any.

    A split point is the offset just after the ``\\n`` of ``X\\nY`` (X, Y printable
    non-space ASCII, Y not ``/``); ``Y`` must exist, so a point is always inside the file.
    """
    window_start = max(offset - 2, 0)
    stream.seek(window_start)
    window = stream.read(SPLIT_SEARCH_BYTES + 3)
    match = _SAFE_SPLIT.search(window)
    return None if match is None else window_start + match.end()


# --------------------------------------------------------------------------- counting


def count_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    pattern: str | SplitPattern = "gpt2",
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
) -> Counter[bytes]:
    """Return how often each chunk occurs in the files `paths` name, summed over the files.

    Equal to ``count_chunks(text of each file, pattern=pattern)``, whatever `workers`
    (default: the number of CPUs), `block_size` or `piece_bytes` (default: about four
    pieces per worker, never below MIN_PIECE_BYTES; a custom pattern never splits a
    file, see :mod:`bpetite.corpus._streaming`). Directories expand as in
    :func:`expand_inputs`. Invalid UTF-8 raises :class:`InvalidUtf8Error` naming the
    file and the offset of its first bad byte; every file is checked (quickly) before
    counting starts, so the error comes before any progress report. A worker process
    that dies raises :class:`WorkerError` naming its pid and the signal or exit status;
    no worker outlives the call, however it ends.
    """
    files = expand_inputs(paths)
    return count_expanded(
        files,
        pattern=pattern,
        workers=workers,
        block_size=block_size,
        progress=progress,
        piece_bytes=piece_bytes,
    )


def count_expanded(
    files: Sequence[Path],
    *,
    pattern: str | SplitPattern = "gpt2",
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
) -> Counter[bytes]:
    """:func:`count_files` for a list of regular files already expanded."""
    split = resolve_pattern(pattern)
    workers = check_workers(default_workers() if workers is None else workers)
    check_block_size(block_size)
    report = progress or ignore_progress
    if piece_bytes is None:
        total = sum(path.stat().st_size for path in files)
        piece_bytes = max(MIN_PIECE_BYTES, -(-total // (workers * PIECES_PER_WORKER)))
    # Safe split points are proven for the presets only; a custom pattern counts whole files.
    pieces = plan_pieces(files, piece_bytes, split_files=split.is_preset)
    total = sum(piece.size for piece in pieces)
    # Fail fast: a bad byte anywhere is reported before any counting or progress starts.
    for path in files:
        check_file_utf8(str(path), max(block_size, DEFAULT_BLOCK_SIZE))
    # Largest first, so that no big piece is left to start last while others sit idle.
    pieces.sort(key=lambda piece: piece.size, reverse=True)
    processes = min(workers, len(pieces))
    if processes <= 1:
        str_counts = _count_here(pieces, block_size, total, report, split)
    else:
        str_counts = _count_in_workers(pieces, processes, block_size, total, report, split)
    counts = Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})
    report(Progress("count", "done", total, total))
    return counts


def default_workers() -> int:
    """The number of CPUs this process may run on (a container or taskset may allow fewer)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def check_workers(workers: object) -> int:
    """Return `workers` if it is a positive int; otherwise raise naming the value."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an integer, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    return workers


def count_piece(
    piece: Piece,
    block_size: int,
    counts: Counter[str],
    on_bytes: Callable[[int], None] | None = None,
    pattern: str | SplitPattern = "gpt2",
) -> None:
    """Add the chunks of one piece to `counts`."""
    text = stream_file_text(
        piece.path, block_size=block_size, start=piece.start, end=piece.end, on_bytes=on_bytes
    )
    count_pieces(text, counts, pattern=pattern)


def _count_here(
    pieces: Sequence[Piece],
    block_size: int,
    total: int,
    report: ProgressCallback,
    pattern: SplitPattern,
) -> Counter[str]:
    report(Progress("count", "start", 0, total))
    counts: Counter[str] = Counter()
    done = 0

    def on_bytes(size: int) -> None:
        nonlocal done
        done += size
        report(Progress("count", "update", done, total))

    for piece in pieces:
        count_piece(piece, block_size, counts, on_bytes, pattern)
    return counts


def _count_in_workers(
    pieces: list[Piece],
    processes: int,
    block_size: int,
    total: int,
    report: ProgressCallback,
    pattern: SplitPattern,
) -> Counter[str]:
    """Run `processes` workers that claim pieces from a shared index; add up their counts.

    Each worker sends its counts (or its error) through a pipe of its own, and the
    parent waits on those pipes and on the processes themselves, so a worker that dies
    without sending (SIGKILL, the OOM killer) is noticed at once rather than awaited
    forever. Whatever ends the wait (a result, an error, Ctrl-C, SIGTERM raised as an
    exception) the ``finally`` kills the workers that are left and reaps them all.
    """
    # The platform's default start method (fork on Linux before Python 3.14, spawn on
    # macOS), so a caller's set_start_method() is respected. Fork needs no import in
    # the child and no ``if __name__ == "__main__"`` guard in the caller's script.
    import multiprocessing  # only here: `import bpetite` stays light
    from multiprocessing.connection import wait

    context = multiprocessing.get_context()
    # One progress slot per worker, written only by that worker: the parent reads
    # them without a lock, so a worker killed at any instant cannot block the parent.
    job = WorkerJob(
        pieces,
        block_size,
        context.Value("q", 0),
        context.Array("q", processes, lock=False),
        pattern.source,
    )
    started: list[BaseProcess] = []
    pending: dict[Connection, BaseProcess] = {}
    counts: Counter[str] = Counter()
    try:
        with _shutdown_signals_blocked():
            for slot in range(processes):
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(
                    target=_work, args=(job, slot, sender), name=f"bpetite-count-{slot}"
                )
                process.start()
                started.append(process)
                # Only the worker may hold the sending end, so that its death reads
                # as end-of-file here; workers forked later never see it.
                sender.close()
                pending[receiver] = process
        # Reported only now: a live progress display starts a thread, and forking a
        # process that runs threads is what Python warns about.
        report(Progress("count", "start", 0, total))
        reported = 0
        while pending:
            ready = set(wait([*pending, *(p.sentinel for p in pending.values())], POLL_SECONDS))
            for receiver, worker in list(pending.items()):
                if receiver in ready or worker.sentinel in ready:
                    result = receive_from(receiver, worker, "counting", "its counts")
                    del pending[receiver]
                    receiver.close()
                    if isinstance(result, BaseException):
                        raise result
                    _add(counts, result)
            done = sum(job.done)
            if done != reported:
                reported = done
                report(Progress("count", "update", done, total))
        for worker in started:
            worker.join()  # each has sent its counts and is only exiting
    finally:
        _stop(started)
        for receiver in pending:
            receiver.close()
    return counts


@contextmanager
def _shutdown_signals_blocked() -> Iterator[None]:
    """Hold back SIGINT and SIGTERM while workers start; they inherit the blocked mask.

    A forked worker starts with the parent's handlers (the CLI turns SIGTERM into an
    exception), so a signal arriving before it has ignored them would print a
    traceback from the worker. Held back, the parent gets its signal a moment later,
    once every started worker is in the list its ``finally`` stops.
    """
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks, no fork
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SHUTDOWN_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def receive_from(
    receiver: Connection, process: BaseProcess, role: str, lost: str, note: str = ""
) -> Any:
    """What a `role` worker sent; WorkerError naming how it died if it sent nothing.

    Called when the pipe is readable or the process has ended. A process that ended
    has written all it ever will and holds the only sending end, so the pipe then
    holds a whole message or ends: ``recv`` cannot block. `note` is added to the
    error (what the death means for the caller's output).
    """
    try:
        return receiver.recv()
    except (EOFError, OSError):  # nothing, or half a message: the worker died sending
        process.join(POLL_SECONDS * 10)  # it has closed the pipe, so it is exiting
        raise WorkerError(describe_death(process, role, lost) + note) from None


def describe_death(process: BaseProcess, role: str, lost: str) -> str:
    """Why a `role` worker stopped without sending `lost`, in words a user can act on.

    >>> class Killed: pid, exitcode = 7, -9
    >>> describe_death(Killed(), "counting", "its counts")  # doctest: +ELLIPSIS
    'a counting worker (pid 7) was killed by SIGKILL; the machine may be out of memory'
    """
    who = f"a {role} worker (pid {process.pid})"
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == getattr(signal, "SIGKILL", None):
            return f"{who} was killed by {name}; the machine may be out of memory"
        return f"{who} was killed by {name}"
    if code:
        return f"{who} exited with status {code} before sending {lost}"
    return f"{who} stopped before sending {lost}"


def _stop(processes: Sequence[BaseProcess]) -> None:
    """Kill every worker still running and reap them all; no worker outlives the call.

    SIGKILL, because workers ignore SIGTERM (the parent alone decides when they stop)
    and hold nothing that needs cleaning up: they write no files.
    """
    for process in processes:
        if process.exitcode is None:
            process.kill()
    for process in processes:
        process.join()
        process.close()


def _add(counts: Counter[str], more: Counter[str]) -> None:
    if not counts:
        counts.update(more)  # an empty Counter takes a mapping at C speed
        return
    get = counts.get
    for chunk, n in more.items():
        counts[chunk] = get(chunk, 0) + n


@dataclass(frozen=True, slots=True)
class WorkerJob:
    """What every worker shares: the pieces, the index of the next unclaimed one, progress.

    `done[slot]` is the number of bytes the worker in `slot` has counted so far.
    """

    pieces: Sequence[Piece]
    block_size: int
    next_piece: Synchronized[int]
    done: MutableSequence[int]
    #: The split pattern's source (a str pickles); a worker resolves it again.
    pattern_source: str = PRESETS["gpt2"]


def _work(job: WorkerJob, slot: int, sender: Connection) -> None:
    """A worker's whole life: count, send the counts or the error, exit."""
    # The parent alone decides when workers stop (a Ctrl-C reaches the whole process
    # group, ``timeout`` signals it), so a signal never prints a worker's traceback.
    for signum in _SHUTDOWN_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SHUTDOWN_SIGNALS)
    result: Counter[str] | BaseException
    try:
        result = count_claimed(job, slot, parent=os.getppid())
    except Exception as error:
        result = portable_error(error, "counting")
    try:
        sender.send(result)
    except OSError:  # the parent is gone; there is no one left to tell
        pass
    finally:
        sender.close()


def count_claimed(job: WorkerJob, slot: int, *, parent: int) -> Counter[str]:
    """Count pieces, claiming the next unclaimed one each time, until none remain.

    Stops with WorkerError at the next block once the process's parent is no longer
    `parent`: a parent killed outright cannot stop its workers, so they stop themselves.
    """
    done = job.done
    pattern = resolve_pattern(job.pattern_source)  # a preset's source resolves to the preset

    def on_bytes(size: int) -> None:
        if os.getppid() != parent:
            raise WorkerError("the parent process is gone; stopping this counting worker")
        done[slot] += size

    counts: Counter[str] = Counter()
    while True:
        with job.next_piece.get_lock():
            index = job.next_piece.value
            job.next_piece.value = index + 1
        if index >= len(job.pieces):
            return counts
        count_piece(job.pieces[index], job.block_size, counts, on_bytes, pattern)


def portable_error(error: Exception, role: str) -> BaseException:
    """`error` if the parent can rebuild it from a pickle, else a WorkerError that names it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return WorkerError(f"a {role} worker failed: {type(error).__name__}: {error}")
    return error
