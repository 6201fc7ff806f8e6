"""A merge list the trainer learned from scratch has every token whole, so nothing is proven.

The encoder skips its wholeness proof for such a list (``LearnedMerges``); these tests
check the claim behind the skip against two independent oracles: the proof itself
(``Encoder.is_whole``, which settles each token with ``halves_join``) and the
reference encoder, which encodes each token's bytes rank pass by rank pass.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, count_chunks, reference
from bpetite.core import _tokenizer
from bpetite.core._encoder import Encoder
from bpetite.core._model import LearnedMerges, mergeable_tokens
from bpetite.core._patterns import resolve_pattern
from tests.datafiles import shakespeare_text


@functools.cache
def _proven_whole(merges: tuple[tuple[int, int], ...]) -> tuple[bool, ...]:
    """Every id's wholeness as the encoder's proof settles it, for an unmarked list.

    Asked id by id, in rank order as ``_prove_all`` asks, of an encoder that proves
    nothing up front (nor fills its text table, which no answer here reads). Found once
    per list: many small corpora train the same list.
    """
    vocab = mergeable_tokens(merges, tuple(range(256)))
    encoder = Encoder(merges, vocab, resolve_pattern("gpt2").split, prove_up_to=0)
    return tuple(encoder.is_whole(token) for token in range(len(vocab)))


def _assert_all_whole(counts: dict[bytes, int], vocab_size: int) -> None:
    tokenizer = Tokenizer.train_from_counts(counts, vocab_size)
    merges = tokenizer.merges
    assert isinstance(merges, LearnedMerges)
    assert all(_proven_whole(tuple(merges)))
    encode_chunk = reference.chunk_encoder(merges)
    for token_id in range(256, 256 + len(merges)):
        assert encode_chunk(tokenizer.vocab[token_id]) == [token_id]


def test_every_trained_token_encodes_to_itself_on_every_small_corpus() -> None:
    """Every corpus of up to three chunks of two to four letters from 'ab' (weights 1 and 2
    for up to two chunks)."""
    chunks = [
        "".join(letters).encode()
        for length in range(2, 5)
        for letters in itertools.product("ab", repeat=length)
    ]
    for size, weight_choices in ((1, (1, 2)), (2, (1, 2)), (3, (1,))):
        for chosen in itertools.combinations(chunks, size):
            for weights in itertools.product(weight_choices, repeat=size):
                _assert_all_whole(dict(zip(chosen, weights, strict=True)), 256 + 8)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=12).map(lambda data: bytes(b % 4 + 97 for b in data)),
        st.integers(1, 5),
        min_size=1,
        max_size=8,
    ),
    st.integers(257, 300),
)
def test_every_trained_token_encodes_to_itself_on_random_corpora(
    counts: dict[bytes, int], vocab_size: int
) -> None:
    _assert_all_whole(counts, vocab_size)


def test_every_trained_token_of_tinyshakespeare_encodes_to_itself() -> None:
    counts = count_chunks([shakespeare_text()[:200_000]], pattern="gpt2")
    _assert_all_whole(dict(counts), 2_000)


def test_a_hand_made_list_is_still_proven() -> None:
    """Only the trainer's lists are marked: the same pairs given by hand are proven, and
    a list whose token does not encode to itself is found out."""
    tokenizer = Tokenizer([(98, 99), (97, 98), (257, 99)])  # 'bc', 'ab', 'ab'+'c'
    assert not isinstance(tokenizer.merges, LearnedMerges)
    assert tokenizer.encode("abc") == [97, 256]  # not [258]: 'bc' ranks first
    trained = Tokenizer.train_from_counts(Counter({b"abc": 3}), 258)
    assert Tokenizer(list(trained.merges)).encode("abc") == trained.encode("abc") == [257]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_learned_list_stays_marked_through_a_worker(workers: int) -> None:
    """A tokenizer pickled to a worker rebuilds from the same marked list."""
    import pickle

    tokenizer = Tokenizer.train("abcabcab" * workers, 260)
    clone = pickle.loads(pickle.dumps(tokenizer))
    assert isinstance(clone.merges, LearnedMerges)
    assert clone == tokenizer
    assert clone.encode("abcabc") == tokenizer.encode("abcabc")


def test_a_special_id_among_the_learned_ones_keeps_the_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Learned merges read as indices (a special token holds an id the trainer's tokens
    would have had) are still marked whole, and encode as the reference does."""
    told: list[object] = []
    real = Encoder  # what _tokenizer builds with

    def recording(*args: Any, **kwargs: Any) -> Encoder:
        told.append(kwargs.get("trained"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_tokenizer, "Encoder", recording)
    counts = count_chunks([shakespeare_text()[:20_000]], pattern="gpt2")
    special = {"<|s|>": 270}
    tokenizer = Tokenizer.train_from_counts(dict(counts), 400, special_tokens=special)
    text = shakespeare_text()[20_000:22_000] + "<|s|>"
    ids = tokenizer.encode(text, allowed_special="all")
    assert told == [True]
    assert 270 in ids and ids == reference.encode(tokenizer, text, allowed_special="all")
