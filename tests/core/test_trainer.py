"""The fast trainer must learn exactly the merges of the spec's naive trainer."""

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import product
from typing import Any, ClassVar, SupportsIndex
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer, reference
from bpetite.core import _trainer
from bpetite.core._pretokenizer import count_chunks
from bpetite.core._trainer import PROGRESS_EVERY, MergeWords, Pair, train_merges
from bpetite.errors import ParameterError
from tests import datafiles
from tests.strategies import texts, tricky_text


def merges_of(corpus: str, vocab_size: int) -> list[tuple[int, int]]:
    return list(Tokenizer.train(corpus, vocab_size).merges)


@given(texts, st.integers(256, 320))
def test_matches_naive_trainer(corpus: str, vocab_size: int) -> None:
    assert merges_of(corpus, vocab_size) == reference.train(corpus, vocab_size)


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
    assert train_merges(chunks, vocab_size) == reference.train_counts(chunks, vocab_size)


@given(st.lists(tricky_text, min_size=1, max_size=8))
def test_repeated_runs_of_one_character(parts: list[str]) -> None:
    """Runs like aaaa and abab exercise the overlap rule on every merge."""
    corpus = " ".join(part * 3 for part in parts) + " aaaaaaa abababab aaa"
    assert merges_of(corpus, 300) == reference.train(corpus, 300)


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
    assert with_literal == reference.train(corpus, 300)
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


def test_vocab_size_beyond_the_id_space_trains_until_the_pairs_run_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The specification's FR-11: training stops early, without error, when no pair is
    left, however large the vocabulary asked for; only a corpus with more pairs than ids
    can hold (the bound lowered here) is refused, not cut short silently."""
    assert merges_of("abc", 0x110000) == reference.train("abc", 300)
    assert merges_of("abc", 0x110001) == reference.train("abc", 300)
    assert merges_of("abc", 10**9) == reference.train("abc", 300)
    monkeypatch.setattr(_trainer, "MAX_VOCAB_SIZE", 258)
    assert merges_of("ab ab", 10**6) == reference.train("ab ab", 300)  # two merges: 258, all
    with pytest.raises(ParameterError, match="pairs for more than 258 tokens"):
        Tokenizer.train("abcd abcd", 10**6)
    assert merges_of("abcd abcd", 258) == reference.train("abcd abcd", 258)


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
def test_tinyshakespeare_matches_naive(
    shakespeare_reference: tuple[Counter[bytes], list[Pair]], vocab_size: int
) -> None:
    """Against the naive trainer's run to 400, whose first merges are its run to 300:
    each of its steps depends only on the ones before."""
    chunks, merges = shakespeare_reference
    assert train_merges(chunks, vocab_size) == merges[: vocab_size - 256]


def test_tinyshakespeare_32000_early_stops_at_21528() -> None:
    """The issue's figure; the exact merges at this size are checked via the encoder tests."""
    tokenizer = datafiles.shakespeare_tokenizer(32000)  # Tokenizer.train, once per process
    assert 256 + len(tokenizer.merges) == 21528


# --------------------------------------------------------------------------- huge and long words


class _MeteredStr(str):
    """A str that adds the length it scans on each search or replace to a shared meter."""

    meter: ClassVar[list[int]] = [0]

    def __contains__(self, key: object) -> bool:
        self.meter[0] += len(self)
        return super().__contains__(key)  # type: ignore[operator]

    def replace(self, old: str, new: str, count: SupportsIndex = -1, /) -> "_MeteredStr":
        self.meter[0] += len(self)
        return _MeteredStr(super().replace(old, new, count))

    def find(self, sub: str, start: SupportsIndex | None = None, *args: Any) -> int:
        begin = 0 if start is None else int(start)
        found = super().find(sub, start, *args)
        self.meter[0] += (found if found >= 0 else len(self)) - begin + 1
        return found


class _MeteredBytes(bytes):
    """A chunk whose text form is metered: every scan the trainer makes of it is counted."""

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return _MeteredStr(super().decode(encoding, errors))


def scanned(chunk: bytes, vocab_size: int) -> int:
    """How many characters the trainer scans in C (``in``, ``replace``, ``find``) on `chunk`."""
    _MeteredStr.meter[0] = 0
    merges = train_merges({_MeteredBytes(chunk): 1}, vocab_size)
    assert merges == train_merges({chunk: 1}, vocab_size)
    return _MeteredStr.meter[0]


@pytest.mark.parametrize("unit", [b"a", b"ab", b"abc", b"abcdefghij"])
def test_one_huge_word_is_not_rescanned_per_merge(unit: bytes) -> None:
    """A chunk of 40k bytes is scanned a bounded number of times over, never per occurrence.

    The string layout kept a chunk once per created occurrence in its occurrence lists and
    rescanned the whole chunk for each entry: about 10^9 characters here (quadratic). A
    huge word is rescanned until that has cost ``RESCANS`` times its length (a visit scans
    it about three times), then laid out as a long word: with ``RESCANS`` at 2, the bound
    allows 16 full scans of the chunk, its first count included.
    """
    chunk = unit * (40_000 // len(unit))
    with patch.object(_trainer, "RESCANS", 2):
        assert scanned(chunk, 400) <= 16 * len(chunk)


def test_many_medium_chunks_are_scanned_linearly() -> None:
    """Short chunks are rescanned per visit, but visits per chunk are bounded by its length."""
    corpus = {bytes([97 + i % 3]) * (200 + i): 1 for i in range(40)}
    _MeteredStr.meter[0] = 0
    metered: dict[bytes, int] = {_MeteredBytes(chunk): count for chunk, count in corpus.items()}
    assert train_merges(metered, 2000) == train_merges(corpus, 2000)
    assert _MeteredStr.meter[0] > 0  # the meter sees the trainer's scans at all
    assert _MeteredStr.meter[0] <= 3 * _trainer.HUGE_CHUNK_BYTES * sum(map(len, corpus))


def visits(chunk_counts: dict[bytes, int], vocab_size: int) -> tuple[list[Pair], int]:
    """Train, counting the index entries every merge visits (stale ones included)."""
    total = 0
    original = _trainer.Words.merge

    def counting_merge(self: Any, pair: str, new_token: str) -> dict[str, int]:
        nonlocal total
        total += len(self.where.get(pair, ())) + len(self.where_at.get(pair, ()))
        return original(self, pair, new_token)

    with patch.object(_trainer.Words, "merge", counting_merge):
        merges = train_merges(chunk_counts, vocab_size)
    return merges, total


@pytest.mark.parametrize("unit", [b"a", b"ab", b"abc", b"aab", b"abcdefghij"])
def test_index_entries_visited_are_linear_in_one_huge_chunk(unit: bytes) -> None:
    """Each index entry is visited at most once: the initial pairs (fewer than the bytes)
    plus at most two per merged occurrence (fewer than the bytes again)."""
    chunk = unit * (40_000 // len(unit))
    merges, visited = visits({chunk: 1}, 600)
    assert merges == train_merges({chunk: 1}, 600)
    assert visited < 3 * len(chunk)


run_units = st.lists(st.sampled_from(b"abc"), min_size=1, max_size=4).map(bytes)


def _repeated(parts: list[tuple[bytes, int, int]]) -> dict[bytes, int]:
    """Chunk counts from ``(unit, repeats, count)``: ``unit * repeats`` occurs `count` times."""
    chunks: dict[bytes, int] = {}
    for unit, repeats, count in parts:
        chunks[unit * repeats] = chunks.get(unit * repeats, 0) + count
    return chunks


#: Runs and repeated patterns of up to 160 bytes, a few times each.
run_chunks = st.lists(
    st.tuples(run_units, st.integers(1, 40), st.integers(1, 3)), min_size=1, max_size=4
).map(_repeated)
#: As huge words (0), short words (10**9), or mixed (8).
layouts = st.sampled_from([0, 8, 10**9])


@given(run_chunks, st.integers(256, 300), layouts)
def test_runs_match_naive_in_every_layout(
    chunks: dict[bytes, int], vocab_size: int, huge_chunk_bytes: int
) -> None:
    """Runs and repeated patterns, as huge words (0), short words (10**9), or mixed (8)."""
    with patch.object(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes):
        fast = train_merges(chunks, vocab_size)
    assert fast == reference.train_counts(chunks, vocab_size)


def live_pairs(chunks: dict[bytes, int], merges: list[Pair]) -> dict[str, int]:
    """The weighted count of every pair in `chunks` once `merges` are done, by the
    reference (keyed as the trainer keys them: two characters)."""
    counts: dict[Pair, int] = {}
    for chunk, weight in chunks.items():
        ids: list[int] = list(chunk)
        for rank, pair in enumerate(merges):
            ids = reference.merge(ids, pair, 256 + rank)
        for pair, count in reference.get_stats(ids).items():
            counts[pair] = counts.get(pair, 0) + count * weight
    return {chr(left) + chr(right): count for (left, right), count in counts.items()}


@given(run_chunks, st.integers(256, 300), layouts, st.sampled_from([1, 2, 10**9]))
def test_pairs_no_word_holds_leave_the_counts_and_the_index(
    chunks: dict[bytes, int], vocab_size: int, huge_chunk_bytes: int, bisect_at_least: int
) -> None:
    """A pair whose count falls to 0 is gone for good: at every merge call the loop's
    counts are exactly the live ones (none kept at 0), what it tells the words to
    forget no word holds, and once they forget it every pair indexed is live. The
    counts are summed with the words that occur once counted by bisection in every
    list (1), in lists of two or more (2), or in none."""
    merged: list[Pair] = []

    @contextmanager
    def checked(counts: Mapping[Any, int]) -> Iterator[tuple[_trainer.PairCounts, MergeWords]]:
        words = _trainer.Words(counts)
        pair_counts = words.take_pair_counts()

        def merge(batch: Sequence[tuple[str, str]], gone: Sequence[str]) -> list[dict[str, int]]:
            live = live_pairs(chunks, merged)
            assert dict(pair_counts) == live
            assert not set(gone) & set(live)
            words.forget(gone)
            indexed = set(words.where) | set(words.huge_where) | set(words.where_at)
            assert indexed <= set(live)
            merged.extend((ord(pair[0]), ord(pair[1])) for pair, _ in batch)
            return words.merge_in_turn(batch, gone)

        yield pair_counts, merge

    with (
        patch.object(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes),
        patch.object(_trainer, "BISECT_AT_LEAST", bisect_at_least),
    ):
        fast = train_merges(chunks, vocab_size, lay_out=checked)
    assert fast == merged == reference.train_counts(chunks, vocab_size)


@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=30).map(lambda b: bytes(x % 3 + 97 for x in b)),
        st.integers(1, 4),
        max_size=8,
    ),
    st.integers(256, 300),
)
def test_huge_layout_matches_naive_on_weighted_chunks(
    chunks: dict[bytes, int], vocab_size: int
) -> None:
    with patch.object(_trainer, "HUGE_CHUNK_BYTES", 1):
        fast = train_merges(chunks, vocab_size)
    assert fast == reference.train_counts(chunks, vocab_size)


def test_every_word_of_a_small_alphabet_agrees_exhaustively() -> None:
    """Every chunk of up to 7 letters over {a, b}, alone, short and huge, to completion."""
    for length in range(2, 8):
        for letters in product(b"ab", repeat=length):
            chunk = bytes(letters)
            expected = reference.train_counts({chunk: 1}, 300)
            for huge_chunk_bytes in (1, 10**9):
                with patch.object(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes):
                    assert train_merges({chunk: 1}, 300) == expected, chunk


def test_a_megabyte_of_one_byte() -> None:
    """The issue's case. While the run of the newest token holds 3 or more, its pair is
    the only one counted twice: 18 doublings (aa, a^4, ... a^(2^18)), then the leftovers
    join until the chunk is one token, which must be the whole megabyte."""
    chunk = b"a" * 1_000_000
    merges = train_merges({chunk: 1}, 300)
    assert merges[:18] == [(97, 97)] + [(255 + k, 255 + k) for k in range(1, 18)]
    assert len(merges) < 44
    assert reference.vocab(merges)[255 + len(merges)] == chunk


def test_an_odd_run_matches_naive() -> None:
    chunk = b"a" * 20_011
    assert train_merges({chunk: 3}, 300) == reference.train_counts({chunk: 3}, 300)


# --------------------------------------------------------------------------- what a merge moves


@given(
    st.lists(st.sampled_from([97, 98, 99]), min_size=2, max_size=14),
    st.sampled_from([(97, 98), (98, 97), (97, 97), (98, 98), (99, 97)]),
)
def test_created_pairs_take_exactly_the_counts_the_merge_removed(
    word: list[int], pair: Pair
) -> None:
    """The loop takes each created pair's count from ``replaced_pair`` of it, never
    recounting the words: recount them naively before and after one merge
    (``reference.merge``) and the pairs that lost count must be those, plus the merged
    pair itself, which is gone. Runs like ``aaaa`` and ``abab`` make ``(z, z)``."""
    new_id = 256
    merged = reference.merge(word, pair, new_id)
    before = Counter(reference.get_stats(word))
    after = Counter(reference.get_stats(merged))
    created = {p: n for p, n in after.items() if new_id in p}
    taken: Counter[str] = Counter()
    for (first, second), n in created.items():
        taken[
            _trainer.replaced_pair(
                chr(first) + chr(second), chr(pair[0]) + chr(pair[1]), chr(new_id)
            )
        ] += n
    removed = Counter({p: n - after.get(p, 0) for p, n in before.items() if n > after.get(p, 0)})
    occurrences = len(word) - len(merged)
    expected = Counter({chr(a) + chr(b): n for (a, b), n in removed.items()})
    taken[chr(pair[0]) + chr(pair[1])] += occurrences
    assert +taken == expected


@given(
    st.dictionaries(st.sampled_from([a + b for a in "abcd" for b in "abcd"]), st.integers(1, 6)),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), max_size=40),
)
def test_candidates_pop_the_naive_best_while_counts_fall(
    initial: dict[str, int], steps: list[tuple[int, int]]
) -> None:
    """The bucket queue against ``min(key=(-count, pair))`` over the live counts, as the
    loop drives it: after each pop a few counts fall and new pairs are added at most as
    frequent as the one popped (ties with it included, the case a bucket queue gets
    wrong by taking a new pair after a larger tied one)."""
    pair_counts = defaultdict(int, initial)
    candidates = _trainer.Candidates(pair_counts)
    fresh = iter(chr(40 + n % 2 * 300) + chr(500 + n) for n in range(1000))  # smaller, larger
    for fall, new_count in steps:
        live = {p: n for p, n in pair_counts.items() if n > 0}
        best = candidates.pop(pair_counts)
        if not live:
            assert best is None
            break
        expected = min(live, key=lambda p: (-live[p], p))
        assert best == (expected, live[expected])
        del pair_counts[expected]
        for p in sorted(pair_counts)[:fall]:
            pair_counts[p] = max(pair_counts[p] - 1, 0)
        if new_count:
            new_pair = next(fresh)
            pair_counts[new_pair] = min(new_count, live[expected])
            candidates.add(new_pair, pair_counts[new_pair])


# --------------------------------------------------------------------------- options

limits = st.one_of(st.none(), st.integers(2, 6))
frequencies = st.one_of(st.none(), st.integers(1, 6))


@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=16).map(lambda b: bytes(x % 3 + 97 for x in b)),
        st.integers(1, 5),
        max_size=10,
    ),
    st.integers(256, 300),
    limits,
    frequencies,
    st.sampled_from([1, 10**9]),
)
def test_options_match_the_naive_trainer(
    chunks: dict[bytes, int],
    vocab_size: int,
    max_token_bytes: int | None,
    min_frequency: int | None,
    huge_chunk_bytes: int,
) -> None:
    with patch.object(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes):
        fast = train_merges(
            chunks, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
        )
    expected = reference.train_counts(
        chunks, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert fast == expected


@given(texts, limits, frequencies)
def test_options_match_the_naive_trainer_on_text(
    corpus: str, max_token_bytes: int | None, min_frequency: int | None
) -> None:
    chunks = count_chunks([corpus])
    fast = train_merges(chunks, 320, max_token_bytes=max_token_bytes, min_frequency=min_frequency)
    expected = reference.train_counts(
        dict(chunks), 320, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert fast == expected


def test_max_token_bytes_skips_long_pairs_but_keeps_shorter_ones() -> None:
    """'aaaa' x3 and 'bc' x1: (aa, aa) has the highest count but would make 4 bytes, so
    with a limit of 3 the next candidates are taken instead, the rarer 'bc' included."""
    chunks = {b"aaaa": 3, b"bc": 1}
    assert train_merges(chunks, 300) == [(97, 97), (256, 256), (98, 99)]
    assert train_merges(chunks, 300, max_token_bytes=3) == [(97, 97), (98, 99)]
    limited = train_merges({b"abcabcabc": 1}, 300, max_token_bytes=2)
    assert all(len(reference.vocab(limited)[256 + rank]) <= 2 for rank in range(len(limited)))


def test_min_frequency_stops_before_the_first_rarer_pair() -> None:
    """'ab ab ab': (a, b) occurs 3 times, then (' ', ab) twice."""
    chunks = count_chunks(["ab ab ab"])
    assert train_merges(chunks, 300, min_frequency=3) == [(97, 98)]
    assert train_merges(chunks, 300, min_frequency=2) == [(97, 98), (32, 256)]
    assert train_merges(chunks, 300, min_frequency=1) == train_merges(chunks, 300)


def test_min_frequency_stop_is_reported_as_an_early_done() -> None:
    events: list[Progress] = []
    train_merges(count_chunks(["ab ab ab"]), 300, events.append, min_frequency=3)
    assert events[-1] == Progress("merge", "done", 1, 44)


@pytest.mark.parametrize("name", ["max_token_bytes", "min_frequency"])
@pytest.mark.parametrize("value", [3.0, "3", True, [3]])
def test_options_must_be_integers(name: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"{name} must be an integer or None, got"):
        train_merges({b"ab": 1}, 300, **{name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value", "least"),
    [
        ("max_token_bytes", 1, 2),
        ("max_token_bytes", 0, 2),
        ("min_frequency", 0, 1),
        ("min_frequency", -5, 1),
    ],
)
def test_options_below_their_least_are_rejected(name: str, value: int, least: int) -> None:
    with pytest.raises(ParameterError, match=f"{name} must be at least {least} .*got {value}"):
        train_merges({b"ab": 1}, 300, **{name: value})  # type: ignore[arg-type]


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        train_merges({b"ab": 1}, 300, None, 4)  # type: ignore[call-arg]
