"""Training data on the command line: ``--input`` paths and ``--counts`` files, counted.

``bpetite count`` and ``bpetite train`` both read ``--input`` (files, directories,
``-``, pipes) and count its chunks with a progress phase; ``train`` also sums
``--counts`` files. Regular files are counted in parallel by the library; standard
input and anything else that can only be read once from its start (a pipe, a process
substitution ``<(cmd)``) is streamed here, in this process.
"""

from __future__ import annotations

import argparse
import stat
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TextIO

from bpetite import InvalidUtf8Error, ProgressCallback, SplitPattern, count_chunks
from bpetite.cli._errors import CliError
from bpetite.cli._inputs import (
    STDIN,
    decode_utf8,
    describe_input,
    invalid_utf8,
    open_failure,
)
from bpetite.cli._library import (
    count_expanded,
    count_pieces,
    decode_blocks,
    expand_inputs,
    load_counts,
    read_blocks,
)
from bpetite.cli._output import shorten
from bpetite.cli._parser import positive_int
from bpetite.cli._progress import PhaseProgress, counting_progress


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


@dataclass(frozen=True, slots=True)
class Sources:
    """What ``--input`` names: regular files (counted in parallel) and streams (``-``, pipes)."""

    files: tuple[Path, ...]
    streams: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """Every input by name, for the check that no output overwrites one."""
        return (*map(str, self.files), *self.streams)


@dataclass(frozen=True, slots=True)
class Counted:
    """The chunk counts of some inputs, with what a summary reports about them."""

    counts: Counter[bytes]
    documents: int
    corpus_bytes: int


def gather_inputs(inputs: Sequence[str]) -> Sources:
    """Check and expand `inputs` before any counting: a bad path fails with one line."""
    if sum(path == STDIN for path in inputs) > 1:
        raise CliError("--input '-' (standard input) can be given only once")
    files: list[Path] = []
    streams: list[str] = []
    for path in inputs:
        if path == STDIN or _is_stream(path):
            streams.append(path)
        else:
            files += _expand(path)
    return Sources(tuple(files), tuple(streams))


def count_sources(
    sources: Sources,
    workers: int | None,
    *,
    pattern: SplitPattern | None = None,
    stream: TextIO | None = None,
    dask: str | None = None,
) -> Counted:
    """Count the chunks of `sources` (with `pattern`, the spec's when None)."""
    counts: Counter[bytes] = Counter()
    corpus_bytes = 0
    for name in sources.streams:
        # A stream has no size to show progress against and can be read only once,
        # from here; it is counted as it is read.
        size, more = _count_stream(name, pattern)
        counts = _add(counts, more)
        corpus_bytes += size
    if sources.files:
        if pattern is not None and pattern.name != "gpt2":
            # The parallel file counter cuts with the spec's pattern only: any other
            # pattern counts each file whole, here.
            size, more = _count_files_whole(sources.files, pattern, stream)
            counts = _add(counts, more)
            return Counted(counts, len(sources.files) + len(sources.streams), corpus_bytes + size)
        with PhaseProgress("count", "bytes", stream=stream) as phase:
            try:
                if dask is None:
                    file_counts = count_expanded(
                        list(sources.files), workers=workers, progress=counting_progress(phase)
                    )
                else:
                    file_counts = _count_on_dask(
                        list(sources.files), dask, workers, counting_progress(phase)
                    )
            except InvalidUtf8Error as error:
                raise invalid_utf8(error) from None
            except OSError as error:
                if error.filename is None:
                    raise
                raise open_failure(error, str(error.filename), "--input") from None
        counts = _add(counts, file_counts)
        corpus_bytes += phase.total
    return Counted(counts, len(sources.files) + len(sources.streams), corpus_bytes)


def _count_on_dask(
    files: list[Path], address: str, workers: int | None, progress: ProgressCallback
) -> Counter[bytes]:
    from bpetite import dask_client, dask_count_files

    try:
        with dask_client(address, workers=workers) as client:
            return dask_count_files(files, client, progress=progress)
    except ImportError as error:
        raise CliError(str(error)) from None


def _count_files_whole(
    files: Sequence[Path], pattern: SplitPattern, stream: TextIO | None
) -> tuple[int, Counter[bytes]]:
    counts: Counter[bytes] = Counter()
    total = sum(path.stat().st_size for path in files)
    with PhaseProgress("count", "bytes", stream=stream) as phase:
        phase.start(total)
        for path in files:
            try:
                data = path.read_bytes()
            except OSError as error:
                raise open_failure(error, str(path), "--input") from None
            text = decode_utf8(data, describe_input(str(path)))
            counts.update(count_chunks([text], pattern=pattern))
            phase.advance(len(data))
        phase.finish()
    return phase.completed, counts


def load_count_files(paths: Sequence[str]) -> Counted:
    """Load and sum ``--counts`` files; every defect becomes one line naming the file."""
    total: Counter[bytes] = Counter()
    for path in paths:
        shown = shorten(path)
        try:
            counts = load_counts(path)
        except FileNotFoundError:
            raise CliError(f"--counts file '{shown}' does not exist") from None
        except IsADirectoryError:
            raise CliError(f"--counts '{shown}' is a directory, not a counts file") from None
        except PermissionError:
            raise CliError(f"--counts file '{shown}' cannot be read: permission denied") from None
        except OSError as error:
            raise open_failure(error, path, "--counts") from None
        except (KeyError, ValueError) as error:  # the counts reader's documented failures
            detail = str(error.args[0]) if error.args else type(error).__name__
            detail = detail.removeprefix(f"{path}: ")
            raise CliError(f"--counts '{shown}' is not a valid counts file: {detail}") from None
        total = _add(total, counts)
    return Counted(total, 0, 0)


def _is_stream(path: str) -> bool:
    """True for an existing input that is neither a regular file nor a directory."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return False  # expand_inputs says what is wrong with it
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


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
        raise CliError(f"--input '{shorten(str(error.filename or path))}' does not exist") from None
    except PermissionError as error:
        raise CliError(
            f"--input '{shorten(str(error.filename or path))}' cannot be read: permission denied"
        ) from None
    except OSError as error:
        raise open_failure(error, path, "--input") from None
    except ValueError as error:  # a directory with no files
        raise CliError(f"--input {shorten(str(error), 300)}") from None


def _count_stream(name: str, pattern: SplitPattern | None) -> tuple[int, Counter[bytes]]:
    if name == STDIN:
        if sys.stdin is None:
            raise CliError("standard input is closed; give --input a file instead of '-'")
        return _count_open(sys.stdin.buffer, name, pattern)
    try:
        with Path(name).open("rb") as stream:
            return _count_open(stream, name, pattern)
    except OSError as error:
        raise open_failure(error, name, "--input") from None


def _count_open(
    stream: IO[bytes], name: str, pattern: SplitPattern | None
) -> tuple[int, Counter[bytes]]:
    size = 0

    def blocks() -> Iterator[bytes]:
        nonlocal size
        for block in read_blocks(stream):
            size += len(block)
            yield block

    try:
        if pattern is not None and pattern.name != "gpt2":
            # The block-wise chunker knows the spec's pattern; any other reads whole.
            text = "".join(decode_blocks(blocks(), name))
            return size, count_chunks([text], pattern=pattern)
        str_counts = count_pieces(decode_blocks(blocks(), name))
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    return size, Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})
