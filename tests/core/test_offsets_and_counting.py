"""encode_with_offsets, decode_with_offsets and count_tokens, against independent oracles.

Spans are checked against the text itself: where each character's bytes begin, found by
encoding the characters one by one, not by the byte classes the implementation counts.
Counts are checked against ``len(encode(...))`` and ``bpetite.reference.encode``.
"""

import os
from bisect import bisect_right
from itertools import accumulate

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, reference
from bpetite.errors import DisallowedSpecialError
from tests.strategies import MULTILINGUAL, ROUNDTRIP_CASES, texts

EXAMPLES = int(os.environ.get("BPETITE_OFFSET_EXAMPLES", "300"))
CORPUS = " ".join(ROUNDTRIP_CASES.values()) * 3 + MULTILINGUAL


@pytest.fixture(scope="module", params=["bytes", "merged", "chat"])
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    """No merges (every multi-byte character cut), many merges, and several specials."""
    if request.param == "bytes":
        return Tokenizer([])
    if request.param == "merged":
        return Tokenizer.train(CORPUS, 600, pattern="cl100k")
    return Tokenizer.train(CORPUS, 400, special_tokens=["<|endoftext|>", "<|é|>", "<|a"])


def expected_spans(text: str, token_bytes: list[bytes]) -> list[tuple[int, int]]:
    """Each token's smallest covering slice, from the characters' own byte positions."""
    starts = [0, *accumulate(len(char.encode("utf-8")) for char in text)]
    spans = []
    position = 0
    for data in token_bytes:
        first, last = position, position + len(data) - 1
        spans.append((bisect_right(starts, first) - 1, bisect_right(starts, last)))
        position += len(data)
    return spans


@given(text=st.one_of(texts, st.sampled_from(list(ROUNDTRIP_CASES.values()))))
@settings(max_examples=EXAMPLES)
def test_spans_are_the_smallest_slices_holding_each_tokens_bytes(
    tokenizer: Tokenizer, text: str
) -> None:
    ids, spans = tokenizer.encode_with_offsets(text)
    assert ids == tokenizer.encode(text)
    pieces = tokenizer.decode_tokens_bytes(ids)
    assert spans == expected_spans(text, pieces)
    for (start, end), data in zip(spans, pieces, strict=True):
        assert 0 <= start < end <= len(text)
        # The span holds the token: its text, plus the cut characters at either end.
        assert data in text[start:end].encode("utf-8")
    # decode_with_offsets gives tiktoken's starts, which are the spans' starts.
    decoded, starts = tokenizer.decode_with_offsets(ids)
    assert decoded == text
    assert starts == [start for start, _ in spans]


def test_a_cut_character_is_in_both_spans() -> None:
    """The documented rule, by hand: "é" is two byte tokens with no merges."""
    tokenizer = Tokenizer([])
    ids, spans = tokenizer.encode_with_offsets("hé!")
    assert ids == [104, 0xC3, 0xA9, 33]
    assert spans == [(0, 1), (1, 2), (1, 2), (2, 3)]
    assert tokenizer.decode_with_offsets(ids) == ("hé!", [0, 1, 1, 2])
    # A token holding the end of one character and the start of the next spans both.
    merged = Tokenizer([(0xA9, 0xC3)], pattern=r"[\s\S]+")
    ids, spans = merged.encode_with_offsets("éé")
    assert ids == [0xC3, 256, 0xA9]
    assert spans == [(0, 1), (0, 2), (1, 2)]


def test_offsets_follow_the_special_policy() -> None:
    tokenizer = Tokenizer.train(CORPUS, 300)
    text = "a<|endoftext|>é"
    ids, spans = tokenizer.encode_with_offsets(text)
    assert ids[1] == tokenizer.special_tokens["<|endoftext|>"]
    assert spans[1] == (1, 14)
    ids, spans = tokenizer.encode_with_offsets(text, disallowed_special=(), allowed_special=set())
    assert ids == tokenizer.encode_ordinary(text)
    with pytest.raises(DisallowedSpecialError):
        tokenizer.encode_with_offsets(text, allowed_special=set())


def test_decode_with_offsets_refuses_what_is_not_utf8() -> None:
    tokenizer = Tokenizer([])
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode_with_offsets([0xC3])
    assert tokenizer.decode_with_offsets([]) == ("", [])


@given(text=st.one_of(texts, st.sampled_from(list(ROUNDTRIP_CASES.values()))))
@settings(max_examples=EXAMPLES)
def test_count_tokens_is_the_length_of_encode(tokenizer: Tokenizer, text: str) -> None:
    count = tokenizer.count_tokens(text)
    assert count == len(tokenizer.encode(text))
    assert tokenizer.count_tokens(text, allowed_special=set(), disallowed_special=()) == len(
        reference.encode(tokenizer, text, allowed_special=set())
    )


def test_count_tokens_takes_encodes_policy() -> None:
    tokenizer = Tokenizer.train(CORPUS, 300)
    text = "<|endoftext|>" * 3 + "x"
    assert tokenizer.count_tokens(text) == 4
    assert tokenizer.count_tokens(text, disallowed_special=()) == 4
    ordinary = tokenizer.count_tokens(text, allowed_special=set(), disallowed_special=())
    assert ordinary == len(tokenizer.encode_ordinary(text)) > 4
    with pytest.raises(DisallowedSpecialError):
        tokenizer.count_tokens(text, allowed_special=set())
    with pytest.raises(TypeError):
        tokenizer.count_tokens(b"x")  # type: ignore[arg-type]
    # A chunk too long for the cache is counted by merging it, as encode does.
    long = "a" * 5000 + " " + "é" * 3000
    assert tokenizer.count_tokens(long) == len(tokenizer.encode(long))


def test_encode_to_numpy_is_encode_as_uint32() -> None:
    tokenizer = Tokenizer.train(CORPUS, 400, special_tokens=["<|endoftext|>", "<|é|>"])
    for text in [*ROUNDTRIP_CASES.values(), "a<|é|>b<|endoftext|>", MULTILINGUAL]:
        array = tokenizer.encode_to_numpy(text)
        assert array.dtype == numpy.uint32
        assert array.tolist() == tokenizer.encode(text)
    with pytest.raises(DisallowedSpecialError):
        tokenizer.encode_to_numpy("<|é|>", allowed_special=set())
