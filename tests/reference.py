"""The specification's naive algorithms, kept small and literal as executable references.

These are deliberately slow: they recount every pair after every merge and make one
encode pass per merge rank, exactly as the spec sketches them. The fast code in
``src/bpetite`` must agree with them on every input the tests can generate.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise

import regex

SPEC_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPEC_SPECIAL = "<|endoftext|>"
_SPEC_REGEX = regex.compile(SPEC_PATTERN)


def naive_pretokenize(text: str) -> list[bytes]:
    return [chunk.encode("utf-8") for chunk in _SPEC_REGEX.findall(text)]


def naive_apply_merge(word: Sequence[int], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    """Non-overlapping, left to right: (x, x, x) with (x, x) gives (xx, x)."""
    result: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
            result.append(new_id)
            i += 2
        else:
            result.append(word[i])
            i += 1
    return tuple(result)


def naive_train_chunks(
    chunk_counts: dict[bytes, int],
    vocab_size: int,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[tuple[int, int]]:
    """Recount all pairs after every merge; ties go to the smallest (left, right).

    A pair is a candidate only if its merged token has at most `max_token_bytes` bytes;
    training stops when no candidate is left or the best occurs fewer than
    `min_frequency` times.
    """
    if vocab_size < 256:
        raise ValueError("vocab_size must be at least 256")
    words: dict[tuple[int, ...], int] = Counter()
    for chunk, count in chunk_counts.items():
        words[tuple(chunk)] += count
    token_bytes = {i: bytes([i]) for i in range(256)}
    merges: list[tuple[int, int]] = []
    for new_id in range(256, vocab_size):
        pair_counts: Counter[tuple[int, int]] = Counter()
        for word, weight in words.items():
            for pair in pairwise(word):
                pair_counts[pair] += weight
        candidates = {
            pair: count
            for pair, count in pair_counts.items()
            if max_token_bytes is None
            or len(token_bytes[pair[0]] + token_bytes[pair[1]]) <= max_token_bytes
        }
        if not candidates:
            break
        best, count = min(candidates.items(), key=lambda item: (-item[1], item[0]))
        if min_frequency is not None and count < min_frequency:
            break
        merges.append(best)
        token_bytes[new_id] = token_bytes[best[0]] + token_bytes[best[1]]
        merged: dict[tuple[int, ...], int] = Counter()
        for word, weight in words.items():
            merged[naive_apply_merge(word, best, new_id)] += weight
        words = merged
    return merges


def naive_train(corpus: str, vocab_size: int) -> list[tuple[int, int]]:
    return naive_train_chunks(dict(Counter(naive_pretokenize(corpus))), vocab_size)


def naive_vocab(merges: Sequence[tuple[int, int]]) -> dict[int, bytes]:
    vocab = {i: bytes([i]) for i in range(256)}
    for rank, (left, right) in enumerate(merges):
        vocab[256 + rank] = vocab[left] + vocab[right]
    vocab[256 + len(merges)] = SPEC_SPECIAL.encode("utf-8")
    return vocab


def naive_encode_chunk(chunk: bytes, merges: Sequence[tuple[int, int]]) -> list[int]:
    """One full non-overlapping pass per merge rank, in rank order."""
    tokens: tuple[int, ...] = tuple(chunk)
    for rank, pair in enumerate(merges):
        tokens = naive_apply_merge(tokens, pair, 256 + rank)
    return list(tokens)


def naive_encode(text: str, merges: Sequence[tuple[int, int]]) -> list[int]:
    """Extract exact specials first, pre-tokenize the rest, then rank passes per chunk."""
    special_id = 256 + len(merges)
    ids: list[int] = []
    for index, segment in enumerate(text.split(SPEC_SPECIAL)):
        if index:
            ids.append(special_id)
        for chunk in naive_pretokenize(segment):
            ids.extend(naive_encode_chunk(chunk, merges))
    return ids


def naive_decode(ids: Sequence[int], vocab: Mapping[int, bytes]) -> str:
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="strict")
