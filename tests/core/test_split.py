"""The pre-tokenizer: the exact regex, lossless chunks in source order."""

import pytest
import regex
from hypothesis import given

from bpetite import reference
from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.core._patterns import resolve_pattern
from bpetite.core._pretokenizer import count_chunks, require_utf8
from tests.strategies import texts

#: The specification's pattern, copied from its text: the code's constant must equal it.
SPEC_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def pretokenize(text: str) -> list[bytes]:
    """The UTF-8 chunks of `text` by the default split, as every stage receives it."""
    return [chunk.encode("utf-8") for chunk in resolve_pattern("gpt2").split(text)]


def test_pattern_is_the_spec_pattern_character_for_character() -> None:
    assert PRETOKENIZER_PATTERN == SPEC_PATTERN


@given(texts)
def test_chunks_rebuild_the_text_and_match_the_spec_regex(text: str) -> None:
    chunks = pretokenize(text)
    assert b"".join(chunks) == text.encode("utf-8")
    assert chunks == [chunk.encode() for chunk in reference.split(text, SPEC_PATTERN)]
    assert all(chunks)


def test_known_splits() -> None:
    """Hand-checked against GPT-2's rules: a leading space joins the next word, the
    last space of a run is left for the following word, contractions split off."""
    assert pretokenize("Hello world!!") == [b"Hello", b" world", b"!!"]
    assert pretokenize("I'll  go\r\n") == [b"I", b"'ll", b" ", b" go", b"\r\n"]
    assert pretokenize("abc123 é") == [b"abc", b"123", b" \xc3\xa9"]
    assert pretokenize("<|endoftext|>") == [b"<|", b"endoftext", b"|>"]


@given(texts, texts)
def test_count_chunks_counts_each_text_separately(first: str, second: str) -> None:
    expected: dict[bytes, int] = {}
    for text in (first, second):
        for chunk in regex.findall(SPEC_PATTERN, text):
            key = chunk.encode("utf-8")
            expected[key] = expected.get(key, 0) + 1
    assert count_chunks([first, second]) == expected


def test_require_utf8_names_the_lone_surrogate_position() -> None:
    with pytest.raises(UnicodeEncodeError, match="position 2") as caught:
        require_utf8("ab\ud800c", "text")
    assert caught.value.start == 2
