"""``bpetite count``: count the chunks of many files into a shareable counts file.

Also home of the counting helpers ``bpetite train`` shares: reading ``--input`` paths
(files, directories, ``-``), the counting progress phase, and loading ``--counts``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bpetite._counting import count_expanded, expand_inputs
from bpetite._counts_file import load_counts, save_counts
from bpetite._errors import InvalidUtf8Error
from bpetite._progress import Progress, ProgressCallback
from bpetite._streaming import count_pieces, decode_blocks, read_blocks
from bpetite.cli import CliError
from bpetite.cli._common import (
    STDIN,
    PhaseProgress,
    add_command,
    check_output_path,
    describe_input,
    write_json,
)

if TYPE_CHECKING:
    from bpetite.cli._common import Subparsers

#: Off a terminal, counting writes a plain progress line about every this share of the bytes.
PLAIN_PROGRESS_STEP = 0.1


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "count",
        summary="count the chunks of UTF-8 files into a counts file",
        description=(
            "Pre-tokenize UTF-8 files and write how often each distinct chunk occurs, as a "
            "versioned JSON counts file. Each file is one document; a directory means "
            "every regular file under it. Counting runs in parallel and streams the "
            "files, so they may be far larger than memory. 'bpetite train --counts' "
            "merges any number of counts files and trains exactly as on the files "
            "themselves, so counting can run on many machines and training on one."
        ),
        examples=[
            "bpetite count --input corpus/ --output counts.json",
            "bpetite count --input part1/ --output c1.json   # on one machine",
            "bpetite count --input part2/ --output c2.json   # on another",
            "bpetite train --counts c1.json c2.json --vocab-size 4096 --output tok.json",
        ],
    )
    add_input_argument(parser, required=True)
    add_workers_argument(parser)
    add_dask_argument(parser)
    parser.add_argument("--output", required=True, metavar="PATH", help="counts file to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.set_defaults(handler=run)


def add_input_argument(container: argparse._ActionsContainer, *, required: bool) -> None:
    """``--input PATH...``: files, directories (every regular file under them) or ``-``."""
    container.add_argument(
        "--input",
        nargs="+",
        required=required,
        metavar="PATH",
        help="UTF-8 files or directories (every regular file under them, sorted); '-' for "
        "stdin. Each file is one document: no chunk spans two files",
    )


def add_workers_argument(parser: argparse.ArgumentParser) -> None:
    """``--workers N``, default one per CPU."""
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="processes that count in parallel (default: one per CPU); the result is the same",
    )


def add_dask_argument(parser: argparse.ArgumentParser) -> None:
    """``--dask ADDRESS``: count on a Dask cluster, one task per file."""
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="count on a Dask cluster (a scheduler's address, or 'local' for a cluster of "
        "processes here), one task per file; every input must be a shared path. Needs "
        "the bpetite[dask] extra; the result is the same",
    )


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid positive integer: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    check_output_path(args.output, force=args.force)
    started = time.perf_counter()
    counted = count_inputs(args.input, args.workers, dask=args.dask)
    counted_at = time.perf_counter()
    try:
        save_counts(args.output, counted.counts, overwrite=args.force)
    except FileExistsError:
        raise CliError(
            f"--output '{args.output}' already exists; pass --force to replace it"
        ) from None
    except OSError as error:
        raise CliError(
            f"cannot write --output '{args.output}': {error.strerror or error}"
        ) from None
    write_json(
        {
            "documents": counted.documents,
            "corpus_bytes": counted.corpus_bytes,
            "distinct_chunks": len(counted.counts),
            "total_chunks": sum(counted.counts.values()),
            "count_ms": round((counted_at - started) * 1000),
            "elapsed_ms": round((time.perf_counter() - started) * 1000),
        }
    )
    return 0


# --------------------------------------------------------------------------- shared with train


@dataclass(frozen=True, slots=True)
class Counted:
    """The chunk counts of some inputs, with what a summary reports about them."""

    counts: Counter[bytes]
    documents: int
    corpus_bytes: int


def count_inputs(
    inputs: Sequence[str],
    workers: int | None,
    *,
    stream: TextIO | None = None,
    dask: str | None = None,
) -> Counted:
    """Count the chunks of `inputs` (paths, directories, ``-``) with a progress phase.

    Every path is checked before counting starts, so a missing or unreadable one fails
    with one line and no progress output.
    """
    if sum(path == STDIN for path in inputs) > 1:
        raise CliError("--input '-' (standard input) can be given only once")
    files: list[Path] = []
    for path in inputs:
        if path != STDIN:
            files += _expand(path)
    counts: Counter[bytes] = Counter()
    corpus_bytes = 0
    if STDIN in inputs:
        # Standard input has no size to show progress against, and only this process
        # can read it; it is counted first, streamed like a file.
        corpus_bytes, str_counts = _count_stdin()
        counts.update({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})
    if files:
        with PhaseProgress("count", "bytes", stream=stream or sys.stderr) as phase:
            try:
                if dask is None:
                    file_counts = count_expanded(
                        files, workers=workers, progress=counting_progress(phase)
                    )
                else:
                    file_counts = _count_on_dask(files, dask, workers, counting_progress(phase))
            except InvalidUtf8Error as error:
                raise invalid_utf8(error) from None
            except PermissionError as error:
                raise CliError(
                    f"--input file '{error.filename}' cannot be read: permission denied"
                ) from None
        counts = _add(counts, file_counts)
        corpus_bytes += phase.total
    return Counted(counts, len(files) + (STDIN in inputs), corpus_bytes)


def _count_on_dask(
    files: list[Path], address: str, workers: int | None, progress: ProgressCallback
) -> Counter[bytes]:
    from bpetite import dask_client, dask_count_files

    try:
        with dask_client(address, workers=workers) as client:
            return dask_count_files(files, client, progress=progress)
    except ImportError as error:
        raise CliError(str(error)) from None


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


def load_count_files(paths: Sequence[str]) -> Counted:
    """Load and sum ``--counts`` files; every defect becomes one line naming the file."""
    total: Counter[bytes] = Counter()
    for path in paths:
        try:
            counts = load_counts(path)
        except FileNotFoundError:
            raise CliError(f"--counts file '{path}' does not exist") from None
        except IsADirectoryError:
            raise CliError(f"--counts '{path}' is a directory, not a counts file") from None
        except PermissionError:
            raise CliError(f"--counts file '{path}' cannot be read: permission denied") from None
        except (KeyError, ValueError) as error:
            detail = str(error.args[0]) if error.args else type(error).__name__
            detail = detail.removeprefix(f"{path}: ")
            raise CliError(f"--counts '{path}' is not a valid counts file: {detail}") from None
        total = _add(total, counts)
    return Counted(total, 0, 0)


def _add(total: Counter[bytes], more: Counter[bytes]) -> Counter[bytes]:
    """`total` plus `more`, reusing `more` when `total` is empty (the usual case)."""
    if not total:
        return more
    total.update(more)
    return total


def _expand(path: str) -> list[Path]:
    try:
        return expand_inputs([path])
    except FileNotFoundError as error:
        raise CliError(f"--input '{error.filename or path}' does not exist") from None
    except PermissionError as error:
        raise CliError(
            f"--input '{error.filename or path}' cannot be read: permission denied"
        ) from None
    except ValueError as error:
        raise CliError(f"--input {error}") from None


def _count_stdin() -> tuple[int, Counter[str]]:
    size = 0

    def blocks() -> Iterator[bytes]:
        nonlocal size
        for block in read_blocks(sys.stdin.buffer):
            size += len(block)
            yield block

    try:
        counts = count_pieces(decode_blocks(blocks(), STDIN))
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    return size, counts


def invalid_utf8(error: InvalidUtf8Error) -> CliError:
    """The same wording as a whole-file decode error, so every command reads alike."""
    return CliError(
        f"{describe_input(error.source)} is not valid UTF-8: byte 0x{error.byte:02x} at "
        f"byte offset {error.offset} ({error.reason})"
    )
