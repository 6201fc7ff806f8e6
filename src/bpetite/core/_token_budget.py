"""Token budgets: the longest prefix within a number of tokens, pieces within it, a limit check.

Every answer is defined on the tokens of the whole text, ``encode(text)`` under the
call's special-token policy, and on one word:

* a *boundary* is a character index ``end`` of the text where a token of
  ``encode(text)`` ends and a character ends too, so that ``text[:end]`` is exactly the
  text of the tokens before it. ``0`` and ``len(text)`` are boundaries; a token that
  ends inside a character (byte-level tokens cut an emoji or a CJK character into
  pieces) makes none.

Then, for a budget of ``n`` tokens:

* ``truncate(text, n)`` is ``text[:end]`` for the largest boundary ``end`` that at most
  ``n`` tokens of the text reach and whose text alone encodes to at most ``n`` tokens.
  The second condition is almost always implied by the first, but not always: where a
  chunk ends depends on what follows it, so a prefix can be split, and encoded, apart
  from the text it was cut from (o200k's pattern reads ``x's`` as one chunk, which a
  vocabulary with a token ``x'`` encodes as ``x'``, ``s``, but ``x'`` alone as two
  chunks, two tokens). Nothing is ever cut inside a character.
* ``chunk(text, n, overlap)`` (retrieval code's name: its pieces are not the split
  pattern's chunks) cuts the text into pieces, greedily from the start: each
  piece runs from its start boundary to the furthest boundary at most ``n`` tokens of
  the text away whose piece alone encodes to at most ``n`` tokens. With ``overlap``
  ``0`` the next piece starts where this one ends, so the pieces join to the text; with
  ``overlap`` ``k`` it starts at the earliest boundary after this piece's start, at most
  ``k`` tokens before its end, from which a piece reaches past its end, so consecutive
  pieces share up to ``k`` tokens of text and the spans ``(start, end)`` give the text
  back:
  ``text == pieces[0] + ''.join(piece[previous_end - start:] ...)``.
* ``within_limit(text, n)`` is ``len(encode(text)) <= n``, found by encoding the text a
  chunk at a time and stopping at the first chunk that takes the count past ``n``: a
  text of megabytes against a small limit encodes a few chunks of it.

The walk (:meth:`TokenBudget.boundaries`) splits lazily, with the split pattern's
``finditer``, so only the chunks a question needs are split and encoded (a preset's
short runs of text are split whole, which costs less than finding them one by one);
each chunk's ids come from the encoder's cache, the same ids ``encode`` returns.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from bpetite.core._decoder import CONTINUATION_BYTES
from bpetite.core._errors import ParameterError, PatternError
from bpetite.core._patterns import SplitPattern, check_tiling
from bpetite.core._specials import SpecialMatch

#: How much of the text an error message quotes from where a piece could not fit.
_QUOTED_CHARS = 20
#: A preset splits a run of text up to this long whole, a longer one a chunk at a time.
_SPLIT_AT_ONCE_CHARS = 1024


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """One text and how to encode it: the segments between its allowed specials, the split
    pattern, each chunk's ids, each id's bytes, and the count of a stretch of it.

    `segments` are :meth:`SpecialTokens.segments`' runs of ordinary text and specials,
    in order; `count` is ``count_tokens`` under the same policy.
    """

    text: str
    segments: Iterable[str | SpecialMatch]
    pattern: SplitPattern
    chunk_ids: Callable[[str], Sequence[int]]
    vocab: Mapping[int, bytes]
    count: Callable[[str], int]

    def boundaries(self, *, inside_chunks: bool = True) -> Iterator[tuple[int, int]]:
        """Yield ``(tokens, end)`` at every boundary after 0, in order, lazily.

        ``tokens`` is how many tokens of ``encode(text)`` lie before ``end``. Without
        `inside_chunks`, only the boundaries at the ends of chunks and specials: enough
        to count.
        """
        vocab, chunk_ids, pattern = self.vocab, self.chunk_ids, self.pattern
        tokens = 0
        end = 0  # the characters of the text walked so far
        for segment in self.segments:
            if not isinstance(segment, str):  # a special token: one token, whole text
                tokens += 1
                end += len(segment.text)  # as written here: an alias's text is its own
                yield tokens, end
                continue
            for chunk in _chunks(pattern, segment):
                ids = chunk_ids(chunk)
                if inside_chunks and len(ids) > 1:
                    # Inside the chunk: after each token whose successor starts a character.
                    inner = end
                    for index in range(len(ids) - 1):
                        inner += len(vocab[ids[index]].translate(None, CONTINUATION_BYTES))
                        if not 0x80 <= vocab[ids[index + 1]][0] < 0xC0:
                            yield tokens + index + 1, inner
                tokens += len(ids)
                end += len(chunk)
                yield tokens, end

    def within_limit(self, max_tokens: int) -> bool:
        """Whether ``encode(text)`` has at most `max_tokens` ids; stops once it has more."""
        walk = self.boundaries(inside_chunks=False)
        return all(tokens <= max_tokens for tokens, _ in walk)

    def truncate(self, max_tokens: int) -> str:
        """The longest prefix of the text within `max_tokens` (see the module's definition)."""
        ends = [0]
        for tokens, end in self.boundaries():
            if tokens > max_tokens:
                break
            ends.append(end)
        text = self.text
        for end in reversed(ends):  # almost always the first one fits
            # The whole text's tokens are the walk's, within the limit: nothing to count.
            if end in (0, len(text)) or self.count(text[:end]) <= max_tokens:
                return text[:end]
        return ""  # pragma: no cover - the loop returns at end 0 at the latest

    def chunk(self, max_tokens: int, overlap: int) -> list[tuple[int, int]]:
        """The pieces' ``(start, end)`` spans (see the module's definition)."""
        text, count = self.text, self.count
        if not text:
            return []
        walked = [(0, 0), *self.boundaries()]  # (tokens, end), tokens strictly rising
        counts = [tokens for tokens, _ in walked]

        def furthest(first: int) -> int:
            """The index in `walked` of where a piece from ``walked[first]`` ends (`first`
            itself when none fits)."""
            start = walked[first][1]
            last = bisect_right(counts, counts[first] + max_tokens) - 1
            if start == 0 and walked[last][1] == len(text):
                return last  # the whole text: its tokens are the walk's, within the limit
            while last > first and count(text[start : walked[last][1]]) > max_tokens:
                last -= 1
            return last

        spans: list[tuple[int, int]] = []
        first, last = 0, furthest(0)  # the piece's start and end, as indices in `walked`
        while True:
            if last == first:
                raise ParameterError(_no_piece_fits(text, walked[first][1], max_tokens))
            spans.append((walked[first][1], walked[last][1]))
            if walked[last][1] == len(text):
                return spans
            # The next piece starts at the earliest place after this one's start, at most
            # `overlap` tokens before its end (its end itself when `overlap` is 0), from
            # which a piece reaches past its end.
            first = bisect_left(counts, counts[last] - overlap, first + 1, last)
            reach = furthest(first)
            while reach <= last and first < last:
                first += 1
                reach = furthest(first)
            last = reach


def _chunks(pattern: SplitPattern, text: str) -> Iterable[str]:
    """The chunks ``pattern.split(text)`` gives, found one at a time, so that a long
    text is split only as far as it is walked; a preset's short text all at once.

    The matches of the pattern ``SplitPattern.split`` uses for the text; a custom
    pattern must match every character, which is checked as it goes. A preset always
    does, so splitting a short text whole changes nothing but the time: ``findall``
    makes no match object per chunk.
    """
    if pattern.is_preset and len(text) <= _SPLIT_AT_ONCE_CHARS:
        return pattern.split(text)
    return _chunks_one_at_a_time(pattern, text)


def _chunks_one_at_a_time(pattern: SplitPattern, text: str) -> Iterator[str]:
    position = 0
    for match in pattern.finder(text).finditer(text):
        chunk = match.group()
        if match.start() != position or not chunk:
            raise _tiling_error(pattern, text)
        position = match.end()
        yield chunk
    if position != len(text):
        raise _tiling_error(pattern, text)


def _tiling_error(pattern: SplitPattern, text: str) -> PatternError:
    """The error the whole split gives for `text` (SplitPattern.split's check), to raise."""
    try:
        check_tiling(pattern.compiled.findall(text), text)
    except PatternError as error:
        return error
    return PatternError("the split pattern does not match the text whole")  # pragma: no cover


def _no_piece_fits(text: str, start: int, max_tokens: int) -> str:
    quoted = text[start : start + _QUOTED_CHARS]
    more = "..." if len(text) - start > _QUOTED_CHARS else ""
    return (
        f"no piece of at most max_tokens={max_tokens} tokens starts at character {start} "
        f"({quoted!r}{more}): its first characters take more tokens than that, a character "
        "being cut into several byte tokens; raise max_tokens"
    )


def check_budget(max_tokens: object, least: int, name: str = "max_tokens") -> int:
    """Return `max_tokens` if it is an int of at least `least`, else raise naming it."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError(f"{name} must be an int, got {max_tokens!r}")
    if max_tokens < least:
        raise ParameterError(f"{name} must be at least {least}, got {max_tokens}")
    return max_tokens


def check_overlap(overlap: object, max_tokens: int) -> int:
    """Return `overlap` if pieces can overlap by it: 0 up to ``max_tokens - 1``."""
    checked = check_budget(overlap, 0, "overlap")
    if checked >= max_tokens:
        raise ParameterError(
            f"overlap must be less than max_tokens ({max_tokens}), got {checked}: each "
            "piece must reach past the one before it"
        )
    return checked
