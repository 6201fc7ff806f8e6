"""Encoding a chunk from its pieces equals the reference: ``Encoder.stay_apart``,
``Encoder.from_pieces`` and the claim they rest on.

The claim (docs/design-notes.md#encoder-pieces): tokens that each encode to themselves,
every adjacent pair ``x, y`` encoding its own bytes as ``[x, y]``, are the encoding of
their bytes. It is checked on its own against ``bpetite.reference.encode_chunk``,
exhaustively on every merge list of up to three merges over two bytes and with
hypothesis on longer ones; then the pair test and the pieces path, on hand-made lists
over the bytes of multi-byte characters (merges that cross characters, tokens that do
not encode to themselves), on trained vocabularies and on the built-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from itertools import pairwise, product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite import reference as ref
from bpetite.core._encoder import Encoder
from bpetite.core._patterns import resolve_pattern
from tests.strategies import MULTILINGUAL, merge_lists

Merges = list[tuple[int, int]]
#: Characters of one to four bytes: their bytes are the alphabet of the hand-made lists.
CHARACTERS = "aé中😀"
ALPHABET = sorted(set(CHARACTERS.encode()))


def encoder_for(merges: Merges) -> Encoder:
    """An encoder that knows nothing about its tokens: it proves each one it uses."""
    vocab = ref.vocab(merges)
    return Encoder(merges, [vocab[i] for i in range(256 + len(merges))], str.split)


def every_merge_list(alphabet: Sequence[int], most: int) -> list[Merges]:
    """Every merge list of up to `most` merges, each joining two earlier ids."""
    lists: list[Merges] = [[]]
    grown: list[Merges] = [[]]
    for rank in range(most):
        ids = [*alphabet, *range(256, 256 + rank)]
        grown = [[*merges, pair] for merges in grown for pair in product(ids, repeat=2)]
        lists += grown
    return lists


@st.composite
def multibyte_merge_lists(draw: st.DrawFn) -> Merges:
    """Hand-made lists over the bytes of CHARACTERS: merges inside a character, across
    two, of any earlier ids; repeated pairs and tokens that never encode to themselves."""
    merges: Merges = []
    for rank in range(draw(st.integers(0, 40))):
        ids = st.sampled_from([*ALPHABET, *range(256, 256 + rank)])
        merges.append((draw(ids), draw(ids)))
    return merges


multibyte_texts = st.text(st.sampled_from(CHARACTERS), min_size=1, max_size=12)


def assert_the_claim(merges: Merges, alphabet: bytes, longest: int) -> None:
    """Every sequence of up to `longest` whole tokens (the bytes of `alphabet` and the
    merged ones) whose adjacent pairs stay apart is, by the reference, the encoding of
    its bytes."""
    vocab = ref.vocab(merges)
    encode_chunk = ref.chunk_encoder(merges)
    tokens = [*alphabet, *range(256, 256 + len(merges))]
    whole = [t for t in tokens if encode_chunk(vocab[t]) == [t]]

    @cache
    def apart(x: int, y: int) -> bool:
        return encode_chunk(vocab[x] + vocab[y]) == [x, y]

    for length in range(2, longest + 1):
        for sequence in product(whole, repeat=length):
            if all(apart(x, y) for x, y in pairwise(sequence)):
                data = b"".join(vocab[t] for t in sequence)
                assert encode_chunk(data) == list(sequence), (merges, sequence)


def test_the_claim_on_every_merge_list_of_up_to_three_merges_over_two_bytes() -> None:
    for merges in every_merge_list(b"ab", 3):
        assert_the_claim(merges, b"ab", 3)


@given(merge_lists(max_merges=8))
def test_the_claim_on_hand_made_lists(merges: Merges) -> None:
    assert_the_claim(merges, b"ab c", 3)


def assert_stay_apart_is_the_reference(merges: Merges, alphabet: Sequence[int]) -> None:
    """For every pair of tokens that encode to themselves (the reference says which)."""
    vocab = ref.vocab(merges)
    encoder = encoder_for(merges)
    encode_chunk = ref.chunk_encoder(merges)
    tokens = [*alphabet, *range(256, 256 + len(merges))]
    whole = [t for t in tokens if encode_chunk(vocab[t]) == [t]]
    for x, y in product(whole, repeat=2):
        expected = encode_chunk(vocab[x] + vocab[y]) == [x, y]
        assert encoder.stay_apart((x, y)) == expected, (merges, x, y)


def test_stay_apart_on_every_merge_list_of_up_to_three_merges_over_two_bytes() -> None:
    for merges in every_merge_list(b"ab", 3):
        assert_stay_apart_is_the_reference(merges, b"ab")


@given(multibyte_merge_lists())
def test_stay_apart_on_hand_made_lists_over_multi_byte_characters(merges: Merges) -> None:
    assert_stay_apart_is_the_reference(merges, ALPHABET)


def assert_pieces_are_the_reference(encoder: Encoder, merges: Merges, text: str) -> None:
    """from_pieces (when it answers) and the chunk cache equal the reference."""
    expected = ref.encode_chunk(text.encode(), merges)
    found = encoder.from_pieces(text)
    assert found is None or found == expected, (merges, text)
    assert list(encoder.chunk_cache[text]) == expected, (merges, text)


#: Hand-made lists whose merges cross characters: é's second byte with 中's first, the
#: end of 😀 with a, and a token (é + 中's first byte) ranked after its parts' rivals.
CROSSING_LISTS: list[Merges] = [
    [(0xA9, 0xE4), (0xC3, 0xA9), (0xE4, 0xB8), (0xB8, 0xAD)],
    [(0xC3, 0xA9), (0xA9, 0xE4), (256, 0xE4), (0xB8, 0xAD), (258, 259)],
    [(0x98, 0x80), (256, 0x61), (0xF0, 0x9F), (258, 0x98), (259, 0x80), (0x61, 0x61)],
    [(0xE4, 0xB8), (256, 0xAD), (257, 257), (0xC3, 0xA9), (259, 257), (257, 259)],
]


@pytest.mark.parametrize("merges", CROSSING_LISTS)
def test_pieces_on_every_short_text_with_merges_across_characters(merges: Merges) -> None:
    """Every text of up to four characters of CHARACTERS: 340 texts."""
    encoder = encoder_for(merges)
    for length in range(1, 5):
        for letters in product(CHARACTERS, repeat=length):
            assert_pieces_are_the_reference(encoder, merges, "".join(letters))


@given(multibyte_merge_lists(), st.lists(multibyte_texts, min_size=1, max_size=6))
def test_pieces_on_hand_made_lists(merges: Merges, texts: list[str]) -> None:
    """Several texts on one encoder, so that the caches of pieces and pairs are reused."""
    encoder = encoder_for(merges)
    for text in texts:
        assert_pieces_are_the_reference(encoder, merges, text)


@given(multibyte_merge_lists(), st.text(min_size=1, max_size=30))
def test_pieces_on_any_text(merges: Merges, text: str) -> None:
    """Any characters, ASCII ones included: the pieces path holds for every chunk."""
    assert_pieces_are_the_reference(encoder_for(merges), merges, text)


def test_a_piece_that_grows_long_gives_way_to_the_merges() -> None:
    """The one merge joins the end of é to the start of the next é, and é itself is never
    merged: no two pieces stay apart, so the pieces path stops at MAX_PIECE_CHARS and
    the bytes are merged instead."""
    merges = [(0xA9, 0xC3)]
    encoder = encoder_for(merges)
    text = "é" * 40
    assert encoder.from_pieces(text) is None
    assert list(encoder.chunk_cache[text]) == ref.encode_chunk(text.encode(), merges)


@given(st.lists(multibyte_texts, min_size=1, max_size=8), st.integers(260, 330))
def test_pieces_on_trained_vocabularies(corpus: list[str], vocab_size: int) -> None:
    tokenizer = Tokenizer.train(" ".join(corpus) * 2, vocab_size)
    merges = list(tokenizer.merges)
    encoder = encoder_for(merges)
    for text in corpus:
        assert_pieces_are_the_reference(encoder, merges, text)
    text = " ".join(reversed(corpus))
    assert tokenizer.encode_ordinary(text) == ref.encode(tokenizer, text, allowed_special=set())


@cache
def _reference_chunks(name: str) -> Callable[[str], list[int]]:
    """The reference's chunk encoder for built-in `name`, its ranks built once (the
    public encode_chunk builds them for every chunk: 200,000 merges)."""
    tokenizer = get_encoding(name)
    encode_chunk = ref.chunk_encoder(tokenizer.merges, tokenizer.byte_order)
    return lambda chunk: encode_chunk(chunk.encode())


@cache
def built_in_encoder(name: str) -> Encoder:
    """A fresh encoder of built-in `name`'s merges, told its tokens are whole as the
    built-in's own is (tests/reference/test_builtin_whole.py proves they are)."""
    tokenizer = get_encoding(name)
    merges, vocab = tokenizer.merges, tokenizer.vocab
    byte_ids = bytes(sorted(range(256), key=tokenizer.byte_order.__getitem__))
    tokens = [vocab[i] for i in range(256 + len(merges))]
    return Encoder(merges, tokens, tokenizer.split_pattern.split, byte_ids, trained=True)


def _chunks_of_many_scripts() -> list[str]:
    split = resolve_pattern("o200k").split
    return [chunk for chunk in split(MULTILINGUAL) if len(chunk.encode()) >= 2 * len(chunk)]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pieces_on_the_built_ins(name: str) -> None:
    """Every chunk of many scripts in tests.strategies.MULTILINGUAL, and runs of CJK,
    Hangul and Thai letters, on a fresh encoder of the built-in's merges."""
    encoder = built_in_encoder(name)
    reference_chunk = _reference_chunks(name)
    runs = ["我能吞下玻璃而不伤身体", "다람쥐헌쳇바퀴에타고파", "เป็นมนุษย์สุดประเสริฐ", "ξεσκεπάζω"]
    for chunk in _chunks_of_many_scripts() + runs:
        found = encoder.from_pieces(chunk)
        assert found == reference_chunk(chunk), (name, chunk)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(st.text(st.characters(min_codepoint=0x0E01, max_codepoint=0x0E3A), max_size=20))
def test_pieces_on_the_built_ins_with_thai(name: str, text: str) -> None:
    """Unspaced Thai: long chunks of three-byte letters that merges join."""
    encoder = built_in_encoder(name)
    for chunk in resolve_pattern(name.removesuffix("_base")).split(text):
        found = encoder.from_pieces(chunk)
        assert found is None or found == _reference_chunks(name)(chunk), (name, chunk)
