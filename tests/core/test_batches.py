"""Batch encoding (tiktoken's names) and training from an iterator (Hugging Face's name).

The oracles are independent: the naive encoder and trainer of bpetite.reference, the
one-text methods item by item, and train_files on the same documents written as files.
"""

from __future__ import annotations

import gc
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, count_chunks, reference, train_files
from bpetite.core import _batches
from bpetite.errors import DisallowedSpecialError, ParameterError
from tests.strategies import texts, tricky_text

SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    corpus = "the cat sat on the mat; the hat's flat. 中文 中文 😀😀 " * 20
    return Tokenizer.train(corpus, vocab_size=320)


# --------------------------------------------------------------------------- batches


@given(st.lists(texts, max_size=8), st.sampled_from([1, 2, 8]))
def test_encode_batch_is_the_naive_encoder_item_by_item(
    tokenizer: Tokenizer, batch: list[str], threads: int
) -> None:
    merges = list(tokenizer.merges)
    assert tokenizer.encode_batch(batch, num_threads=threads) == [
        reference.encode(reference.Model(merges), text) for text in batch
    ]


@given(st.lists(tricky_text, max_size=8), st.sampled_from([1, 3]))
def test_encode_ordinary_batch_reads_specials_as_text(
    tokenizer: Tokenizer, batch: list[str], threads: int
) -> None:
    merges = list(tokenizer.merges)
    expected = [
        [
            token
            for chunk in reference.split(text)
            for token in reference.encode(reference.Model(merges), chunk)
        ]
        for text in batch
    ]
    assert tokenizer.encode_ordinary_batch(batch, num_threads=threads) == expected


def test_encode_batch_passes_the_special_policy_to_every_item(tokenizer: Tokenizer) -> None:
    batch = ["a", f"b{SPECIAL}"]
    special_id = tokenizer.special_tokens[SPECIAL]
    assert tokenizer.encode_batch(batch)[1][-1] == special_id
    as_text = tokenizer.encode_batch(batch, allowed_special=set(), disallowed_special=())
    assert as_text == [tokenizer.encode_ordinary(text) for text in batch]
    with pytest.raises(DisallowedSpecialError, match="position 1"):
        tokenizer.encode_batch(batch, allowed_special=set(), disallowed_special="all")


def test_a_bad_policy_fails_even_for_an_empty_batch(tokenizer: Tokenizer) -> None:
    """The policy is resolved before any item, so a typo is not hidden by no input."""
    with pytest.raises(TypeError, match="allowed_special must be 'all' or a collection"):
        tokenizer.encode_batch([], allowed_special="none")


@pytest.mark.parametrize("method", ["encode_batch", "encode_ordinary_batch"])
def test_batches_refuse_one_string_and_name_a_bad_item(tokenizer: Tokenizer, method: str) -> None:
    function = getattr(tokenizer, method)
    with pytest.raises(TypeError, match="not one string"):
        function("abc")
    with pytest.raises(TypeError, match="item 1 is bytes"):
        function(["a", b"b"])
    with pytest.raises(ParameterError, match="num_threads must be at least 1, got 0"):
        function(["a"], num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be an integer"):
        function(["a"], num_threads=True)


def test_a_lone_surrogate_in_a_batch_is_named(tokenizer: Tokenizer) -> None:
    with pytest.raises(UnicodeEncodeError, match="lone surrogate"):
        tokenizer.encode_ordinary_batch(["fine", "bad \ud800"], num_threads=2)


def test_threads_are_used_only_where_they_run_at_once(tokenizer: Tokenizer) -> None:
    """With the GIL a batch is mapped in the calling thread; without it, on a pool whose
    items give what the one-text methods give, the first failing item's error raised."""
    batch = ["the cat", "sat on", "the mat", "中文 😀", ""]
    expected = [tokenizer.encode(text) for text in batch]
    seen: set[int] = set()

    def encode_here(text: str) -> list[int]:
        seen.add(threading.get_ident())
        return tokenizer.encode(text)

    assert _batches.map_in_threads(encode_here, batch, 4) == expected
    ran_at_once = _batches.THREADS_RUN_AT_ONCE
    assert (seen == {threading.get_ident()}) is not ran_at_once
    with mock.patch.object(_batches, "THREADS_RUN_AT_ONCE", True):
        seen.clear()
        assert _batches.map_in_threads(encode_here, batch, 4) == expected
        assert threading.get_ident() not in seen
        assert tokenizer.encode_batch(batch, num_threads=3) == expected
        ids = [tokenizer.encode(text) for text in batch]
        assert tokenizer.decode_batch(ids, num_threads=3) == batch
        with pytest.raises(UnicodeEncodeError, match="ud800' at position 4"):  # the first
            tokenizer.encode_ordinary_batch(["fine", "bad \ud800", "b\udc00"], num_threads=2)


def test_batches_return_fresh_lists(tokenizer: Tokenizer) -> None:
    """A caller may mutate the result; cached ids must not change with it."""
    first = tokenizer.encode_batch(["the cat", "the cat"])
    first[0].append(-1)
    assert tokenizer.encode_batch(["the cat"]) == [tokenizer.encode("the cat")]


# --------------------------------------------------------------------------- iterator


@given(st.lists(texts, max_size=6), st.integers(256, 300))
def test_train_from_iterator_is_the_naive_trainer_on_separate_documents(
    documents: list[str], vocab_size: int
) -> None:
    counts: dict[bytes, int] = {}
    for document in documents:  # each document pre-tokenized on its own
        for chunk in reference.split(document):
            counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    trained = Tokenizer.train_from_iterator(iter(documents), vocab_size)
    assert list(trained.merges) == reference.train_counts(counts, vocab_size)


def test_documents_do_not_run_into_each_other() -> None:
    """ "ab" + "c" as one text would make the chunk "abc"; as two documents it must not."""
    trained = Tokenizer.train_from_iterator(["ab", "c", "ab", "c"], 300)
    assert trained.merges == ((97, 98),)


def test_train_from_iterator_equals_train_files(tmp_path: Path) -> None:
    documents = [f"document {n}: {'the cat sat ' * n}\n" for n in range(30)] + ["中文 😀\r\n"]
    paths = []
    for index, document in enumerate(documents):
        path = tmp_path / f"{index:03}.txt"
        path.write_bytes(document.encode("utf-8"))
        paths.append(path)
    from_files = train_files(paths, 400, workers=1)
    from_iterator = Tokenizer.train_from_iterator((d for d in documents), 400)
    assert from_iterator.merges == from_files.merges
    from_counts = Tokenizer.train_from_counts(count_chunks(documents), 400)
    assert from_iterator.merges == from_counts.merges


def test_the_iterator_is_read_once_and_may_be_a_generator() -> None:
    pulled = []

    def documents() -> Iterator[str]:
        for text in ["ab ab", "ab"]:
            pulled.append(text)
            yield text

    trained = Tokenizer.train_from_iterator(documents(), 258)
    assert pulled == ["ab ab", "ab"]
    assert trained.merges == ((97, 98), (32, 256))


def test_train_from_iterator_keeps_the_pattern_and_specials() -> None:
    trained = Tokenizer.train_from_iterator(
        ["Hello  world"], 260, pattern="cl100k", special_tokens=("<a>", "<b>")
    )
    assert trained.pattern_name == "cl100k"
    assert dict(trained.special_tokens) == {
        "<a>": trained.mergeable_vocab_size,
        "<b>": 257 + len(trained.merges),
    }


def test_memory_grows_with_distinct_chunks_not_with_the_corpus() -> None:
    """3 MB of documents with 100 distinct words: the peak must stay far below the corpus.

    Each document is built on demand and dropped once counted; a trainer that kept the
    documents (a list, a joined string) would hold them all at once.
    """
    words = [f"w{n}" for n in range(100)]
    document_chars = 10_000
    document_count = 300

    def documents() -> Iterator[str]:
        for n in range(document_count):
            yield (" ".join(words[n % 100 :] + words[: n % 100]) + " ") * (document_chars // 400)

    gc.collect()
    tracemalloc.start()
    try:
        Tokenizer.train_from_iterator(documents(), 260)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    corpus_bytes = document_count * document_chars
    assert peak < corpus_bytes / 8, peak


def test_train_from_iterator_refuses_a_string_and_a_bad_item() -> None:
    with pytest.raises(TypeError, match="not one string"):
        Tokenizer.train_from_iterator("abc", 300)
    with pytest.raises(TypeError, match="got bytes"):
        Tokenizer.train_from_iterator(["a", b"b"], 300)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="vocab_size"):
        Tokenizer.train_from_iterator(["a"], 10)
