"""Many documents in one text file: the text cut at every occurrence of a delimiter.

Must equal, for a file's text ``t``, ``[d for d in t.split(delimiter) if d.strip()]``.

``doc_delimiter`` (``--doc-delimiter``) makes a text file hold many documents, as
TinyStories' and OpenWebText's dumps do with ``<|endoftext|>``. The rules:

* The text is cut as ``str.split`` cuts it: at the leftmost occurrence, then after
  it, so occurrences never overlap. The delimiter belongs to no document.
* A document's text is kept exactly, whitespace included; a document that is empty
  or only whitespace (``str.isspace``) is no document and is dropped. So the newline
  that ends a file after its last ``<|endoftext|>`` is not a document, and neither is
  the gap between two adjacent delimiters. A dump that puts the delimiter on a line of
  its own (``story\\n<|endoftext|>\\nstory``) is cut cleanly by a delimiter that
  holds its newlines (``$'\\n<|endoftext|>\\n'`` in bash).

Large files are cut into pieces for parallel workers only just after an occurrence
that the whole file's left-to-right cut also makes (:func:`find_cut`), so each piece
holds whole documents and the documents never depend on the piece size. Every byte of
a piece is read (the delimiters are found by reading), so every byte must be UTF-8;
a bad byte is reported at its offset in the whole file, as everywhere.

Memory: a document's text is streamed, except its leading whitespace, which is held
until its first other character shows the document is not blank.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import BinaryIO, Final

from bpetite.core._errors import InvalidUtf8Error, ParameterError
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, stream_file_text

#: How many bytes are searched for a cut point at a time.
CUT_SEARCH_BYTES: Final = 1 << 20


def check_delimiter(delimiter: object) -> str | None:
    """Return `delimiter` if it is None or a non-empty string that UTF-8 can encode."""
    if delimiter is None:
        return None
    if not isinstance(delimiter, str):
        raise TypeError(f"doc_delimiter must be a string or None, got {delimiter!r}")
    if not delimiter:
        raise ParameterError(
            "doc_delimiter must not be empty: it is the text between two documents, "
            "e.g. '<|endoftext|>'"
        )
    try:
        delimiter.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ParameterError(
            f"doc_delimiter {delimiter!r} is not valid Unicode (a lone surrogate at "
            f"character {error.start})"
        ) from None
    return delimiter


def parquet_refusal(path: object) -> ParameterError:
    """The error for a Parquet input given with a delimiter: its rows are documents."""
    return ParameterError(
        f"'{path}' is a Parquet file, whose rows are already documents; doc_delimiter "
        "cuts text files only: give it without them"
    )


def split_documents(pieces: Iterable[str], delimiter: str) -> Iterator[Iterator[str]]:
    """Yield each document of ``"".join(pieces).split(delimiter)`` in turn, blanks included.

    Each document is an iterator over its text (never an empty part); the next one is
    yielded once the caller is done with it (the rest of it is skipped then), as
    ``itertools.groupby`` does. The text is never held whole, however the pieces cut it.

    >>> ["".join(document) for document in split_documents(["a|", "|b|", "c||"], "||")]
    ['a', 'b|c', '']
    """
    marks = _marks(pieces, delimiter)
    ended = False

    def document() -> Iterator[str]:
        nonlocal ended
        for part in marks:
            if part is None:
                return
            yield part
        ended = True

    while not ended:
        parts = document()
        yield parts
        for _ in parts:  # what the caller left of it
            pass


def _marks(pieces: Iterable[str], delimiter: str) -> Iterator[str | None]:
    """The text of `pieces`, in non-empty parts, with None where each delimiter was.

    The last ``len(delimiter) - 1`` characters of what has been read are held back,
    since they may begin a delimiter that the next piece completes.
    """
    size = len(delimiter)
    carry = ""
    for piece in pieces:
        if not piece:
            continue
        buffer = carry + piece
        position = 0
        while (found := buffer.find(delimiter, position)) >= 0:
            if found > position:
                yield buffer[position:found]
            yield None
            position = found + size
        keep = max(position, len(buffer) - size + 1)
        if keep > position:
            yield buffer[position:keep]
        carry = buffer[keep:]
    if carry:
        yield carry


def kept_documents(
    pieces: Iterable[str], delimiter: str, doc_cap: int | None
) -> Iterator[Iterator[str]]:
    """The parts of each document that is not blank, cut to its first `doc_cap`
    characters: what a worker counts or encodes of a delimited piece. Each is read as
    :func:`split_documents` reads it, one document at a time."""
    for document in split_documents(pieces, delimiter):
        parts = content(document)
        if parts is not None:
            yield capped(parts, doc_cap)


def content(document: Iterable[str]) -> Iterator[str] | None:
    """The parts of `document`, or None if it is blank (empty or only whitespace).

    Whitespace parts are held until a part with another character arrives.
    """
    held: list[str] = []
    parts = iter(document)
    for part in parts:
        if part.isspace():
            held.append(part)
            continue
        return chain(held, (part,), parts)
    return None


def capped(parts: Iterable[str], doc_cap: int | None) -> Iterator[str]:
    """The first `doc_cap` characters of the text `parts` make (all of it if None)."""
    if doc_cap is None:
        yield from parts
        return
    left = doc_cap
    for part in parts:
        if len(part) >= left:
            yield part[:left]
            return
        yield part
        left -= len(part)


# --------------------------------------------------------------------------- planning


def find_cut(stream: BinaryIO, offset: int, delimiter: bytes) -> int | None:
    """The first point at or after `offset` just after an occurrence of `delimiter` that
    the file's left-to-right cut makes, if one starts within CUT_SEARCH_BYTES of `offset`.

    An occurrence at ``p`` is such a cut when no occurrence starts in ``(p - n, p)``
    (``n`` the delimiter's length): every occurrence the cut takes before ``p`` then ends
    by ``p``, so the cut reaches ``p`` and takes it. That is always so for a delimiter
    that cannot overlap itself (``<|endoftext|>``); for one that can (``\\n\\n``), an
    occurrence inside a longer run is skipped, and the run's first is taken. The answer
    may pass over a later cut, never give a wrong one. UTF-8 never starts a character
    inside another, so on valid text these are the text's own cut points.
    """
    size = len(delimiter)
    start = max(offset - size + 1, 0)
    stream.seek(start)
    window = stream.read(CUT_SEARCH_BYTES + 2 * size)
    found = window.find(delimiter, offset - start)
    while 0 <= found < offset - start + CUT_SEARCH_BYTES:
        if window.find(delimiter, max(found - size + 1, 0), found + size) == found:
            return start + found + size
        found = window.find(delimiter, found + 1)
    return None


def measure_documents(
    path: str,
    delimiter: str,
    doc_cap: int | None,
    limit: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> tuple[int, int | None]:
    """The characters a budget takes from the documents of the file at `path`, and where
    it stops: just after the document that takes the total past `limit` (the byte where
    its text ends), or None if none does.

    Each document counts its first `doc_cap` characters; blank documents count nothing.
    Only the bytes up to that document's end are read and checked as UTF-8: a bad byte
    past them is no error, since no one reads it.
    """
    taken = 0
    position = 0  # the bytes of the text read so far
    delimiter_bytes = len(delimiter.encode("utf-8"))
    for document in split_documents(_valid_text(path, block_size), delimiter):
        chars = 0
        blank = True
        for part in document:
            chars += len(part)
            position += _utf8_length(part)
            blank = blank and part.isspace()
        if not blank:
            taken += chars if doc_cap is None else min(chars, doc_cap)
            if taken > limit:
                return taken, position
        position += delimiter_bytes  # past the last document, no one reads it
    return taken, None


def _valid_text(path: str, block_size: int) -> Iterator[str]:
    """The file's text; at a bad byte, the valid text before it, then the error."""
    done = 0  # the bytes of the text yielded so far
    try:
        for text in stream_file_text(path, block_size=block_size):
            yield text
            done += _utf8_length(text)
    except InvalidUtf8Error as error:
        # The block that holds the bad byte was not yielded: the text before the bad
        # byte may still hold the cut.
        with Path(path).open("rb") as stream:
            stream.seek(done)
            yield stream.read(error.offset - done).decode("utf-8")
        raise


def _utf8_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))
