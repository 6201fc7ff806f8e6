"""The fast trainer must learn exactly the merges of the spec's naive trainer."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer
from bpetite._pretokenizer import count_chunks
from bpetite._trainer import PROGRESS_EVERY, train_merges
from tests.reference import naive_train, naive_train_chunks
from tests.strategies import texts, tricky_text


def merges_of(corpus: str, vocab_size: int) -> list[tuple[int, int]]:
    return list(Tokenizer.train(corpus, vocab_size).merges)


@given(texts, st.integers(256, 320))
def test_matches_naive_trainer(corpus: str, vocab_size: int) -> None:
    assert merges_of(corpus, vocab_size) == naive_train(corpus, vocab_size)


@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=12).map(lambda b: bytes(x % 4 + 97 for x in b)),
        st.integers(1, 5),
        max_size=12,
    ),
    st.integers(256, 300),
)
def test_matches_naive_on_weighted_chunks_with_many_ties(
    chunks: dict[bytes, int], vocab_size: int
) -> None:
    """A four-letter alphabet and small weights make equal counts the rule, not the exception."""
    assert train_merges(chunks, vocab_size) == naive_train_chunks(chunks, vocab_size)


@given(st.lists(tricky_text, min_size=1, max_size=8))
def test_repeated_runs_of_one_character(parts: list[str]) -> None:
    """Runs like aaaa and abab exercise the overlap rule on every merge."""
    corpus = " ".join(part * 3 for part in parts) + " aaaaaaa abababab aaa"
    assert merges_of(corpus, 300) == naive_train(corpus, 300)


def test_tie_breaks_to_the_lexicographically_smallest_pair() -> None:
    """'cab' has (99, 97) and (97, 98) once each; a first-seen rule would pick (99, 97)."""
    assert merges_of("cab", 257) == [(97, 98)]


def test_never_merges_across_chunks_and_stops_early() -> None:
    """After 'ab' -> 256 only the cross-chunk pair (10, 256) is left, which must not count."""
    assert merges_of("ab\nab\nab\nab\nab", 300) == [(97, 98)]


def test_non_overlapping_left_to_right() -> None:
    """'aaa' with (a, a) gives (aa, a); the next merge must therefore be (256, 97)."""
    assert merges_of("aaa", 258) == [(97, 97), (256, 97)]


def test_spec_worked_example() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    assert list(tokenizer.merges) == [(97, 98), (32, 256)]
    assert tokenizer.vocab[256] == b"ab"
    assert tokenizer.vocab[257] == b" ab"
    assert tokenizer.vocab[258] == b"<|endoftext|>"
    assert tokenizer.special_tokens == {"<|endoftext|>": 258}


def test_special_literal_in_corpus_is_ordinary_text() -> None:
    corpus = "<|endoftext|> <|endoftext|> hello"
    with_literal = merges_of(corpus, 300)
    assert with_literal == naive_train(corpus, 300)
    assert with_literal != merges_of(" hello", 300)
    assert (60, 124) in with_literal  # '<' '|' was learned from the literal's characters


@pytest.mark.parametrize("vocab_size", [255, 0, -1])
def test_vocab_size_below_256_is_rejected(vocab_size: int) -> None:
    with pytest.raises(ValueError, match="at least 256"):
        Tokenizer.train("abc", vocab_size)


@pytest.mark.parametrize("vocab_size", [256.0, "300", True, None])
def test_vocab_size_must_be_an_int(vocab_size: object) -> None:
    with pytest.raises(TypeError, match="vocab_size must be an integer"):
        Tokenizer.train("abc", vocab_size)  # type: ignore[arg-type]


def test_vocab_size_beyond_the_id_space_is_rejected_up_front() -> None:
    with pytest.raises(ValueError, match="at most 1,114,112"):
        Tokenizer.train("abc", 0x110001)
    assert merges_of("abc", 0x110000) == naive_train("abc", 300)


def test_vocab_256_and_empty_corpus_give_no_merges() -> None:
    assert merges_of("hello hello", 256) == []
    tokenizer = Tokenizer.train("", 1000)
    assert tokenizer.merges == ()
    assert tokenizer.special_tokens == {"<|endoftext|>": 256}


def test_corpus_must_be_valid_text() -> None:
    with pytest.raises(TypeError):
        Tokenizer.train(b"bytes", 300)  # type: ignore[arg-type]
    with pytest.raises(UnicodeEncodeError, match="position 1"):
        Tokenizer.train("a\udc80b", 300)


def test_progress_reports_start_every_hundred_merges_and_done() -> None:
    events: list[Progress] = []
    corpus = " ".join(f"w{i}x{i * 7}" for i in range(400))
    merges = train_merges(count_chunks([corpus]), 256 + 250, events.append)
    assert len(merges) == 250
    assert events[0] == Progress("merge", "start", 0, 250)
    assert [e.done for e in events if e.stage == "update"] == [100, 200]
    assert events[-1] == Progress("merge", "done", 250, 250)
    assert PROGRESS_EVERY == 100


def test_progress_done_reports_an_early_stop() -> None:
    events: list[Progress] = []
    train_merges(Counter({b"ab": 1}), 400, events.append)
    assert events[-1] == Progress("merge", "done", 1, 144)


def test_deterministic_across_runs() -> None:
    corpus = "the cat sat on the mat; the bat ate the rat. " * 20
    assert merges_of(corpus, 350) == merges_of(corpus, 350)


@pytest.mark.parametrize("vocab_size", [300, 400])
def test_tinyshakespeare_matches_naive(shakespeare_text: str, vocab_size: int) -> None:
    chunks = count_chunks([shakespeare_text])
    assert train_merges(chunks, vocab_size) == naive_train_chunks(chunks, vocab_size)


def test_tinyshakespeare_32000_early_stops_at_21528(shakespeare_text: str) -> None:
    """The issue's figure; the exact merges at this size are checked via the encoder tests."""
    tokenizer = Tokenizer.train(shakespeare_text, 32000)
    assert 256 + len(tokenizer.merges) == 21528
