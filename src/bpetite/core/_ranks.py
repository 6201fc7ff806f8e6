"""Rank files: tiktoken's ``base64(token bytes) id`` lines, and the merges behind them.

A rank file lists every mergeable token's bytes and id and nothing else (tiktoken calls
a mergeable token's id its "rank", hence the file's name; here, as everywhere in
bpetite, it is an id, and a rank is a merge's place in the merge list). bpetite's model
is a merge list, so each token's merge is recovered from the ids: token ``t``'s pair is
where tiktoken's own merging of ``t``'s bytes, using only lower ids, stops. It must stop
at exactly two tokens, which then merge into ``t``; a token that cannot be made so is
refused. While every lower token merges back to itself by pairs, merging by the id a
pair makes (bpetite) and by the id of the joined bytes (tiktoken) stop at the same
pieces (docs/interop.md), and each token recovered here does, so by induction over the
ids every token does. ``bpetite.interop`` imports a user's ``.tiktoken`` file with this
module, and ``scripts/write_builtin_vocabularies.py`` recovers the built-in
vocabularies' merges with it once, for the package to ship.
"""

from __future__ import annotations

import binascii
import heapq
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bpetite.core._constants import BASE_VOCAB_SIZE, BYTE_TOKENS
from bpetite.core._encoder import halves_join
from bpetite.core._errors import InteropError, shown


def show_token(token: bytes) -> str:
    """A token for an error message: its text in JSON quotes, or its bytes in hex."""
    try:
        return json.dumps(token.decode("utf-8"), ensure_ascii=False)
    except UnicodeDecodeError:
        return f"<bytes {token.hex(' ')}>"


def parse_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """``base64 id`` lines -> {token bytes: id}; duplicates are refused, not dropped.

    A bad line raises InteropError naming it (lines count from 1, blank lines included).
    """
    ids: dict[bytes, int] = {}
    owners: dict[int, bytes] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit() or not fields[1].isascii():
            raise InteropError(
                f"{source} line {number}: expected 'base64 id', got {shown(repr(line))}"
            )
        try:
            token = binascii.a2b_base64(fields[0], strict_mode=True)
        except binascii.Error:
            raise InteropError(
                f"{source} line {number}: {shown(repr(fields[0]))} is not valid base64"
            ) from None
        token_id = int(fields[1])
        if token in ids:
            raise InteropError(
                f"{source} line {number}: token {show_token(token)} already has id "
                f"{ids[token]}; tiktoken would silently keep only the last"
            )
        if token_id in owners:
            raise InteropError(
                f"{source} line {number}: id {token_id} already belongs to "
                f"{show_token(owners[token_id])}"
            )
        ids[token] = token_id
        owners[token_id] = token
    return ids


@dataclass(frozen=True, slots=True)
class RecoveredMerges:
    """What a rank file says in bpetite's terms, still in the file's ids.

    ``byte_ids[b]`` is the id of the byte ``b``; ``merges`` lists, in id order, each
    merged token's ``(left id, right id, id)``.
    """

    byte_ids: tuple[int, ...]
    merges: tuple[tuple[int, int, int], ...]

    @property
    def is_contiguous(self) -> bool:
        """Whether the bytes hold ids 0..255 and the merged tokens 256, 257, ... in order.

        Then bpetite's model holds the ids as they are, with a byte order: merge ``r``
        makes id ``256 + r``.
        """
        return sorted(self.byte_ids) == list(range(BASE_VOCAB_SIZE)) and all(
            token_id == BASE_VOCAB_SIZE + rank for rank, (_, _, token_id) in enumerate(self.merges)
        )

    @property
    def byte_order(self) -> tuple[int, ...]:
        """For contiguous ids: the byte of each id 0..255 (a Tokenizer's ``byte_order``)."""
        return tuple(sorted(range(BASE_VOCAB_SIZE), key=self.byte_ids.__getitem__))


def recover_merges(ids: Mapping[bytes, int], source: str) -> RecoveredMerges:
    """Each merged token's pair, from the ids alone, or InteropError naming the token.

    Tokens are taken in id order, in bpetite's indices (byte ``b`` is ``b``, the
    ``r``-th merged token ``256 + r``), where the encoder's test of a pair applies.
    A token's pair is the split of its bytes into two earlier tokens whose merging
    never joins them (``halves_join``); merging is deterministic, so at most one split
    can be, and it is where merging the token's bytes stops. Only splits at the lengths
    tokens have are tried, so a long token costs a few lookups, not one per byte.

    >>> ids = {bytes((b,)): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> recover_merges(ids, "example").merges
    ((97, 98, 256), (256, 99, 257))
    """
    if b"" in ids:
        raise InteropError(f"{source} has an empty token (id {ids[b'']})")
    byte_ids = []
    for byte in range(BASE_VOCAB_SIZE):
        byte_id = ids.get(bytes((byte,)))
        if byte_id is None:
            raise InteropError(
                f"{source} has no token for the byte 0x{byte:02x}; a byte-level vocabulary "
                "needs all 256"
            )
        byte_ids.append(byte_id)
    merged = sorted((token_id, token) for token, token_id in ids.items() if len(token) > 1)
    lengths = sorted({len(token) for token in ids})
    index_of = {bytes((byte,)): byte for byte in range(BASE_VOCAB_SIZE)}  # earlier tokens
    pairs: list[tuple[int, int]] = []  # in indices: pairs[r] makes 256 + r
    index_of_pair: dict[tuple[int, int], int] = {}
    for rank, (token_id, token) in enumerate(merged):
        index = BASE_VOCAB_SIZE + rank
        pair = _stopping_split(token, index, lengths, index_of, pairs, index_of_pair)
        if pair is None:
            tokens = [*BYTE_TOKENS, *(earlier for _, earlier in merged[:rank])]
            parts = merge_pairs(list(token), index_of_pair)
            pieces = [show_token(tokens[part]) for part in parts]
            raise InteropError(
                f"{source}: token {show_token(token)} (id {token_id}) cannot be made by "
                f"merging two tokens of lower ids: tiktoken's merging stops at {len(parts)} "
                f"pieces {pieces}, so only a whole chunk could reach it, and bpetite cannot "
                "represent such a token"
            )
        pairs.append(pair)
        index_of_pair[pair] = index_of[token] = index
    id_of_index = [*byte_ids, *(token_id for token_id, _ in merged)]
    return RecoveredMerges(
        tuple(byte_ids),
        tuple(
            (id_of_index[left], id_of_index[right], token_id)
            for (left, right), (token_id, _) in zip(pairs, merged, strict=True)
        ),
    )


def _stopping_split(
    token: bytes,
    index: int,
    lengths: list[int],
    index_of: Mapping[bytes, int],
    pairs: Sequence[tuple[int, int]],
    index_of_pair: dict[tuple[int, int], int],
) -> tuple[int, int] | None:
    """The two earlier tokens (indices) that merging `token`'s bytes stops at, if any.

    Every earlier token merges back to itself (each was recovered so), so two of them
    side by side stay apart exactly when no merge before `index` joins them.
    """
    size, find = len(token), index_of.get
    for cut in lengths:
        if cut >= size:
            break
        right = find(token[cut:])  # first: a token's suffixes are tokens less often
        if right is None:
            continue
        left = find(token[:cut])
        if left is not None and not halves_join(left, right, index, pairs, index_of_pair):
            return left, right
    return None


def merge_pairs(ids: list[int], made_by: Mapping[tuple[int, int], int]) -> list[int]:
    """Pair-merge `ids`: join the adjacent pair that makes the lowest id, leftmost first,
    until no pair makes one.

    `made_by` maps a pair to the id of the token it makes (the lower, the earlier the
    merge). A heap of candidate pairs over a linked list of pieces makes each merge
    O(log n), so a long token costs O(n log n), not the O(n^2) of rescanning every pair
    after each merge. A heap entry whose pair has changed since it was pushed is skipped
    when popped.

    >>> merge_pairs([1, 2, 3], {(1, 2): 4, (4, 3): 5})
    [5]
    """
    count = len(ids)
    values = list(ids)
    following = list(range(1, count + 1))
    preceding = list(range(-1, count - 1))
    alive = [True] * count
    get = made_by.get
    heap = []
    for i in range(count - 1):
        merged_id = get((values[i], values[i + 1]))
        if merged_id is not None:
            heap.append((merged_id, i))
    heapq.heapify(heap)
    while heap:
        merged_id, i = heapq.heappop(heap)
        j = following[i] if alive[i] else count
        if j >= count or get((values[i], values[j])) != merged_id:
            continue
        values[i] = merged_id
        alive[j] = False
        after = following[i] = following[j]
        if after < count:
            preceding[after] = i
            right = get((merged_id, values[after]))
            if right is not None:
                heapq.heappush(heap, (right, i))
        before = preceding[i]
        if before >= 0:
            left = get((values[before], merged_id))
            if left is not None:
                heapq.heappush(heap, (left, before))
    return [value for value, live in zip(values, alive, strict=True) if live]
