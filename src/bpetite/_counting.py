"""Count the chunks of many files in parallel; the counts never depend on how work is split.

Each file is one document: its chunks are exactly those of pre-tokenizing the whole
file, and no chunk spans two files. Files are streamed in blocks (see
:mod:`bpetite._streaming`), so memory grows with the number of distinct chunks, not
with the corpus. Counts are sums, so adding up the workers' counters in any order
gives the same result; only the progress reports depend on timing.

Parallelism. The files are cut into *pieces* (whole files, or byte ranges of a large
file), and every worker process claims the next piece from a shared index until none
are left, so a worker that gets small pieces simply takes more of them. Each worker
returns one counter of ``str`` chunks; the parent adds them up and encodes each
distinct chunk to bytes once.

Splitting one file. A file is split only just after a ``\\n`` whose neighbours on both
sides are printable, non-space ASCII bytes (``X\\nY``). Such a point is a chunk
boundary of the whole text, and each side tokenizes on its own exactly as inside the
whole: the ``\\n`` is a whitespace run of one, so it is a chunk by itself whatever
follows (``\\s+(?!\\S)`` cannot take it because ``Y`` is not space, ``\\s+`` can, and
no other branch takes a newline); nothing before it reads past it, because the byte
before it ends a non-space run; and a match depends only on the text from its start.
ASCII bytes are never part of a multi-byte character, so each range also decodes on
its own, with the same error offsets.
"""

from __future__ import annotations

import os
import re
import signal
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from bpetite._progress import Progress, ProgressCallback, ignore_progress
from bpetite._streaming import (
    DEFAULT_BLOCK_SIZE,
    check_block_size,
    check_file_utf8,
    count_pieces,
    stream_file_text,
)

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult
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

_SAFE_SPLIT: Final = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x7e])")


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes ``start:end`` of the file at `path`; `end` None means to the end of the file."""

    path: str
    start: int
    end: int | None
    size: int


# --------------------------------------------------------------------------- inputs


def expand_inputs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Return the files that `paths` name: a file itself, a directory every file under it.

    A directory contributes every regular file below it, recursively, sorted by path
    components; symbolic links inside a directory are skipped (no cycles, no file counted
    through two names), while a path named explicitly may be a link. A file named
    twice is counted twice: each path is one document, like ``cat a a``.
    Raises FileNotFoundError for a missing path and ValueError for a directory with no
    files or a path that is neither a file nor a directory.
    """
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


def plan_pieces(files: Sequence[Path], piece_bytes: int) -> list[Piece]:
    """Cut `files` into pieces of at least `piece_bytes` (the last of a file may be smaller).

    A large file is split at the first safe point at least `piece_bytes` past the
    previous split; a file without safe points stays whole.
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
            while wanted < size:
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
    non-space ASCII); ``Y`` must exist, so a point is always inside the file.
    """
    window_start = max(offset - 2, 0)
    stream.seek(window_start)
    window = stream.read(SPLIT_SEARCH_BYTES + 3)
    match = _SAFE_SPLIT.search(window)
    return None if match is None else window_start + match.end()


# --------------------------------------------------------------------------- counting


def count_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
) -> Counter[bytes]:
    """Return how often each chunk occurs in the files `paths` name, summed over the files.

    Equal to ``count_chunks(text of each file)``, whatever `workers` (default: the
    number of CPUs), `block_size` or `piece_bytes` (default: about four pieces per
    worker, never below MIN_PIECE_BYTES). Directories expand as in
    :func:`expand_inputs`. Invalid UTF-8 raises :class:`InvalidUtf8Error` naming the
    file and the offset of its first bad byte; every file is checked (quickly) before
    counting starts, so the error comes before any progress report.
    """
    files = expand_inputs(paths)
    return count_expanded(
        files, workers=workers, block_size=block_size, progress=progress, piece_bytes=piece_bytes
    )


def count_expanded(
    files: Sequence[Path],
    *,
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
) -> Counter[bytes]:
    """:func:`count_files` for a list of regular files already expanded."""
    workers = check_workers(default_workers() if workers is None else workers)
    check_block_size(block_size)
    report = progress or ignore_progress
    if piece_bytes is None:
        total = sum(path.stat().st_size for path in files)
        piece_bytes = max(MIN_PIECE_BYTES, -(-total // (workers * PIECES_PER_WORKER)))
    pieces = plan_pieces(files, piece_bytes)
    total = sum(piece.size for piece in pieces)
    # Fail fast: a bad byte anywhere is reported before any counting or progress starts.
    for path in files:
        check_file_utf8(str(path), max(block_size, DEFAULT_BLOCK_SIZE))
    # Largest first, so that no big piece is left to start last while others sit idle.
    pieces.sort(key=lambda piece: piece.size, reverse=True)
    processes = min(workers, len(pieces))
    if processes <= 1:
        str_counts = _count_here(pieces, block_size, total, report)
    else:
        str_counts = _count_in_workers(pieces, processes, block_size, total, report)
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
) -> None:
    """Add the chunks of one piece to `counts`."""
    text = stream_file_text(
        piece.path, block_size=block_size, start=piece.start, end=piece.end, on_bytes=on_bytes
    )
    count_pieces(text, counts)


def _count_here(
    pieces: Sequence[Piece], block_size: int, total: int, report: ProgressCallback
) -> Counter[str]:
    report(Progress("count", "start", 0, total))
    counts: Counter[str] = Counter()
    done = 0

    def on_bytes(size: int) -> None:
        nonlocal done
        done += size
        report(Progress("count", "update", done, total))

    for piece in pieces:
        count_piece(piece, block_size, counts, on_bytes)
    return counts


def _count_in_workers(
    pieces: list[Piece],
    processes: int,
    block_size: int,
    total: int,
    report: ProgressCallback,
) -> Counter[str]:
    """Run `processes` workers that claim pieces from a shared index; add up their counts."""
    # The platform's default start method (fork on Linux before Python 3.14, spawn on
    # macOS), so a caller's set_start_method() is respected. Fork needs no import in
    # the child and no ``if __name__ == "__main__"`` guard in the caller's script.
    import multiprocessing  # only here: `import bpetite` stays light

    context = multiprocessing.get_context()
    next_piece = context.Value("q", 0)
    bytes_done = context.Value("q", 0)
    # Pool.__exit__ terminates the workers: on an error (the first invalid file) or
    # Ctrl-C the others stop at once instead of counting to the end.
    with context.Pool(processes, _init_worker, (next_piece, bytes_done)) as pool:
        # Reported only now: a live progress display starts a thread, and forking a
        # process that runs threads is what Python warns about.
        report(Progress("count", "start", 0, total))
        results: list[AsyncResult[Counter[str]]] = [
            pool.apply_async(_work, (pieces, block_size)) for _ in range(processes)
        ]
        counts: Counter[str] = Counter()
        reported = 0
        while results:
            results[0].wait(POLL_SECONDS)
            for result in [result for result in results if result.ready()]:
                results.remove(result)
                _add(counts, result.get())  # re-raises a worker's exception here
            done = bytes_done.value
            if done != reported:
                reported = done
                report(Progress("count", "update", done, total))
    return counts


def _add(counts: Counter[str], more: Counter[str]) -> None:
    if not counts:
        counts.update(more)  # an empty Counter takes a mapping at C speed
        return
    get = counts.get
    for chunk, n in more.items():
        counts[chunk] = get(chunk, 0) + n


_worker_state: tuple[Synchronized[int], Synchronized[int]] | None = None


def _init_worker(next_piece: Synchronized[int], bytes_done: Synchronized[int]) -> None:
    # Ctrl-C reaches the whole process group; the parent handles it and terminates us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    global _worker_state
    _worker_state = (next_piece, bytes_done)


def _work(pieces: Sequence[Piece], block_size: int) -> Counter[str]:
    """In a worker: count pieces, claiming the next unclaimed one each time, until none remain."""
    if _worker_state is None:
        raise RuntimeError("_work runs only in a worker started by _count_in_workers")
    next_piece, bytes_done = _worker_state

    def on_bytes(size: int) -> None:
        with bytes_done.get_lock():
            bytes_done.value += size

    counts: Counter[str] = Counter()
    while True:
        with next_piece.get_lock():
            index = next_piece.value
            next_piece.value = index + 1
        if index >= len(pieces):
            return counts
        count_piece(pieces[index], block_size, counts, on_bytes)
