"""tiktoken's ``encode_with_unstable``: where a text cut short may still change.

A text's last chunk (and the whitespace-only tokens before it) can encode differently
once more text follows: ``" hel"`` may become ``" hello"``. tiktoken's answer is the ids
before that unstable end, and every token sequence the end may start once the text goes
on, each as long as the end's bytes or longer:

* every token whose bytes start with the end's bytes;
* for each split of the end into a prefix and a suffix, and each token starting with the
  suffix: the prefix followed by that token, encoded (as text when it is UTF-8, else
  merged as one chunk), its first ids up to the end's length;
* when the end closes with a whitespace character, its bytes before that character and
  the character's, merged apart (a split the pattern may make there).

The results are tiktoken's, id for id; the order of the sequences is bpetite's own
(sorted), where tiktoken's is a set's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Final, NamedTuple

#: The bytes of a token that tiktoken counts as whitespace when it widens the unstable end.
_SPACE_BYTES: Final = b" \n\t"

#: Unicode's White_Space characters, what tiktoken (Rust's ``char::is_whitespace``) checks
#: the end's last character against; ``str.isspace`` would add U+001C to U+001F.
_WHITE_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class TokenOrder(NamedTuple):
    """The mergeable tokens' bytes in order, and the longest one's length."""

    tokens: list[bytes]
    longest: int


def token_order(tokens: Iterable[bytes]) -> TokenOrder:
    """`tokens` in order, with the longest one's length."""
    ordered = sorted(tokens)
    return TokenOrder(ordered, max(map(len, ordered), default=0))


def all_space(token: bytes) -> bool:
    """Whether every byte of `token` is a space, a newline or a tab."""
    return not token.strip(_SPACE_BYTES)


def last_chunk_length(
    text: str, split: Callable[[str], list[str]], encode_chunk: Callable[[bytes], list[int]]
) -> int:
    """How many ids the last chunk of `text` encodes to (0 if it has none): the unstable
    end before :func:`widened_end` widens it."""
    pieces = split(text)
    return len(encode_chunk(pieces[-1].encode("utf-8"))) if pieces else 0


def widened_end(ids: Sequence[int], last_chunk: int, space_only: Callable[[int], bool]) -> int:
    """How many of `ids` are unstable: the last chunk's `last_chunk` ids, and, when its
    first is whitespace only (`space_only`), the whitespace-only ids before it (a split
    before whitespace, such as cl100k's ``\\s*[\\r\\n]+``, can go when more text follows)."""
    unstable = last_chunk
    if unstable and space_only(ids[-unstable]):
        while unstable < len(ids) and space_only(ids[-unstable - 1]):
            unstable += 1
    return unstable


def completions(
    end: bytes,
    *,
    order: TokenOrder,
    token_id: Callable[[bytes], int],
    token_bytes: Callable[[int], bytes],
    encode_ordinary: Callable[[str], list[int]],
    encode_chunk: Callable[[bytes], list[int]],
) -> list[list[int]]:
    """Every token sequence the unstable `end` (its bytes) may start, sorted.

    `order` holds the mergeable tokens' bytes, `token_id` gives the id of one of them,
    `encode_chunk` merges bytes as one chunk. A suffix longer than the longest token
    starts none, so only the last cuts are tried: a long end costs no slice per byte.
    """
    sorted_tokens = order.tokens
    found: set[tuple[int, ...]] = {
        (token_id(token),) for token in _starting_with(end, sorted_tokens)
    }
    for cut in range(max(1, len(end) - order.longest), len(end)):
        prefix, suffix = end[:cut], end[cut:]
        for token in _starting_with(suffix, sorted_tokens):
            possibility = prefix + token
            try:
                encoded = encode_ordinary(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = encode_chunk(possibility)
            sequence: list[int] = []
            length = 0
            for next_id in encoded:
                sequence.append(next_id)
                length += len(token_bytes(next_id))
                if length >= len(end):
                    break
            found.add(tuple(sequence))
    if len(end) > 1:
        last = _last_character(end)
        if last is not None and last in _WHITE_SPACE:
            cut = len(end) - len(last.encode("utf-8"))
            if cut:
                found.add((*encode_chunk(end[:cut]), *encode_chunk(end[cut:])))
    return [list(sequence) for sequence in sorted(found)]


def _starting_with(prefix: bytes, sorted_tokens: Sequence[bytes]) -> list[bytes]:
    """The tokens of `sorted_tokens` that start with `prefix`, in order."""
    found = []
    for index in range(bisect_left(sorted_tokens, prefix), len(sorted_tokens)):
        token = sorted_tokens[index]
        if not token.startswith(prefix):
            break
        found.append(token)
    return found


def _last_character(data: bytes) -> str | None:
    """The character the last bytes of `data` encode in UTF-8, or None if they do not."""
    for size in range(1, min(4, len(data)) + 1):
        if data[-size] & 0xC0 != 0x80:  # a character's first byte
            try:
                return data[-size:].decode("utf-8")
            except UnicodeDecodeError:
                return None
    return None
