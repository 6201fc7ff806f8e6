"""The encoder's huge words equal the reference at every switch point, and their pairs count right.

``Encoder.merge_huge`` takes the lowest ranks by the rank pass (each merge looked for,
then replaced) until ``RANK_PASS_MISSES`` scans found nothing, then counts the word's
pairs and follows them (``merge_word``), and past ``RESCANS`` goes on with linked
positions. Each test forces every combination with small thresholds, so that short
chunks exercise what megabytes would, and compares with :func:`bpetite.reference.encode_chunk`:
exhaustively over small alphabets, with hypothesis, and on GPT-2's and ``cl100k_base``'s
merges. ``count_byte_pairs`` (a one-byte-a-character word's pairs, as 16-bit numbers) is
held to the reference's ``get_stats``, in windows of every small size.
"""

from __future__ import annotations

from collections import Counter
from contextlib import ExitStack
from itertools import product
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite import reference as ref
from bpetite.core import _encoder, _rescan
from bpetite.core._rescan import HugeWord, count_byte_pairs, count_pairs
from bpetite.interop import import_vocabulary

#: Scans that may find nothing before the pairs are counted: at once, soon, never.
MISSES = (0, 1, 2, 10**9)
#: Rescans before linked positions: at once, soon, never.
RESCANS = (0, 1, 3, 10**9)


def pairs_of(word: str) -> Counter[str]:
    """The reference's pair counts, as two-character strings."""
    stats = ref.get_stats([ord(char) for char in word])
    return Counter({chr(left) + chr(right): count for (left, right), count in stats.items()})


def encode_huge(tokenizer: Tokenizer, data: bytes, misses: int, rescans: int) -> list[int]:
    """The encoder's ids for `data` with every chunk a huge word."""
    with ExitStack() as stack:
        stack.enter_context(patch.object(_encoder, "HUGE_CHUNK_BYTES", 0))
        stack.enter_context(patch.object(_encoder, "RANK_PASS_MISSES", misses))
        stack.enter_context(patch.object(_encoder, "RESCANS", rescans))
        return tokenizer.encode_chunk(data)  # uncached: the merge runs every time


def test_every_small_chunk_at_every_switch_point() -> None:
    tokenizer = Tokenizer.train("abab aabb ba cab " * 5 + "aaaa bbbb abba baab ccab", 300)
    for length in range(1, 7):
        for letters in product(b"abc", repeat=length):
            data = bytes(letters)
            expected = ref.encode_chunk(data, tokenizer.merges)
            for misses, rescans in product(MISSES, RESCANS):
                assert encode_huge(tokenizer, data, misses, rescans) == expected, data


@given(
    st.binary(min_size=1, max_size=120).map(lambda b: bytes(x % 4 + 97 for x in b)),
    st.sampled_from(MISSES),
    st.sampled_from(RESCANS),
)
def test_any_chunk_at_any_switch_point(data: bytes, misses: int, rescans: int) -> None:
    tokenizer = Tokenizer.train_from_counts(
        {b"abcabcaabbcc": 3, b"aaaaaaaa": 2, b"cbacba": 1, b"dadbdcdd": 2}, 320
    )
    expected = ref.encode_chunk(data, tokenizer.merges)
    assert encode_huge(tokenizer, data, misses, rescans) == expected


def test_gpt2_with_its_byte_order(gpt2_dir: Path) -> None:
    """GPT-2's ids permute the bytes, and its merges skip most pairs of a word."""
    files = [gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"]
    tokenizer = import_vocabulary(files).tokenizer
    for text in ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Supercalifragilisticexpialidocious" * 3):
        data = text.encode("utf-8")
        expected = ref.encode_chunk(data, tokenizer.merges, tokenizer.byte_order)
        for misses, rescans in product(MISSES, RESCANS):
            assert encode_huge(tokenizer, data, misses, rescans) == expected, (misses, rescans)


@pytest.mark.parametrize("misses", MISSES)
def test_cl100k_base(misses: int) -> None:
    """A vocabulary of 100,000 merges, on words in and past the one-byte alphabet."""
    tokenizer = get_encoding("cl100k_base")
    texts = ("abcdefghijklmnopqrstuvwxyz" * 4, "Thequickbrownfoxjumpsoverthelazydog" * 3, "é" * 40)
    for text in texts:
        data = text.encode("utf-8")
        expected = ref.encode_chunk(data, tokenizer.merges, tokenizer.byte_order)
        for rescans in RESCANS:
            assert encode_huge(tokenizer, data, misses, rescans) == expected, (text, rescans)


def test_byte_pairs_in_windows_of_every_small_size() -> None:
    """Every word of up to 5 characters over five, some past ASCII, in windows of 2 to 5."""
    for window in range(2, 6):
        with patch.object(_rescan, "WINDOW", window):
            for length in range(6):
                for letters in product("ab\x00\x7f\xff", repeat=length):
                    word = "".join(letters)
                    data = word.encode("latin-1")
                    assert count_byte_pairs(data) == pairs_of(word), (window, word)


@given(st.text(st.characters(max_codepoint=0x2FF), max_size=80), st.integers(2, 9))
def test_count_pairs_of_any_word(word: str, window: int) -> None:
    """Wide words are counted too (not by bytes), and the word's own pairs in token characters."""
    with patch.object(_rescan, "WINDOW", window):
        assert count_pairs(word) == pairs_of(word)
        huge = HugeWord(word, set(word))
        assert huge.pairs() == pairs_of(word)


def test_a_huge_words_pairs_after_merges_in_local_characters() -> None:
    """After merges under local characters, and after widening, ``pairs`` is in token characters."""
    word = "\x00\x01\x02\x00\x01\x02\x00\x00\x01\x01\x02\x02\x00\x01\x02\x05" * 3
    merges = [("\x00\x01", 300), (chr(300) + "\x02", 301), ("\x05" + chr(301), 302)]
    for code_points in (6, 7, 8, 256):  # widened at the second merge, the third, never
        with patch.object(_rescan, "LOCAL_CODE_POINTS", code_points):
            huge = HugeWord(word, set(word))
            ids = [ord(char) for char in word]
            for pair, new_id in merges:
                huge.replace(pair, chr(new_id))
                ids = ref.merge(ids, (ord(pair[0]), ord(pair[1])), new_id)
                assert huge.ids() == ids, code_points
                assert huge.pairs() == pairs_of("".join(map(chr, ids))), code_points
