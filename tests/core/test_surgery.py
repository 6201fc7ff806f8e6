"""Vocabulary surgery: with_special_tokens, truncated and extended keep every other id.

The oracle for ``extended`` is ``bpetite.reference.extend`` (the reference's training
loop, started from the chunks as the model encodes them) and, for models that were
trained, ``Tokenizer.train`` itself: training to ``m`` and extending to ``n`` must give
the artifact training to ``n`` gives, byte for byte, and truncating it gives the first
artifact back. Exhaustive on small corpora, then hypothesis; then the imported GPT-2,
cl100k_base and o200k_base vocabularies, whose bytes are numbered in their own order and
whose specials sit apart from the merges.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import product
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer, count_chunks, get_encoding
from bpetite import reference as ref
from bpetite.errors import ParameterError
from tests.strategies import tricky_text

#: Every string of up to five characters over a three-letter alphabet: 364 corpora.
SMALL_CORPORA = ["".join(c) for n in range(6) for c in product("ab ", repeat=n)]

limits = st.one_of(st.none(), st.integers(2, 6))
frequencies = st.one_of(st.none(), st.integers(1, 4))


def shuffled_bytes(seed: int) -> tuple[int, ...]:
    """A byte order other than the identity, as imported vocabularies have."""
    order = list(range(256))
    random.Random(seed).shuffle(order)
    return tuple(order)


# ------------------------------------------------------------------ extended = train


@pytest.mark.parametrize("corpus", SMALL_CORPORA)
def test_extending_a_trained_model_is_training_further_exhaustive(corpus: str) -> None:
    """Every small corpus, every pair m < n up to 262: the same artifact, byte for byte."""
    trained = {size: Tokenizer.train(corpus, size) for size in range(256, 263)}
    artifacts = {size: tokenizer.dumps() for size, tokenizer in trained.items()}
    for small, large in product(trained, repeat=2):
        if small >= large:
            continue
        extended = trained[small].extended(corpus, large, renumber_specials=True)
        assert extended.dumps() == artifacts[large]
        back = extended.truncated(trained[small].mergeable_vocab_size, renumber_specials=True)
        assert back.dumps() == artifacts[small]


@given(
    corpus=tricky_text,
    sizes=st.tuples(st.integers(256, 290), st.integers(256, 290)).map(sorted),
    max_token_bytes=limits,
    min_frequency=frequencies,
)
def test_extending_a_trained_model_is_training_further(
    corpus: str, sizes: list[int], max_token_bytes: int | None, min_frequency: int | None
) -> None:
    small, large = sizes
    first = Tokenizer.train(
        corpus, small, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    whole = Tokenizer.train(
        corpus, large, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    again = first.extended(
        corpus,
        large,
        renumber_specials=True,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
    )
    # the options are the model's own unless given again; both give the same
    for extended in (first.extended(corpus, large, renumber_specials=True), again):
        assert extended.dumps() == whole.dumps()
        assert extended.merges[: len(first.merges)] == first.merges
        back = extended.truncated(first.mergeable_vocab_size, renumber_specials=True)
        assert back.dumps() == first.dumps()


@given(
    corpus=tricky_text,
    other=tricky_text,
    seed=st.integers(0, 3),
    sizes=st.tuples(st.integers(256, 275), st.integers(0, 20)),
    max_token_bytes=limits,
    min_frequency=frequencies,
)
def test_extended_equals_the_reference(
    corpus: str,
    other: str,
    seed: int,
    sizes: tuple[int, int],
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> None:
    """Any model (merges learned elsewhere, bytes in any order), extended on any corpus."""
    size, more = sizes
    merges = Tokenizer.train(other, size).merges
    order = None if seed == 0 else shuffled_bytes(seed)
    model = Tokenizer(merges, special_tokens={"<|x|>": 1000}, byte_order=order)
    target = model.mergeable_vocab_size + more
    extended = model.extended(
        corpus, target, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    expected = ref.extend(
        model, corpus, target, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert list(extended.merges) == expected
    assert extended.byte_order == model.byte_order
    assert dict(extended.special_tokens) == {"<|x|>": 1000}
    for token_id in range(model.mergeable_vocab_size):
        assert extended.vocab[token_id] == model.vocab[token_id]
    assert extended.encode(corpus) == ref.encode(extended, corpus)


def test_extended_from_counts_equals_from_text() -> None:
    corpus = "the cat sat on the mat; the cat sat on the hat " * 3
    model = Tokenizer.train(corpus[:40], 262)
    from_text = model.extended(corpus, 280, renumber_specials=True)
    from_counts = model.extended(count_chunks([corpus]), 280, renumber_specials=True)
    assert from_counts.dumps() == from_text.dumps()
    assert list(from_text.merges) == ref.extend(model, corpus, 280)


def test_extended_reads_special_texts_as_ordinary_text() -> None:
    """As training does: the corpus's '<|endoftext|>' is characters, and gets merged."""
    corpus = "<|endoftext|>" * 4
    extended = Tokenizer.train(corpus, 257).extended(corpus, 262, renumber_specials=True)
    assert extended.dumps() == Tokenizer.train(corpus, 262).dumps()
    assert len(extended.encode_ordinary(corpus)) < len(corpus)


def test_extended_continues_the_tie_break() -> None:
    """'cab' after nothing: (99, 97) and (97, 98) tie, and the smaller pair wins."""
    model = Tokenizer.train("xy", 257)  # one merge, (120, 121)
    extended = model.extended("cab", 258, renumber_specials=True)
    assert extended.merges == ((120, 121), (97, 98))


def test_extended_splits_the_corpus_as_the_model_does() -> None:
    """The new merges are learned on the model's tokens, not on the bytes."""
    model = Tokenizer.train("ab ab ab", 258)  # (97, 98) -> 256, (32, 256) -> 257
    extended = model.extended(" ab ab abc abc", 259, renumber_specials=True)
    # ' ab' is one token already, and 'c' follows it twice: (257, 99), not (98, 99)
    assert extended.merges[2] == (257, 99)
    assert extended.vocab[258] == b" abc"


def test_extended_stops_early_like_training() -> None:
    model = Tokenizer.train("ab", 256)
    extended = model.extended("ab ab", 300, renumber_specials=True)
    assert extended.merges == ((97, 98), (32, 256))
    assert extended.special_tokens == {"<|endoftext|>": 258}


def test_extended_to_the_same_size_changes_nothing() -> None:
    model = Tokenizer.train("ab ab ab", 258)
    assert model.extended("xyz xyz", 258).dumps() == model.dumps()


def test_extended_reports_progress_of_the_new_merges() -> None:
    events: list[Progress] = []
    Tokenizer.train("ab ab ab", 257).extended(
        "ab ab ab", 300, renumber_specials=True, progress=events.append
    )
    assert (events[0].stage, events[0].done, events[0].total) == ("start", 0, 43)
    assert (events[-1].stage, events[-1].done) == ("done", 1)


# ------------------------------------------------------------------ extended: specials


def test_extended_keeps_a_special_in_the_way_and_the_new_merges_skip_it() -> None:
    """<|endoftext|> keeps 257; the new merge, index 257 (the reference's id), takes 258."""
    model = Tokenizer.train("ab ab ab", 257)  # <|endoftext|> at 257
    extended = model.extended("ab ab ab", 258)
    assert ref.extend(model, "ab ab ab", 258) == [(97, 98), (32, 256)]
    assert extended.merges == ((97, 98), (32, 256))  # both parts' ids are below 257
    assert dict(extended.special_tokens) == {"<|endoftext|>": 257}
    assert extended.vocab[258] == b" ab"
    assert extended.encode(" ab<|endoftext|>") == [258, 257]
    assert extended.n_vocab == 259
    renumbered = model.extended("ab ab ab", 258, renumber_specials=True)
    assert renumbered.encode(" ab<|endoftext|>") == [257, 258]


def test_extended_merges_take_the_ids_the_specials_leave_free() -> None:
    model = Tokenizer(
        Tokenizer.train("ab ab ab", 257).merges, special_tokens={"<|a|>": 300, "<|b|>": 258}
    )
    corpus = "ab ab ab cd cd cd ef ef ef gh gh"
    extended = model.extended(corpus, 262)
    assert dict(extended.special_tokens) == {"<|b|>": 258, "<|a|>": 300}
    # the reference's merges in indices; the ids skip 258
    expected = ref.extend(model, corpus, 262)
    to_id = {256: 256, 257: 257, 258: 259, 259: 260, 260: 261, 261: 262}
    assert extended.merges == tuple(
        (to_id.get(left, left), to_id.get(right, right)) for left, right in expected
    )
    assert sorted(set(extended.vocab) - {258, 300}) == [*range(258), *range(259, 263)]
    renumbered = model.extended(corpus, 262, renumber_specials=True)
    back = {index: to_id.get(index, index) for index in range(262)} | {262: 258, 263: 300}
    for text in (corpus, "gh<|b|>ab<|a|>", "efcd ab"):
        assert extended.encode(text) == [back[i] for i in renumbered.encode(text)]
        assert extended.decode(extended.encode(text)) == text


def test_renumbered_specials_follow_the_merges_in_id_order() -> None:
    model = Tokenizer(
        Tokenizer.train("ab ab ab", 257).merges, special_tokens={"<|a|>": 300, "<|b|>": 260}
    )
    extended = model.extended("ab ab ab", 400, renumber_specials=True)
    assert extended.mergeable_vocab_size == 258
    assert dict(extended.special_tokens) == {"<|b|>": 258, "<|a|>": 259}


def test_extended_refuses_bad_arguments() -> None:
    model = Tokenizer.train("ab ab ab", 258)
    with pytest.raises(ParameterError, match="at least the mergeable vocabulary size 258"):
        model.extended("ab", 257)
    # past the ids a character holds, as far as the pairs go (the specification's FR-11)
    further = model.extended("ab cd", 0x110001, renumber_specials=True)
    assert further == model.extended("ab cd", 300, renumber_specials=True)
    with pytest.raises(TypeError, match="renumber_specials must be True or False"):
        model.extended("ab", 300, renumber_specials=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="max_token_bytes must be at least 2"):
        model.extended("ab", 300, renumber_specials=True, max_token_bytes=1)
    with pytest.raises(TypeError, match="counts keys must be bytes"):
        model.extended({"ab": 1}, 300, renumber_specials=True)  # type: ignore[dict-item]
    with pytest.raises(UnicodeEncodeError, match="lone surrogate"):
        model.extended("a\ud800", 300, renumber_specials=True)


# ------------------------------------------------------------------ extended: the record


def test_the_training_record_holds_only_options_every_merge_was_learned_under() -> None:
    corpus = "aaaa bbbb aaaa cc " * 3
    limited = Tokenizer.train(corpus, 258, max_token_bytes=3)
    # inherited: the same value for the new merges, so it stays recorded
    inherited = limited.extended(corpus, 270, renumber_specials=True)
    assert inherited.training == {"max_token_bytes": 3}
    assert all(len(inherited.vocab[i]) <= 3 for i in range(inherited.mergeable_vocab_size))
    # another value: the old merges were not learned under it, so nothing is recorded
    widened = limited.extended(corpus, 270, renumber_specials=True, max_token_bytes=8)
    assert widened.training == {}
    assert list(widened.merges) == ref.extend(limited, corpus, 270, max_token_bytes=8)
    # an option the model never had: used, not recorded
    plain = Tokenizer.train(corpus, 258)
    capped = plain.extended(corpus, 270, renumber_specials=True, min_frequency=4)
    assert capped.training == {}
    assert list(capped.merges) == ref.extend(plain, corpus, 270, min_frequency=4)


# ------------------------------------------------------------------ truncated


def test_truncated_is_a_shorter_training_run() -> None:
    corpus = "low lower lowest newer newest wider " * 4
    full = Tokenizer.train(corpus, 290, max_token_bytes=5)
    for size in range(256, full.mergeable_vocab_size + 1):
        again = Tokenizer.train(corpus, size, max_token_bytes=5)
        assert full.truncated(size, renumber_specials=True).dumps() == again.dumps()
        kept = full.truncated(size)
        assert kept.special_tokens == full.special_tokens
        assert kept.merges == again.merges
        assert kept.training == {"max_token_bytes": 5}


def test_truncated_keeps_every_remaining_id(tmp_path: Path) -> None:
    model = Tokenizer(
        Tokenizer.train("ab ab ab cd cd", 260).merges,
        special_tokens={"<|a|>": 500, "<|b|>": 400},
        byte_order=shuffled_bytes(1),
    )
    cut = model.truncated(257)
    assert cut.byte_order == model.byte_order
    assert dict(cut.special_tokens) == {"<|a|>": 500, "<|b|>": 400}
    assert dict(cut.vocab) == {
        token_id: token
        for token_id, token in model.vocab.items()
        if token_id < 257 or token_id >= 400
    }
    assert dict(model.truncated(257, renumber_specials=True).special_tokens) == {
        "<|b|>": 257,
        "<|a|>": 258,
    }
    # saved and loaded, it is the same tokenizer
    cut.save(tmp_path / "cut.json")
    assert Tokenizer.load(tmp_path / "cut.json").dumps() == cut.dumps()


def test_truncated_refuses_sizes_it_cannot_give() -> None:
    model = Tokenizer.train("ab ab ab", 258)
    with pytest.raises(ParameterError, match="to add merges use extended"):
        model.truncated(259)
    with pytest.raises(ParameterError, match="from 256 to the mergeable vocabulary size 258"):
        model.truncated(255)
    with pytest.raises(TypeError, match="vocab_size must be an integer"):
        model.truncated(257.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="renumber_specials must be True or False"):
        model.truncated(257, renumber_specials="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------ with_special_tokens


@pytest.fixture
def model() -> Tokenizer:
    return Tokenizer.train("ab ab ab", 258)  # <|endoftext|> at 258


def test_new_texts_take_the_next_free_ids(model: Tokenizer) -> None:
    added = model.with_special_tokens(["<|pad|>", "<|endoftext|>", "<|sep|>"])
    assert dict(added.special_tokens) == {"<|endoftext|>": 258, "<|pad|>": 259, "<|sep|>": 260}
    assert added.merges == model.merges
    assert added.encode("ab<|pad|>ab<|sep|>") == [256, 259, 256, 260]
    assert added.decode([259, 260]) == "<|pad|><|sep|>"
    # past the largest id in use, not into a gap
    sparse = model.with_special_tokens({"<|far|>": 1000})
    assert sparse.with_special_tokens(["<|x|>"]).special_tokens["<|x|>"] == 1001


def test_a_mapping_adds_moves_and_swaps(model: Tokenizer) -> None:
    added = model.with_special_tokens({"<|im_start|>": 300, "<|im_end|>": 301})
    assert dict(added.special_tokens) == {
        "<|endoftext|>": 258,
        "<|im_start|>": 300,
        "<|im_end|>": 301,
    }
    moved = added.with_special_tokens({"<|endoftext|>": 302})
    assert moved.special_tokens["<|endoftext|>"] == 302
    assert moved.encode("<|endoftext|>") == [302]
    swapped = added.with_special_tokens({"<|im_start|>": 301, "<|im_end|>": 300})
    assert swapped.special_tokens == {"<|im_end|>": 300, "<|im_start|>": 301, "<|endoftext|>": 258}
    assert list(swapped.special_tokens) == ["<|endoftext|>", "<|im_end|>", "<|im_start|>"]


def test_drop_removes_first(model: Tokenizer) -> None:
    dropped = model.with_special_tokens(drop=["<|endoftext|>"])
    assert dropped.special_tokens == {}
    assert dropped.encode("<|endoftext|>") == model.encode_ordinary("<|endoftext|>")
    replaced = model.with_special_tokens({"<|eot|>": 258}, drop=["<|endoftext|>"])
    assert replaced.special_tokens == {"<|eot|>": 258}
    assert replaced.dumps() == Tokenizer.train("ab ab ab", 258, special_tokens=["<|eot|>"]).dumps()
    # dropping everything and giving a list: the ids after the merges again
    fresh = model.with_special_tokens(["<|a|>"], drop=model.special_tokens)
    assert fresh.special_tokens == {"<|a|>": 258}


def test_a_model_without_special_tokens_counts_decodes_and_saves(
    model: Tokenizer, tmp_path: Path
) -> None:
    """Its ids end with its merges: n_vocab was once the max() of no special ids."""
    bare = model.with_special_tokens(drop=model.special_tokens)
    mergeable = range(model.mergeable_vocab_size)
    assert bare.n_vocab == bare.max_token_value + 1 == len(bare) == len(mergeable)
    assert bare.decode_tokens_bytes(mergeable) == model.decode_tokens_bytes(mergeable)
    with pytest.raises(KeyError, match=f"unknown token id {len(mergeable)}"):
        bare.decode([len(mergeable)])
    bare.save(tmp_path / "bare.json")
    assert Tokenizer.load(tmp_path / "bare.json") == bare


def test_collisions_are_refused_naming_both(model: Tokenizer) -> None:
    taken = r"'<\|x\|>' cannot take id 256: that is the mergeable token b'ab' \(a special's id"
    with pytest.raises(ParameterError, match=taken + r" must be one no mergeable token holds\)"):
        model.with_special_tokens({"<|x|>": 256})
    with pytest.raises(
        ParameterError,
        match=r"'<\|x\|>' cannot take id 258: special token '<\|endoftext\|>' has it",
    ):
        model.with_special_tokens({"<|x|>": 258})
    with pytest.raises(
        ParameterError, match=r"'<\|y\|>' cannot take id 300: special token '<\|x\|>'"
    ):
        model.with_special_tokens({"<|x|>": 300, "<|y|>": 300})
    with pytest.raises(ParameterError, match="ids run from 0 to 2147483647"):
        model.with_special_tokens({"<|x|>": 2**31})
    with pytest.raises(ParameterError, match="ids run from 0"):
        model.with_special_tokens({"<|x|>": -1})


def test_bad_arguments_are_refused(model: Tokenizer) -> None:
    with pytest.raises(ParameterError, match=r"cannot drop '<\|pad\|>'"):
        model.with_special_tokens(drop=["<|pad|>"])
    with pytest.raises(TypeError, match="not one string"):
        model.with_special_tokens("<|pad|>")
    with pytest.raises(TypeError, match="not one string"):
        model.with_special_tokens(drop="<|endoftext|>")
    with pytest.raises(ParameterError, match="given twice"):
        model.with_special_tokens(["<|a|>", "<|a|>"])
    with pytest.raises(ParameterError, match="non-empty str"):
        model.with_special_tokens([""])
    with pytest.raises(ParameterError, match="non-empty str"):
        model.with_special_tokens({b"<|a|>": 300})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="needs an int id"):
        model.with_special_tokens({"<|a|>": True})
    with pytest.raises(UnicodeEncodeError, match="lone surrogate"):
        model.with_special_tokens(["\udc80"])


@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(["<|a|>", "<|b|>", "<|c|>", "<|endoftext|>"]), st.integers(250, 264)
        ),
        max_size=4,
    ),
    drop=st.sets(st.sampled_from(["<|endoftext|>", "<|a|>"])),
)
def test_with_special_tokens_changes_only_what_it_names(
    edits: list[tuple[str, int]], drop: set[str]
) -> None:
    """Either the table it describes, or a refusal because an id is taken."""
    base = Tokenizer.train("ab ab ab cd", 258, special_tokens={"<|endoftext|>": 258, "<|a|>": 260})
    wanted = dict(edits)
    expected = {text: i for text, i in base.special_tokens.items() if text not in drop}
    expected.update(wanted)
    ids = list(expected.values())
    valid = drop <= set(base.special_tokens) and all(i >= 258 for i in wanted.values())
    valid = valid and len(set(ids)) == len(ids)
    if not valid:
        with pytest.raises(ParameterError):
            base.with_special_tokens(wanted, drop=drop)
        return
    edited = base.with_special_tokens(wanted, drop=drop)
    assert dict(edited.special_tokens) == expected
    assert edited.merges == base.merges
    assert {i: b for i, b in edited.vocab.items() if i < 258} == {
        i: b for i, b in base.vocab.items() if i < 258
    }
    text = "ab<|a|>cd<|endoftext|><|b|>"
    assert edited.encode(text) == ref.encode(edited, text)


def test_counts_from_another_pattern_are_the_callers_business() -> None:
    """Counts are taken as given, as train_from_counts takes them."""
    model = Tokenizer.train("ab ab", 257, pattern="cl100k")
    counts = Counter({b"ab": 2, b" ab": 1})
    assert model.extended(counts, 258, renumber_specials=True).merges == ((97, 98), (32, 256))


# ------------------------------------------------------------------ imported vocabularies


@pytest.fixture(scope="module", params=["gpt2", "cl100k_base", "o200k_base"])
def imported(request: pytest.FixtureRequest) -> Tokenizer:
    return get_encoding(request.param)


@pytest.fixture(scope="module")
def domain_text(shakespeare_text: str) -> str:
    return shakespeare_text[:20_000]


def test_imported_vocabularies_extend_like_the_reference(
    imported: Tokenizer, domain_text: str
) -> None:
    size = imported.mergeable_vocab_size
    extended = imported.extended(domain_text, size + 30, renumber_specials=True)
    assert list(extended.merges) == ref.extend(imported, domain_text, size + 30)
    assert extended.mergeable_vocab_size == size + 30
    assert extended.byte_order == imported.byte_order
    assert [extended.vocab[i] for i in range(size)] == [imported.vocab[i] for i in range(size)]
    # the specials follow the new merges, in the order of their old ids
    ordered = sorted(imported.special_tokens, key=imported.special_tokens.__getitem__)
    assert list(extended.special_tokens) == ordered
    assert list(extended.special_tokens.values()) == list(
        range(size + 30, size + 30 + len(ordered))
    )
    # fewer tokens on the text it learned from, the same text back
    assert len(extended.encode(domain_text)) < len(imported.encode(domain_text))
    assert extended.decode(extended.encode(domain_text)) == domain_text
    assert extended.truncated(size).merges == imported.merges


def test_imported_specials_keep_their_ids_and_the_new_merges_skip_them(
    imported: Tokenizer, domain_text: str
) -> None:
    """Every old id stays; the new tokens are the renumbered extension's, ids skipping the
    specials'; every text gives the same tokens under both."""
    size = imported.mergeable_vocab_size
    specials = imported.special_tokens
    text = domain_text
    end = max(specials.values()) - size + 30  # past every special id
    kept = imported.extended(text, size + end)
    renumbered = imported.extended(text, size + end, renumber_specials=True)
    assert kept.special_tokens == specials
    assert kept.mergeable_vocab_size == renumbered.mergeable_vocab_size == size + end
    assert all(kept.vocab[i] == token for i, token in imported.vocab.items())
    new_ids = sorted(set(kept.vocab) - set(imported.vocab))
    assert new_ids[0] == size + (size in specials.values())
    assert not set(new_ids) & set(specials.values())
    assert [kept.vocab[i] for i in new_ids] == [
        renumbered.vocab[i] for i in range(size, size + end)
    ]

    def to_kept(token_id: int) -> int:
        """`kept`'s id for the token that is `token_id` in `renumbered`."""
        return kept.encode_single_token(renumbered.vocab[token_id])

    for sample in (text, "MENENIUS zxqv<|endoftext|>AGRIPPA"):
        assert kept.encode(sample) == [to_kept(i) for i in renumbered.encode(sample)]
    assert kept.truncated(size).dumps() == imported.dumps()


def test_an_extended_openai_vocabulary_encodes_as_tiktoken_does(shakespeare_text: str) -> None:
    """tiktoken, given the extended vocabulary's ranks, splits text as bpetite does."""
    cl100k = get_encoding("cl100k_base")
    extended = cl100k.extended(shakespeare_text[:50_000], 100_456, renumber_specials=True)
    extended = extended.with_special_tokens({"<|im_start|>": 100_600})
    encoding = tiktoken.Encoding(
        "cl100k_extended",
        pat_str=extended.pattern,
        mergeable_ranks={extended.vocab[i]: i for i in range(extended.mergeable_vocab_size)},
        special_tokens=dict(extended.special_tokens),
    )
    for text in (shakespeare_text[50_000:120_000], "<|im_start|>user\nROMEO: <|endoftext|>"):
        assert extended.encode(text) == encoding.encode(text, allowed_special="all")


@pytest.mark.parametrize("max_token_bytes", [None, 6])
def test_extended_on_chunks_longer_than_the_trainers_short_words(
    max_token_bytes: int | None,
) -> None:
    """Chunks of hundreds of tokens, once the model has encoded them: the trainer's other lane."""
    model = Tokenizer.train("ab ab", 258)  # (97, 98) -> 256, (32, 256) -> 257
    corpus = "ab" * 700 + " " + "abc" * 300 + "     " * 120 + "\n" + "abd" * 200
    extended = model.extended(corpus, 280, renumber_specials=True, max_token_bytes=max_token_bytes)
    expected = ref.extend(model, corpus, 280, max_token_bytes=max_token_bytes)
    assert list(extended.merges) == expected
    assert len(expected) > len(model.merges) + 5
