"""``train_from_iterator``: every option ``train`` takes, and nanochat's character budget.

The oracles: nanochat's own loop from ``scripts/tok_train.py`` written out literally
in tests/nanochat.py (crop each document to ``doc_cap``, count, yield, stop once the count passes
``max_chars``), and ``bpetite.reference.train_counts`` on the documents it yields.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, reference
from tests.nanochat import nanochat_text_iterator
from tests.strategies import texts

SPECIAL = "<|endoftext|>"


def reference_merges(
    documents: list[str], vocab_size: int, **options: int | None
) -> list[tuple[int, int]]:
    counts: dict[bytes, int] = {}
    for document in documents:
        for chunk in reference.split(document):
            counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    return reference.train_counts(counts, vocab_size, **options)


limits = st.one_of(st.none(), st.integers(1, 60))


@given(st.lists(texts, max_size=8), st.integers(256, 290), limits, limits)
def test_the_budget_is_nanochats_loop(
    documents: list[str], vocab_size: int, max_chars: int | None, doc_cap: int | None
) -> None:
    taken = list(nanochat_text_iterator(documents, max_chars, doc_cap))
    trained = Tokenizer.train_from_iterator(
        iter(documents), vocab_size, max_chars=max_chars, doc_cap=doc_cap
    )
    assert list(trained.merges) == reference_merges(taken, vocab_size)


@given(
    st.lists(texts, max_size=6),
    st.integers(256, 300),
    st.one_of(st.none(), st.integers(2, 5)),
    st.one_of(st.none(), st.integers(1, 3)),
)
def test_every_training_option_of_train(
    documents: list[str], vocab_size: int, max_token_bytes: int | None, min_frequency: int | None
) -> None:
    trained = Tokenizer.train_from_iterator(
        documents, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    expected = reference_merges(
        documents, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert list(trained.merges) == expected
    # The options are recorded as train records them.
    single = Tokenizer.train(
        "", vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert trained.training == single.training


def test_the_document_that_crosses_the_budget_is_taken_whole_and_nothing_after_it_is_read() -> None:
    """Totals 2, then 4 > 3: "cd" is taken (it crosses), "zz" is never pulled.

    A cut *before* the crossing document (total <= max_chars) would leave "cd" out.
    """
    pulled = []

    def documents() -> Iterator[str]:
        for text in ["ab", "cd", "zz", "zz"]:
            pulled.append(text)
            yield text

    trained = Tokenizer.train_from_iterator(documents(), 300, max_chars=3)
    assert pulled == ["ab", "cd"]
    assert sorted(trained.merges) == [(97, 98), (99, 100)]


def test_a_total_equal_to_max_chars_goes_on() -> None:
    """nanochat stops only once the total is *past* max_chars: 2 == 2 reads "cd" too."""
    trained = Tokenizer.train_from_iterator(["ab", "cd", "ef"], 300, max_chars=2)
    assert sorted(trained.merges) == [(97, 98), (99, 100)]


def test_doc_cap_counts_characters_not_bytes() -> None:
    """A cap of 2 keeps "中文" whole (2 characters, 6 bytes): a byte cap would cut it."""
    trained = Tokenizer.train_from_iterator(["中文中文"], 300, doc_cap=2)
    assert trained.merges == tuple(reference.train_counts({"中文".encode(): 1}, 300))


def test_options_are_checked_before_the_first_document_is_read() -> None:
    def documents() -> Iterator[str]:
        raise AssertionError("read before the options were checked")
        yield ""  # pragma: no cover

    bad: list[dict[str, object]] = [
        {"max_chars": 0},
        {"doc_cap": 0},
        {"max_chars": 1.5},
        {"doc_cap": True},
        {"max_token_bytes": 1},
        {"min_frequency": 0},
        {"special_tokens": [""]},
        {"pattern": "(unclosed"},
    ]
    for options in bad:
        with pytest.raises((TypeError, ValueError)) as raised:
            Tokenizer.train_from_iterator(documents(), 300, **options)  # type: ignore[arg-type]
        name = next(iter(options))
        assert name in str(raised.value) or name in ("special_tokens", "pattern")


def test_errors_name_the_method_and_the_item_never_count_chunks() -> None:
    with pytest.raises(TypeError) as raised:
        Tokenizer.train_from_iterator(["a", b"b"], 300)  # type: ignore[list-item]
    assert "train_from_iterator()" in str(raised.value)
    assert "item 1" in str(raised.value)
    assert "count_chunks" not in str(raised.value)
    with pytest.raises(UnicodeEncodeError) as surrogate:
        Tokenizer.train_from_iterator(["a", "b\ud800"], 300)
    assert "document 1" in str(surrogate.value)
    assert "count_chunks" not in str(surrogate.value)


def test_a_lone_surrogate_past_the_cap_is_never_read() -> None:
    """The cap is applied first: the cut-off text is not part of the training data."""
    trained = Tokenizer.train_from_iterator(["abab\ud800"], 300, doc_cap=4)
    assert trained.merges == Tokenizer.train("abab", 300).merges


def test_specials_and_pattern_are_kept_with_a_budget() -> None:
    trained = Tokenizer.train_from_iterator(
        ["Hello  world"] * 3, 270, pattern="cl100k", special_tokens=(SPECIAL, "<b>"), max_chars=5
    )
    assert trained.pattern_name == "cl100k"
    assert list(trained.special_tokens) == [SPECIAL, "<b>"]
