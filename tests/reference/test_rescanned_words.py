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
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import cache
from itertools import product
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer
from bpetite import reference as ref
from bpetite.core import _encoder, _rescan, _trainer
from bpetite.core._rescan import HugeWord, count_pairs, merge_word, moved_pairs
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


@cache  # every way is checked against the same answer
def reference_merge(word: str, pair: str) -> tuple[str, Counter[str], Counter[str]]:
    """The reference's word after merging `pair` into ``chr(1000)``, and the pair counts
    of the word before and after (not to be changed: they are shared)."""
    ids = ref.merge([ord(char) for char in word], (ord(pair[0]), ord(pair[1])), 1000)
    merged = "".join(map(chr, ids))
    return merged, pairs_of(word), pairs_of(merged)


def check_one_merge(word: str, pair: str) -> None:
    """`merge_word` gives the reference's merged word, and its counts move the pairs right."""
    new = chr(1000)
    expected, pairs_before, pairs_after = reference_merge(word, pair)
    merged, occurrences, before, after, doubled = merge_word(word, pair, new)
    assert merged == expected
    assert occurrences == len(word) - len(merged)
    left, right = pair[0], pair[1]
    moved = Counter(pairs_before)  # a missing pair counts 0, and may go below
    moved[pair] -= occurrences
    for neighbour, count in before.items():
        moved[neighbour + left] -= count
        moved[neighbour + new] += count
    for neighbour, count in after.items():
        moved[right + neighbour] -= count
        moved[new + neighbour] += count
    moved[right + left] -= doubled
    moved[new + new] += doubled
    assert +moved == pairs_after and -moved == Counter(), (word, pair)


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


@contextmanager
def rescanning_trainer(rescans: int, name: str) -> Iterator[None]:
    """The trainer with every chunk a huge word, rescanned `rescans` times, `name`'s way."""
    with way(name), ExitStack() as stack:
        stack.enter_context(patch.object(_trainer, "HUGE_CHUNK_BYTES", 1))
        stack.enter_context(patch.object(_trainer, "RESCANS", rescans))
        yield


def train_rescanned(chunks: dict[bytes, int], vocab_size: int, rescans: int, name: str) -> object:
    with rescanning_trainer(rescans, name):
        return _trainer.train_merges(chunks, vocab_size)


def small_corpora(two: bytes) -> Iterator[dict[bytes, int]]:
    """Every chunk of 2 to 7 of the `two` letters ``xy``, alone and beside ``xyyx``."""
    other = bytes((two[0], two[1], two[1], two[0]))
    for length in range(2, 8):
        for letters in product(two, repeat=length):
            yield {bytes(letters): 1}
            yield {bytes(letters): 2, other: 1}


def test_training_every_small_word_every_way() -> None:
    """Every chunk of up to 7 letters over {a, b}, alone and beside a fixed other one."""
    expected = [(chunks, ref.train_counts(chunks, 300)) for chunks in small_corpora(b"ab")]
    for rescans, name in product(RESCANS, WAYS):
        with rescanning_trainer(rescans, name):
            for chunks, merges in expected:
                assert _trainer.train_merges(chunks, 300) == merges, (chunks, rescans, name)


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


@contextmanager
def rescanning_encoder(rescans: int, name: str) -> Iterator[None]:
    """The encoder with every chunk taking the rescanning path, `name`'s way."""
    with way(name), ExitStack() as stack:
        stack.enter_context(patch.object(_encoder, "HUGE_CHUNK_BYTES", 0))
        stack.enter_context(patch.object(_encoder, "RESCANS", rescans))
        yield


def encode_rescanned(tokenizer: Tokenizer, data: bytes, rescans: int, name: str) -> list[int]:
    """The encoder's ids for `data` with every chunk taking the rescanning path."""
    with rescanning_encoder(rescans, name):
        return tokenizer.encode_chunk(data)  # uncached: the merge runs every time


def every_chunk(alphabet: bytes, merges: Sequence[tuple[int, int]]) -> dict[bytes, list[int]]:
    """Every chunk of 1 to 8 of the `alphabet`'s bytes, and the reference's ids for it."""
    encode_chunk = ref.chunk_encoder(merges)
    chunks = (bytes(letters) for n in range(1, 9) for letters in product(alphabet, repeat=n))
    return {data: encode_chunk(data) for data in chunks}


def test_encoding_every_small_chunk_every_way() -> None:
    tokenizer = Tokenizer.train("abab aabb ba " * 5 + "aaaa bbbb abba baab", 300)
    expected = every_chunk(b"ab", tokenizer.merges)
    for rescans, name in product(RESCANS, WAYS):
        with rescanning_encoder(rescans, name):
            for data, ids in expected.items():
                assert tokenizer.encode_chunk(data) == ids, (data, rescans, name)


@given(
    st.binary(min_size=1, max_size=80).map(lambda b: bytes(x % 3 + 97 for x in b)),
    st.sampled_from(RESCANS),
    st.sampled_from(list(WAYS)),
)
def test_encoding_any_chunk(data: bytes, rescans: int, name: str) -> None:
    tokenizer = Tokenizer.train_from_counts({b"abcabcaabbcc": 3, b"aaaaaaaa": 2, b"cbacba": 1}, 300)
    expected = ref.encode_chunk(data, tokenizer.merges)
    assert encode_rescanned(tokenizer, data, rescans, name) == expected


@pytest.fixture(scope="module")
def gpt2_tokenizer(gpt2_dir: Path) -> Tokenizer:
    """GPT-2 imported from its own files (immutable, so shared by the tests here)."""
    return import_vocabulary([gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"]).tokenizer


def test_encoding_with_a_byte_order(gpt2_tokenizer: Tokenizer) -> None:
    """GPT-2's ids permute the bytes: the rescanned word holds ids, not bytes."""
    for text in ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Supercalifragilisticexpialidocious" * 3):
        data = text.encode("utf-8")
        expected = ref.encode_chunk(data, gpt2_tokenizer.merges, gpt2_tokenizer.byte_order)
        for rescans in RESCANS:
            assert encode_rescanned(gpt2_tokenizer, data, rescans, "scan") == expected


# ------------------------------------------------------------------ one byte a token

#: How many code points a huge word's tokens may be held under: from none free at the
#: start (widened at the first merge) to the real 256 (never widened in these words).
CODE_POINTS = (2, 3, 4, 6, 256)


#: One merge of the reference's: the pair counts before it, the pair merged, and the ids
#: and pair counts after it.
Step = tuple[Counter[str], str, list[int], Counter[str]]


@cache  # every alphabet is checked against the same answer
def reference_merges(word: str, merges: int) -> tuple[Step, ...]:
    """Up to `merges` merges of the word's most frequent pair, each a new token
    ``chr(1000 + step)`` past the others, as the trainer does (not to be changed: the
    steps are shared)."""
    steps = []
    ids = [ord(char) for char in word]
    pairs = pairs_of(word)
    for step in range(merges):
        if not pairs:
            break
        pair = max(pairs, key=lambda pair: (pairs[pair], pair))
        ids = ref.merge(ids, (ord(pair[0]), ord(pair[1])), 1000 + step)
        after = pairs_of("".join(map(chr, ids)))
        steps.append((pairs, pair, ids, after))
        pairs = after
    return tuple(steps)


def check_merges_in_a_huge_word(word: str, merges: int) -> None:
    """Up to `merges` merges of the word's most frequent pair, each a new token past
    the others, as the trainer does: the word, its ids and the pairs each merge moves
    equal the reference's, whether the word is held under its own alphabet or widened."""
    huge = HugeWord(word, count_pairs(word))
    ids = [ord(char) for char in word]
    assert huge.ids() == ids and huge.tokens() == word  # a word of one token has no pair
    for step, (pairs, pair, merged, pairs_after) in enumerate(reference_merges(word, merges)):
        new = chr(1000 + step)
        assert pair in huge
        before, after, doubled = huge.merge(pair, new)
        moved = pairs - Counter({pair: len(ids) - len(merged)})  # each occurrence merged
        ids = merged
        for lost, created, count in moved_pairs(pair, new, before, after, doubled):
            moved[lost] -= count
            moved[created] += count
        assert moved == pairs_after, (word, step)
        assert pair not in huge
        assert huge.ids() == ids and huge.tokens() == "".join(map(chr, ids))
        assert len(huge) == len(ids)


def test_merges_in_every_small_word_under_every_alphabet() -> None:
    """Words of up to 7 bytes over three: widened before any merge, after one or more,
    or never."""
    for code_points in CODE_POINTS:
        with patch.object(_rescan, "LOCAL_CODE_POINTS", code_points):
            for length in range(8):
                for letters in product("\x00\x01\x02", repeat=length):
                    check_merges_in_a_huge_word("".join(letters), 6)


@given(
    st.text("\x00\x01\x02\x03a\xff", max_size=60) | st.text("\x00\x01\u0101", max_size=60),
    st.sampled_from(CODE_POINTS),
    st.sampled_from(list(WAYS)),
)
def test_merges_in_any_word_under_any_alphabet(word: str, code_points: int, name: str) -> None:
    """Also words that hold a token past the alphabet: held as they are from the start."""
    with way(name), patch.object(_rescan, "LOCAL_CODE_POINTS", code_points):
        check_merges_in_a_huge_word(word, 12)


def test_merges_in_words_of_every_byte() -> None:
    """All 256 bytes (no code point free: widened at the first merge), or all but a
    few (widened once the new tokens take those), under the real 256."""
    every = bytes(range(256)).decode("latin-1")
    for missing in range(5):
        present = every[missing:]
        word = present + "abab" * 20 + present[::-1] + "aaaaaaaa" + present * 2
        check_merges_in_a_huge_word(word, 24)


def train_widening(
    chunks: dict[bytes, int], vocab_size: int, rescans: int, code_points: int
) -> object:
    with patch.object(_rescan, "LOCAL_CODE_POINTS", code_points):
        return train_rescanned(chunks, vocab_size, rescans, "scan")


def test_training_every_small_word_under_every_alphabet() -> None:
    expected = [(chunks, ref.train_counts(chunks, 300)) for chunks in small_corpora(b"\x00\x01")]
    for rescans, code_points in product(RESCANS, CODE_POINTS):
        with (
            patch.object(_rescan, "LOCAL_CODE_POINTS", code_points),
            rescanning_trainer(rescans, "scan"),
        ):
            for chunks, merges in expected:
                actual = _trainer.train_merges(chunks, 300)
                assert actual == merges, (chunks, rescans, code_points)


@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=40).map(lambda b: bytes(x % 4 for x in b)),
        st.integers(1, 4),
        max_size=6,
    ),
    st.integers(256, 300),
    st.sampled_from(RESCANS),
    st.sampled_from(CODE_POINTS),
)
def test_training_weighted_chunks_under_any_alphabet(
    chunks: dict[bytes, int], vocab_size: int, rescans: int, code_points: int
) -> None:
    expected = ref.train_counts(chunks, vocab_size)
    assert train_widening(chunks, vocab_size, rescans, code_points) == expected


def test_training_words_of_every_byte() -> None:
    """Every byte in a word, or all but a few: widened mid-run, under the real 256."""
    every = bytes(range(256))
    for missing in (0, 3):
        present = every[missing:]
        chunks = {present + b"abcabcab" * 30 + present[::-1]: 2, b"ab" * 300 + present: 1}
        expected = ref.train_counts(chunks, 300)
        for rescans in RESCANS:
            assert train_widening(chunks, 300, rescans, 256) == expected, (missing, rescans)


def encode_widening(tokenizer: Tokenizer, data: bytes, rescans: int, code_points: int) -> list[int]:
    with patch.object(_rescan, "LOCAL_CODE_POINTS", code_points):
        return encode_rescanned(tokenizer, data, rescans, "scan")


def test_encoding_every_small_chunk_under_every_alphabet() -> None:
    corpus = {b"\x00\x01\x00\x01\x00\x00\x01\x01": 3, b"\x00" * 8: 2, b"\x01\x00\x01": 1}
    tokenizer = Tokenizer.train_from_counts(corpus, 300)
    expected = every_chunk(b"\x00\x01", tokenizer.merges)
    for rescans, code_points in product(RESCANS, CODE_POINTS):
        with (
            patch.object(_rescan, "LOCAL_CODE_POINTS", code_points),
            rescanning_encoder(rescans, "scan"),
        ):
            for data, ids in expected.items():
                actual = tokenizer.encode_chunk(data)
                assert actual == ids, (data, rescans, code_points)


@given(
    st.binary(min_size=1, max_size=80).map(lambda b: bytes(x % 3 for x in b)),
    st.sampled_from(RESCANS),
    st.sampled_from(CODE_POINTS),
)
def test_encoding_any_chunk_under_any_alphabet(data: bytes, rescans: int, code_points: int) -> None:
    corpus = {b"\x00\x01\x02\x00\x01\x02\x00\x00\x01\x01\x02\x02": 3, b"\x00" * 8: 2}
    tokenizer = Tokenizer.train_from_counts(corpus, 300)
    expected = ref.encode_chunk(data, tokenizer.merges)
    assert encode_widening(tokenizer, data, rescans, code_points) == expected


def test_encoding_chunks_of_every_byte(gpt2_tokenizer: Tokenizer) -> None:
    """Every byte in a chunk, or all but a few, with a model of them and with GPT-2's."""
    every = bytes(range(256))
    tokenizer = Tokenizer.train_from_counts({every + b"abcabcab" * 30 + every[::-1]: 1}, 300)
    for missing in (0, 3):
        present = every[missing:]
        data = present + b"abcabcab" * 10 + present[::-1] + b"Supercalifragilistic" * 3
        for model in (tokenizer, gpt2_tokenizer):
            expected = ref.encode_chunk(data, model.merges, model.byte_order)
            for rescans in RESCANS:
                assert encode_widening(model, data, rescans, 256) == expected, (missing, rescans)
