"""Every fast path equals :mod:`bpetite.reference`: exhaustively on small cases, then hypothesis.

Training (from text and from counts, with and without its options), encoding (with
specials, ordinary, one chunk, on trained and on imported vocabularies with their byte
orders and sparse special ids), decoding, the vocabulary, the encode trace, and the
split of each preset.
"""

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import product
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpetite.reference as reference_module  # its table builders, wrapped below
from bpetite import PRESETS, SplitPattern, Tokenizer, count_chunks
from bpetite import reference as ref
from bpetite.errors import UnknownTokenError
from bpetite.interop import import_vocabulary
from tests.strategies import MULTILINGUAL, ROUNDTRIP_CASES, texts, tricky_text

#: Every string of up to six characters over a three-letter alphabet: 1,093 corpora.
SMALL_CORPORA = ["".join(c) for n in range(7) for c in product("ab ", repeat=n)]
VOCAB_SIZES = (256, 257, 258, 260, 300)

limits = st.one_of(st.none(), st.integers(2, 6))
frequencies = st.one_of(st.none(), st.integers(1, 6))
weighted_chunks = st.dictionaries(
    st.binary(min_size=1, max_size=12).map(lambda b: bytes(x % 4 + 97 for x in b)),
    st.integers(1, 5),
    max_size=12,
)


def final_ids(steps: list[ref.EncodeStep]) -> list[int]:
    """The ids a trace ends with: the tokens of each chunk's last step, chunk after chunk."""
    chunks: list[tuple[int, ...]] = []
    for step in steps:
        if step.rank is None:
            chunks.append(step.tokens)  # a new chunk (or a special token) starts
        else:
            chunks[-1] = step.tokens
    return [token for tokens in chunks for token in tokens]


def assert_encodes_like_the_reference(tokenizer: Tokenizer, text: str) -> None:
    ids = ref.encode(tokenizer, text)
    assert tokenizer.encode(text) == ids
    assert final_ids(ref.trace_encode(tokenizer, text)) == ids
    assert tokenizer.encode_ordinary(text) == ref.encode(tokenizer, text, allowed_special=set())
    for chunk in ref.split(text, tokenizer.pattern)[:3]:
        data = chunk.encode("utf-8")
        expected = ref.encode_chunk(data, tokenizer.merges, tokenizer.byte_order)
        assert tokenizer.encode_chunk(data) == expected
    assert tokenizer.decode(ids) == ref.decode(tokenizer, ids) == text


# ------------------------------------------------------------------ training


def test_training_on_every_small_corpus() -> None:
    """Ties, overlapping runs and early stops are everywhere in strings this small.

    The reference is run once per corpus, to the largest size: its loop stops after
    ``vocab_size - 256`` merges, so a smaller size's merges are the first of those.
    """
    for corpus in SMALL_CORPORA:
        longest = ref.train(corpus, max(VOCAB_SIZES))
        for vocab_size in VOCAB_SIZES:
            expected = longest[: vocab_size - 256]
            assert list(Tokenizer.train(corpus, vocab_size).merges) == expected, corpus


@given(texts, st.integers(256, 320), limits, frequencies)
def test_training_on_text(
    corpus: str, vocab_size: int, max_token_bytes: int | None, min_frequency: int | None
) -> None:
    fast = Tokenizer.train(
        corpus, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    expected = ref.train(
        corpus, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert list(fast.merges) == expected


@given(st.lists(tricky_text, min_size=1, max_size=8))
def test_training_on_repeated_runs(parts: list[str]) -> None:
    corpus = " ".join(part * 3 for part in parts) + " aaaaaaa abababab aaa"
    assert list(Tokenizer.train(corpus, 320).merges) == ref.train(corpus, 320)


@given(weighted_chunks, st.integers(256, 300), limits, frequencies)
def test_training_from_counts(
    chunks: dict[bytes, int],
    vocab_size: int,
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> None:
    """A four-letter alphabet and small weights make equal counts the rule."""
    fast = Tokenizer.train_from_counts(
        chunks, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    expected = ref.train_counts(
        chunks, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert list(fast.merges) == expected


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_training_with_another_preset(pattern: str) -> None:
    tokenizer = Tokenizer.train(MULTILINGUAL * 2, 330, pattern=pattern)
    assert list(tokenizer.merges) == ref.train(MULTILINGUAL * 2, 330, pattern=tokenizer.pattern)


# ------------------------------------------------------------------ encoding and decoding


@st.composite
def trained(draw: st.DrawFn) -> Tokenizer:
    corpus = draw(st.lists(tricky_text, min_size=1, max_size=6).map(" ".join))
    specials = draw(st.sampled_from([("<|endoftext|>",), (), ("<|endoftext|>", "<|", "a<|")]))
    return Tokenizer.train(corpus * 2, draw(st.integers(256, 330)), special_tokens=specials)


@given(trained(), texts)
def test_encoding_and_decoding_with_trained_merges(tokenizer: Tokenizer, text: str) -> None:
    """The specials '<|' and 'a<|' overlap '<|endoftext|>': leftmost, then longest, wins."""
    assert_encodes_like_the_reference(tokenizer, text)


@given(trained(), texts, st.data())
def test_encoding_with_some_specials_allowed(
    tokenizer: Tokenizer, text: str, data: st.DataObject
) -> None:
    allowed = data.draw(st.sets(st.sampled_from(sorted(tokenizer.special_tokens) or [""])))
    allowed.discard("")
    assert tokenizer.encode(text, allowed_special=allowed, disallowed_special=()) == ref.encode(
        tokenizer, text, allowed_special=allowed
    )


@given(trained(), st.lists(st.integers(0, 340), max_size=12))
def test_decoding_any_ids(tokenizer: Tokenizer, ids: list[int]) -> None:
    """Unknown ids raise KeyError in both; invalid UTF-8 raises UnicodeDecodeError in both."""
    try:
        expected = ref.decode_bytes(tokenizer, ids)
    except KeyError:
        with pytest.raises(UnknownTokenError):
            tokenizer.decode_bytes(ids)
        return
    assert tokenizer.decode_bytes(ids) == expected
    try:
        text = expected.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            tokenizer.decode(ids)
        with pytest.raises(UnicodeDecodeError):
            ref.decode(tokenizer, ids)
        return
    assert tokenizer.decode(ids) == ref.decode(tokenizer, ids) == text


@given(trained())
def test_the_vocabulary(tokenizer: Tokenizer) -> None:
    expected = ref.vocab(tokenizer.merges, special_tokens=tokenizer.special_tokens)
    assert dict(tokenizer.vocab) == expected


def test_the_spec_configuration_is_the_reference_model() -> None:
    """A Tokenizer built from merges alone and Model(merges) are the same model."""
    merges = ref.train(MULTILINGUAL, 320)
    tokenizer, model = Tokenizer(merges), ref.Model(merges)
    assert dict(tokenizer.special_tokens) == {"<|endoftext|>": 256 + len(merges)}
    assert dict(tokenizer.vocab) == ref.vocab(merges)
    for text in [MULTILINGUAL, *ROUNDTRIP_CASES.values()]:
        assert tokenizer.encode(text) == ref.encode(model, text)


# ------------------------------------------------------------------ imported vocabularies

#: The imported vocabularies: GPT-2's byte order and a special id far past its merges,
#: cl100k_base's and o200k_base's patterns and sparse special ids.
IMPORTS = {
    "gpt2": ("encoder.json", "vocab.bpe"),
    "cl100k_base": ("cl100k_base.tiktoken",),
    "o200k_base": ("o200k_base.tiktoken",),
}


class TablesOnce:
    """The reference's tables for the imported vocabularies, each built once.

    ``ref.encode``, ``trace_encode``, ``encode_chunk`` and ``decode`` rebuild a
    vocabulary's tables (its merges in indices, their ranks, every id's bytes) at every
    call, which for up to 200,000 merges costs more than the encode itself, several
    times per text here. The tables are pure functions of what they are given, and a
    tokenizer, its merges, byte order and special tokens never change, so for the
    tokenizers registered here each is built once and handed out again (the bytes
    table read-only): the same reference, run less often. Anything else is passed
    straight through.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._known: dict[int, tuple[object, object]] = {}  # id -> (argument, result)
        #: id(merges) -> ((merges, byte_order, special_tokens), their bytes table once built)
        self._vocabs: dict[int, tuple[tuple[object, ...], Mapping[int, bytes] | None]] = {}
        indexed, ranks = reference_module._indexed, reference_module._ranks
        self._vocab = reference_module.vocab
        monkeypatch.setattr(reference_module, "_indexed", lambda model: self._once(indexed, model))
        monkeypatch.setattr(reference_module, "_ranks", lambda merges: self._once(ranks, merges))
        monkeypatch.setattr(reference_module, "vocab", self._vocab_once)

    def register(self, tokenizer: Tokenizer) -> None:
        """Build `tokenizer`'s tables now, and keep them (and it) for its later calls."""
        self._known[id(tokenizer)] = (tokenizer, None)
        self._known[id(tokenizer.merges)] = (tokenizer.merges, None)
        merges, _ = reference_module._indexed(tokenizer)
        self._known[id(merges)] = (merges, None)
        arguments = (tokenizer.merges, tokenizer.byte_order, tokenizer.special_tokens)
        self._vocabs[id(tokenizer.merges)] = (arguments, None)

    def _vocab_once(
        self,
        merges: Sequence[ref.Pair],
        *,
        byte_order: Sequence[int] | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Mapping[int, bytes]:
        arguments = (merges, byte_order, special_tokens)
        entry = self._vocabs.get(id(merges))
        if entry is None or any(
            given is not known for given, known in zip(arguments, entry[0], strict=True)
        ):
            # not a registered tokenizer's own merges, byte order and specials: as written
            return self._vocab(merges, byte_order=byte_order, special_tokens=special_tokens)
        table = entry[1]
        if table is None:
            built = self._vocab(merges, byte_order=byte_order, special_tokens=special_tokens)
            self._vocabs[id(merges)] = (arguments, table := MappingProxyType(built))
        return table

    def _once(self, build: Callable[[Any], Any], argument: object) -> Any:
        entry = self._known.get(id(argument))
        if entry is None or entry[0] is not argument:
            return build(argument)  # not registered: the reference as written
        if entry[1] is None:
            self._known[id(argument)] = entry = (argument, build(argument))
        return entry[1]


@pytest.fixture(scope="module")
def tables_once() -> Iterator[TablesOnce]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield TablesOnce(monkeypatch)


@pytest.fixture(scope="module", params=list(IMPORTS))
def imported(
    request: pytest.FixtureRequest, gpt2_dir: Path, openai_dir: Path, tables_once: TablesOnce
) -> Tokenizer:
    names = IMPORTS[request.param]
    folder = gpt2_dir if request.param == "gpt2" else openai_dir
    tokenizer = import_vocabulary([folder / name for name in names]).tokenizer
    tables_once.register(tokenizer)
    return tokenizer


def test_imported_vocabularies_on_fixed_texts(imported: Tokenizer) -> None:
    assert dict(imported.vocab) == ref.vocab(
        imported.merges, byte_order=imported.byte_order, special_tokens=imported.special_tokens
    )
    for text in [MULTILINGUAL, *ROUNDTRIP_CASES.values(), "<|endoftext|><|fim_prefix|>x"]:
        assert_encodes_like_the_reference(imported, text)


@settings(max_examples=max(5, settings().max_examples // 10))
@given(texts)
def test_imported_vocabularies(imported: Tokenizer, text: str) -> None:
    """A modest sample: the reference rebuilds the rank table of up to 200,000 merges per call."""
    assert_encodes_like_the_reference(imported, text)


# ------------------------------------------------------------------ splitting


@pytest.mark.parametrize("preset", sorted(PRESETS))
@given(text=st.one_of(texts, st.just(MULTILINGUAL)))
def test_splitting_with_each_preset(preset: str, text: str) -> None:
    """The split's ASCII twins and its cuts between lines must not change a chunk."""
    pattern = SplitPattern.resolve(preset)
    assert pattern.split(text) == ref.split(text, PRESETS[preset])
    expected = Counter(chunk.encode() for chunk in ref.split(text, PRESETS[preset]))
    assert count_chunks([text], pattern=pattern) == expected
