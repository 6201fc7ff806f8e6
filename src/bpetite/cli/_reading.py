"""What is read of each document: a Parquet file's text column, nanochat's budget, and
the delimiter that cuts a text file into documents.

``--input``, ``--text-column``, ``--max-chars``, ``--doc-cap``, ``--doc-delimiter``
and ``--dask`` for the corpus commands; the library's errors about such inputs as one
line each; standard input and pipes counted as they are read, or copied to a file, for
a budget that must take every document in input order, or to be cut into documents.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from bpetite import SplitPattern
from bpetite._internal import measure_text
from bpetite.cli._errors import CliError
from bpetite.cli._formats import STDIN, Sample, describe_input, invalid_utf8, refuse_named_binary
from bpetite.cli._inputs import check_argument_text, open_failure
from bpetite.cli._output import note
from bpetite.corpus import count_pieces, decode_blocks, is_parquet, read_blocks
from bpetite.errors import InvalidUtf8Error, ParameterError

#: A character count as nanochat's speedrun writes it: 2000000000, 2_000_000_000 or 2e9.
_CHAR_COUNT: Final = re.compile(r"[0-9][0-9_]*(?:[eE][0-9]+)?")

#: The largest character count taken: a signed 64-bit integer, as Arrow's kernels need.
MAX_CHAR_COUNT: Final = (1 << 63) - 1

#: A backslash escape written into --doc-delimiter, which is taken literally.
_ESCAPE: Final = re.compile(r"\\[nrt]")


def char_count(text: str) -> int:
    """An argparse type: a positive whole number of characters, ``2e9`` allowed (exactly:
    the digits times a power of ten), at most :data:`MAX_CHAR_COUNT`."""
    if not _CHAR_COUNT.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number of characters, got '{text}'")
    digits, _, exponent = text.strip().lower().partition("e")
    value = int(digits)
    if value and exponent:
        if int(exponent) > len(str(MAX_CHAR_COUNT)):  # past the limit whatever the digits
            raise argparse.ArgumentTypeError(f"must be at most {MAX_CHAR_COUNT:,}, got {text}")
        value *= 10 ** int(exponent)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    if value > MAX_CHAR_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_CHAR_COUNT:,}, got {text}")
    return value


def delimiter(text: str) -> str:
    """An argparse type: a document delimiter, any text but the empty one."""
    if not text:
        raise argparse.ArgumentTypeError(
            "must not be empty: it is the text between two documents, e.g. '<|endoftext|>'"
        )
    return text


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """``--text-column``, ``--max-chars``, ``--doc-cap``, ``--doc-delimiter``: what is
    read of the documents, and what the documents are."""
    parser.add_argument(
        "--doc-delimiter",
        type=delimiter,
        metavar="TEXT",
        help="cut every text input into documents at each occurrence of TEXT, as "
        "TinyStories' and OpenWebText's dumps end each document with '<|endoftext|>'. "
        "TEXT is taken literally and belongs to no document; a document that is empty "
        "or only whitespace (the newline after the last delimiter) is dropped. For "
        "newlines, let the shell make them: $'\\n\\n' (blank lines) or "
        "$'\\n<|endoftext|>\\n' in bash. Not for Parquet inputs, whose rows are "
        "documents already",
    )
    parser.add_argument(
        "--text-column",
        default="text",
        metavar="NAME",
        help="the column of a Parquet input that holds the documents (default: text)",
    )
    parser.add_argument(
        "--max-chars",
        type=char_count,
        metavar="N",
        help="read documents, in input order, up to the one that takes the total past N "
        "characters, that one included (nanochat's --max-chars; 2e9 is accepted); the "
        "same cut for any --workers",
    )
    parser.add_argument(
        "--doc-cap",
        type=char_count,
        metavar="N",
        help="read only the first N characters of each document (nanochat's --doc-cap)",
    )


def add_input_argument(container: argparse._ActionsContainer, *, required: bool) -> None:
    """``--input PATH...``: files, directories (every regular file under them) or ``-``."""
    container.add_argument(
        "--input",
        nargs="+",
        required=required,
        metavar="PATH",
        help="UTF-8 files, Parquet files or directories (every regular file under them, "
        "sorted); '-' for stdin. Each text file is one document, each row of a Parquet "
        "file's --text-column another: no chunk spans two documents. Parquet is known by "
        "its content (PAR1), not its name, and needs the bpetite[parquet] extra (pyarrow)",
    )


def add_dask_argument(parser: argparse.ArgumentParser, *, merging: bool = False) -> None:
    """``--dask ADDRESS``: count on a Dask cluster, a task per batch of files (and, `merging`,
    keep the merge loop's words on its workers)."""
    work = "count (and, from 16 MiB of distinct chunks, merge)" if merging else "count"
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help=f"{work} on a Dask cluster (a scheduler's address, or 'local' for a cluster "
        "of processes here), a task per batch of files; every input must be a shared path. Needs "
        "the bpetite[dask] extra; the result is the same",
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """What is read of each document: a Parquet file's text column, and the budget."""

    text_column: str = "text"
    max_chars: int | None = None
    doc_cap: int | None = None
    doc_delimiter: str | None = None

    @property
    def budgeted(self) -> bool:
        return self.max_chars is not None or self.doc_cap is not None

    @property
    def whole_inputs(self) -> bool:
        """False when a stream must be read as a file: for the budget, which must take
        every document in input order, or to be cut into documents."""
        return not self.budgeted and self.doc_delimiter is None


def reading_of(args: argparse.Namespace) -> Reading:
    """The Reading that ``--text-column``, ``--max-chars``, ``--doc-cap`` and
    ``--doc-delimiter`` ask for. A delimiter holding ``\\n`` as a backslash and a
    letter gets a note: it is taken literally, and a newline is what was meant."""
    delimiter = args.doc_delimiter
    if delimiter is not None:
        check_argument_text(delimiter, "--doc-delimiter")
        escape = _ESCAPE.search(delimiter)
        if escape is not None:
            note(
                f"bpetite: note: --doc-delimiter is taken literally: its '{escape.group()}' "
                "is a backslash and a letter; for a newline or a tab, let the shell make "
                "it, e.g. $'\\n\\n' in bash"
            )
    return Reading(
        check_argument_text(args.text_column, "--text-column"),
        args.max_chars,
        args.doc_cap,
        delimiter,
    )


def document_count(files: Sequence[Path], streams: int, reading: Reading) -> int | None:
    """How many documents were read; None if a Parquet file is among them (its rows are
    documents, counted only by reading them), or if a delimiter cuts the files.

    With ``--max-chars``, the documents taken: in input order, up to the one that takes
    the total of characters (each file's first ``--doc-cap``) past it, as the library
    takes them. Under a budget every stream is a file (spooled), so `streams` is 0.
    """
    if reading.doc_delimiter is not None or any(is_parquet(path) for path in files):
        return None
    if reading.max_chars is None:
        return len(files) + streams
    cap = reading.doc_cap
    sizes = (path.stat().st_size for path in files)  # a character takes a byte at least
    if sum(size if cap is None else min(size, cap) for size in sizes) <= reading.max_chars:
        return len(files)  # the budget takes every file: none is read again
    taken = 0
    for number, path in enumerate(files, 1):
        taken += measure_text(str(path), reading.doc_cap)[0]
        if taken > reading.max_chars:
            return number
    return len(files)


@contextmanager
def library_errors(names: dict[str, str] | None = None) -> Iterator[None]:
    """The library's errors about inputs as one CLI line each; `names` maps a spool's
    path to the input it holds (``-``)."""
    names = names or {}
    try:
        yield
    except InvalidUtf8Error as error:
        if error.source in names:
            error = InvalidUtf8Error(names[error.source], error.offset, error.byte, error.reason)
        raise invalid_utf8(error, tables=True) from None
    except ImportError as error:  # pyarrow, for a Parquet input
        raise CliError(str(error)) from None
    except ParameterError as error:  # a Parquet file without the column, or unreadable
        message = str(error).replace("text_column (--text-column)", "--text-column")
        message = message.replace("doc_delimiter", "--doc-delimiter")
        for spool, name in names.items():
            message = message.replace(f"'{spool}'", describe_input(name))
        raise CliError(message) from None
    except OSError as error:
        if error.filename is None:
            raise
        raise open_failure(error, str(error.filename), "--input") from None


def spool_streams(ordered: Sequence[Path | str], folder: Path) -> tuple[list[Path], dict[str, str]]:
    """Every input as a file, in order: each stream (``-``, a pipe) copied into `folder`.

    Returns the files, and each copy's path mapped to the input it holds, for messages.
    """
    files: list[Path] = []
    names: dict[str, str] = {}
    for number, entry in enumerate(ordered):
        if isinstance(entry, Path):
            files.append(entry)
            continue
        spool = folder / f"stream-{number}"
        with spool.open("wb") as target:
            if entry == STDIN:
                if sys.stdin is None:
                    raise CliError("standard input is closed; give --input a file instead of '-'")
                _copy(sys.stdin.buffer, target, entry)
            else:
                try:
                    with Path(entry).open("rb") as source:
                        _copy(source, target, entry)
                except OSError as error:
                    raise open_failure(error, entry, "--input") from None
        names[str(spool)] = entry
        files.append(spool)
    return files, names


def _copy(source: IO[bytes], target: IO[bytes], name: str) -> None:
    for number, block in enumerate(read_blocks(source)):
        if number == 0:
            refuse_named_binary(Sample(name, block, None))
        target.write(block)


def count_stream(name: str, pattern: SplitPattern | str) -> tuple[int, Counter[bytes]]:
    """Count the chunks of a stream (``-``, a pipe) as it is read, in this process: it
    can be read only once. Returns its size in bytes and the counts."""
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
    stream: IO[bytes], name: str, pattern: SplitPattern | str
) -> tuple[int, Counter[bytes]]:
    size = 0

    def blocks() -> Iterator[bytes]:
        nonlocal size
        for block in read_blocks(stream):
            if not size:
                refuse_named_binary(Sample(name, block, None))
            size += len(block)
            yield block

    try:
        str_counts = count_pieces(decode_blocks(blocks(), name), pattern=pattern)
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    return size, Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})
