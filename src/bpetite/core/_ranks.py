"""Rank files: tiktoken's ``base64(token bytes) rank`` lines, and the merges behind them.

A rank file lists every token's bytes and rank and nothing else; bpetite's model is a
merge list. Each token's merge is recovered from the ranks: token ``t``'s pair is where
tiktoken's own merging of ``t``'s bytes, using only lower ranks, stops. It must stop at
exactly two tokens, which then merge into ``t``; a token that cannot be made so is
refused. While every lower token merges back to itself by pairs, merging by the rank of
the pair (bpetite) and by the rank of the joined bytes (tiktoken) stop at the same
pieces (docs/interop.md), and each token recovered here does, so by induction over the
ranks every token does. :func:`bpetite.get_encoding` reads the rank files shipped in the
package with this module, and ``bpetite.interop`` imports a user's ``.tiktoken`` file
with it.
"""

from __future__ import annotations

import binascii
import heapq
import json
from collections.abc import Mapping
from dataclasses import dataclass

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._errors import InteropError, shown


def show_token(token: bytes) -> str:
    """A token for an error message: its text in JSON quotes, or its bytes in hex."""
    try:
        return json.dumps(token.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return f"<bytes {token.hex(' ')}>"


def parse_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """``base64 rank`` lines -> {token bytes: rank}; duplicates are refused, not dropped.

    A bad line raises InteropError naming it (lines count from 1, blank lines included).
    """
    ranks: dict[bytes, int] = {}
    owners: dict[int, bytes] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit() or not fields[1].isascii():
            raise InteropError(
                f"{source} line {number}: expected 'base64 rank', got {shown(repr(line))}"
            )
        try:
            token = binascii.a2b_base64(fields[0], strict_mode=True)
        except binascii.Error:
            raise InteropError(
                f"{source} line {number}: {shown(repr(fields[0]))} is not valid base64"
            ) from None
        rank = int(fields[1])
        if token in ranks:
            raise InteropError(
                f"{source} line {number}: token {show_token(token)} already has rank "
                f"{ranks[token]}; tiktoken would silently keep only the last"
            )
        if rank in owners:
            raise InteropError(
                f"{source} line {number}: rank {rank} already belongs to {show_token(owners[rank])}"
            )
        ranks[token] = rank
        owners[rank] = token
    return ranks


@dataclass(frozen=True, slots=True)
class RankedMerges:
    """What a rank file says in bpetite's terms, still in the file's ranks.

    ``byte_ranks[b]`` is the rank of the byte ``b``; ``merges`` lists, in rank order,
    each merged token's ``(left rank, right rank, rank)``.
    """

    byte_ranks: tuple[int, ...]
    merges: tuple[tuple[int, int, int], ...]

    @property
    def is_contiguous(self) -> bool:
        """Whether the bytes hold ranks 0..255 and the merged tokens 256, 257, ... in order.

        Then the ranks are ids bpetite can speak directly, with a byte order.
        """
        return sorted(self.byte_ranks) == list(range(BASE_VOCAB_SIZE)) and all(
            rank == BASE_VOCAB_SIZE + index for index, (_, _, rank) in enumerate(self.merges)
        )

    @property
    def byte_order(self) -> tuple[int, ...]:
        """For contiguous ranks: the byte of each id 0..255 (a Tokenizer's ``byte_order``)."""
        return tuple(sorted(range(BASE_VOCAB_SIZE), key=self.byte_ranks.__getitem__))


def recover_merges(ranks: Mapping[bytes, int], source: str) -> RankedMerges:
    """Each merged token's pair, from the ranks alone, or InteropError naming the token.

    >>> ranks = {bytes((b,)): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> recover_merges(ranks, "example").merges
    ((97, 98, 256), (256, 99, 257))
    """
    if b"" in ranks:
        raise InteropError(f"{source} has an empty token (rank {ranks[b'']})")
    byte_ranks = []
    for byte in range(BASE_VOCAB_SIZE):
        rank = ranks.get(bytes((byte,)))
        if rank is None:
            raise InteropError(
                f"{source} has no token for the byte 0x{byte:02x}; a byte-level vocabulary "
                "needs all 256"
            )
        byte_ranks.append(rank)
    merged = sorted((rank, token) for token, rank in ranks.items() if len(token) > 1)
    pair_ranks: dict[tuple[int, int], int] = {}
    merges = []
    for rank, token in merged:
        if len(token) == 2:  # two bytes: nothing to merge first
            parts = [byte_ranks[token[0]], byte_ranks[token[1]]]
        else:
            parts = merge_pairs([byte_ranks[byte] for byte in token], pair_ranks)
        if len(parts) != 2:
            token_of_rank = {rank: token for token, rank in ranks.items()}
            pieces = [show_token(token_of_rank[part]) for part in parts]
            raise InteropError(
                f"{source}: token {show_token(token)} (rank {rank}) cannot be made by merging "
                f"two lower-ranked tokens: tiktoken's merging stops at {len(parts)} pieces "
                f"{pieces}, so only a whole chunk could reach it, and bpetite cannot represent "
                "such a token"
            )
        pair_ranks[parts[0], parts[1]] = rank
        merges.append((parts[0], parts[1], rank))
    return RankedMerges(tuple(byte_ranks), tuple(merges))


def merge_pairs(ids: list[int], pair_ranks: Mapping[tuple[int, int], int]) -> list[int]:
    """Pair-merge `ids`: join the lowest-ranked adjacent pair, leftmost first, until none is left.

    `pair_ranks` maps a pair to the rank (and id) of the token it makes. A heap of
    candidate pairs over a linked list of pieces makes each merge O(log n), so a long
    token costs O(n log n), not the O(n^2) of rescanning every pair after each merge.
    A heap entry whose pair has changed since it was pushed is skipped when popped.

    >>> merge_pairs([1, 2, 3], {(1, 2): 4, (4, 3): 5})
    [5]
    """
    count = len(ids)
    values = list(ids)
    following = list(range(1, count + 1))
    preceding = list(range(-1, count - 1))
    alive = [True] * count
    get = pair_ranks.get
    heap = []
    for i in range(count - 1):
        rank = get((values[i], values[i + 1]))
        if rank is not None:
            heap.append((rank, i))
    heapq.heapify(heap)
    while heap:
        rank, i = heapq.heappop(heap)
        j = following[i] if alive[i] else count
        if j >= count or get((values[i], values[j])) != rank:
            continue
        values[i] = rank
        alive[j] = False
        after = following[i] = following[j]
        if after < count:
            preceding[after] = i
            right = get((rank, values[after]))
            if right is not None:
                heapq.heappush(heap, (right, i))
        before = preceding[i]
        if before >= 0:
            left = get((values[before], rank))
            if left is not None:
                heapq.heappush(heap, (left, before))
    return [value for value, live in zip(values, alive, strict=True) if live]
