"""Count the chunks of many files in parallel; the counts never depend on how work is split.

Must equal counting ``bpetite.reference.split`` of each whole file, files added up.

Each file is one document: its chunks are exactly those of pre-tokenizing the whole
file, and no chunk spans two files. Files are streamed in blocks (see
:mod:`bpetite.corpus._streaming`), so memory grows with the number of distinct chunks, not
with the corpus. Counts are sums, so adding up the workers' counters in any order
gives the same result; only the progress reports depend on timing.

Parallelism. The files are first *surveyed* by the worker pool of
:mod:`bpetite.corpus._workers` (which also owns what happens when a worker dies or a
signal arrives): each file's size and kind, and every text file checked as UTF-8, a
batch of files a piece, so that a bad byte anywhere is found before any counting and
a corpus of many files is not opened one file after another here. Then the files are
cut into *pieces* (whole files, or byte ranges of a large file) and counted by the
same pool. Each worker adds all its pieces to one counter of ``str`` chunks. When it
runs out of pieces, it deals its counter out by a hash of each chunk's UTF-8 into one
part per worker and sends the parts, pickled; then worker ``k`` adds up part ``k`` of
every worker's (every chunk lands in the same part everywhere, so the sums are
disjoint), and the parent joins those sums; or, training (:func:`count_in_parts`), the
parts are left as they are for the merge loop's shares to add up, a part each. Adding
the counters up in this process instead would be a Python step per distinct chunk per
worker, one after another: on many cores, most of counting's time. Where workers do
not start by fork (which hands them every part for nothing), for a corpus under
:data:`PARTED_BYTES` (whose sums cost less than starting the workers again), and in
one process, the parent adds them up.

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
import stat
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final, TypeVar

from bpetite.core._budget import Budget
from bpetite.core._errors import ParameterError
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.corpus._delimited import (
    CUT_SEARCH_BYTES,
    check_delimiter,
    find_cut,
    kept_documents,
    measure_documents,
    parquet_refusal,
)
from bpetite.corpus._parquet import (
    DEFAULT_TEXT_COLUMN,
    RowGroup,
    capped_lengths,
    check_text_column,
    is_parquet,
    read_texts,
    row_groups,
    text_size,
)
from bpetite.corpus._streaming import (
    DEFAULT_BLOCK_SIZE,
    check_block_size,
    check_file_utf8,
    count_pieces,
    measure_text,
    stream_file_text,
)
from bpetite.corpus._workers import (
    OnBytes,
    Role,
    check_workers,
    forking,
    run_here,
    run_in_workers,
)

T = TypeVar("T")

#: Files are never split into pieces smaller than this: a piece should take much
#: longer to count than a worker takes to start and claim it.
#: Measurements: docs/design-notes.md#corpus-piece-size
MIN_PIECE_BYTES: Final = 4 << 20

#: From this many bytes of input on, the workers add their counts up between them
#: (:func:`add_parts`); below it the parent does, for less than starting them again costs.
#: Measurements: docs/design-notes.md#corpus-the-survey-and-the-parted-sums
PARTED_BYTES: Final = 16 << 20

#: Aim for this many pieces per worker, so uneven pieces still balance out.
PIECES_PER_WORKER: Final = 4

#: How many files a worker surveys a piece (:func:`survey_files`): enough that a message
#: per piece costs little, few enough that the pieces still balance out.
SURVEY_FILES: Final = 64

#: How many bytes are searched for a safe split point at a time.
SPLIT_SEARCH_BYTES: Final = 1 << 20
#: How far the search for a split point looks before it reads its whole window. Kept
#: well under half the file's 8 KiB read buffer: a larger read after a seek skips the
#: buffer and costs three times as much (design notes, "Corpus: small pieces and
#: small documents").
FIRST_LOOK_BYTES: Final = 1 << 11

_SAFE_SPLIT: Final = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x2e\x30-\x7e])")

#: How counting workers are named in errors and progress.
_ROLE: Final = Role("counting", "count", "its counts")
_SURVEY_ROLE: Final = Role("counting", "count", "what it found in its files")


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes ``start:end`` of the file at `path`; `end` None means to the end of the file.

    Or, when `row_group` is set, that row group of the Parquet file at `path`: each of
    its rows one document, the first `rows` of them if `rows` is set (the budget's
    cut). `size` is the bytes of text the piece reads, for progress and summaries: a
    text file's bytes, or the UTF-8 bytes of a row group's documents (as capped).
    """

    path: str
    start: int
    end: int | None
    size: int
    row_group: int | None = None
    rows: int | None = None


# --------------------------------------------------------------------------- inputs


def expand_inputs(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Return the files that `paths` name: a file itself, a directory every file under it.

    A directory contributes every regular file below it, recursively, sorted by path
    components; symbolic links inside a directory are skipped (no cycles, no file counted
    through two names), while a path named explicitly may be a link. A file named
    twice is counted twice: each path is one document, like ``cat a a``. A single
    ``str`` or path is one path.
    Raises FileNotFoundError for a missing path, and ParameterError (a ValueError) for no
    path at all, a directory with no files or a path that is neither a file nor a
    directory.
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
                raise ParameterError(f"'{path}' is a directory with no regular files in it")
            files += found
        else:
            raise ParameterError(f"'{path}' is neither a regular file nor a directory")
    if not files:  # a glob that matched nothing, more likely than an empty corpus
        raise ParameterError("no input paths were given")
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
    files: Sequence[Path],
    piece_bytes: int,
    *,
    split_files: bool = True,
    ends: Sequence[int | None] | None = None,
    delimiter: bytes | None = None,
) -> list[Piece]:
    """Cut `files` into pieces of at least `piece_bytes` (the last of a file may be smaller).

    A large file is split at the first safe point at least `piece_bytes` past the
    previous split; a file without safe points, or any file if not `split_files`,
    stays whole. With `delimiter` (a document delimiter's UTF-8 bytes), the split
    points are instead just after the delimiters that cut the file into documents
    (:func:`bpetite.corpus._delimited.find_cut`), so every piece holds whole
    documents. `ends`, one per file, stops a file's last piece at that byte (a
    character boundary: the budget's cut), None for its end.
    """
    if isinstance(piece_bytes, bool) or not isinstance(piece_bytes, int) or piece_bytes < 1:
        raise ValueError(f"piece_bytes must be a positive integer, got {piece_bytes!r}")
    pieces: list[Piece] = []
    for number, path in enumerate(files):
        # Every file is opened here, so an unreadable one fails before counting starts.
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            cut = None if ends is None else ends[number]
            if cut is not None and cut < size:
                size = cut
            else:
                cut = None
            starts = [0]
            wanted = piece_bytes
            while split_files and wanted < size:
                if delimiter is None:
                    point = _find_safe_point(stream, wanted)
                    step = SPLIT_SEARCH_BYTES
                else:
                    point = find_cut(stream, wanted, delimiter)
                    step = CUT_SEARCH_BYTES
                if point is None:  # none in this window: the piece grows to the next one
                    wanted += step
                    continue
                if point >= size:  # past the cut: the rest is one piece
                    break
                starts.append(point)
                wanted = point + piece_bytes
        stops: list[int | None] = [*starts[1:], cut]
        for start, end in zip(starts, stops, strict=True):
            pieces.append(Piece(str(path), start, end, (size if end is None else end) - start))
    return pieces


def default_piece_bytes(total: int, workers: int) -> int:
    """About PIECES_PER_WORKER pieces per worker for `total` bytes, never below MIN_PIECE_BYTES."""
    return max(MIN_PIECE_BYTES, -(-total // (workers * PIECES_PER_WORKER)))


def plan_inputs(
    files: Sequence[Path],
    piece_bytes: int,
    *,
    split_files: bool = True,
    text_column: str = DEFAULT_TEXT_COLUMN,
    budget: Budget | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    doc_delimiter: str | None = None,
) -> list[Piece]:
    """The pieces of `files` in document order, as far as `budget` takes them.

    A Parquet file (recognised by its magic bytes) gives one piece per row group, each
    row a document; any other file is one UTF-8 document, cut into byte ranges as
    :func:`plan_pieces` cuts it, or with `doc_delimiter` many documents
    (:mod:`bpetite.corpus._delimited`), cut into pieces of whole documents. With a
    budget, each text file is read here up to its cap (which checks it is UTF-8 that
    far), and with `max_chars` a delimited file's documents are read too: this process
    walks the documents in order and stops after the one that takes the total past
    `max_chars`, so the cut is the same for any number of workers, which then read
    exactly the pieces listed. A delimited file's `doc_cap` is left to the workers,
    which cut each document. A Parquet row group's text is read here for its size (and
    its lengths, with `max_chars`), which checks it is UTF-8.
    """
    budget = Budget() if budget is None else budget
    pieces: list[Piece] = []
    max_chars = budget.max_chars
    taken = 0  # the characters taken so far (counted only with max_chars)
    delimiter = None if doc_delimiter is None else doc_delimiter.encode("utf-8")
    for path in files:
        if is_parquet(path):
            if doc_delimiter is not None:
                raise parquet_refusal(path)
            for group in row_groups(path, text_column):
                rows = None
                if max_chars is None:
                    size = text_size(group, text_column, budget)
                else:
                    lengths, sizes = capped_lengths(group, text_column, budget)
                    for row, length in enumerate(lengths):
                        taken += length
                        if taken > max_chars:
                            rows = row + 1
                            break
                    size = sum(sizes[:rows])
                pieces.append(Piece(group.path, 0, None, size, group.index, rows))
                if rows is not None:
                    return pieces
            continue
        end = None
        read_size = max(block_size, DEFAULT_BLOCK_SIZE)
        if doc_delimiter is not None:
            if max_chars is not None:
                chars, end = measure_documents(
                    str(path), doc_delimiter, budget.doc_cap, max_chars - taken, read_size
                )
                taken += chars
        elif not budget.is_off:
            chars, end = measure_text(str(path), budget.doc_cap, read_size)
            taken += chars
        pieces += plan_pieces(
            [path], piece_bytes, split_files=split_files, ends=[end], delimiter=delimiter
        )
        if max_chars is not None and taken > max_chars:
            return pieces
    return pieces


#: A surveyed file: its size, and its row groups' pieces if it is Parquet (else None).
Surveyed = tuple[int, list[Piece] | None]


def survey_files(
    files: Sequence[Path],
    workers: int,
    text_column: str,
    block_size: int,
    doc_delimiter: str | None = None,
) -> list[Surveyed]:
    """Each file's size and, for Parquet, its row groups' pieces; every text file checked.

    Files are surveyed in order, :data:`SURVEY_FILES` a piece, by up to `workers`
    processes: the error raised is the first failing file's (unreadable, not the
    Parquet it looks like, a missing `text_column`, invalid UTF-8, Parquet where
    `doc_delimiter` is given), whatever the number of workers.
    """
    job = SurveyJob(files, text_column, max(block_size, DEFAULT_BLOCK_SIZE), doc_delimiter)
    count = -(-len(files) // SURVEY_FILES)
    surveyed: list[Surveyed] = []

    def take(index: int, batch: list[Surveyed]) -> None:
        surveyed.extend(batch)

    processes = min(workers, count)
    if processes <= 1:
        run_here(job.task, count, _SURVEY_ROLE, 0, ignore_progress, take)
    else:
        run_in_workers(job.task, count, processes, _SURVEY_ROLE, 0, ignore_progress, take)
    return surveyed


def plan_surveyed(
    files: Sequence[Path],
    surveyed: Sequence[Surveyed],
    piece_bytes: int,
    split_files: bool,
    doc_delimiter: str | None,
) -> list[Piece]:
    """:func:`plan_inputs` with no budget, for files :func:`survey_files` has surveyed:
    only a text file larger than `piece_bytes` is opened again, to find where to cut it."""
    pieces: list[Piece] = []
    delimiter = None if doc_delimiter is None else doc_delimiter.encode("utf-8")
    for path, (size, groups) in zip(files, surveyed, strict=True):
        if groups is not None:
            pieces += groups
        elif split_files and size > piece_bytes:
            pieces += plan_pieces([path], piece_bytes, delimiter=delimiter)
        else:
            pieces.append(Piece(str(path), 0, None, size))
    return pieces


@dataclass(frozen=True, slots=True)
class SurveyJob:
    """What every surveying worker needs: the files, the column read from Parquet files,
    the block size the check reads, and the delimiter that refuses Parquet files."""

    files: Sequence[Path]
    text_column: str
    block_size: int
    doc_delimiter: str | None

    def task(self, slot: int) -> SurveyTask:
        """The task of the worker in `slot`; every worker's is alike."""
        return SurveyTask(self)


class SurveyTask:
    """Surveys the files of each piece: batch ``index`` is files ``index * SURVEY_FILES``
    on, each as :func:`survey_files` says."""

    def __init__(self, job: SurveyJob) -> None:
        self._job = job

    def run(self, index: int, on_bytes: OnBytes) -> list[Surveyed]:
        job = self._job
        batch = job.files[index * SURVEY_FILES : (index + 1) * SURVEY_FILES]
        surveyed: list[Surveyed] = []
        for path in batch:
            if is_parquet(path):
                if job.doc_delimiter is not None:
                    raise parquet_refusal(path)
                pieces = [
                    Piece(group.path, 0, None, text_size(group, job.text_column), group.index)
                    for group in row_groups(path, job.text_column)
                ]
                surveyed.append((path.stat().st_size, pieces))
            else:
                check_file_utf8(str(path), job.block_size, on_bytes)
                surveyed.append((path.stat().st_size, None))
        return surveyed

    def sync(self) -> None:
        """Nothing to sync: the sizes travel in the results."""

    def finish(self) -> None:
        """Nothing held."""


def _find_safe_point(stream: BinaryIO, offset: int) -> int | None:
    """The first split point at or after `offset`, within SPLIT_SEARCH_BYTES of it, if any.

    A split point is the offset just after the ``\\n`` of ``X\\nY`` (X, Y printable
    non-space ASCII, Y not ``/``); ``Y`` must exist, so a point is always inside the file.
    """
    window_start = max(offset - 2, 0)
    # A point is usually a line away: a short look first, so that small pieces do not
    # each copy the whole window. A match in a prefix of the window is the window's
    # first too: an earlier one would lie, lookahead included, inside the prefix.
    for length in (min(FIRST_LOOK_BYTES, SPLIT_SEARCH_BYTES), SPLIT_SEARCH_BYTES):
        stream.seek(window_start)
        window = stream.read(length + 3)
        match = _SAFE_SPLIT.search(window)
        if match is not None:
            return window_start + match.end()
        if len(window) < length + 3:
            return None  # the file ends inside the short look
    return None


# --------------------------------------------------------------------------- counting


def count_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    pattern: str | SplitPattern = "gpt2",
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
    text_column: str = DEFAULT_TEXT_COLUMN,
    max_chars: int | None = None,
    doc_cap: int | None = None,
    doc_delimiter: str | None = None,
) -> Counter[bytes]:
    """Return how often each chunk occurs in the files `paths` name, summed over the files.

    Equal to ``count_chunks(documents, pattern=pattern)``, whatever `workers`
    (default: the number of CPUs), `block_size` or `piece_bytes` (default: about four
    pieces per worker, never below MIN_PIECE_BYTES; a custom pattern never splits a
    file, see :mod:`bpetite.corpus._streaming`). A file is one UTF-8 document, or, if
    it is Parquet (its content says so, not its name), each row of its `text_column`
    is one (pyarrow needed: ``pip install 'bpetite[parquet]'``). With `doc_delimiter`,
    every UTF-8 file is cut into documents at each occurrence of that text, as
    :func:`~bpetite.write_dataset` cuts it: no chunk spans two documents, the
    delimiter's text is not counted, and blank documents are dropped (a Parquet input
    then raises ParameterError). Documents come in
    input order, rows in file order; `doc_cap` and `max_chars` are
    :meth:`Tokenizer.train_from_iterator`'s budget over them, cut the same way for any
    number of workers. Directories expand as in :func:`expand_inputs`. Invalid UTF-8
    raises :class:`InvalidUtf8Error` naming the file and the offset of its first bad
    byte (in a Parquet file, the row group and row, and the offset in that row's text);
    every file is checked (quickly) before counting starts, so the error comes
    before any progress report. A worker process that dies raises
    :class:`WorkerError` naming its pid and the signal or exit status; no worker
    outlives the call, however it ends.
    """
    files = expand_inputs(paths)
    return count_expanded(
        files,
        pattern=pattern,
        workers=workers,
        block_size=block_size,
        progress=progress,
        piece_bytes=piece_bytes,
        text_column=text_column,
        max_chars=max_chars,
        doc_cap=doc_cap,
        doc_delimiter=doc_delimiter,
    )


def count_expanded(
    files: Sequence[Path],
    *,
    pattern: str | SplitPattern = "gpt2",
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
    text_column: str = DEFAULT_TEXT_COLUMN,
    max_chars: int | None = None,
    doc_cap: int | None = None,
    doc_delimiter: str | None = None,
) -> Counter[bytes]:
    """:func:`count_files` for a list of regular files already expanded."""
    counted = count_in_parts(
        files,
        pattern=pattern,
        workers=workers,
        block_size=block_size,
        progress=progress,
        piece_bytes=piece_bytes,
        text_column=text_column,
        max_chars=max_chars,
        doc_cap=doc_cap,
        doc_delimiter=doc_delimiter,
    )
    return counted.joined() if isinstance(counted, CountParts) else counted


def count_in_parts(
    files: Sequence[Path],
    *,
    pattern: str | SplitPattern = "gpt2",
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    piece_bytes: int | None = None,
    text_column: str = DEFAULT_TEXT_COLUMN,
    max_chars: int | None = None,
    doc_cap: int | None = None,
    doc_delimiter: str | None = None,
) -> Counter[bytes] | CountParts:
    """:func:`count_expanded`, but where the workers dealt their counts into parts
    (from :data:`PARTED_BYTES`, by fork), those parts as they are, not added up: for
    the merge loop's shares to add up one each."""
    split = resolve_pattern(pattern)
    workers = check_workers(workers)
    check_block_size(block_size)
    budget = Budget(max_chars=max_chars, doc_cap=doc_cap)
    check_text_column(text_column)
    doc_delimiter = check_delimiter(doc_delimiter)
    report = progress or ignore_progress
    # Safe split points are proven for the presets only; a custom pattern counts whole
    # files, or whole documents, which are counted apart.
    split_files = split.is_preset or doc_delimiter is not None
    # Fail fast: every byte that will be counted is checked before any counting or
    # progress starts. Read whole, files are checked by the survey, in the workers; a
    # budget that stops reading early (max_chars, or doc_cap on undelimited files, whose
    # documents are not all read to their end) is planned here, reading and checking up
    # to the cut, since where it falls depends on what came before.
    if budget.max_chars is None and (budget.is_off or doc_delimiter is not None):
        surveyed = survey_files(files, workers, text_column, block_size, doc_delimiter)
        if piece_bytes is None:
            piece_bytes = default_piece_bytes(sum(size for size, _ in surveyed), workers)
        pieces = plan_surveyed(files, surveyed, piece_bytes, split_files, doc_delimiter)
    else:
        if piece_bytes is None:
            total_size = sum(path.stat().st_size for path in files)
            piece_bytes = default_piece_bytes(total_size, workers)
        pieces = plan_inputs(
            files,
            piece_bytes,
            split_files=split_files,
            text_column=text_column,
            budget=budget,
            block_size=block_size,
            doc_delimiter=doc_delimiter,
        )
    total = sum(piece.size for piece in pieces)
    # Largest first, so that no big piece is left to start last while others sit idle.
    pieces.sort(key=lambda piece: piece.size, reverse=True)
    processes = min(workers, len(pieces))
    job = CountJob(pieces, block_size, split.source, text_column, budget.doc_cap, doc_delimiter)
    counts: Counter[bytes] | CountParts
    if processes <= 1:
        counts = _encoded(run_here(job.task, len(pieces), _ROLE, total, report))
    elif total >= PARTED_BYTES and forking():
        parted = PartedCountJob(job, processes)
        summaries: list[list[bytes]] = []
        run_in_workers(
            parted.task,
            len(pieces),
            processes,
            _ROLE,
            total,
            report,
            on_summary=summaries.append,
        )
        counts = CountParts(summaries)
    else:
        str_counts: Counter[str] = Counter()
        run_in_workers(
            job.task,
            len(pieces),
            processes,
            _ROLE,
            total,
            report,
            on_summary=lambda more: add_counts(str_counts, more),
        )
        counts = _encoded(str_counts)
    report(Progress("count", "done", total, total))
    return counts


def _encoded(counts: Counter[str]) -> Counter[bytes]:
    """`counts` with each chunk in UTF-8."""
    return Counter({chunk.encode("utf-8"): n for chunk, n in counts.items()})


def deal_parts(counts: Mapping[str, int], parts: int) -> list[bytes]:
    """`counts` in UTF-8, dealt into `parts` dicts by a hash of each chunk (the same in
    every process, unlike ``hash``), each pickled."""
    return deal_encoded(((chunk.encode("utf-8"), n) for chunk, n in counts.items()), parts)


def deal_encoded(counts: Iterable[tuple[bytes, int]], parts: int) -> list[bytes]:
    """:func:`deal_parts` for chunks already in UTF-8, given as ``(chunk, count)``."""
    dealt: list[dict[bytes, int]] = [{} for _ in range(parts)]
    for chunk, n in counts:
        dealt[zlib.crc32(chunk) % parts][chunk] = n
    return [pickle.dumps(part, pickle.HIGHEST_PROTOCOL) for part in dealt]


def add_parts(summaries: Sequence[Sequence[bytes]], processes: int) -> Counter[bytes]:
    """The sum of every worker's counts, from their parts (:func:`deal_parts`): part
    ``k`` of every worker's added up by a worker of its own, the sums joined here."""
    job = SumJob(summaries)
    counts: Counter[bytes] = Counter()

    def join(index: int, part: dict[bytes, int]) -> None:
        dict.update(counts, part)  # no chunk is in two parts: no sum to make here

    parts = len(summaries[0])
    run_in_workers(job.task, parts, min(processes, parts), _ROLE, 0, ignore_progress, join)
    return counts


def count_piece(
    piece: Piece,
    block_size: int,
    counts: Counter[str],
    on_bytes: OnBytes | None = None,
    pattern: str | SplitPattern = "gpt2",
    doc_delimiter: str | None = None,
    doc_cap: int | None = None,
) -> None:
    """Add the chunks of one piece of a text file to `counts`.

    With `doc_delimiter`, the piece holds whole documents: each one's first `doc_cap`
    characters are counted apart, blank ones not at all.
    """
    text = stream_file_text(
        piece.path, block_size=block_size, start=piece.start, end=piece.end, on_bytes=on_bytes
    )
    if doc_delimiter is None:
        count_pieces(text, counts, pattern=pattern)
        return
    for document in kept_documents(text, doc_delimiter, doc_cap):
        count_pieces(document, counts, pattern=pattern)


def count_row_group(
    piece: Piece,
    counts: Counter[str],
    on_bytes: OnBytes | None,
    pattern: str | SplitPattern,
    text_column: str,
    doc_cap: int | None,
) -> None:
    """Add the chunks of each document of a Parquet piece (a row group) to `counts`."""
    if piece.row_group is None:
        raise ValueError(f"{piece!r} is not a row group")
    group = RowGroup(piece.path, piece.row_group)
    split = resolve_pattern(pattern).split
    for document in read_texts(group, text_column, Budget(doc_cap=doc_cap), piece.rows):
        counts.update(split(document))
    if on_bytes is not None:
        on_bytes(piece.size)


@dataclass(frozen=True, slots=True)
class CountJob:
    """What every counting worker needs: the pieces, the block size, the split pattern."""

    pieces: Sequence[Piece]
    block_size: int
    #: The split pattern's name or source (a str pickles); each worker resolves it.
    pattern: str
    text_column: str = DEFAULT_TEXT_COLUMN
    doc_cap: int | None = None
    doc_delimiter: str | None = None

    def task(self, slot: int) -> CountTask:
        """The task of the worker in `slot`; every worker's is alike."""
        return CountTask(self)


class CountTask:
    """One worker's share of a count: every piece it runs added to one counter.

    One counter per worker, not per piece, so the parent receives each distinct
    chunk at most once per worker.
    """

    def __init__(self, job: CountJob) -> None:
        self._job = job
        self._pattern = resolve_pattern(job.pattern)  # a preset's source resolves to it
        self._counts: Counter[str] = Counter()

    def run(self, index: int, on_bytes: OnBytes) -> None:
        job = self._job
        piece = job.pieces[index]
        if piece.row_group is None:
            count_piece(
                piece,
                job.block_size,
                self._counts,
                on_bytes,
                self._pattern,
                job.doc_delimiter,
                job.doc_cap,
            )
        else:
            count_row_group(
                piece, self._counts, on_bytes, self._pattern, job.text_column, job.doc_cap
            )

    def sync(self) -> None:
        """Nothing to sync: the counts travel in the summary."""

    def finish(self) -> Counter[str]:
        return self._counts


@dataclass(frozen=True, slots=True)
class PartedCountJob:
    """A count whose workers send their counts dealt into `parts` (:func:`deal_parts`)."""

    job: CountJob
    parts: int

    def task(self, slot: int) -> PartedCountTask:
        """The task of the worker in `slot`; every worker's is alike."""
        return PartedCountTask(self.job.task(slot), self.parts)


class PartedCountTask:
    """A :class:`CountTask` whose summary is its counts dealt into parts."""

    def __init__(self, task: CountTask, parts: int) -> None:
        self._task, self._parts = task, parts

    def run(self, index: int, on_bytes: OnBytes) -> None:
        self._task.run(index, on_bytes)

    def sync(self) -> None:
        """Nothing to sync: the counts travel in the summary."""

    def finish(self) -> list[bytes]:
        return deal_parts(self._task.finish(), self._parts)


@dataclass(frozen=True, slots=True)
class SumJob:
    """Adding up the parts of every worker's counts: piece ``k`` is part ``k``."""

    summaries: Sequence[Sequence[bytes]]

    def task(self, slot: int) -> SumTask:
        """The task of the worker in `slot`; every worker's is alike."""
        return SumTask(self)


class SumTask:
    """Adds up one part of every worker's counts a piece."""

    def __init__(self, job: SumJob) -> None:
        self._job = job

    def run(self, index: int, on_bytes: OnBytes) -> dict[bytes, int]:
        return add_up_parts(summary[index] for summary in self._job.summaries)

    def sync(self) -> None:
        """Nothing to sync: the sums travel in the results."""

    def finish(self) -> None:
        """Nothing held."""


def add_up_parts(parts: Iterable[bytes]) -> dict[bytes, int]:
    """The sum of some parts of the workers' counts (:func:`deal_parts`), each pickled."""
    total: dict[bytes, int] = {}
    for part in parts:
        add_counts(total, pickle.loads(part))
    return total


class CountParts:
    """Counts left in the parts the counting workers dealt them into (:func:`deal_parts`).

    ``summaries[w][k]`` is part ``k`` of worker ``w``'s counts, pickled. Every chunk is
    in the same part everywhere, so part ``k`` of every worker adds up to the whole
    counts of its own chunks: the merge loop's shares add up one part each
    (:meth:`take`), so that no process ever holds every count, or :meth:`joined`
    adds them all up, as :func:`count_files` does.
    """

    def __init__(self, summaries: list[list[bytes]]) -> None:
        self._summaries = summaries
        self.parts = len(summaries[0])

    def size(self) -> int:
        """The parts' pickled bytes: at least the bytes of the distinct chunks in them."""
        return sum(len(part) for summary in self._summaries for part in summary)

    def take(self) -> list[list[bytes]]:
        """Part ``k`` of every worker's, for each ``k``; these counts hold nothing from now on."""
        summaries, self._summaries = self._summaries, []
        return [[summary[k] for summary in summaries] for k in range(self.parts)]

    def joined(self) -> Counter[bytes]:
        """Every part added up, a worker of its own a part (:func:`add_parts`)."""
        summaries, self._summaries = self._summaries, []
        return add_parts(summaries, self.parts)


def add_counts(counts: dict[T, int], more: Mapping[T, int]) -> None:
    """Add `more` to `counts` in place: a Python step per key in both, the rest in C.

    ``dict.update`` sets, even on a Counter (whose own ``update`` adds), so the sums
    of the keys in both are made first and set last.
    """
    both = {key: counts[key] + more[key] for key in counts.keys() & more.keys()}
    dict.update(counts, more)
    dict.update(counts, both)
