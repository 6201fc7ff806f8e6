"""How ``bpetite encode`` writes its result: the ids, their count, or ids with spans.

Each writer takes the ids in batches as the text is encoded, writes them to the target
as they come, and returns how many it wrote.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from bpetite import Tokenizer


def write_id_batches(batches: Iterable[list[int]], target: IO[bytes]) -> int:
    """Write batches of ids to `target` as one compact JSON array and a newline, exactly
    as ``json.dumps`` with compact separators would; return how many ids.

    Each distinct id's digits are made once (:class:`_Numerals`), rather than by ``str``
    for each of millions of ids.
    """
    target.write(b"[")
    separator = b""
    count = 0
    numerals = _Numerals()
    for batch in batches:
        if batch:
            target.write(separator + ",".join(map(numerals.__getitem__, batch)).encode("ascii"))
            separator = b","
            count += len(batch)
    target.write(b"]\n")
    return count


class _Numerals(dict[int, str]):
    """``str(token_id)`` for each id looked up, kept: a text's ids repeat."""

    def __missing__(self, token_id: int) -> str:
        self[token_id] = numeral = str(token_id)
        return numeral


def write_count(counts: Iterable[int], target: IO[bytes]) -> int:
    """Write the sum of `counts` and a newline; return it."""
    total = sum(counts)
    target.write(f"{total}\n".encode("ascii"))
    return total


def write_offsets(tokenizer: Tokenizer, batches: Iterable[list[int]], target: IO[bytes]) -> int:
    """Write ``[[id, start, end], ...]`` and a newline; return how many ids.

    Each batch is the ids of a stretch of the text that ends on a character boundary,
    so its spans come from :meth:`Tokenizer.decode_with_offsets` (where each token
    starts) shifted by the characters before it; a token ends where the next one starts,
    or one character later when the next one starts inside that character.
    """
    vocab = tokenizer.vocab
    target.write(b"[")
    separator = b""
    count = 0
    before = 0  # characters in the batches already written
    for batch in batches:
        if not batch:
            continue
        text, starts = tokenizer.decode_with_offsets(batch)
        ends = [
            start + (0x80 <= vocab[following][0] < 0xC0)
            for start, following in zip(starts[1:], batch[1:], strict=True)
        ]
        ends.append(len(text))
        triples = ",".join(
            f"[{token},{before + start},{before + end}]"
            for token, start, end in zip(batch, starts, ends, strict=True)
        )
        target.write(separator + triples.encode("ascii"))
        separator = b","
        count += len(batch)
        before += len(text)
    target.write(b"]\n")
    return count
