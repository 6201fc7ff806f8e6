"""The public model surface: read-only state, the extra encode/decode entry points, errors.

Expected values come from the naive reference (:mod:`bpetite.reference`) or from tiktoken,
never from the code under test.
"""

import os
import pickle
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bpetite
from bpetite import ArtifactError, BpetiteError, Tokenizer, count_chunks, errors, reference
from bpetite.errors import (
    MissingKeyError,
    NotATokenError,
    OutputExistsError,
    ParameterError,
    UnknownTokenError,
)
from tests.strategies import texts, tricky_text

#: The specification's one special token, written out here rather than imported.
SPEC_SPECIAL = "<|endoftext|>"

CORPUS = "the cat sat on the mat; the cat ate the rat. " * 8 + "naïve café 😀 " * 3


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(CORPUS, 300)


def test_state_matches_the_naive_trainer(tokenizer: Tokenizer) -> None:
    merges = reference.train(CORPUS, 300)
    assert tokenizer.merges == tuple(merges)
    assert dict(tokenizer.vocab) == reference.vocab(merges)
    assert dict(tokenizer.special_tokens) == {SPEC_SPECIAL: 256 + len(merges)}
    assert tokenizer.mergeable_vocab_size == 256 + len(merges)
    assert tokenizer.n_vocab == 257 + len(merges)
    assert tokenizer.pattern == bpetite.PRESETS["gpt2"]
    assert tokenizer.pattern_name == "gpt2"


def test_state_cannot_be_changed_from_outside(tokenizer: Tokenizer) -> None:
    with pytest.raises(TypeError):
        tokenizer.vocab[0] = b"x"  # type: ignore[index]
    with pytest.raises(TypeError):
        tokenizer.special_tokens["<|x|>"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        tokenizer.merges[0] = (1, 2)  # type: ignore[index]
    for name in ("merges", "vocab", "special_tokens", "pattern", "n_vocab"):
        with pytest.raises(AttributeError):
            setattr(tokenizer, name, None)
    assert tokenizer.vocab[0] == b"\x00"


def _naive_ordinary(text: str, merges: tuple[tuple[int, int], ...]) -> list[int]:
    return reference.encode(reference.Model(merges), text, allowed_special=set())


@given(texts)
def test_encode_ordinary_reads_special_texts_as_text(text: str) -> None:
    tokenizer = Tokenizer.train(CORPUS, 280)
    with_special = text + SPEC_SPECIAL + text
    assert tokenizer.encode_ordinary(with_special) == _naive_ordinary(
        with_special, tokenizer.merges
    )


def test_encode_ordinary_differs_from_encode_only_at_specials(tokenizer: Tokenizer) -> None:
    special_id = tokenizer.special_tokens[SPEC_SPECIAL]
    assert special_id in tokenizer.encode("a<|endoftext|>b")
    assert special_id not in tokenizer.encode_ordinary("a<|endoftext|>b")
    with pytest.raises(TypeError, match="bytes"):
        tokenizer.encode_ordinary(b"abc")  # type: ignore[arg-type]


def test_decode_bytes_returns_what_decode_refuses(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("😀")
    assert tokenizer.decode_bytes(ids[:1]) == "😀".encode()[: len(tokenizer.vocab[ids[0]])]
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode(ids[:1])
    assert tokenizer.decode_bytes(ids) == "😀".encode()


def test_token_bytes_for_every_id(tokenizer: Tokenizer) -> None:
    expected = reference.vocab(list(tokenizer.merges))
    assert all(tokenizer.token_bytes(i) == expected[i] for i in expected)
    with pytest.raises(UnknownTokenError, match="unknown token id 9999") as caught:
        tokenizer.token_bytes(9999)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(TypeError):
        tokenizer.token_bytes(True)


def test_encode_single_token_inverts_token_bytes(tokenizer: Tokenizer) -> None:
    for token_id, token in tokenizer.vocab.items():
        if token_id < tokenizer.mergeable_vocab_size:
            assert tokenizer.encode_single_token(token) == token_id
    assert tokenizer.encode_single_token(SPEC_SPECIAL) == tokenizer.special_tokens[SPEC_SPECIAL]
    assert tokenizer.encode_single_token("t") == ord("t")


def test_encode_single_token_refuses_what_is_not_one_token(tokenizer: Tokenizer) -> None:
    with pytest.raises(NotATokenError, match="not a single token") as caught:
        tokenizer.encode_single_token("the cat sat")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(TypeError):
        tokenizer.encode_single_token(7)  # type: ignore[arg-type]


def test_encode_chunk_is_bpe_on_bytes(tokenizer: Tokenizer) -> None:
    for chunk in (b" the", b"\xf0\x9f", b"cat" * 40):
        assert tokenizer.encode_chunk(chunk) == reference.encode_chunk(chunk, tokenizer.merges)


@given(st.lists(tricky_text, min_size=1, max_size=5))
def test_train_from_counts_equals_train(documents: list[str]) -> None:
    corpus = "".join(documents)
    expected = Tokenizer.train(corpus, 290)
    counted = Tokenizer.train_from_counts(count_chunks([corpus]), 290)
    assert counted.merges == expected.merges
    assert count_chunks([corpus]) == Counter(chunk.encode() for chunk in reference.split(corpus))


def test_counts_of_batches_add_up() -> None:
    first, second = "ab ab cd", "cd ab"
    assert count_chunks([first, second]) == count_chunks([first]) + count_chunks([second])


def test_train_from_counts_checks_its_counts() -> None:
    with pytest.raises(TypeError, match="bytes"):
        Tokenizer.train_from_counts({"ab": 1}, 300)  # type: ignore[dict-item]
    with pytest.raises(ParameterError, match="non-negative"):
        Tokenizer.train_from_counts({b"ab": -1}, 300)
    with pytest.raises(TypeError):
        count_chunks("one string")


def test_decode_refuses_a_mapping_or_a_string(tokenizer: Tokenizer) -> None:
    for bad in ({1: 2}, "abc", b"abc", 5):
        with pytest.raises(TypeError, match=type(bad).__name__):
            tokenizer.decode(bad)  # type: ignore[arg-type]


def test_save_and_load_take_path_like_objects(tokenizer: Tokenizer, tmp_path: Path) -> None:
    target = tmp_path / "model.json"
    tokenizer.save(target)
    assert Tokenizer.load(target).merges == tokenizer.merges
    assert Tokenizer.load(os.fspath(target)).merges == tokenizer.merges


def test_overwrite_is_a_bool_named_or_not(tokenizer: Tokenizer, tmp_path: Path) -> None:
    """The specification's signature: ``save(self, path, overwrite=False)``."""
    target = tmp_path / "model.json"
    tokenizer.save(target)
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        tokenizer.save(target, overwrite="no")  # type: ignore[arg-type]
    target.write_bytes(b"old")
    tokenizer.save(target, True)
    assert target.read_bytes() == tokenizer.dumps()
    with pytest.raises(OutputExistsError) as caught:
        tokenizer.save(target)
    assert isinstance(caught.value, FileExistsError)


def test_errors_are_one_family_that_keeps_the_builtins() -> None:
    assert issubclass(ArtifactError, ValueError) and issubclass(ArtifactError, BpetiteError)
    assert issubclass(MissingKeyError, KeyError) and issubclass(MissingKeyError, ArtifactError)
    assert issubclass(UnknownTokenError, KeyError)
    assert issubclass(ParameterError, ValueError)
    # A bare KeyError prints its message in quotes; the family prints it as written.
    assert str(UnknownTokenError("unknown token id 7")) == "unknown token id 7"
    for name in errors.__all__:
        value = getattr(errors, name)
        assert issubclass(value, BpetiteError), name
        assert value.__module__ == "bpetite.errors", name  # tracebacks name the public home
    for name in bpetite.__all__:
        value = getattr(bpetite, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert value is getattr(errors, name), name


def test_vocab_size_below_the_bytes_is_a_parameter_error() -> None:
    with pytest.raises(ValueError, match="at least 256") as caught:
        Tokenizer.train("abc", 100)
    assert isinstance(caught.value, ParameterError)


@given(st.permutations(range(256)), texts)
def test_a_byte_order_renames_the_byte_ids_and_nothing_else(order: list[int], text: str) -> None:
    plain = Tokenizer.train(CORPUS, 290)
    id_of_byte = {byte: token_id for token_id, byte in enumerate(order)}

    def rename(token_id: int) -> int:
        return id_of_byte[token_id] if token_id < 256 else token_id

    permuted = Tokenizer(
        [(rename(left), rename(right)) for left, right in plain.merges], byte_order=order
    )
    expected = [rename(i) for i in _naive_ordinary(text, plain.merges)]
    assert permuted.encode_ordinary(text) == expected
    assert permuted.decode(expected) == text
    assert permuted.byte_order == tuple(order)
    assert all(permuted.token_bytes(i) == bytes([order[i]]) for i in range(256))


@pytest.mark.parametrize(
    "order",
    [
        list(range(255)),
        [0] * 256,
        "x" * 256,
        [False, *range(1, 256)],  # equal to the identity, but not ints
        [0.0, *range(1, 256)],
    ],
)
def test_a_byte_order_must_be_a_permutation(order: object) -> None:
    with pytest.raises((ParameterError, TypeError)):
        Tokenizer([], byte_order=order)  # type: ignore[arg-type]


def test_training_options_reach_the_merge_loop() -> None:
    """Checked against the naive trainer given the same options (bpetite.reference)."""
    chunks = dict(Counter(chunk.encode() for chunk in reference.split(CORPUS)))
    short = reference.train_counts(chunks, 300, max_token_bytes=3)
    assert Tokenizer.train(CORPUS, 300, max_token_bytes=3).merges == tuple(short)
    assert Tokenizer.train_from_counts(chunks, 300, max_token_bytes=3).merges == tuple(short)
    frequent = reference.train_counts(chunks, 300, min_frequency=30)
    assert Tokenizer.train(CORPUS, 300, min_frequency=30).merges == tuple(frequent)
    assert len(frequent) < len(reference.train_counts(chunks, 300))
    assert max(len(reference.vocab(short)[i]) for i in range(256, 256 + len(short))) == 3


def test_training_options_are_recorded_and_saved(tmp_path: Path) -> None:
    trained = Tokenizer.train(CORPUS, 300, max_token_bytes=4, min_frequency=2)
    assert dict(trained.training) == {"max_token_bytes": 4, "min_frequency": 2}
    trained.save(tmp_path / "t.json")
    text = (tmp_path / "t.json").read_text(encoding="utf-8")
    assert '"schema_version":2' in text and '"training":{"max_token_bytes":4' in text
    loaded = Tokenizer.load(tmp_path / "t.json")
    assert loaded.training == trained.training and loaded.merges == trained.merges
    assert not Tokenizer.train(CORPUS, 300).training
    with pytest.raises(ParameterError, match="unknown training option"):
        Tokenizer([], training={"dropout": 1})


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", r"\w+|\s+|[^\w\s]+"])
def test_a_pickled_tokenizer_is_the_same_model(pattern: str) -> None:
    """Worker processes receive tokenizers by pickle (spawn, forkserver)."""
    tokenizer = Tokenizer.train(
        "ab ab abc x\n" * 8, 262, pattern=pattern, special_tokens={"<|a|>": 300, "<|b|>": 262}
    )
    ordered = Tokenizer(
        tokenizer.merges, byte_order=[*range(255, -1, -1)], training={"min_frequency": 2}
    )
    for original in (tokenizer, ordered):
        copy = pickle.loads(pickle.dumps(original))
        assert copy is not original
        assert copy.merges == original.merges
        assert copy.vocab == original.vocab
        assert copy.special_tokens == original.special_tokens
        assert (copy.pattern, copy.pattern_name) == (original.pattern, original.pattern_name)
        assert copy.byte_order == original.byte_order
        assert copy.training == original.training
        text = "ab abc<|a|> x\n<|b|>"
        assert copy.encode(text) == original.encode(text)


def test_dumps_is_the_file_save_writes(tmp_path: Path) -> None:
    trained = Tokenizer.train(CORPUS, 300)
    ordered = Tokenizer(
        trained.merges, byte_order=[*range(255, -1, -1)], special_tokens={"<|x|>": 400}
    )
    for index, tokenizer in enumerate((trained, ordered)):
        path = tmp_path / f"{index}.json"
        tokenizer.save(path)
        assert tokenizer.dumps() == path.read_bytes()
        assert Tokenizer.load(path).dumps() == path.read_bytes()
    assert trained.dumps() != ordered.dumps()


def test_encode_ordinary_array_is_encode_ordinary_packed(tokenizer: Tokenizer) -> None:
    text = CORPUS + "<|endoftext|> naïve 😀"
    for typecode in ("H", "I", "L", "Q"):
        ids = tokenizer.encode_ordinary_array(text, typecode)
        assert ids.typecode == typecode
        assert ids.tolist() == tokenizer.encode_ordinary(text)
    assert tokenizer.encode_ordinary_array(text).typecode == "I"
    with pytest.raises(OverflowError, match="does not fit in array typecode 'B'"):
        tokenizer.encode_ordinary_array("the cat", "B")
    with pytest.raises(ParameterError, match="typecode must be one of"):
        tokenizer.encode_ordinary_array("the cat", "h")
    with pytest.raises(TypeError, match="takes a str"):
        tokenizer.encode_ordinary_array(b"the cat")  # type: ignore[arg-type]
    with pytest.raises(UnicodeEncodeError, match="position 4"):
        tokenizer.encode_ordinary_array("the \ud83d cat")
