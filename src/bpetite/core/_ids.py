"""Mergeable ids around special tokens: which id each mergeable token has.

A mergeable token's *index* is its place in the vocabulary the merges define: the 256
bytes, then merge ``r`` at ``256 + r``. Its id is the index-th id no special token
holds: a special token may sit between mergeable ids (p50k_base gives ``<|endoftext|>``
the id 50256 and its 24 whitespace tokens 50257..50280), and the mergeable ids skip it.
A model whose special tokens all follow the merges, as training places them, has ids
equal to indices, and nothing here costs it anything.

The merges speak ids, as the user and every file format sees them; the encoder and the
trainer speak indices (merge ``r`` makes index ``256 + r``, so indices order merges as
ranks do). :class:`IdEncoder` maps an index encoder's results to ids.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING

from bpetite.core._constants import BASE_VOCAB_SIZE

if TYPE_CHECKING:
    from bpetite.core._encoder import Encoder

Merge = tuple[int, int]


def skipped_ids(count: int, special_ids: Iterable[int]) -> tuple[int, ...]:
    """The special ids that fall among the ids of `count` mergeable tokens, sorted.

    A special id is skipped when some mergeable id lies above it; the special ids must
    be at least 256 (no special token holds a byte's id).

    >>> skipped_ids(50280, [50256])  # p50k_base
    (50256,)
    >>> skipped_ids(50256, [50256])  # r50k_base: after the merges
    ()
    """
    skipped: list[int] = []
    for special_id in sorted(set(special_ids)):
        # the mergeable ids below it number special_id - len(skipped): some lie above
        # it exactly when that is fewer than `count`
        if special_id - len(skipped) >= count:
            break
        skipped.append(special_id)
    return tuple(skipped)


def mergeable_ids(count: int, skipped: Sequence[int]) -> Sequence[int]:
    """The id of each of `count` mergeable tokens, by index: the ids `skipped` leaves free.

    >>> list(mergeable_ids(6, (2, 4)))
    [0, 1, 3, 5, 6, 7]
    """
    if not skipped:
        return range(count)
    bounds = [-1, *skipped, count + len(skipped)]
    return list(chain.from_iterable(map(range, [low + 1 for low in bounds], bounds[1:])))


def index_table(ids: Sequence[int]) -> list[int]:
    """Id -> index for every id up to the last of `ids` (a mergeable token's id list); -1
    for an id no mergeable token holds.

    >>> index_table([0, 1, 3])
    [0, 1, -1, 2]
    """
    table = [-1] * (ids[-1] + 1 if ids else 0)
    for index, token_id in enumerate(ids):
        table[token_id] = index
    return table


def to_ids(merges: Iterable[Merge], ids: Sequence[int]) -> list[Merge]:
    """Merges written in indices, written in ids (``ids[i]`` is index ``i``'s id)."""
    pairs = list(merges)
    lefts = map(ids.__getitem__, (left for left, _ in pairs))
    rights = map(ids.__getitem__, (right for _, right in pairs))
    return list(zip(lefts, rights, strict=True))


class IdEncoder:
    """An index encoder whose results are given as ids: the encoder of a model whose
    mergeable ids skip a special token's.

    The same methods as :class:`~bpetite.core._encoder.Encoder` that a tokenizer calls,
    each the encoder's result with every index replaced by its id; the count needs no
    mapping. `indexed` is the encoder itself, which extension trains from.
    """

    __slots__ = ("_ids", "indexed")

    def __init__(self, indexed: Encoder, ids: Sequence[int]) -> None:
        self.indexed = indexed
        self._ids = list(ids)

    def encode_text(self, text: str) -> list[int]:
        """The ids of `text`, every character ordinary."""
        return list(map(self._ids.__getitem__, self.indexed.encode_text(text)))

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """The ids of one chunk's bytes (uncached)."""
        return list(map(self._ids.__getitem__, self.indexed.encode_chunk(chunk)))

    def count_text(self, text: str) -> int:
        """How many tokens `text` encodes to: as many ids as indices."""
        return self.indexed.count_text(text)

    def encode_text_packed(self, text: str, typecode: str) -> bytes:
        """The ids of `text` as the machine bytes of an ``array(typecode)``."""
        ids = self.encode_text(text)
        try:
            return array(typecode, ids).tobytes()
        except OverflowError:
            raise OverflowError(
                f"token id {max(ids)} does not fit in array typecode {typecode!r}"
            ) from None


def first_free(ids: Sequence[int], start: int = BASE_VOCAB_SIZE) -> int:
    """The first id from `start` on that `ids` (sorted) does not hold.

    >>> first_free([256, 257, 300])
    258
    """
    expected = start
    for token_id in ids:
        if token_id > expected:
            break
        if token_id == expected:
            expected += 1
    return expected
