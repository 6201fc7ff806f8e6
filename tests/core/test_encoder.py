"""The fast encoder must give exactly the ids of the spec's one-pass-per-rank encoder."""

import random
from array import array
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, reference
from bpetite.core import _encoder as encoder_module
from bpetite.core._encoder import CHUNK_CACHE_SIZE, EAGER_PROOF_MERGES, LONG_CHUNK_BYTES, Encoder
from bpetite.core._patterns import resolve_pattern
from tests import datafiles
from tests.strategies import merge_lists, texts, tricky_text


def encoder_for(merges: Sequence[tuple[int, int]], *, lazy: bool = False) -> Encoder:
    """An encoder that proves which tokens are whole when built, or (`lazy`) when asked,
    as it does for vocabularies past EAGER_PROOF_MERGES."""
    vocab = reference.vocab(merges)
    return Encoder(
        merges,
        [vocab[i] for i in range(len(vocab))],
        resolve_pattern("gpt2").compiled.findall,
        prove_up_to=-1 if lazy else EAGER_PROOF_MERGES,
    )


def naive_ordinary(text: str, merges: Sequence[tuple[int, int]]) -> list[int]:
    """The rank-pass encoder on every chunk, special texts included as ordinary text."""
    return reference.encode(reference.Model(merges), text, allowed_special=set())


#: What :func:`trained` draws from, built once rather than for every example.
_corpora = st.lists(tricky_text, min_size=1, max_size=6).map(" ".join)
_vocab_sizes = st.integers(256, 330)


@st.composite
def trained(draw: st.DrawFn) -> Tokenizer:
    return Tokenizer.train(draw(_corpora) * 2, draw(_vocab_sizes))


@given(trained(), texts)
def test_matches_rank_pass_encoder_with_trained_merges(tokenizer: Tokenizer, text: str) -> None:
    assert tokenizer.encode(text) == reference.encode(reference.Model(tokenizer.merges), text)


@given(merge_lists(), st.binary(max_size=40).map(lambda b: bytes(x % 5 + 96 for x in b)))
def test_matches_rank_pass_on_arbitrary_merge_lists(
    merges: list[tuple[int, int]], chunk: bytes
) -> None:
    """Hand-made artifacts need not be trained: repeated pairs, unreachable tokens..."""
    encoder = encoder_for(merges)
    expected = reference.encode_chunk(chunk, merges)
    assert encoder.encode_chunk(chunk) == expected
    assert encoder.merge_long(list(chunk)) == expected
    assert encoder.merge_short(list(chunk)) == expected


@pytest.mark.parametrize("lazy", [False, True])
@given(merges=merge_lists(), rng=st.randoms(use_true_random=False))
def test_whole_token_shortcut_is_exact(
    lazy: bool, merges: list[tuple[int, int]], rng: random.Random
) -> None:
    """A token is answered by lookup only if encoding its bytes really gives that token.

    Tokens are asked in a random order: the lazy proof remembers, so asking a token
    before or after its parts must not change the answer, nor proving all at once.
    """
    vocab = reference.vocab(merges)
    encode_chunk = reference.chunk_encoder(merges)
    encoder = encoder_for(merges, lazy=lazy)
    ids = list(range(256 + len(merges)))
    rng.shuffle(ids)
    expected = {token_id: encode_chunk(vocab[token_id]) for token_id in ids}  # asked twice
    for token_id in ids:
        encodes_to_itself = expected[token_id] == [token_id]
        assert encoder.is_whole(token_id) == encodes_to_itself
    first_of: dict[bytes, int] = {}  # each token's bytes -> the smallest id holding them
    for token_id in sorted(vocab):
        first_of.setdefault(vocab[token_id], token_id)
    for token_id in ids:
        found = encoder.whole_token(vocab[token_id])
        first = first_of[vocab[token_id]]
        assert found == (first if expected[token_id] == [first] else None)


@pytest.mark.parametrize("lazy", [False, True])
def test_whole_token_shortcut_refuses_an_unreachable_token(lazy: bool) -> None:
    """bc first, then ab, then ab+c: 'abc' encodes as a, bc, never as the third token."""
    merges = [(98, 99), (97, 98), (257, 99)]
    encoder = encoder_for(merges, lazy=lazy)
    assert encoder.whole_token(b"abc") is None
    assert not encoder.is_whole(258)
    assert encoder.encode_chunk(b"abc") == [97, 256] == reference.encode_chunk(b"abc", merges)


def test_a_merge_chain_as_deep_as_the_list_needs_no_recursion() -> None:
    """A hand-made list may nest every merge in the previous one: 5,000 levels deep.

    Token ``256 + k`` is ``a`` repeated ``k + 2`` times. BPE pairs up ``aa`` first, so
    only ``aa`` and ``aaa`` encode to themselves (``aaaa`` is ``aa, aa``); asking the
    deepest token first settles the whole chain under it.
    """
    merges = [(97, 97)] + [(256 + rank, 97) for rank in range(4_999)]
    encoder = encoder_for(merges, lazy=True)
    assert not encoder.is_whole(256 + 4_999)
    assert [encoder.is_whole(256 + k) for k in range(5_000)] == [True, True] + [False] * 4_998
    assert reference.encode_chunk(b"aaaa", merges[:3]) == [256, 256]  # the oracle agrees


@pytest.fixture(scope="module")
def shakespeare_tokenizers() -> dict[int, Tokenizer]:
    return {size: datafiles.shakespeare_tokenizer(size) for size in (512, 32000)}


@pytest.mark.parametrize("vocab_size", [512, 32000])
def test_tinyshakespeare_sampled_chunks_match_rank_pass(
    shakespeare_text: str, shakespeare_tokenizers: dict[int, Tokenizer], vocab_size: int
) -> None:
    """Every chunk would take minutes with one pass per rank at 32000, so sample them."""
    tokenizer = shakespeare_tokenizers[vocab_size]
    distinct = sorted(set(resolve_pattern("gpt2").compiled.findall(shakespeare_text)))
    sample = random.Random(vocab_size).sample(distinct, 150 if vocab_size > 512 else 600)
    encode_chunk = reference.chunk_encoder(tokenizer.merges)
    for chunk in sample:
        assert tokenizer.encode(chunk) == encode_chunk(chunk.encode("utf-8")), chunk


def test_tinyshakespeare_whole_text_at_512_matches_rank_pass(
    shakespeare_text: str, shakespeare_tokenizers: dict[int, Tokenizer]
) -> None:
    tokenizer = shakespeare_tokenizers[512]
    text = shakespeare_text[:200_000]
    assert tokenizer.encode(text) == reference.encode(reference.Model(tokenizer.merges), text)


def test_long_chunks_take_the_heap_path_and_stay_exact(
    shakespeare_tokenizers: dict[int, Tokenizer],
) -> None:
    tokenizer = shakespeare_tokenizers[512]
    rng = random.Random(7)
    word = "".join(rng.choice("etaoinshrdlu") for _ in range(LONG_CHUNK_BYTES * 8))
    assert tokenizer.encode(word) == reference.encode(reference.Model(tokenizer.merges), word)


#: Each text made when its test runs, not held from collection on.
PATHOLOGICAL: dict[str, Callable[[], str]] = {
    "a-run": lambda: "a" * 1_000_000,
    "random-letters": lambda: "".join(
        random.Random(1).choices("abcdefghijklmnopqrstuvwxyz", k=1_000_000)
    ),
    "spaces": lambda: " " * 1_000_000,
    "digits": lambda: "7" * 1_000_000,
    "punctuation": lambda: "!?" * 500_000,
    "newlines": lambda: "\n" * 300_000 + "x",
}


@pytest.mark.parametrize("make_text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_inputs_complete_and_roundtrip(
    shakespeare_tokenizers: dict[int, Tokenizer], make_text: Callable[[], str]
) -> None:
    tokenizer = shakespeare_tokenizers[32000]
    text = make_text()
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text


def test_long_run_matches_rank_pass_on_a_smaller_copy(
    shakespeare_tokenizers: dict[int, Tokenizer],
) -> None:
    """The million-letter run cannot go through the rank-pass encoder; 5,000 letters can."""
    tokenizer = shakespeare_tokenizers[512]
    for text in ("a" * 5_000, "ab" * 2_500, " " * 5_001):
        assert tokenizer.encode(text) == reference.encode(reference.Model(tokenizer.merges), text)


def test_cache_stays_bounded_on_huge_varied_input() -> None:
    encoder = encoder_for(Tokenizer.train("ab ab ab", 258).merges)
    cache = encoder.chunk_cache
    text = " ".join(f"w{i}" for i in range(CHUNK_CACHE_SIZE // 4))
    ids = encoder.encode_text(text)
    # No merge applies (no "ab" anywhere), so every chunk is its bytes: the reference's
    # answer without its second of work per 100,000 chunks.
    assert "ab" not in text
    assert ids == list(text.encode())
    assert 0 < cache.size <= CHUNK_CACHE_SIZE
    remembered = {key: ids for key, ids in cache.items() if key not in cache.permanent}
    assert cache.size == sum(map(len, remembered)) + sum(map(len, remembered.values()))
    permanent = {text: (token,) for text, token in cache.permanent.items()}
    assert permanent.items() <= cache.items()  # whole tokens survive emptying


@given(trained(), st.lists(tricky_text, max_size=12))
def test_multiline_text_encodes_like_the_rank_pass_encoder_cold_and_warm(
    tokenizer: Tokenizer, lines: list[str]
) -> None:
    text = "\n".join(lines)
    expected = reference.encode(reference.Model(tokenizer.merges), text)
    assert tokenizer.encode(text) == expected  # cold
    assert tokenizer.encode(text) == expected  # warm: served by the caches
    assert tokenizer.encode(text + "\n" + text) == reference.encode(
        reference.Model(tokenizer.merges), text + "\n" + text
    )


def test_cached_results_are_not_shared_with_callers() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    first = tokenizer.encode("ab")
    first.append(999)
    assert tokenizer.encode("ab") == [256]


def test_special_literal_is_extracted_exactly() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    assert tokenizer.encode("ab<|endoftext|>ab") == [256, 258, 256]
    assert tokenizer.encode("<|endoftext|><|endoftext|>") == [258, 258]
    assert 258 not in tokenizer.encode("<|endoftext")
    assert 258 not in tokenizer.encode("endoftext|>")
    assert 258 not in tokenizer.encode("<|endoftext |>")


def test_lone_surrogate_is_rejected_with_its_position() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    with pytest.raises(UnicodeEncodeError, match="position 3"):
        tokenizer.encode("ab \ud83d x")


def test_encode_rejects_non_text() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    with pytest.raises(TypeError, match="takes a str"):
        tokenizer.encode(b"ab")  # type: ignore[arg-type]


@given(trained(), st.lists(texts, min_size=1, max_size=4), st.integers(1, 64))
def test_every_encode_path_matches_the_rank_pass_encoder(
    tokenizer: Tokenizer, parts: list[str], capacity: int
) -> None:
    """Cold, warm, partly cached, and with a tiny cache that empties on almost every chunk.

    The text path answers from the whole-token table, the cache, or fresh merges, and
    each can give way to the next mid-text; all must agree with the rank-pass encoder.
    """
    encoder = encoder_for(tokenizer.merges)
    encoder.chunk_cache.capacity = capacity
    text = "".join(parts)
    pieces = (*parts, text, text, parts[0] + text)
    naive = {piece: naive_ordinary(piece, tokenizer.merges) for piece in pieces}  # text once
    for piece in pieces:
        assert encoder.encode_text(piece) == naive[piece]
    cache = encoder.chunk_cache
    assert {text: (token,) for text, token in cache.permanent.items()}.items() <= cache.items()


@pytest.mark.parametrize("lazy", [False, True])
@given(
    merges=merge_lists(),
    words=st.lists(st.sampled_from(["a", "b", "ab", " ab", "c", "abc", "\n"])),
)
def test_the_whole_token_text_table_holds_only_tokens_that_encode_to_themselves(
    lazy: bool, merges: list[tuple[int, int]], words: list[str]
) -> None:
    """The text table is filled when the encoder is built, or as chunks are met; each
    entry is a chunk whose bytes encode to exactly its token, and every such chunk met
    is in it (with its token, which need not be the first of its bytes)."""
    encoder = encoder_for(merges, lazy=lazy)
    encode_chunk = reference.chunk_encoder(merges)
    text = "".join(words)
    assert encoder.encode_text(text) == naive_ordinary(text, merges)
    for piece in reference.split(text):
        ids = encode_chunk(piece.encode())
        assert (piece in encoder.token_of_text) == (len(ids) == 1)
    for chunk_text, token in encoder.token_of_text.items():
        assert encode_chunk(chunk_text.encode("utf-8")) == [token]


@given(merge_lists(), st.binary(max_size=120).map(lambda b: bytes(x % 5 + 96 for x in b)))
def test_short_and_long_loops_match_the_rank_pass_on_chunks_of_any_length(
    merges: list[tuple[int, int]], chunk: bytes
) -> None:
    """Either loop may meet any length near the threshold between them."""
    encoder = encoder_for(merges)
    expected = reference.encode_chunk(chunk, merges)
    assert encoder.merge_short(list(chunk)) == expected
    assert encoder.merge_long(list(chunk)) == expected


@given(trained(), tricky_text)
def test_the_default_policy_shortcut_equals_the_general_policy(
    tokenizer: Tokenizer, text: str
) -> None:
    """("all", ()) skips building sets; a list instead of a tuple takes the general path."""
    assert tokenizer.encode(text) == tokenizer.encode(
        text, allowed_special=set(tokenizer.special_tokens), disallowed_special=[]
    )
    assert tokenizer.encode(text) == reference.encode(reference.Model(tokenizer.merges), text)


@given(
    st.lists(
        st.sampled_from([" ab", " ab", " ab", " abc", "c", "\n", " é", "!?", "cc"]), max_size=80
    )
)
def test_a_few_chunks_of_several_tokens_are_patched_in_exactly(words: list[str]) -> None:
    """Mostly whole tokens with a few others: the -1 marks are replaced in place, in order."""
    tokenizer = Tokenizer.train("ab ab ab ab abc abc", 260)
    text = "ab" + " ab" * 300 + "".join(words)  # enough chunks to be patched
    expected = reference.encode(reference.Model(tokenizer.merges), text)
    assert tokenizer.encode(text) == expected
    assert tokenizer.encode(text) == expected


@given(
    merge_lists(), st.binary(min_size=2, max_size=120).map(lambda b: bytes(x % 5 + 96 for x in b))
)
def test_the_long_loop_keeps_its_links_in_arrays_for_huge_chunks_and_stays_exact(
    merges: list[tuple[int, int]], chunk: bytes
) -> None:
    """Past ARRAY_POSITIONS the links are arrays (less memory); forced here on small chunks."""
    encoder = encoder_for(merges)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoder_module, "ARRAY_POSITIONS", 0)
        assert encoder.merge_long(list(chunk)) == reference.encode_chunk(chunk, merges)


@pytest.mark.parametrize("typecode", ["H", "I", "Q"])
@given(
    tokenizer=trained(),
    parts=st.lists(texts, min_size=1, max_size=4),
    capacity=st.integers(1, 64),
)
def test_the_packed_encode_is_the_array_of_encode_ordinary(
    typecode: str, tokenizer: Tokenizer, parts: list[str], capacity: int
) -> None:
    """Cold, warm, and with a tiny packed cache that empties on almost every chunk."""
    encoder = encoder_for(tokenizer.merges)
    assert encoder.encode_text_packed("", typecode) == b""  # makes the cache
    encoder.packed_caches[typecode].capacity = capacity
    text = "".join(parts)
    naive = {piece: naive_ordinary(piece, tokenizer.merges) for piece in (text, *parts)}
    for piece in (text, *parts, text, text):  # cold, then partly and wholly warm
        wanted = array(typecode, naive[piece]).tobytes()
        assert encoder.encode_text_packed(piece, typecode) == wanted
    cache = encoder.packed_caches[typecode]
    width = array(typecode).itemsize
    assert cache.size == sum(len(key) + len(data) // width for key, data in cache.items())
    assert cache.size <= capacity or len(cache) == 1  # one entry larger than the bound


def test_an_id_too_large_for_the_typecode_is_named() -> None:
    encoder = encoder_for([(97, 98)])
    with pytest.raises(OverflowError, match="token id 256 does not fit in array typecode 'B'"):
        encoder.encode_text_packed("x ab", "B")
    assert encoder.encode_text_packed("x a", "B") == b"x a"
