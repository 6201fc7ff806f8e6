"""Pre-tokenize and encode text that arrives in blocks, exactly as if it came whole.

A file far larger than memory is read in blocks, decoded with a strict incremental
UTF-8 decoder, and scanned with the same compiled pattern as everything else. The only
question is which chunks of a scanned buffer are final, i.e. cannot change when more
text arrives. The answer used here: **all but the last two**.

Why two is enough. The match the pattern finds at a position depends only on the text
from that position on (no look-behind, no anchors), and findall's matches tile the
text. So a match stays the same in any longer text unless finding it looked at the end
of the buffer. Looking at the end happens only when

* a run (letters, digits, punctuation or whitespace) reaches the end: then that run
  is the *last* match (``\\s+(?!\\S)`` takes a whitespace run up to the end whole);
* the contraction branch reads two characters past a ``'`` that sits just before the
  end: ``'l`` could become ``'ll``. Then ``'`` is the match *before the last*, and
  the last is the single letter after it;
* a one-character run sits at the very end: it is the last match.

Holding back one match is not enough (``"'l"`` + ``"l"`` is ``'ll``, not ``'`` ``l``
``l``); two always is. The held-back text is scanned again with the next block.

A long run (a megabyte of letters is one chunk) is held back until it ends; so that
it is not rescanned once per block, blocks are gathered until the new text is at
least as long as the held-back text, which keeps the total work linear.
"""

from __future__ import annotations

import codecs
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, TypeVar

import regex

from bpetite._constants import END_OF_TEXT_TOKEN
from bpetite._errors import InvalidUtf8Error
from bpetite._pretokenizer import PRETOKENIZER

if TYPE_CHECKING:
    from bpetite._tokenizer import Tokenizer

T = TypeVar("T")

#: Bytes read at a time. Small enough to keep memory flat, large enough that the
#: per-block overhead (one decode, one findall) is invisible.
DEFAULT_BLOCK_SIZE: Final = 1 << 20

#: How many trailing matches of a buffer may still change when more text arrives.
HELD_BACK_CHUNKS: Final = 2

#: Held-back text shorter than this (in characters) is simply rescanned with every
#: block; longer held-back text waits until as much new text has arrived.
RESCAN_SLACK: Final = 1 << 16

_WHITESPACE: Final = regex.compile(r"\s")
_LITERAL_PREFIXES: Final = tuple(
    END_OF_TEXT_TOKEN[:length] for length in range(len(END_OF_TEXT_TOKEN) - 1, 0, -1)
)


# --------------------------------------------------------------------------- bytes to text


def read_blocks(
    stream: IO[bytes], block_size: int = DEFAULT_BLOCK_SIZE, limit: int | None = None
) -> Iterator[bytes]:
    """Yield the bytes of `stream` in blocks of at most `block_size`, at most `limit` in all."""
    check_block_size(block_size)
    remaining = limit
    while remaining is None or remaining > 0:
        size = block_size if remaining is None else min(block_size, remaining)
        block = stream.read(size)
        if not block:
            return
        if remaining is not None:
            remaining -= len(block)
        yield block


def decode_blocks(blocks: Iterable[bytes], source: str, first_offset: int = 0) -> Iterator[str]:
    """Yield the text of `blocks` decoded as strict UTF-8, however the blocks split characters.

    An invalid sequence raises :class:`InvalidUtf8Error` with the absolute offset (the
    blocks start at byte `first_offset` of `source`) of its first byte, the same offset
    ``data.decode("utf-8")`` reports as ``error.start`` for the whole data. Pieces may be
    empty (a block that ends inside a character).
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = first_offset  # the absolute offset of the next block's first byte
    for block in blocks:
        # The decoder keeps an unfinished character between calls; its error offsets
        # count from the start of those kept bytes, not from the start of `block`.
        kept = len(decoder.getstate()[0])
        try:
            yield decoder.decode(block)
        except UnicodeDecodeError as error:
            raise _invalid(source, offset - kept, error) from None
        offset += len(block)
    kept = len(decoder.getstate()[0])
    try:
        yield decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise _invalid(source, offset - kept, error) from None


def _invalid(source: str, base: int, error: UnicodeDecodeError) -> InvalidUtf8Error:
    return InvalidUtf8Error(source, base + error.start, error.object[error.start], error.reason)


def check_block_size(block_size: object) -> int:
    """Return `block_size` if it is a positive int; otherwise raise naming the value."""
    if isinstance(block_size, bool) or not isinstance(block_size, int):
        raise TypeError(f"block_size must be an integer, got {block_size!r}")
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1 byte, got {block_size}")
    return block_size


# --------------------------------------------------------------------------- text to chunks


def iter_chunks(pieces: Iterable[str]) -> Iterator[list[str]]:
    """Yield the pre-tokenizer chunks of ``"".join(pieces)``, in order, in batches.

    Concatenated, the batches are exactly ``PRETOKENIZER.findall("".join(pieces))``
    however the text is cut into pieces (see the module docstring for why).

    >>> [chunk for batch in iter_chunks(["it'", "ll be", "  ", "fine"]) for chunk in batch]
    ['it', "'ll", ' be', ' ', ' fine']
    """

    def settle(buffer: str) -> tuple[list[str], int]:
        chunks = PRETOKENIZER.findall(buffer)
        if len(chunks) <= HELD_BACK_CHUNKS:
            return [], 0
        held = sum(map(len, chunks[-HELD_BACK_CHUNKS:]))
        del chunks[-HELD_BACK_CHUNKS:]
        return chunks, len(buffer) - held

    return _settled(pieces, settle, PRETOKENIZER.findall)


def count_pieces(pieces: Iterable[str], counts: Counter[str] | None = None) -> Counter[str]:
    """Add the chunks of ``"".join(pieces)`` to `counts` (a new Counter if None) and return it."""
    counts = Counter() if counts is None else counts
    for batch in iter_chunks(pieces):
        counts.update(batch)
    return counts


def stream_file_text(
    path: str,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    start: int = 0,
    end: int | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[str]:
    """Yield the text of bytes ``start:end`` of the file at `path` (to its end if None).

    `start` must be a character boundary. `on_bytes` is told how many bytes each block
    held once the block is decoded, for progress. Errors name `path` and the offset in
    the whole file.
    """
    check_block_size(block_size)
    with Path(path).open("rb") as stream:
        if start:
            stream.seek(start)
        limit = None if end is None else end - start
        blocks: Iterable[bytes] = read_blocks(stream, block_size, limit)
        if on_bytes is not None:
            blocks = _reporting(blocks, on_bytes)
        yield from decode_blocks(blocks, path, start)


def check_file_utf8(path: str, block_size: int = DEFAULT_BLOCK_SIZE) -> None:
    """Raise :class:`InvalidUtf8Error` if the file at `path` is not valid UTF-8.

    Decoding runs at hundreds of MB/s, far faster than pre-tokenizing, so checking
    every file before counting costs little and turns a bad byte at the end of a large
    corpus into an error in seconds instead of after all the counting.
    """
    for _ in stream_file_text(path, block_size=block_size):
        pass


def _reporting(blocks: Iterable[bytes], on_bytes: Callable[[int], None]) -> Iterator[bytes]:
    for block in blocks:
        yield block
        on_bytes(len(block))


# --------------------------------------------------------------------------- encoding


def encode_pieces(tokenizer: Tokenizer, pieces: Iterable[str]) -> Iterator[list[int]]:
    """Yield the ids of ``"".join(pieces)`` in batches; concatenated, ``tokenizer.encode(text)``.

    Each batch comes from one ``tokenizer.encode`` call on a stretch of text that
    encodes on its own exactly as it does inside the whole:

    * everything up to the end of an ``<|endoftext|>`` literal (the encoder splits
      there first, and the literal cannot overlap itself);
    * in the text after the last literal, minus any suffix that could still grow into
      a literal, the final chunks (all but the last two) up to the last one that does
      not end in whitespace. Cutting after whitespace would not be safe: the whitespace
      branch ``\\s+(?!\\S)`` reads the whole run, so ``" \\nl"`` tokenizes as
      ``" ", "\\n", "l"`` but the prefix ``" \\n"`` re-tokenizes as one chunk. A chunk
      that ends in anything else was found without reading past its end, so the prefix
      up to it re-tokenizes into exactly the same chunks.
    """

    def settle(buffer: str) -> tuple[list[int], int]:
        cut = _final_prefix_length(buffer)
        return (tokenizer.encode(buffer[:cut]) if cut else []), cut

    return _settled(pieces, settle, tokenizer.encode)


def _settled(
    pieces: Iterable[str],
    settle: Callable[[str], tuple[list[T], int]],
    finish: Callable[[str], list[T]],
) -> Iterator[list[T]]:
    """Feed ``"".join(pieces)`` through `settle` a buffer at a time; yield its results.

    ``settle(buffer)`` returns the results for a prefix that no later text can change,
    and that prefix's length; the rest is carried into the next buffer. At the end
    ``finish`` handles what is left. The streaming chunker and the streaming encoder
    differ only in those two functions.
    """
    carry = ""
    pending: list[str] = []
    pending_chars = 0
    for piece in pieces:
        if not piece:
            continue
        pending.append(piece)
        pending_chars += len(piece)
        if len(carry) > RESCAN_SLACK and pending_chars < len(carry):
            continue  # a long held-back run: wait for as much new text before rescanning
        buffer = carry + "".join(pending)
        pending.clear()
        pending_chars = 0
        results, cut = settle(buffer)
        if cut:
            yield results
        carry = buffer[cut:]
    buffer = carry + "".join(pending)
    if buffer:
        yield finish(buffer)


def _final_prefix_length(buffer: str) -> int:
    """The length of the longest prefix of `buffer` that encodes the same in any extension."""
    literal_end = buffer.rfind(END_OF_TEXT_TOKEN)
    done = 0 if literal_end < 0 else literal_end + len(END_OF_TEXT_TOKEN)
    rest_end = len(buffer) - _partial_literal_length(buffer, done)
    chunks = PRETOKENIZER.findall(buffer[done:rest_end])
    del chunks[-HELD_BACK_CHUNKS:]
    while chunks and _WHITESPACE.match(chunks[-1][-1]):
        chunks.pop()
    return done + sum(map(len, chunks))


def _partial_literal_length(buffer: str, start: int) -> int:
    """How many trailing characters of ``buffer[start:]`` could begin an ``<|endoftext|>``."""
    for prefix in _LITERAL_PREFIXES:
        if len(buffer) - start >= len(prefix) and buffer.endswith(prefix):
            return len(prefix)
    return 0
