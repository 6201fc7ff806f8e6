"""The reference on models whose merged ids skip a special token's.

Merge ``r`` makes the token of index ``256 + r``; its id is the ``256 + r``-th id no
special token holds (p50k_base's ``<|endoftext|>`` sits at 50256, among its merged
tokens). Every function of the reference that reads a model gives ids, not indices,
checked against a case worked by hand, against tiktoken (p50k_base built offline from
the committed rank file, and a trained model's tokens given to tiktoken by id), and
against the same model in training's layout, whose ids are its indices.
"""

from __future__ import annotations

from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite import reference as ref
from bpetite.reference import Model
from tests import datafiles
from tests.strategies import MULTILINGUAL, tricky_text

CORPUS = datafiles.shakespeare_text()[:20_000]
#: Two specials among the merged ids of a 300-token model (its ids run to 301).
SPECIALS = {"<|a|>": 260, "<|b|>": 300}
#: Runs of spaces (p50k_base's whitespace tokens, 50257..50280, are 2 to 25 spaces),
#: specials glued to words, and text of many scripts.
TEXTS = [
    "hello" + " " * 30 + "world",
    "def f():\n        return 1\n\n\n    " + " " * 40 + "pass",
    "<|endoftext|>  <|a|>the<|b|> <|endoftext|>",
    MULTILINGUAL,
    CORPUS[:2000],
]


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    """A model in training's layout: indices are ids, <|endoftext|> after the merges."""
    return Tokenizer.train(CORPUS, 300)


@pytest.fixture(scope="module")
def interleaved() -> Tokenizer:
    """The same tokens with <|a|> and <|b|> among them: the merged ids skip 260 and 300."""
    return Tokenizer.train(CORPUS, 300, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def p50k() -> Tokenizer:
    return get_encoding("p50k_base")


def by_id(tokenizer: Tokenizer) -> Any:
    """tiktoken given the tokenizer's mergeable tokens and specials by id."""
    specials = dict(tokenizer.special_tokens)
    ranks = {data: i for i, data in tokenizer.vocab.items() if i not in specials.values()}
    return tiktoken.Encoding("test", pat_str=tokenizer.pattern, mergeable_ranks=ranks,
                             special_tokens=specials)  # fmt: skip


# ------------------------------------------------------------------ by hand


#: 'ab', 'abc' and 'abcd' are indices 256, 257 and 258; <|a|> holds 257, so 'abc' and
#: 'abcd' are ids 258 and 259, and the last merge joins id 258 ('abc') with 'd'.
HAND = Model([(97, 98), (256, 99), (258, 100)], special_tokens={"<|a|>": 257})


def test_the_merged_ids_skip_the_special_ids_by_hand() -> None:
    """An implementation that gives merge r the id 256 + r puts 'abc' on <|a|>'s id."""
    assert ref.mergeable_ids(HAND.merges, HAND.special_tokens)[256:] == [256, 258, 259]
    assert ref.mergeable_ids([(97, 98)], {"<|a|>": 900})[256:] == [256]  # after: no skip
    table = ref.vocab(HAND.merges, special_tokens=HAND.special_tokens)
    assert table == {**{i: bytes([i]) for i in range(256)}, 256: b"ab", 257: b"<|a|>",
                     258: b"abc", 259: b"abcd"}  # fmt: skip
    assert ref.encode(HAND, "abcd<|a|>abc ab") == [259, 257, 258, 32, 256]
    assert ref.decode(HAND, [259, 257, 258, 32, 256]) == "abcd<|a|>abc ab"
    assert ref.render_trace(ref.trace_encode(HAND, "abcd<|a|>")) == (
        "chunk 'abcd': 'a' 'b' 'c' 'd'\n"
        "  merge 0: (97, 98) -> 256 'ab' gives 'ab' 'c' 'd'\n"
        "  merge 1: (256, 99) -> 258 'abc' gives 'abc' 'd'\n"
        "  merge 2: (258, 100) -> 259 'abcd' gives 'abcd'\n"
        "special '<|a|>' -> 257"
    )


def test_extend_gives_the_merges_in_trainings_layout_by_hand() -> None:
    """The model's merges are written in indices ('abc' is 257), the new one after them."""
    assert ref.extend(HAND, "abcd abcd", 260) == [(97, 98), (256, 99), (257, 100), (32, 258)]


# ------------------------------------------------------------------ a trained model


def test_the_vocabulary_is_the_tokenizers(trained: Tokenizer, interleaved: Tokenizer) -> None:
    table = ref.vocab(interleaved.merges, special_tokens=interleaved.special_tokens)
    assert table == dict(interleaved.vocab)
    ids = ref.mergeable_ids(interleaved.merges, interleaved.special_tokens)
    assert [table[i] for i in ids] == [trained.vocab[i] for i in range(300)]
    assert ids == sorted(set(interleaved.vocab) - set(SPECIALS.values()))


@pytest.mark.parametrize("text", TEXTS)
def test_encode_and_its_trace_give_tiktokens_ids(interleaved: Tokenizer, text: str) -> None:
    expected = by_id(interleaved).encode(text, allowed_special="all")
    assert ref.encode(interleaved, text) == expected == interleaved.encode(text)
    _check_trace(interleaved, text, expected)
    assert ref.decode(interleaved, expected) == text


@settings(deadline=None)
@given(st.lists(st.one_of(tricky_text, st.sampled_from([*SPECIALS, " " * 30])), max_size=6))
def test_encode_is_the_training_layouts_encode_renumbered(parts: list[str]) -> None:
    """The same tokens in training's layout encode to their indices: each maps to its id."""
    trained, interleaved = _models()
    text = "".join(parts)
    ids = sorted(set(interleaved.vocab) - set(SPECIALS.values()))
    expected = [ids[i] for i in ref.encode(trained, text, allowed_special=set())]
    assert ref.encode(interleaved, text, allowed_special=set()) == expected
    assert interleaved.encode(text, allowed_special=set(), disallowed_special=()) == expected


def test_extend_is_training_further(trained: Tokenizer, interleaved: Tokenizer) -> None:
    """Training to 300 and on to 320 is training to 320, whatever the specials' ids."""
    more = ref.train(CORPUS, 320)
    assert ref.extend(interleaved, CORPUS, 320) == more == ref.extend(trained, CORPUS, 320)
    extended = interleaved.extended(CORPUS, 320, renumber_specials=True)
    assert list(extended.merges) == more


_CACHE: dict[str, tuple[Tokenizer, Tokenizer]] = {}


def _models() -> tuple[Tokenizer, Tokenizer]:
    """The two fixtures' models, for a hypothesis test (which takes no fixtures)."""
    if "models" not in _CACHE:
        _CACHE["models"] = (
            Tokenizer.train(CORPUS, 300),
            Tokenizer.train(CORPUS, 300, special_tokens=SPECIALS),
        )
    return _CACHE["models"]


# ------------------------------------------------------------------ p50k_base


@pytest.mark.parametrize("text", TEXTS)
def test_p50k_encode_and_its_trace_give_tiktokens_ids(p50k: Tokenizer, text: str) -> None:
    expected = datafiles.tiktoken_encoding("p50k_base").encode(text, allowed_special="all")
    assert ref.encode(p50k, text) == expected == p50k.encode(text)
    _check_trace(p50k, text, expected)
    assert ref.decode(p50k, expected) == text


def test_p50k_vocabulary_is_tiktokens(p50k: Tokenizer) -> None:
    oracle = datafiles.tiktoken_encoding("p50k_base")
    table = ref.vocab(p50k.merges, byte_order=p50k.byte_order, special_tokens=p50k.special_tokens)
    assert sorted(table) == list(range(oracle.n_vocab))
    for token_id in [*range(50200, 50281), 0, 255, 256, 1000, 30000]:
        assert table[token_id] == oracle.decode_single_token_bytes(token_id), token_id


def _check_trace(tokenizer: Tokenizer, text: str, expected: list[int]) -> None:
    """Each chunk's last step holds its ids, and every merge names the id it makes."""
    steps = ref.trace_encode(tokenizer, text)
    ids = [
        token_id
        for step, following in zip(steps, [*steps[1:], None], strict=True)
        if following is None or following.rank is None
        for token_id in step.tokens
    ]
    assert ids == expected
    for step in steps:
        assert [tokenizer.vocab[t] for t in step.tokens] == list(step.pieces)
        if step.rank is not None:
            assert step.new_id is not None and step.pair == tokenizer.merges[step.rank]
            left, right = step.pair
            assert tokenizer.vocab[step.new_id] == tokenizer.vocab[left] + tokenizer.vocab[right]
            assert step.new_id in step.tokens
