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
from itertools import chain, pairwise
from operator import itemgetter
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


def merged_ids(count: int, special_ids: Iterable[int]) -> Sequence[int]:
    """The ids of `count` merged tokens: the first ids from 256 on that no special holds.

    >>> list(merged_ids(3, [257, 100]))
    [256, 258, 259]
    """
    total = BASE_VOCAB_SIZE + count
    skipped = skipped_ids(total, [i for i in special_ids if i >= BASE_VOCAB_SIZE])
    return mergeable_ids(total, skipped)[BASE_VOCAB_SIZE:]


def index_table(count: int, skipped: Sequence[int]) -> list[int]:
    """Id -> index for every id up to the last of `count` mergeable tokens', -1 for each
    `skipped` id (a special token's).

    >>> index_table(3, (2,))
    [0, 1, -1, 2]
    """
    bounds = [-1, *skipped, count + len(skipped)]
    runs = [range(low + 1 - k, high - k) for k, (low, high) in enumerate(pairwise(bounds))]
    return list(chain(runs[0], *(chain((-1,), run) for run in runs[1:])))


def to_ids(merges: Sequence[Merge], ids: Sequence[int], skipped: Sequence[int]) -> list[Merge]:
    """Merges written in indices, written in ids (``ids[i]`` is index ``i``'s id).

    A merge made below the first skipped id joins tokens below it, whose ids are their
    indices: those pairs are kept as they are, and only the rest are rewritten.
    """
    kept = max(0, min(len(merges), skipped[0] - BASE_VOCAB_SIZE)) if skipped else len(merges)
    rest = merges[kept:]
    lefts = map(ids.__getitem__, map(itemgetter(0), rest))
    rights = map(ids.__getitem__, map(itemgetter(1), rest))
    return [*merges[:kept], *zip(lefts, rights, strict=True)]


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

    def chunk_ids(self, chunk: str) -> list[int]:
        """The ids of one chunk of split text, from the encoder's cache."""
        return list(map(self._ids.__getitem__, self.indexed.chunk_cache[chunk]))

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
