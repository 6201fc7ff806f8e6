"""Learn BPE merges from chunk counts, exactly as the naive definition, without recounting.

The definition: count every adjacent pair inside every chunk (weighted by how often the
chunk occurs), merge the most frequent pair (ties: the smallest ``(left, right)``),
replace it non-overlapping left to right, repeat. Recounting after every merge costs
O(corpus) per merge; here each merge only touches the chunks that contain its pair:

* ``pair_counts`` holds the live count of every pair, ``where`` the chunks holding it;
* a heap of ``(-count, pair)`` entries picks the winner. Entries go stale lazily: a
  pair's count only ever *falls* after it is first pushed (every pair a merge creates
  contains the new id, so it is new), so a popped entry whose count is out of date is
  pushed back with the live count, and the first up-to-date entry popped is exactly
  the naive ``min(key=(-count, pair))``.
"""

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from heapq import heapify, heappop, heappush
from itertools import pairwise
from typing import Literal

from bpetite._constants import BASE_VOCAB_SIZE

#: How often (in merges) the trainer reports progress between start and done.
PROGRESS_EVERY = 100

Pair = tuple[int, int]


@dataclass(frozen=True, slots=True)
class TrainingProgress:
    """One progress report: sent at start, every PROGRESS_EVERY merges, and when done."""

    stage: Literal["start", "merge", "done"]
    merges_done: int
    merges_target: int


ProgressCallback = Callable[[TrainingProgress], None]


def check_vocab_size(vocab_size: object) -> int:
    """Return `vocab_size` if it is an int of at least 256; otherwise raise."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an integer, got {vocab_size!r}")
    if vocab_size < BASE_VOCAB_SIZE:
        raise ValueError(
            f"vocab_size must be at least {BASE_VOCAB_SIZE} (one token per byte), got {vocab_size}"
        )
    return vocab_size


def train_merges(
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    progress: ProgressCallback | None = None,
) -> list[Pair]:
    """Return the merges, in rank order, that BPE learns from `chunk_counts`.

    `chunk_counts` maps each distinct pre-tokenized chunk to its number of occurrences.
    Stops early, without error, when no chunk has two tokens left.
    """
    target = check_vocab_size(vocab_size) - BASE_VOCAB_SIZE
    report = progress or _ignore
    report(TrainingProgress("start", 0, target))

    # Chunks of one byte hold no pair and never change: leave them out entirely.
    words: list[list[int]] = []
    weights: list[int] = []
    for chunk, count in chunk_counts.items():
        if len(chunk) > 1 and count > 0:
            words.append(list(chunk))
            weights.append(count)

    pair_counts: defaultdict[Pair, int] = defaultdict(int)
    where: defaultdict[Pair, set[int]] = defaultdict(set)
    for index, word in enumerate(words):
        weight = weights[index]
        for pair in pairwise(word):
            pair_counts[pair] += weight
            where[pair].add(index)

    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapify(heap)

    merges: list[Pair] = []
    while len(merges) < target and heap:
        negative_count, pair = heappop(heap)
        live = pair_counts.get(pair, 0)
        if live != -negative_count:
            if live > 0:
                heappush(heap, (-live, pair))
            continue
        new_id = BASE_VOCAB_SIZE + len(merges)
        merges.append(pair)
        created = _merge_everywhere(pair, new_id, words, weights, pair_counts, where)
        for new_pair in created:
            count = pair_counts[new_pair]
            if count > 0:
                heappush(heap, (-count, new_pair))
        if len(merges) % PROGRESS_EVERY == 0:
            report(TrainingProgress("merge", len(merges), target))

    report(TrainingProgress("done", len(merges), target))
    return merges


def _merge_everywhere(
    pair: Pair,
    new_id: int,
    words: list[list[int]],
    weights: list[int],
    pair_counts: defaultdict[Pair, int],
    where: defaultdict[Pair, set[int]],
) -> set[Pair]:
    """Replace `pair` by `new_id` in every chunk holding it; return the pairs it created.

    Counts are updated with the neighbours as they are *after* earlier replacements in
    the same chunk, so ``a b a b`` -> ``z z`` nets out to exactly one new ``(z, z)``.
    """
    left, right = pair
    created: set[Pair] = set()
    for index in where.pop(pair):
        word = words[index]
        if left not in word:  # `where` is never pruned, so the entry may be stale
            continue
        weight = weights[index]
        merged: list[int] = []
        i = 0
        last = len(word) - 1
        while i <= last:
            token = word[i]
            if token == left and i < last and word[i + 1] == right:
                if merged:
                    previous = merged[-1]
                    pair_counts[previous, left] -= weight
                    before = (previous, new_id)
                    pair_counts[before] += weight
                    where[before].add(index)
                    created.add(before)
                if i + 1 < last:
                    following = word[i + 2]
                    pair_counts[right, following] -= weight
                    after = (new_id, following)
                    pair_counts[after] += weight
                    where[after].add(index)
                    created.add(after)
                merged.append(new_id)
                i += 2
            else:
                merged.append(token)
                i += 1
        words[index] = merged
    del pair_counts[pair]
    return created


def _ignore(_: TrainingProgress) -> None:
    """The default progress callback: report nothing."""
