"""What is read of each document: a Parquet file's text column, nanochat's budget, and
the delimiter that cuts a text file into documents.

``--text-column``, ``--max-chars``, ``--doc-cap`` and ``--doc-delimiter`` for
``train``, ``count`` and ``dataset``; the library's errors about such inputs as one
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
from bpetite.cli._errors import CliError
from bpetite.cli._inputs import (
    STDIN,
    check_argument_text,
    describe_input,
    invalid_utf8,
    open_failure,
)
from bpetite.cli._output import note
from bpetite.corpus import count_pieces, decode_blocks, is_parquet, read_blocks
from bpetite.errors import InvalidUtf8Error, ParameterError

#: A character count as nanochat's speedrun writes it: 2000000000, 2_000_000_000 or 2e9.
_CHAR_COUNT: Final = re.compile(r"[0-9][0-9_]*(?:[eE][0-9]+)?")

#: A backslash escape written into --doc-delimiter, which is taken literally.
_ESCAPE: Final = re.compile(r"\\[nrt]")


def char_count(text: str) -> int:
    """An argparse type: a positive whole number of characters, ``2e9`` allowed."""
    if not _CHAR_COUNT.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number of characters, got '{text}'")
    value = int(float(text)) if text.strip().lower().count("e") else int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
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
    """How many documents the inputs are; None if a Parquet file is among them (its rows
    are documents, counted only by reading them), or if a delimiter cuts the files."""
    if reading.doc_delimiter is not None or any(is_parquet(path) for path in files):
        return None
    return len(files) + streams


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
        raise invalid_utf8(error) from None
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
                _copy(sys.stdin.buffer, target)
            else:
                try:
                    with Path(entry).open("rb") as source:
                        _copy(source, target)
                except OSError as error:
                    raise open_failure(error, entry, "--input") from None
        names[str(spool)] = entry
        files.append(spool)
    return files, names


def _copy(source: IO[bytes], target: IO[bytes]) -> None:
    for block in read_blocks(source):
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
            size += len(block)
            yield block

    try:
        str_counts = count_pieces(decode_blocks(blocks(), name), pattern=pattern)
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    return size, Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})
