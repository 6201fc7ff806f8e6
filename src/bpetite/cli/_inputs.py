"""Reading what a command is given: files, standard input, argv text, id lists.

Inputs are read as bytes and decoded as strict UTF-8 (text mode would translate
``\\r\\n`` and use the locale's encoding; a corpus must mean exactly its bytes). Every
input is read exactly once, from its start, so a pipe or a process substitution
(``--input <(cmd)``) works like a file and a file that changes while it is read can
never give a result made of two versions of it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from itertools import compress, count, filterfalse
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from bpetite import BpetiteError, Tokenizer
from bpetite._internal import parse_json_ids, shown, unknown_id
from bpetite.cli._delivered import delivered
from bpetite.cli._errors import CliError
from bpetite.cli._formats import (
    HEAD_BYTES,
    STDIN,
    Sample,
    decode_utf8,
    describe_input,
    invalid_utf8,
    refuse_named_binary,
    sample_bytes,
    what_it_is,
)
from bpetite.corpus import DEFAULT_BLOCK_SIZE, decode_blocks, read_blocks
from bpetite.errors import InvalidUtf8Error

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

#: An input is held in memory up to this size while it is read, then spooled to a
#: temp file (removed by the system even if the process is killed).
SPOOL_BYTES: Final = 64 << 20
#: An id list is parsed this many bytes at a time (cut at a comma).
ID_BLOCK_BYTES: Final = 1 << 20


def open_failure(error: OSError, path: str, option: str) -> CliError:
    """One line for an input that cannot be opened or read."""
    quoted = shown(path)
    if isinstance(error, FileNotFoundError):
        return CliError(f"{option} file '{quoted}' does not exist")
    if isinstance(error, IsADirectoryError):
        return CliError(f"{option} '{quoted}' is a directory, not a file")
    if isinstance(error, PermissionError):
        return CliError(f"{option} file '{quoted}' cannot be read: permission denied")
    return CliError(f"{option} file '{quoted}' cannot be read: {error.strerror or error}")


def read_input_bytes(path: str, option: str = "--input") -> bytes:
    """Return the exact bytes of `path`, or of standard input for ``-``."""
    if path == STDIN:
        return _stdin().read()
    try:
        with Path(path).open("rb") as stream:
            return stream.read()  # not read_bytes(): a pipe has no size to trust
    except OSError as error:
        raise open_failure(error, path, option) from None


def read_input_text(path: str, option: str = "--input") -> str:
    """The text of `path` (``-`` for standard input): its exact bytes as strict UTF-8."""
    return decode_utf8(read_input_bytes(path, option), path)


class Spool(tempfile.SpooledTemporaryFile[bytes]):
    """A private copy of `what` (``"the result"``, ``"standard input"``): in memory up to
    SPOOL_BYTES, then in an anonymous temp file in TMPDIR.

    A write the temp file refuses (a full disk, a quota, ``ulimit -f``) is a CliError
    naming the temp folder, never the input being copied or the output to come.
    """

    def __init__(self, what: str) -> None:
        super().__init__(max_size=SPOOL_BYTES)
        self.what = what

    def write(self, data: ReadableBuffer) -> int:
        try:
            return super().write(data)
        except OSError as error:
            raise self._failure(error) from None

    def rollover(self) -> None:
        try:
            super().rollover()
        except OSError as error:
            raise self._failure(error) from None

    def _failure(self, error: OSError) -> CliError:
        # Nothing reaches stdout or an --output before its spool is whole.
        written = "" if delivered() else "; nothing was written"
        return CliError(
            f"cannot hold {self.what} in a temporary file in '{shown(tempfile.gettempdir())}' "
            f"(TMPDIR chooses the folder): {error.strerror or error}{written}"
        )


def spool_checked(path: str, option: str = "--input") -> IO[bytes]:
    """Read `path` once, checking it is UTF-8, into a private copy positioned at its start.

    The copy is a :class:`Spool`; the caller closes it. A bad byte fails here, before the
    command writes anything, and the copy cannot change afterwards, whatever happens to
    the input. Only reading the input is blamed on it: the spool names its own failures.
    """
    what = "standard input" if path == STDIN else f"a copy of {option} '{shown(path)}'"
    spool = Spool(what)
    try:
        if path == STDIN:
            _copy_checked(_stdin(), spool, STDIN)
        else:
            try:
                stream = Path(path).open("rb")  # noqa: SIM115 - closed below
            except OSError as error:
                raise open_failure(error, path, option) from None
            with stream:
                _copy_checked(stream, spool, path, option)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def _copy_checked(source: IO[bytes], target: IO[bytes], name: str, option: str = "--input") -> None:
    def blocks() -> Iterator[bytes]:
        chunks = read_blocks(source, DEFAULT_BLOCK_SIZE)
        while True:
            try:  # a failure to read is the input's; the spool's writes say their own
                block = next(chunks, None)
            except OSError as error:
                if name == STDIN:
                    reason = error.strerror or error
                    raise CliError(f"standard input cannot be read: {reason}") from None
                raise open_failure(error, name, option) from None
            if block is None:
                return
            if not target.tell():
                refuse_named_binary(Sample(name, block, None))
            target.write(block)
            yield block

    try:
        for _ in decode_blocks(blocks(), name):
            pass
    except InvalidUtf8Error as error:
        target.seek(0)  # what was read so far: standard input cannot be read again
        sample = Sample(name, target.read(HEAD_BYTES), None) if name == STDIN else None
        raise invalid_utf8(error, sample) from None


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


def peek_stdin() -> Sample | None:
    """The first bytes of standard input, left in place for the reader that follows."""
    stream = sys.stdin
    if stream is None or not hasattr(stream.buffer, "peek"):
        return None
    return Sample(STDIN, bytes(stream.buffer.peek(HEAD_BYTES)[:HEAD_BYTES]), None)


def _stdin() -> IO[bytes]:
    stream = sys.stdin
    if stream is None:
        raise CliError("standard input is closed; give --input a file instead of '-'")
    return stream.buffer


# --------------------------------------------------------------------------- id lists


def parse_id_list(data: bytes, path: str) -> Sequence[int]:
    """Parse a JSON array of token ids, as ``bpetite encode`` prints it, compactly.

    Ids are kept in an ``array`` (8 bytes each) rather than a list of int objects, and
    the text is parsed a block at a time, so millions of ids take a few bytes each.
    Anything unusual (not an array, an item that is not an integer, invalid UTF-8 or
    JSON, deep nesting) goes to bpetite's strict reader, which names the problem.
    """
    ids = _parse_ids_fast(data)
    if ids is not None:
        return ids
    return _parse_ids_slow(data, path)


def _parse_ids_fast(data: bytes) -> array[int] | None:
    """The ids of a well-formed array of small integers, or None to take the slow path."""
    view = memoryview(data)
    start = len(data) - len(data.lstrip())
    end = len(data.rstrip())
    if end - start < 2 or data[start] != ord("[") or data[end - 1] != ord("]"):
        return None
    ids: array[int] = array("q")
    position = start + 1
    body_end = end - 1
    if not data[position:body_end].strip():
        return ids
    while position < body_end:
        cut = body_end
        if body_end - position > ID_BLOCK_BYTES:
            comma = data.find(b",", position + ID_BLOCK_BYTES, body_end)
            cut = body_end if comma < 0 else comma
        part = bytes(view[position:cut])
        try:
            items = json.loads(b"[" + part + b"]")
        except (ValueError, RecursionError):
            return None
        if len(items) != part.count(b",") + 1 or set(map(type, items)) != {int}:
            return None  # an empty item, a string holding a comma, a float, a bool
        try:
            ids.extend(items)
        except OverflowError:
            return None
        position = cut + 1  # past the comma
        if cut < body_end and position >= body_end:
            return None  # a trailing comma
    return ids


def _parse_ids_slow(data: bytes, path: str) -> list[int]:
    """bpetite's strict reader, for the exact problem: it names the item at fault; or
    the kind of file `path` is, when it is not text at all (a token array, a table)."""
    found = what_it_is(sample_bytes(path, data, whole=True), "ids")
    if found is not None:
        raise CliError(found)
    source = describe_input(path)
    text = decode_utf8(data, path, "ids")
    try:
        return parse_json_ids(text, source=source)
    except BpetiteError as error:
        detail = str(error).removeprefix(f"{source}: ")  # "not valid JSON: ...", "must ..."
        joiner = " is " if detail.startswith("not ") else " "
        raise CliError(f"{source}{joiner}{detail}") from None


def first_unknown_id(tokenizer: Tokenizer, ids: Sequence[int]) -> str | None:
    """Describe the first id that is not a token of `tokenizer`, or None if all are.

    The distinct ids are looked up, and only when one is unknown are the ids searched
    for the first unknown one: no Python loop over millions of ids either way.
    """
    unknown = set(filterfalse(tokenizer.vocab.__contains__, set(ids)))
    if not unknown:
        return None
    position = next(compress(count(), map(unknown.__contains__, ids)))
    return unknown_id(ids[position], tokenizer.vocab, f" at position {position}")
