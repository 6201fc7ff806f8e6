"""Pre-tokenize and encode text that arrives in blocks, exactly as if it came whole.

Must equal ``bpetite.reference.split`` of the whole text, block size whatever it is.

A file far larger than memory is read in blocks, decoded with a strict incremental
UTF-8 decoder, and scanned with the split pattern. The question is which chunks of a
scanned buffer are final, i.e. cannot change when more text arrives. No preset has a
look-behind or a start anchor, so the match at a position depends only on the text
from there on, and findall's matches tile the text: a match can change only if
finding it (in any branch tried, failed ones included) looked at the end of the
buffer. Per preset (the full argument is in docs/scaling.md):

* ``gpt2``: **all but the last two.** A run of letters, digits, punctuation or
  whitespace that reaches the end is the last match; the contraction branch reads two
  characters past a ``'``, so ``'l`` at the end (``'`` then ``l``) may become ``'ll``.
* ``cl100k``: **all but the last one.** A ``'`` before letters joins them
  (``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++``), so a failed contraction leaves one match;
  ``\\s++$`` takes a whitespace run that reaches the end whole, and every other
  whitespace branch (``\\s*[\\r\\n]``, ``\\s+(?!\\S)``, ``\\s``) reads only up to the
  non-space character that ends its run, which exists; ``\\p{N}{1,3}+`` reads one
  character past fewer than three digits and nothing past three.
* ``o200k``: **all but the last two.** A word reads up to three characters past its
  end for an optional ``'re``, so ``we'r`` at the end is ``we`` then ``'r``; and
  ``\\s*[\\r\\n]+`` backtracks over a whitespace run that reaches the end to its last
  newline (``\\n`` then ``"  "``), which ``\\n  \\n`` would take whole.

A custom pattern can look arbitrarily far ahead, so no number of held-back matches is
safe for it: text is then gathered whole (one document, or everything an encoder is
given) and split in one scan. Memory then grows with the largest document (counting
holds its text and one batch of chunks, never a list of all its chunks).
Measurements: docs/design-notes.md#corpus-custom-patterns-in-memory

A long run (a megabyte of letters is one chunk) is held back until it ends; so that
it is not rescanned once per block, blocks are gathered until the new text is at
least as long as the held-back text, which keeps the total work linear.
"""

from __future__ import annotations

import codecs
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Final, TypeVar

from bpetite.core._errors import (
    InvalidUtf8Error,
    ParameterError,
    PatternError,
)
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._regex import compile_pattern
from bpetite.core._specials import SpecialPolicy, SpecialTokens, disallowed_special_error

if TYPE_CHECKING:
    from bpetite.core._regex import Pattern
    from bpetite.core._tokenizer import Tokenizer

T = TypeVar("T")

#: Bytes read at a time. Small enough to keep memory flat, large enough that the
#: per-block overhead (one decode, one findall) is invisible.
DEFAULT_BLOCK_SIZE: Final = 1 << 20

#: How many trailing matches of a buffer each preset may still change when more text
#: arrives (see the module docstring). A pattern not listed is gathered whole.
HELD_BACK_CHUNKS: Final[Mapping[str, int]] = MappingProxyType({"gpt2": 2, "cl100k": 1, "o200k": 2})

#: Held-back text shorter than this (in characters) is simply rescanned with every
#: block; longer held-back text waits until as much new text has arrived.
RESCAN_SLACK: Final = 1 << 16


@functools.cache
def _whitespace() -> Pattern:
    r"""``\s`` as the split patterns read it, compiled when first needed (not on import:
    a command that never streams a file need not load the regex engine)."""
    return compile_pattern(r"\s")


#: Chunks per batch when a whole text is split in one scan.
CHUNK_BATCH: Final = 1 << 14

#: How many line breaks, from the end of a buffer back, the encoder tries as a cut.
SAFE_POINT_TRIES: Final = 16


def held_back_chunks(pattern: SplitPattern) -> int | None:
    """How many trailing chunks of a buffer may change with more text; None if unknown.

    Only the presets are proven; a custom pattern (even one that happens to equal a
    preset in behaviour) gets None, and callers then split the text whole.
    """
    return HELD_BACK_CHUNKS.get(pattern.name) if pattern.is_preset else None


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
        raise ParameterError(f"block_size must be at least 1 byte, got {block_size}")
    return block_size


# --------------------------------------------------------------------------- text to chunks


def iter_chunks(pieces: Iterable[str], pattern: str | SplitPattern = "gpt2") -> Iterator[list[str]]:
    """Yield the chunks of ``"".join(pieces)`` under `pattern`, in order, in batches.

    Concatenated, the batches are exactly ``pattern.split("".join(pieces))`` however
    the text is cut into pieces (see the module docstring for why). A custom pattern
    splits the joined text in one call, so it holds the whole text in memory.

    >>> [chunk for batch in iter_chunks(["it'", "ll be", "  ", "fine"]) for chunk in batch]
    ['it', "'ll", ' be', ' ', ' fine']
    """
    split = resolve_pattern(pattern)
    held = held_back_chunks(split)
    if held is None:
        return _split_whole(pieces, split)
    # A preset's split of each buffer: its ASCII twin, or the preset narrowed to the
    # buffer's blocks, each proven to match as the preset does on such text, so the
    # chunks held back are the same; faster than the preset's own regex on all text.
    # Measurements: docs/design-notes.md#corpus-counting-on-the-narrowed-split
    split_text = split.split

    def settle(buffer: str) -> tuple[list[str], int]:
        chunks = split_text(buffer)
        if len(chunks) <= held:
            return [], 0
        del chunks[-held:]
        return chunks, sum(map(len, chunks))

    return _settled(pieces, settle, split_text)


def count_pieces(
    pieces: Iterable[str],
    counts: Counter[str] | None = None,
    *,
    pattern: str | SplitPattern = "gpt2",
) -> Counter[str]:
    """Add the chunks of ``"".join(pieces)`` to `counts` (a new Counter if None) and return it."""
    counts = Counter() if counts is None else counts
    for batch in iter_chunks(pieces, pattern):
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


def check_file_utf8(
    path: str, block_size: int = DEFAULT_BLOCK_SIZE, on_bytes: Callable[[int], None] | None = None
) -> None:
    """Raise :class:`InvalidUtf8Error` if the file at `path` is not valid UTF-8.

    Decoding is far faster than pre-tokenizing, so checking every file before
    counting costs little, and a bad byte at the end of a large corpus is reported
    before the counting instead of after it. `on_bytes` is told the size of each block.
    Measurements: docs/design-notes.md#corpus-utf-8-check-before-counting
    """
    for _ in stream_file_text(path, block_size=block_size, on_bytes=on_bytes):
        pass


def measure_text(
    path: str, doc_cap: int | None, block_size: int = DEFAULT_BLOCK_SIZE
) -> tuple[int, int | None]:
    """How many characters of the file at `path` a budget with `doc_cap` takes, and the
    byte where they end (None: the file's end). Only those bytes are read, and checked
    as strict UTF-8 (InvalidUtf8Error as :func:`check_file_utf8`): a bad byte past the
    cap is no error, since no one reads it."""
    chars = 0
    done = 0  # the bytes of the characters counted so far (tracked only with a cap)
    try:
        for text in stream_file_text(path, block_size=block_size):
            if doc_cap is not None:
                if chars + len(text) >= doc_cap:
                    return doc_cap, done + len(text[: doc_cap - chars].encode("utf-8"))
                done += len(text.encode("utf-8"))
            chars += len(text)
    except InvalidUtf8Error as error:
        if doc_cap is None:
            raise
        # The block that holds the bad byte was not counted: its valid start may reach
        # the cap (it is at most a block and a character long).
        with Path(path).open("rb") as stream:
            stream.seek(done)
            text = stream.read(error.offset - done).decode("utf-8")
        if chars + len(text) < doc_cap:
            raise
        return doc_cap, done + len(text[: doc_cap - chars].encode("utf-8"))
    return chars, None


def _reporting(blocks: Iterable[bytes], on_bytes: Callable[[int], None]) -> Iterator[bytes]:
    for block in blocks:
        yield block
        on_bytes(len(block))


# --------------------------------------------------------------------------- encoding


def encode_pieces(
    tokenizer: Tokenizer,
    pieces: Iterable[str],
    *,
    allowed_special: SpecialPolicy = "all",
    disallowed_special: SpecialPolicy = (),
) -> Iterator[list[int]]:
    """Yield the ids of ``"".join(pieces)`` in batches; concatenated, ``tokenizer.encode``'s.

    The keywords are :meth:`Tokenizer.encode`'s policy. A disallowed special token raises
    :class:`DisallowedSpecialError` with its position in the whole text, as ``encode``
    would, but only once it has been read: batches before it may already have been
    yielded (:func:`check_specials` checks a stream without encoding it). Each batch
    comes from encoding a stretch of text that encodes on its own exactly as inside the
    whole:

    * everything up to the end of an allowed special token that no later text can
      change: one that starts before the first position where a special token could
      still begin (the text from there to the end is a proper prefix of one, and with
      more text it may complete, or grow into a longer one that wins);
    * in the ordinary text after it, up to its last ``X\\nY`` line break (see
      :func:`last_safe_point`), where the text splits as two documents would;
    * failing that, the final chunks up to the last one whose last character is not
      whitespace. Cutting after whitespace would not be safe:
      ``\\s+(?!\\S)`` reads the whole run, so gpt2 splits ``" \\nl"`` as ``" ", "\\n",
      "l"`` but the prefix ``" \\n"`` on its own as one chunk. A chunk that ends in
      anything else ends a run that no earlier match read past, for every preset.

    With a custom pattern the text is gathered and encoded whole.
    """
    specials = SpecialTokens(tokenizer.special_tokens)
    allowed, disallowed = specials.resolve(allowed_special, disallowed_special)
    if disallowed:
        pieces = _refusing(pieces, specials, disallowed)

    def finish(text: str) -> list[int]:
        return tokenizer.encode(text, allowed_special=allowed, disallowed_special=())

    split = tokenizer.split_pattern
    held = held_back_chunks(split)
    if held is None:
        return _whole(pieces, finish)
    findall = split.compiled.findall
    encode_ordinary = tokenizer.encode_ordinary
    special_ids = tokenizer.special_tokens
    matcher = specials.matcher(allowed) if allowed else None
    partial = _PartialSpecials(allowed)
    is_space = _whitespace().match

    def settle(buffer: str) -> tuple[list[int], int]:
        # Specials starting before `pending` are the whole text's: none could still grow.
        pending = len(buffer) - partial.length(buffer)
        ids: list[int] = []
        done = 0  # the end of the last final special token
        if matcher is not None:
            for match in matcher.finditer(buffer):
                if match.start() >= pending:
                    break
                if match.start() > done:
                    ids += encode_ordinary(buffer[done : match.start()])
                ids.append(special_ids[match.group()])
                done = match.end()
        # buffer[done:stop] starts the ordinary text that follows, which may go on.
        stop = max(done, pending)
        cut = last_safe_point(buffer, done, stop)
        if cut < 0:  # no line break to cut at: find the final chunks
            chunks: list[str] = findall(buffer, done, stop)
            del chunks[-held:]
            while chunks and is_space(chunks[-1][-1]):
                chunks.pop()
            cut = done + sum(map(len, chunks))
        if cut > done:
            ids += encode_ordinary(buffer[done:cut])
        return ids, cut

    return _settled(pieces, settle, finish)


def check_specials(
    tokenizer: Tokenizer,
    pieces: Iterable[str],
    *,
    allowed_special: SpecialPolicy = "all",
    disallowed_special: SpecialPolicy = (),
) -> Iterator[str]:
    """Yield `pieces` unchanged; raise where ``tokenizer.encode`` of their text would.

    That is :class:`DisallowedSpecialError` for the leftmost disallowed special token
    (the longest one there), with its position in the whole text, however the text is
    cut into pieces. A caller that must not write partial output checks a stream with
    this first (and ``for _ in check_specials(...): pass``), then encodes it.
    """
    specials = SpecialTokens(tokenizer.special_tokens)
    _, disallowed = specials.resolve(allowed_special, disallowed_special)
    if not disallowed:
        return iter(pieces)
    return _refusing(pieces, specials, disallowed)


def _refusing(
    pieces: Iterable[str], specials: SpecialTokens, disallowed: frozenset[str]
) -> Iterator[str]:
    """Yield each piece once no disallowed special starts in text read so far; else raise.

    Only the text from the first position where a special could still begin is carried
    to the next piece (shorter than the longest special), so the work is linear.
    """
    matcher = specials.matcher(disallowed)
    partial = _PartialSpecials(disallowed)
    carry = ""
    offset = 0  # the position of carry[0] in the whole text
    for piece in pieces:
        buffer = carry + piece
        pending = len(buffer) - partial.length(buffer)
        match = matcher.search(buffer)
        if match is not None and match.start() < pending:
            raise disallowed_special_error(match.group(), offset + match.start())
        yield piece
        carry = buffer[pending:]
        offset += pending
    match = matcher.search(carry)
    if match is not None:
        raise disallowed_special_error(match.group(), offset + match.start())


def last_safe_point(text: str, start: int, stop: int) -> int:
    """The last position just after the ``\\n`` of an ``X\\nY`` in ``text[start:stop]``, or -1.

    X and Y are printable non-space ASCII and Y is not ``/``: the points at which files
    are cut for counting workers. For every preset the text on each side of one splits
    on its own exactly as inside the whole (docs/scaling.md), so the text before it can
    be encoded without scanning for final chunks. Only the last few line breaks are
    tried, so text made of blank or indented lines costs nothing.
    """
    end = stop - 1  # Y must be inside the range
    for _ in range(SAFE_POINT_TRIES):
        newline = text.rfind("\n", start + 1, end)
        if newline < 0:
            return -1
        before, after = text[newline - 1], text[newline + 1]
        if "!" <= before <= "~" and "!" <= after <= "~" and after != "/":
            return newline + 1
        end = newline
    return -1


class _PartialSpecials:
    """Finds the longest end of a text that is a proper prefix of one of some specials."""

    __slots__ = ("_longest", "_prefixes")

    def __init__(self, texts: Iterable[str]) -> None:
        self._prefixes = frozenset(text[:size] for text in texts for size in range(1, len(text)))
        self._longest = max(map(len, self._prefixes), default=0)

    def length(self, text: str) -> int:
        """How many trailing characters of `text` could begin a special token."""
        for size in range(min(self._longest, len(text)), 0, -1):
            if text[len(text) - size :] in self._prefixes:
                return size
        return 0


# --------------------------------------------------------------------------- buffering


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


def _split_whole(pieces: Iterable[str], split: SplitPattern) -> Iterator[list[str]]:
    """The chunks of all the text, found in one scan but handed out in batches.

    Only the text is held, not a list of all its chunks (which takes several times
    its size). A pattern that skips or matches nothing raises what ``split`` raises.
    """
    text = "".join(pieces)
    position = 0
    batch: list[str] = []
    for match in split.compiled.finditer(text):
        if match.start() != position or match.end() == position:
            break
        position = match.end()
        batch.append(match.group())
        if len(batch) >= CHUNK_BATCH:
            yield batch
            batch = []
    if position != len(text):
        split.split(text)  # raises, naming the character the pattern left unmatched
        raise PatternError(f"the split pattern does not cover the text from position {position}")
    if batch:
        yield batch


def _whole(pieces: Iterable[str], finish: Callable[[str], list[T]]) -> Iterator[list[T]]:
    """``finish`` of all the text at once: for patterns whose matches may look anywhere."""
    text = "".join(pieces)
    if text:
        yield finish(text)
