"""The reference itself, against cases worked by hand that each catch a wrong implementation.

The reference is the definition every fast path is tested against, so it is checked
here only against the specification: hand-worked examples whose docstrings say which
plausible mistake they would expose, and its lowest-rank encode loop against a literal
one-pass-per-rank encoder (the specification's sketch) written out below.
"""

import ast
import sys
from collections.abc import Sequence
from itertools import product
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import reference
from bpetite.core._constants import END_OF_TEXT_TOKEN as EOT
from bpetite.reference import Model, TrainStep
from tests.strategies import merge_lists

Pair = tuple[int, int]


# ------------------------------------------------------------------ helpers


def test_get_stats_counts_overlapping_pairs() -> None:
    """'aaa' holds the pair (a, a) twice: pairs are counted at every position."""
    assert reference.get_stats([97, 97, 97]) == {(97, 97): 2}
    assert reference.get_stats([1, 2], {(1, 2): 5}) == {(1, 2): 6}
    assert reference.get_stats([]) == reference.get_stats([1]) == {}


def test_merge_never_overlaps_and_goes_left_to_right() -> None:
    """(x, x, x) with (x, x) is (xx, x), never (x, xx); 'abab' merges twice in one pass.

    A merge that re-examined the right element of a match would give (x, xx), and one
    that stopped after the first match would leave the second 'ab'."""
    assert reference.merge([7, 7, 7], (7, 7), 8) == [8, 7]
    assert reference.merge([7, 7, 7, 7], (7, 7), 8) == [8, 8]
    assert reference.merge([97, 98, 97, 98], (97, 98), 256) == [256, 256]
    assert reference.merge([98, 97], (97, 98), 256) == [98, 97]


def test_split_is_gpt2s_pattern() -> None:
    assert reference.split("Hello world's 123  !!\n\n x") == [
        "Hello", " world", "'s", " 123", " ", " !!", "\n\n", " x",
    ]  # fmt: skip
    assert reference.split("a1", r"\p{L}|\p{N}") == ["a", "1"]


# ------------------------------------------------------------------ training


def test_the_specifications_worked_example() -> None:
    """'ab ab ab' -> chunks 'ab' x1, ' ab' x2: (a, b) scores 3, then (' ', ab) scores 2."""
    merges = reference.train("ab ab ab", 258)
    assert merges == [(97, 98), (32, 256)]
    table = reference.vocab(merges)
    assert (table[256], table[257], table[258]) == (b"ab", b" ab", EOT.encode())
    steps = reference.trace_train("ab ab ab", 258)
    assert [(step.count, step.runners_up, step.total_tokens) for step in steps] == [
        (3, (((32, 97), 2),), 5),
        (2, (), 3),
    ]


def test_ties_go_to_the_smallest_pair_not_the_first_seen() -> None:
    """'cab' has (c, a) and (a, b) once each; a first-seen or most_common rule picks (c, a).

    'abcd' would not tell them apart: there the first pair seen is also the smallest."""
    assert reference.train("cab", 257) == [(97, 98)]
    (step,) = reference.trace_train("cab", 257)
    assert step.tied == ((99, 97),)
    assert reference.train("abcd", 257) == [(97, 98)]


def test_overlapping_runs_train_left_to_right() -> None:
    """'aaa' merges (a, a) into (aa, a), so the next pair is (aa, a), not (a, aa)."""
    assert reference.train("aaa", 258) == [(97, 97), (256, 97)]
    assert reference.train("aaaa", 258) == [(97, 97), (256, 256)]


def test_pairs_never_cross_chunks_and_training_stops_early() -> None:
    """After (a, b) only the cross-chunk pair ('\\n', ab) is left, which must not count."""
    assert reference.train("ab\nab\nab\nab\nab", 300) == [(97, 98)]
    assert reference.train("", 300) == reference.train("abc", 256) == []


def test_chunk_counts_weight_every_pair() -> None:
    """A chunk counted n times counts its pairs n times: (b, c) x3 beats (a, b) x2."""
    assert reference.train_counts({b"ab": 2, b"bc": 3}, 257) == [(98, 99)]
    assert reference.train_counts({b"ab": 2, b" ab": 2}, 300) == [(97, 98), (32, 256)]


def test_the_special_tokens_text_is_ordinary_in_training() -> None:
    """A trainer that cut '<|endoftext|>' out of the corpus would learn what 'ab ab' gives."""
    with_literal = reference.train("ab<|endoftext|>ab", 300)
    assert with_literal != reference.train("ab ab", 300)
    assert (60, 124) in with_literal  # '<|'


def test_max_token_bytes_skips_long_pairs_and_keeps_shorter_rarer_ones() -> None:
    """'aaaa' x3, 'bc' x1: (aa, aa) is the most frequent but 4 bytes long; under a limit
    of 3 the rarer (b, c) is merged instead of stopping."""
    counts = {b"aaaa": 3, b"bc": 1}
    assert reference.train_counts(counts, 300) == [(97, 97), (256, 256), (98, 99)]
    assert reference.train_counts(counts, 300, max_token_bytes=3) == [(97, 97), (98, 99)]
    assert reference.train_counts(counts, 300, max_token_bytes=1) == []


def test_min_frequency_stops_at_the_first_rarer_pair() -> None:
    """'ab ab ab': (a, b) occurs 3 times, then (' ', ab) twice."""
    assert reference.train("ab ab ab", 300, min_frequency=3) == [(97, 98)]
    assert reference.train("ab ab ab", 300, min_frequency=2) == [(97, 98), (32, 256)]
    assert reference.train("ab ab ab", 300, min_frequency=1) == reference.train("ab ab ab", 300)


def test_vocab_size_below_256_is_an_error_and_256_learns_nothing() -> None:
    with pytest.raises(ValueError, match="at least 256"):
        reference.train("ab", 255)
    assert reference.train("ab ab", 256) == []


def test_a_non_default_pattern_changes_the_chunks() -> None:
    """With one chunk per character no pair exists at all."""
    assert reference.train("abab", 300, pattern=r".") == []


# ------------------------------------------------------------------ encoding and decoding


def test_the_specifications_encode_example() -> None:
    model = Model(reference.train("ab ab ab", 258))
    assert reference.encode(model, "ab<|endoftext|>ab") == [256, 258, 256]
    assert reference.encode(model, "") == []
    assert reference.decode(model, [256, 258, 256]) == "ab<|endoftext|>ab"
    assert reference.decode(model, []) == ""


@pytest.mark.parametrize("text", ["<|endoftext", "endoftext|>", "<|endo", "<|<|endoftext|>|>"])
def test_partial_special_texts_are_ordinary(text: str) -> None:
    """Only the exact literal is special; a prefix or suffix of it is ordinary text."""
    model = Model([])
    ids = reference.encode(model, text)
    assert ids.count(256) == text.count(EOT)
    assert reference.decode(model, ids) == text


def test_consecutive_specials_give_one_id_each() -> None:
    assert reference.encode(Model([]), EOT * 3) == [256, 256, 256]


def test_specials_leftmost_first_then_longest() -> None:
    """'bcd' is longer than 'ab' but starts later; 'abc' and 'ab' start together."""
    model = Model([], special_tokens={"ab": 300, "abc": 301, "bcd": 302})
    assert reference.encode(model, "abcd") == [301, 100]
    assert reference.encode(Model([], special_tokens={"ab": 300, "bcd": 302}), "abcd") == [
        300,
        99,
        100,
    ]
    assert reference.encode(model, "xbcd") == [120, 302]


def test_only_allowed_specials_become_ids() -> None:
    model = Model([], special_tokens={"<a>": 300, "<b>": 301})
    assert reference.encode(model, "<a><b>", allowed_special={"<b>"}) == [60, 97, 62, 301]
    assert reference.encode(model, "<a>", allowed_special=set()) == [60, 97, 62]
    with pytest.raises(KeyError):
        reference.encode(model, "<a>", allowed_special={"<c>"})


def test_decode_is_strict_about_utf8_and_unknown_ids() -> None:
    """A lone continuation byte must raise, not turn into U+FFFD; 'replace' is opt-in."""
    model = Model([])
    with pytest.raises(UnicodeDecodeError):
        reference.decode(model, [0x80])
    assert reference.decode(model, [0x80], errors="replace") == "\ufffd"
    assert reference.decode_bytes(model, [0x80]) == b"\x80"
    with pytest.raises(KeyError):
        reference.decode(model, [257])


def test_a_byte_order_maps_ids_to_other_bytes() -> None:
    """Imported vocabularies number the bytes differently: id i is byte_order[i]."""
    order = list(reversed(range(256)))
    merges = [(255 - 97, 255 - 98)]  # 'a' then 'b', in those ids
    model = Model(merges, byte_order=order)
    assert reference.encode(model, "ab a") == [256, 255 - 32, 255 - 97]
    assert reference.encode_chunk(b"ab", merges, order) == [256]
    assert reference.vocab(merges, byte_order=order)[256] == b"ab"
    assert reference.decode(model, [256, 255 - 32, 255 - 97]) == "ab a"


def test_a_tokenizer_like_object_is_read_by_its_attributes_only() -> None:
    """Any object with the four attributes will do, as a Tokenizer does."""

    class Plain:
        def __init__(self) -> None:
            self.merges = ((97, 98),)
            self.pattern = r"\S+|\s+"
            self.special_tokens = {"<s>": 500}
            self.byte_order = tuple(range(256))

    assert reference.encode(Plain(), "ab ab<s>") == [256, 32, 256, 500]
    assert reference.decode(Plain(), [256, 500]) == "ab<s>"


# ------------------------------------------------------------------ lowest rank first


def one_pass_per_rank(chunk: bytes, merges: Sequence[Pair]) -> list[int]:
    """The specification's sketch, literally: a full left-to-right pass for every rank."""
    tokens = list(chunk)
    for rank, pair in enumerate(merges):
        tokens = reference.merge(tokens, pair, 256 + rank)
    return tokens


def all_merge_lists(alphabet: Sequence[int], most: int) -> list[list[Pair]]:
    """Every merge list of up to `most` merges over `alphabet`: each merge joins any two
    ids that exist before it, so repeated and unreachable merges are included."""
    found: list[list[Pair]] = []
    level: list[list[Pair]] = [[]]
    for _ in range(most + 1):
        found += level
        level = [
            [*merges, pair]
            for merges in level
            for pair in product([*alphabet, *range(256, 256 + len(merges))], repeat=2)
        ]
    return found


def test_lowest_rank_loop_equals_one_pass_per_rank_exhaustively() -> None:
    """Every chunk of up to 6 bytes over 'ab' against every merge list of up to 3 merges."""
    chunks = [bytes(c) for n in range(7) for c in product(b"ab", repeat=n)]
    merge_lists = all_merge_lists(b"ab", 3)
    assert len(merge_lists) == 1 + 4 + 4 * 9 + 4 * 9 * 16
    for merges in merge_lists:
        for chunk in chunks:
            assert reference.encode_chunk(chunk, merges) == one_pass_per_rank(chunk, merges)


@given(merge_lists(), st.binary(max_size=40).map(lambda b: bytes(x % 5 + 96 for x in b)))
def test_lowest_rank_loop_equals_one_pass_per_rank(merges: list[Pair], chunk: bytes) -> None:
    assert reference.encode_chunk(chunk, merges) == one_pass_per_rank(chunk, merges)


@given(merge_lists(), st.binary(max_size=40).map(lambda b: bytes(x % 5 + 96 for x in b)))
def test_the_encode_trace_applies_the_same_merges(merges: list[Pair], chunk: bytes) -> None:
    """The trace's ranks rise, each step is one merge, and its last tokens are the ids."""
    whole = Model(merges, pattern=r"(?s).+", special_tokens={})  # the text is one chunk
    steps = reference.trace_encode(whole, chunk.decode("ascii"))
    if not chunk:
        assert steps == []
        return
    first, *rest = steps
    assert first.rank is None and list(first.tokens) == list(chunk)
    ranks = [step.rank for step in rest]
    assert ranks == sorted(ranks, key=lambda rank: rank or 0) and len(set(ranks)) == len(ranks)
    previous = first.tokens
    for step in rest:
        assert step.rank is not None and step.pair is not None and step.new_id is not None
        assert step.new_id == 256 + step.rank and step.pair == merges[step.rank]
        assert list(step.tokens) == reference.merge(previous, step.pair, step.new_id)
        assert b"".join(step.pieces) == chunk
        previous = step.tokens
    assert list(previous) == reference.encode_chunk(chunk, merges)


# ------------------------------------------------------------------ traces


def test_training_trace_records_ties_and_runners_up() -> None:
    steps = reference.trace_train({b"cab": 1, b"xy": 2}, 258)
    assert steps[0] == TrainStep(
        rank=0,
        pair=(120, 121),
        count=2,
        runners_up=(((97, 98), 1), ((99, 97), 1)),
        tied=(),
        token=b"xy",
        total_tokens=5,
    )
    assert (steps[1].pair, steps[1].tied, steps[1].new_id) == ((97, 98), ((99, 97),), 257)
    assert [step.pair for step in steps] == reference.train_counts({b"cab": 1, b"xy": 2}, 258)


def test_render_trace_shows_bytes_readably() -> None:
    """A token that is part of a character is shown as hex, a whole one as text."""
    assert reference.render_trace(reference.trace_train({b"ab": 3, b"cb": 2}, 257)) == (
        "merge 0: (97, 98) -> 256 'ab', count 3, next (99, 98) x2; 7 tokens after"
    )
    model = Model([(0xE2, 0x82)])
    assert reference.render_trace(reference.trace_encode(model, "€<|endoftext|>")) == (
        "chunk '€': <e2> <82> <ac>\n"
        "  merge 0: (226, 130) -> 256 <e2 82> gives <e2 82> <ac>\n"
        "special '<|endoftext|>' -> 257"
    )
    many_ties = reference.trace_train("abcdef", 257)
    assert reference.render_trace(many_ties).endswith(
        "tie won against (98, 99), (99, 100), (100, 101) and 1 more; 5 tokens after"
    )


# ------------------------------------------------------------------ independence


def test_the_reference_imports_nothing_of_the_fast_code() -> None:
    """An oracle that shared code with what it checks could share its bugs: the reference
    takes only constants and the regex engine from bpetite (`regex` itself, or where it
    cannot be imported `re` with the same classes, checked against `regex` in
    tests/core/test_regex_fallback.py), and otherwise only the standard library."""
    source = Path(reference.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    outside_stdlib = {name for name in imported if name.split(".")[0] not in STDLIB}
    assert outside_stdlib == {"bpetite.core._constants", "bpetite.core._regex"}


STDLIB = sys.stdlib_module_names | {"__future__"}
