"""The training loop with every decision kept, without recounting: ``reference.trace_train``.

The incremental reading of the one training algorithm, between the naive
``bpetite.reference.trace_train`` and the fast ``bpetite.core._trainer.train_merges``.
Must equal ``bpetite.reference.trace_train`` step for step (the same winners, counts,
runners-up, tied pairs, tokens and corpus sizes); tests/visualize/test_explain.py proves
it. The reference recounts every pair of the corpus after each merge, which is what a
reader should see but costs minutes on a megabyte; here each merge touches only the
chunks that hold its pair, as in :mod:`bpetite.core._trainer`:

* ``counts`` holds every pair's live count and ``where`` the chunks that may hold it;
  a merge recounts just those chunks, subtracting their old pairs and adding the new;
* a heap of ``(-count, pair)`` entries orders the candidates exactly as the reference's
  ``sorted(key=(-count, pair))``. An entry goes stale lazily: a pair's count only falls
  after it is first pushed (every pair a merge creates holds the new id, so it is new),
  so a popped entry whose count is out of date goes back with the live count;
* the winner, every pair tied with it and the next three are popped in order and pushed
  back, which is all of the ranking a step keeps.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from heapq import heapify, heappop, heappush

from bpetite.core._constants import BASE_VOCAB_SIZE, BYTE_TOKENS
from bpetite.reference import Pair, TrainStep, get_stats, merge

#: How many pairs after the winner a step keeps as its runners-up (the reference's).
RUNNERS_UP = 3


def trace_train_counts(
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[TrainStep]:
    """``reference.trace_train`` on chunk counts: each merge with why it won."""
    if vocab_size < BASE_VOCAB_SIZE:
        raise ValueError(f"vocab_size must be at least {BASE_VOCAB_SIZE}, got {vocab_size}")
    # the distinct chunks as lists of ids, how often each occurs, and the pairs they hold
    words = [list(chunk) for chunk in chunk_counts]
    weights = list(chunk_counts.values())
    counts: Counter[Pair] = Counter()
    where: defaultdict[Pair, set[int]] = defaultdict(set)
    for index, word in enumerate(words):
        for pair, n in get_stats(word).items():
            counts[pair] += n * weights[index]
            where[pair].add(index)
    total = sum(len(word) * weight for word, weight in zip(words, weights, strict=True))
    token_bytes = dict(enumerate(BYTE_TOKENS))
    heap = [(-n, pair) for pair, n in counts.items()]
    heapify(heap)
    steps: list[TrainStep] = []
    for new_id in range(BASE_VOCAB_SIZE, vocab_size):
        # rank the candidates: the winner, the pairs tied with it, and three more
        ranked: list[tuple[Pair, int]] = []
        while heap and (
            len(ranked) <= RUNNERS_UP or -heap[0][0] >= ranked[0][1]
        ):  # an entry's count is at least its pair's live count
            negative, pair = heappop(heap)
            live = counts.get(pair, 0)
            if live != -negative:
                if live > 0:
                    heappush(heap, (-live, pair))  # stale: back in with the live count
                continue
            if max_token_bytes is not None and (
                len(token_bytes[pair[0]]) + len(token_bytes[pair[1]]) > max_token_bytes
            ):
                continue  # never a candidate: its token would be too long, now and later
            ranked.append((pair, live))
        for pair, n in ranked:
            heappush(heap, (-n, pair))
        if not ranked:
            break  # nothing left to merge
        pair, count = ranked[0]
        if min_frequency is not None and count < min_frequency:
            break
        # mint the new token, and recount only the chunks that hold the pair
        token_bytes[new_id] = token_bytes[pair[0]] + token_bytes[pair[1]]
        fresh: set[Pair] = set()
        for index in where.pop(pair):
            word, weight = words[index], weights[index]
            merged = merge(word, pair, new_id)
            if len(merged) == len(word):
                continue  # a stale entry: an earlier merge took the pair from this chunk
            for old, n in get_stats(word).items():
                counts[old] -= n * weight
            for made, n in get_stats(merged).items():
                counts[made] += n * weight
                where[made].add(index)
                if new_id in made:
                    fresh.add(made)
            total -= (len(word) - len(merged)) * weight
            words[index] = merged
        del counts[pair]
        for made in fresh:
            heappush(heap, (-counts[made], made))
        steps.append(
            TrainStep(
                rank=new_id - BASE_VOCAB_SIZE,
                pair=pair,
                count=count,
                runners_up=tuple(ranked[1 : 1 + RUNNERS_UP]),
                tied=tuple(other for other, n in ranked[1:] if n == count),
                token=token_bytes[new_id],
                total_tokens=total,
            )
        )
    return steps
