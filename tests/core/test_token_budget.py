"""truncate, chunk and is_within_limit, against count_tokens, encode and the text itself.

The oracle finds the places a text may be cut without the code under test: for every
``k``, the bytes of the first ``k`` ids of ``encode(text)`` (``decode_bytes``), kept
where they are whole UTF-8, whose text must then start the text. Every answer is
checked against those places and ``count_tokens``: exhaustively on short texts over an
alphabet of one-, two- and four-byte characters and a special token, and with
hypothesis on longer ones and on ``cl100k_base``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from itertools import product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite.core import _token_budget
from bpetite.errors import DisallowedSpecialError, ParameterError, PatternError
from tests.strategies import MULTILINGUAL, ROUNDTRIP_CASES, texts

EXAMPLES = int(os.environ.get("BPETITE_BUDGET_EXAMPLES", "200"))
CORPUS = " ".join(ROUNDTRIP_CASES.values()) * 3 + MULTILINGUAL
#: Short texts of these, every one up to four long: ASCII, a two-byte and a four-byte
#: character (cut into byte tokens by an untrained vocabulary), and a special token.
ALPHABET = ["a", "b", " ", "é", "😀", "<|endoftext|>"]
ORDINARY: dict[str, Any] = {"allowed_special": set(), "disallowed_special": ()}


@pytest.fixture(
    scope="module", params=["bytes", "merged", "specials", "interleaved", "contraction"]
)
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    """Every character cut into bytes; many merges, some ending inside a character;
    several specials; specials whose ids lie among the merged tokens' (which then skip
    them); and o200k's pattern with a token "x'" across its contraction."""
    if request.param == "bytes":
        return Tokenizer([])
    if request.param == "merged":
        return Tokenizer.train(CORPUS + "😀é" * 20, 600, pattern="cl100k")
    if request.param == "specials":
        return Tokenizer.train(CORPUS, 400, special_tokens=["<|endoftext|>", "<|é|>", "<|a"])
    if request.param == "interleaved":
        specials = {"<|endoftext|>": 260, "<|é|>": 300, "<|a": 500}
        return Tokenizer.train(CORPUS, 400, special_tokens=specials)
    return Tokenizer.train("x's x't x'm x'd a😀b " * 3, 270, pattern="o200k")


def places(tokenizer: Tokenizer, text: str, **policy: Any) -> list[tuple[int, int]]:
    """``(k, end)`` for every k whose first k ids are the whole characters ``text[:end]``."""
    ids = tokenizer.encode(text, **policy)
    found = []
    for k in range(len(ids) + 1):
        try:
            prefix = tokenizer.decode_bytes(ids[:k]).decode("utf-8")
        except UnicodeDecodeError:
            continue  # the k-th token ends inside a character
        assert text.startswith(prefix)
        found.append((k, len(prefix)))
    return found


class Oracle:
    """The places of one text, the counts of its pieces and where a piece from each place
    may end, each found once: every budget and overlap of :func:`check_all` asks again
    for the same ones."""

    def __init__(self, tokenizer: Tokenizer, text: str, **policy: Any) -> None:
        self.text = text
        self.cuts = places(tokenizer, text, **policy)
        self._counts: dict[tuple[int, int], int] = {}
        self._furthest: dict[tuple[int, int], int | None] = {}
        self._tokenizer, self._policy = tokenizer, policy

    def count(self, start: int, end: int) -> int:
        """``count_tokens(text[start:end])``."""
        if (start, end) not in self._counts:
            piece = self.text[start:end]
            self._counts[start, end] = self._tokenizer.count_tokens(piece, **self._policy)
        return self._counts[start, end]

    def furthest(self, index: int, n: int) -> int | None:
        """The index of the furthest place a piece of at most `n` tokens from place
        `index` reaches, both as tokens of the text and alone; None where none does."""
        if (index, n) not in self._furthest:
            cuts = self.cuts
            k, start = cuts[index]
            fitting = [
                later
                for later in range(index + 1, len(cuts))
                if cuts[later][0] - k <= n and self.count(start, cuts[later][1]) <= n
            ]
            self._furthest[index, n] = max(fitting, default=None)
        return self._furthest[index, n]


def expected_truncate(oracle: Oracle, n: int) -> str:
    fitting = [end for k, end in oracle.cuts if k <= n and oracle.count(0, end) <= n]
    return oracle.text[: max(fitting)]


def expected_spans(oracle: Oracle, n: int, overlap: int) -> list[tuple[int, int]] | None:
    """The greedy pieces, plainly, as indices into the places: None where none can fit."""
    text, cuts = oracle.text, oracle.cuts
    spans: list[tuple[int, int]] = []
    index, last = 0, oracle.furthest(0, n)
    while text:
        if last is None:
            return None
        spans.append((cuts[index][1], cuts[last][1]))
        if cuts[last][1] == len(text):
            break
        # The earliest later start, sharing at most `overlap` tokens, that gets further.
        starts = [
            (later, oracle.furthest(later, n))
            for later in range(index + 1, last + 1)
            if cuts[last][0] - cuts[later][0] <= overlap
        ]
        index, last = next(
            ((later, reach) for later, reach in starts if reach is None or reach > last),
            (last, None),
        )
    return spans


def check_all(tokenizer: Tokenizer, text: str, **policy: Any) -> None:
    """Every answer for `text`, at every budget up to one past its count."""
    total = tokenizer.count_tokens(text, **policy)
    oracle = Oracle(tokenizer, text, **policy)
    for n in range(total + 2):
        assert tokenizer.is_within_limit(text, n, **policy) is (total <= n)
        kept = tokenizer.truncate(text, n, **policy)
        assert kept == expected_truncate(oracle, n)
        assert text.startswith(kept)
        assert oracle.count(0, len(kept)) <= n  # count_tokens(kept), found once
        for overlap in range(min(n, 3)):
            check_chunk(tokenizer, oracle, n, overlap, **policy)


def check_chunk(tokenizer: Tokenizer, oracle: Oracle, n: int, overlap: int, **policy: Any) -> None:
    text = oracle.text
    expected = expected_spans(oracle, n, overlap)
    if expected is None:
        with pytest.raises(ParameterError, match="raise max_tokens"):
            tokenizer.chunk_with_offsets(text, n, overlap=overlap, **policy)
        return
    pieces, spans = tokenizer.chunk_with_offsets(text, n, overlap=overlap, **policy)
    assert spans == expected
    assert pieces == [text[start:end] for start, end in spans]
    assert tokenizer.chunk(text, n, overlap=overlap, **policy) == pieces
    for start, end in spans:  # each piece is text[start:end]: its count_tokens, found once
        assert start < end and oracle.count(start, end) <= n
    # The spans give the text back: each starts no later than the one before ends.
    rebuilt, previous_end = "", 0
    for (start, end), piece in zip(spans, pieces, strict=True):
        assert start <= previous_end < end
        rebuilt += piece[previous_end - start :]
        previous_end = end
    assert rebuilt == text
    if overlap == 0:
        assert "".join(pieces) == text


def short_texts() -> Iterator[str]:
    for length in range(5):
        for letters in product(ALPHABET, repeat=length):
            yield "".join(letters)


def test_exhaustively_on_short_texts(tokenizer: Tokenizer) -> None:
    for text in short_texts():
        check_all(tokenizer, text)


def test_exhaustively_with_specials_as_text(tokenizer: Tokenizer) -> None:
    """A special token's text is ordinary text, which may be cut anywhere."""
    for text in ["<|endoftext|>", "a<|endoftext|>😀", "<|é|><|a"]:
        check_all(tokenizer, text, **ORDINARY)


@given(text=st.one_of(texts, st.sampled_from(list(ROUNDTRIP_CASES.values()))))
@settings(max_examples=EXAMPLES)
def test_against_the_oracle(tokenizer: Tokenizer, text: str) -> None:
    check_all(tokenizer, text)


@pytest.fixture(scope="module", params=["cl100k_base", "p50k_base"])
def openai(request: pytest.FixtureRequest) -> Tokenizer:
    """cl100k_base, and p50k_base, whose mergeable ids skip its special token's."""
    return get_encoding(request.param)


@given(text=texts, n=st.integers(0, 40), overlap=st.integers(0, 5))
@settings(max_examples=EXAMPLES)
def test_openai_vocabularies_against_count_tokens_and_the_text(
    openai: Tokenizer, text: str, n: int, overlap: int
) -> None:
    total = openai.count_tokens(text)
    assert openai.is_within_limit(text, n) is (total <= n)
    oracle = Oracle(openai, text)
    assert openai.truncate(text, n) == expected_truncate(oracle, n)
    if n > overlap:
        check_chunk(openai, oracle, n, overlap)


def test_a_prefix_that_splits_apart_from_its_text_is_encoded_again() -> None:
    """o200k reads "x's" as one chunk, which a vocabulary with "x'" encodes as "x'", "s";
    the first token alone, "x'", is split into "x" and "'": two tokens. So the one-token
    prefix of "x's" is empty, not "x'": the prefix's own encoding decides."""
    tokenizer = Tokenizer.train("x's x't x'm x'd " * 3, 257, pattern="o200k")
    assert tokenizer.encode("x's") == [256, ord("s")]
    assert tokenizer.count_tokens("x'") == 2
    assert tokenizer.truncate("x's", 1) == ""
    assert tokenizer.truncate("x's", 2) == "x's"
    with pytest.raises(ParameterError, match="raise max_tokens"):
        tokenizer.chunk("x's", 1)


def test_a_character_cut_into_tokens_is_never_cut() -> None:
    """With no merges an emoji is four byte tokens: no prefix ends inside it."""
    tokenizer = Tokenizer([])
    for n in range(4):
        assert tokenizer.truncate("a😀", 1 + n) == "a"
    assert tokenizer.truncate("a😀", 5) == "a😀"
    assert tokenizer.chunk("a😀b", 4) == ["a", "😀", "b"]
    assert tokenizer.chunk("a😀b", 5) == ["a😀", "b"]


def test_a_special_token_is_one_token_and_never_cut() -> None:
    tokenizer = Tokenizer([])
    assert tokenizer.truncate("ab<|endoftext|>c", 3) == "ab<|endoftext|>"
    assert tokenizer.chunk("ab<|endoftext|>c", 2) == ["ab", "<|endoftext|>c"]
    assert tokenizer.truncate("ab<|endoftext|>c", 5, **ORDINARY) == "ab<|e"


def test_an_aliased_special_is_measured_by_the_text_it_is_written_as() -> None:
    """o200k_harmony's id 200018 is written ``<|endofprompt|>`` or ``<|reserved_200018|>``,
    and decodes as the first. Each answer for a text with the alias is the answer for the
    same text with the first (the plain case, which the oracle above checks), each place
    moved by how many characters longer the aliases before it are."""
    harmony = get_encoding("o200k_harmony")
    first, alias = "<|endofprompt|>", "<|reserved_200018|>"
    assert harmony.special_tokens[first] == harmony.special_tokens[alias]
    parts = ["hello ", None, "wörld, 中文 this is", None, None, " text 12345"]
    plain = "".join(first if part is None else part for part in parts)
    aliased = "".join(alias if part is None else part for part in parts)

    def moved(index: int) -> int:  # an index of `plain` as an index of `aliased`
        before, position = 0, 0
        for part in parts:
            length = len(first if part is None else part)
            if part is None and position + length <= index:
                before += 1
            position += length
        return index + before * (len(alias) - len(first))

    ids, spans = harmony.encode_with_offsets(plain)
    assert harmony.encode_with_offsets(aliased) == (
        ids,
        [(moved(start), moved(end)) for start, end in spans],
    )
    for n in range(len(ids) + 1):
        assert harmony.truncate(aliased, n) == aliased[: moved(len(harmony.truncate(plain, n)))]
        limit, overlap = n + 1, min(n, 2)
        _, places = harmony.chunk_with_offsets(plain, limit, overlap=overlap)
        expected = [(moved(start), moved(end)) for start, end in places]
        assert harmony.chunk_with_offsets(aliased, limit, overlap=overlap) == (
            [aliased[start:end] for start, end in expected],
            expected,
        )


class Spy:
    """Counts the characters of the chunks the budgets hand to the encoder."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.characters = 0
        real = _token_budget._chunks

        def chunks(pattern: Any, text: str) -> Iterator[str]:
            for chunk in real(pattern, text):
                self.characters += len(chunk)
                yield chunk

        monkeypatch.setattr(_token_budget, "_chunks", chunks)


def test_a_huge_text_against_a_small_limit_encodes_a_few_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokenizer = Tokenizer.train("hello world " * 10, 300)
    text = "hello world " * 900_000  # 10.8 MB
    spy = Spy(monkeypatch)
    assert tokenizer.is_within_limit(text, 10) is False
    assert spy.characters <= len("hello world ") * 6  # the 11 chunks that pass the limit
    spy.characters = 0
    assert tokenizer.truncate(text, 10) == ("hello world " * 5).rstrip()
    assert spy.characters <= len("hello world ") * 6
    # A text within the limit is walked to its end, and said to be within.
    spy.characters = 0
    assert tokenizer.is_within_limit("hello world " * 3, 7) is True
    assert spy.characters == len("hello world " * 3)


def test_the_special_token_policy_is_encodes() -> None:
    tokenizer = Tokenizer([])
    text = "a" * 1000 + "<|endoftext|>"
    for call in (
        lambda: tokenizer.is_within_limit(text, 1, allowed_special=set()),
        lambda: tokenizer.truncate(text, 1, allowed_special=set()),
        lambda: tokenizer.chunk(text, 1, allowed_special=set()),
    ):
        # Refused like encode, even where the special token lies past the limit.
        with pytest.raises(DisallowedSpecialError, match=re.escape("<|endoftext|>")):
            call()
    assert tokenizer.is_within_limit(text, 1001) is True
    assert tokenizer.is_within_limit(text, 1001, **ORDINARY) is False


def test_bad_arguments_are_named() -> None:
    tokenizer = Tokenizer([])
    with pytest.raises(TypeError, match="max_tokens must be an int"):
        tokenizer.truncate("a", True)
    with pytest.raises(ParameterError, match="max_tokens must be at least 0"):
        tokenizer.is_within_limit("a", -1)
    with pytest.raises(ParameterError, match="max_tokens must be at least 1"):
        tokenizer.chunk("a", 0)
    with pytest.raises(ParameterError, match="overlap must be less than max_tokens"):
        tokenizer.chunk("a", 2, overlap=2)
    with pytest.raises(ParameterError, match="overlap must be at least 0"):
        tokenizer.chunk("a", 2, overlap=-1)
    with pytest.raises(TypeError, match="truncate\\(\\) takes a str"):
        tokenizer.truncate(b"a", 1)  # type: ignore[arg-type]
    with pytest.raises(UnicodeEncodeError, match="lone surrogate"):
        tokenizer.chunk("a\ud800", 1)
    assert tokenizer.chunk("", 1) == [] and tokenizer.truncate("", 0) == ""


def test_a_custom_pattern_that_drops_text_fails_as_encode_does() -> None:
    tokenizer = Tokenizer([], pattern=r"[a-z]+")
    with pytest.raises(PatternError) as from_encode:
        tokenizer.encode("ab!cd")
    with pytest.raises(PatternError) as from_truncate:
        tokenizer.truncate("ab!cd", 10)
    assert str(from_truncate.value) == str(from_encode.value)


def test_ascii_text_is_walked_without_regex() -> None:
    """A preset's ASCII twin splits ASCII text, as it does for encode: no regex loaded."""
    import subprocess
    import sys

    code = (
        "import sys; from bpetite import Tokenizer; t = Tokenizer([]); "
        "t.truncate('ab cd ' * 100, 9); t.chunk('ab cd', 2); t.is_within_limit('ab', 1); "
        "print('regex' in sys.modules)"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output == "False\n"
