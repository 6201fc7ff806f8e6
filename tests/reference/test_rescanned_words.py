"""Whole-word rescans (``core/_rescan.py``) equal the reference: one merge, training, encoding.

A merge of a huge word counts the new token's neighbours one of three ways (``str.find``
for few occurrences, ``str.count`` for dense ones among few characters, regex scans of
the word and its reverse in windows); the trainer and the encoder rescan a huge word
until that has cost ``RESCANS`` times its length, then go on with linked positions.
Each test forces every way and every switch point with small thresholds, so that short
words exercise what megabytes would, and compares with :mod:`bpetite.reference`:
exhaustively over small alphabets, then with hypothesis.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from itertools import product
from pathlib import Path
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer
from bpetite import reference as ref
from bpetite.core import _encoder, _rescan, _trainer
from bpetite.core._rescan import count_pairs, merge_word
from bpetite.interop import import_vocabulary

#: How each neighbour count is forced: (FIND_AT_MOST, DENSE, SMALL_ALPHABET, WINDOW).
WAYS = {
    "find": (10**9, 1, 4, 1 << 18),
    "count": (0, 10**9, 10**9, 1 << 18),
    "scan": (0, 1, 4, 1 << 18),
    "scan in windows of 2": (0, 1, 4, 2),
}


@contextmanager
def way(name: str) -> Iterator[None]:
    find_at_most, dense, small, window = WAYS[name]
    with ExitStack() as stack:
        stack.enter_context(patch.object(_rescan, "FIND_AT_MOST", find_at_most))
        stack.enter_context(patch.object(_rescan, "DENSE", dense))
        stack.enter_context(patch.object(_rescan, "SMALL_ALPHABET", small))
        stack.enter_context(patch.object(_rescan, "WINDOW", window))
        yield


def pairs_of(word: str) -> Counter[str]:
    """The reference's pair counts, as two-character strings."""
    stats = ref.get_stats([ord(char) for char in word])
    return Counter({chr(left) + chr(right): count for (left, right), count in stats.items()})


def check_one_merge(word: str, pair: str) -> None:
    """`merge_word` gives the reference's merged word, and its counts move the pairs right."""
    new = chr(1000)
    ids = ref.merge([ord(char) for char in word], (ord(pair[0]), ord(pair[1])), 1000)
    merged, occurrences, before, after, doubled = merge_word(word, pair, new)
    assert merged == "".join(map(chr, ids))
    assert occurrences == len(word) - len(merged)
    left, right = pair[0], pair[1]
    moved = pairs_of(word)
    moved.subtract({pair: occurrences})
    for neighbour, count in before.items():
        moved.subtract({neighbour + left: count})
        moved.update({neighbour + new: count})
    for neighbour, count in after.items():
        moved.subtract({right + neighbour: count})
        moved.update({new + neighbour: count})
    moved.subtract({right + left: doubled})
    moved.update({new + new: doubled})
    assert +moved == pairs_of(merged) and -moved == Counter(), (word, pair)


def test_one_merge_in_every_small_word_every_way() -> None:
    """Every word of up to 7 letters over {a, b, c}, every pair of its letters."""
    for name in WAYS:
        with way(name):
            for length in range(8):
                for letters in product("abc", repeat=length):
                    word = "".join(letters)
                    for pair in ("aa", "ab", "ba", "ca"):
                        check_one_merge(word, pair)


@given(st.text("abcd\u0101", max_size=60), st.sampled_from(["aa", "ab", "ba", "\u0101a"]))
def test_one_merge_any_way(word: str, pair: str) -> None:
    for name in WAYS:
        with way(name):
            check_one_merge(word, pair)


def test_count_pairs_both_ways() -> None:
    for small in (0, 10**9):
        with patch.object(_rescan, "SMALL_ALPHABET", small):
            for length in range(8):
                for letters in product("ab\u0101", repeat=length):
                    word = "".join(letters)
                    assert count_pairs(word) == pairs_of(word), word


# ------------------------------------------------------------------ training

#: Huge words from one byte on; rescans never, soon, or never stopping.
RESCANS = (0, 1, 3, 10**9)


def train_rescanned(chunks: dict[bytes, int], vocab_size: int, rescans: int, name: str) -> object:
    with way(name), ExitStack() as stack:
        stack.enter_context(patch.object(_trainer, "HUGE_CHUNK_BYTES", 1))
        stack.enter_context(patch.object(_trainer, "RESCANS", rescans))
        return _trainer.train_merges(chunks, vocab_size)


def test_training_every_small_word_every_way() -> None:
    """Every chunk of up to 7 letters over {a, b}, alone and beside a fixed other one."""
    for length in range(2, 8):
        for letters in product(b"ab", repeat=length):
            for chunks in ({bytes(letters): 1}, {bytes(letters): 2, b"abba": 1}):
                expected = ref.train_counts(chunks, 300)
                for rescans, name in product(RESCANS, WAYS):
                    assert train_rescanned(chunks, 300, rescans, name) == expected, chunks


weighted_chunks = st.dictionaries(
    st.binary(min_size=1, max_size=40).map(lambda b: bytes(x % 3 + 97 for x in b)),
    st.integers(1, 4),
    max_size=6,
)


@given(
    weighted_chunks, st.integers(256, 300), st.sampled_from(RESCANS), st.sampled_from(list(WAYS))
)
def test_training_weighted_chunks(
    chunks: dict[bytes, int], vocab_size: int, rescans: int, name: str
) -> None:
    expected = ref.train_counts(chunks, vocab_size)
    assert train_rescanned(chunks, vocab_size, rescans, name) == expected


@given(
    st.lists(
        st.tuples(st.sampled_from([b"a", b"ab", b"aab", b"abc"]), st.integers(1, 60)), max_size=3
    ),
    st.sampled_from(RESCANS),
)
def test_training_runs_and_repeats(parts: list[tuple[bytes, int]], rescans: int) -> None:
    chunks = {unit * repeats: index + 1 for index, (unit, repeats) in enumerate(parts)}
    expected = ref.train_counts(chunks, 320)
    assert train_rescanned(chunks, 320, rescans, "scan") == expected


# ------------------------------------------------------------------ encoding


def encode_rescanned(tokenizer: Tokenizer, data: bytes, rescans: int, name: str) -> list[int]:
    """The encoder's ids for `data` with every chunk taking the rescanning path."""
    with way(name), ExitStack() as stack:
        stack.enter_context(patch.object(_encoder, "HUGE_CHUNK_BYTES", 0))
        stack.enter_context(patch.object(_encoder, "RESCANS", rescans))
        return tokenizer.encode_chunk(data)  # uncached: the merge runs every time


def test_encoding_every_small_chunk_every_way() -> None:
    tokenizer = Tokenizer.train("abab aabb ba " * 5 + "aaaa bbbb abba baab", 300)
    for length in range(1, 9):
        for letters in product(b"ab", repeat=length):
            data = bytes(letters)
            expected = ref.encode_chunk(data, tokenizer.merges)
            for rescans, name in product(RESCANS, WAYS):
                assert encode_rescanned(tokenizer, data, rescans, name) == expected, data


@given(
    st.binary(min_size=1, max_size=80).map(lambda b: bytes(x % 3 + 97 for x in b)),
    st.sampled_from(RESCANS),
    st.sampled_from(list(WAYS)),
)
def test_encoding_any_chunk(data: bytes, rescans: int, name: str) -> None:
    tokenizer = Tokenizer.train_from_counts({b"abcabcaabbcc": 3, b"aaaaaaaa": 2, b"cbacba": 1}, 300)
    expected = ref.encode_chunk(data, tokenizer.merges)
    assert encode_rescanned(tokenizer, data, rescans, name) == expected


def test_encoding_with_a_byte_order(gpt2_dir: Path) -> None:
    """GPT-2's ids permute the bytes: the rescanned word holds ids, not bytes."""
    files = [gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"]
    gpt2_tokenizer = import_vocabulary(files).tokenizer
    for text in ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Supercalifragilisticexpialidocious" * 3):
        data = text.encode("utf-8")
        expected = ref.encode_chunk(data, gpt2_tokenizer.merges, gpt2_tokenizer.byte_order)
        for rescans in RESCANS:
            assert encode_rescanned(gpt2_tokenizer, data, rescans, "scan") == expected
