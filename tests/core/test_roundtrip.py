"""Tokenizer-level behaviour: the roundtrip matrix, decode errors, save/load fidelity."""

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpetite
from bpetite import Tokenizer, reference
from bpetite.core import _decoder
from tests.strategies import ROUNDTRIP_CASES, texts

CORPUS = " ".join(ROUNDTRIP_CASES.values()) * 3 + " the cat sat on the mat " * 10


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> list[Tokenizer]:
    """Several tokenizers, each also through a save/load cycle."""
    trained = [Tokenizer.train(CORPUS, size) for size in (256, 300, 1000)]
    loaded = []
    for index, tokenizer in enumerate(trained):
        path = tmp_path_factory.mktemp("artifacts") / f"tok{index}.json"
        tokenizer.save(str(path))
        loaded.append(Tokenizer.load(str(path)))
    return trained + loaded


@pytest.mark.parametrize("text", ROUNDTRIP_CASES.values(), ids=ROUNDTRIP_CASES.keys())
def test_roundtrip_matrix(tokenizers: list[Tokenizer], text: str) -> None:
    for tokenizer in tokenizers:
        ids = tokenizer.encode(text)
        assert ids == reference.encode(reference.Model(tokenizer.merges), text)
        assert tokenizer.decode(ids) == text


def test_special_ids_in_order(tokenizers: list[Tokenizer]) -> None:
    for tokenizer in tokenizers:
        special = tokenizer.special_tokens["<|endoftext|>"]
        assert tokenizer.encode("<|endoftext|><|endoftext|>") == [special, special]
        assert tokenizer.decode([special]) == "<|endoftext|>"
        assert special not in tokenizer.encode("<|endoftext")


@given(texts)
@settings(max_examples=200)
def test_decode_inverts_encode_before_and_after_save_load(
    tokenizers: list[Tokenizer], text: str
) -> None:
    for tokenizer in tokenizers:
        assert tokenizer.decode(tokenizer.encode(text)) == text


def test_saved_and_loaded_tokenizer_behaves_identically(tmp_path: Path) -> None:
    original = Tokenizer.train(CORPUS, 600)
    path = tmp_path / "tok.json"
    original.save(str(path))
    loaded = Tokenizer.load(str(path))
    assert loaded.merges == original.merges
    assert loaded.vocab == original.vocab
    for text in ROUNDTRIP_CASES.values():
        assert loaded.encode(text) == original.encode(text)
    resaved = tmp_path / "again.json"
    loaded.save(str(resaved))
    assert resaved.read_bytes() == path.read_bytes()


def test_save_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    Tokenizer.train("ab ab", 257).save(str(path))
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        Tokenizer.train("cd cd", 257).save(str(path))
    assert path.read_bytes() == before
    Tokenizer.train("cd cd", 257).save(str(path), overwrite=True)
    assert path.read_bytes() != before


@pytest.mark.parametrize("name", ["trained", "trained-v2", "o200k_harmony"])
def test_loads_reads_back_what_dumps_and_save_write(name: str, tmp_path: Path) -> None:
    """In memory as from the file: the same tokenizer, ids and text alike."""
    if name == "trained":
        tokenizer = Tokenizer.train(CORPUS, 300)  # schema v1
    elif name == "trained-v2":
        tokenizer = Tokenizer.train(CORPUS, 300, pattern="o200k", special_tokens=["<|a|>"])
    else:
        tokenizer = bpetite.get_encoding(name)  # interleaved ids, aliases, compact
    tokenizer.save(tmp_path / "t.json")
    from_file = Tokenizer.load(tmp_path / "t.json")
    data = (tmp_path / "t.json").read_bytes()
    for in_memory in (Tokenizer.loads(data), Tokenizer.loads(data.decode())):
        assert in_memory == from_file == tokenizer
        assert in_memory.dumps() == data
        text = "héllo <|a|> wörld <|endoftext|> 123"
        assert in_memory.encode(text) == from_file.encode(text)
    with pytest.raises(TypeError, match="takes the bytes dumps"):
        Tokenizer.loads(tmp_path / "t.json")  # type: ignore[arg-type]


def test_save_with_missing_parent(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Tokenizer.train("ab", 257).save(str(tmp_path / "missing" / "tok.json"))


def test_encode_and_decode_of_empty_input() -> None:
    tokenizer = Tokenizer.train("ab ab", 300)
    assert tokenizer.encode("") == []
    assert tokenizer.decode([]) == ""


@pytest.mark.parametrize(
    ("ids", "fragment"),
    [
        ([-1], "unknown token id -1 at position 0"),
        ([97, 10**9], "unknown token id 1000000000 at position 1"),
        ([258], "unknown token id 258"),
        ([True], "must be an int, got True"),
        ([97.0], "must be an int, got 97.0"),
        (["97"], "must be an int, got '97'"),
    ],
)
def test_decode_rejects_ids_that_are_not_tokens(ids: list[object], fragment: str) -> None:
    tokenizer = Tokenizer.train("ab ab", 257)  # ids 0..257 (256 = ab, 257 = special)
    with pytest.raises(KeyError, match=fragment):
        tokenizer.decode(ids)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [True, 97.0, "97", None])
def test_a_token_id_that_is_no_integer_is_a_type_error_and_a_key_error(bad: Any) -> None:
    """TypeError as tiktoken and Python raise it, KeyError as the spec's decoder does."""
    tokenizer = Tokenizer.train("ab ab", 257)
    calls: list[Callable[[], object]] = [
        lambda: tokenizer.decode([97, bad]),
        lambda: tokenizer.decode_bytes([97, bad]),
        lambda: tokenizer.decode_tokens_bytes([97, bad]),
        lambda: tokenizer.decode_with_offsets([97, bad]),
        lambda: tokenizer.decode_batch([[97], [97, bad]]),
        lambda: tokenizer.token_bytes(bad),
        lambda: tokenizer.stream_decoder().step(bad),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=f"must be an int, got {bad!r}") as caught:
            call()
        assert isinstance(caught.value, KeyError)
        assert isinstance(caught.value, bpetite.BpetiteError)


def test_an_id_in_a_gap_is_not_called_valid() -> None:
    """cl100k_base has no token 100256: a message must not say 0..100276 are valid."""
    tokenizer = Tokenizer([], special_tokens={"<|x|>": 300})  # ids 0..255 and 300
    gap = "unknown token id 280{}: no token has it (this vocabulary's ids run from 0 to 300"
    beyond = "unknown token id 301{}: valid ids are 0..300"
    for token, message in ((280, gap), (301, beyond)):
        with pytest.raises(KeyError, match=re.escape(message.format(" at position 1"))):
            tokenizer.decode([97, token])
        with pytest.raises(KeyError, match=re.escape(message.format(""))):
            tokenizer.token_bytes(token)
        with pytest.raises(KeyError, match=re.escape(message.format(""))):
            tokenizer.stream_decoder().step(token)


def test_numpy_ids_decode_as_the_same_ints() -> None:
    """What ``encode_to_numpy`` returns, and numpy's other integers, decode as tiktoken's do."""
    import numpy  # a test dependency; imported here so the module does not pay for it

    tokenizer = Tokenizer.train("ab ab héllo", 300)
    text = "ab héllo ab"
    ids = tokenizer.encode(text)
    arrays: list[Any] = [tokenizer.encode_to_numpy(text), numpy.array(ids, dtype=numpy.int64)]
    for array in arrays:
        assert tokenizer.decode(array) == text
        assert tokenizer.decode_bytes(array) == text.encode()
        assert tokenizer.decode_tokens_bytes(array) == tokenizer.decode_tokens_bytes(ids)
        assert tokenizer.decode_with_offsets(array) == tokenizer.decode_with_offsets(ids)
        assert tokenizer.decode_batch([array]) == [text]
        scalars = list(array)  # numpy's own integer objects, one by one
        assert tokenizer.decode(scalars) == text
        assert [tokenizer.token_bytes(i) for i in scalars] == tokenizer.decode_tokens_bytes(ids)
        stream = tokenizer.stream_decoder()
        assert "".join(map(stream.step, scalars)) + stream.flush() == text
    with pytest.raises(KeyError, match="unknown token id 300 at position 1"):
        tokenizer.decode(numpy.array([97, 300]))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decode\\(\\) takes a sequence of ints, got int64"):
        tokenizer.decode(numpy.int64(97))  # type: ignore[arg-type]


def test_decode_invalid_utf8_raises() -> None:
    tokenizer = Tokenizer.train("ab ab", 257)
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode([0x80])
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode([0xF0, 0x9F])  # the first half of an emoji


def test_decode_joins_a_character_split_across_ids() -> None:
    tokenizer = Tokenizer.train("😀", 256)
    ids = tokenizer.encode("😀")
    assert ids == [0xF0, 0x9F, 0x98, 0x80]
    assert tokenizer.decode(ids) == "😀"


SPEC_DECODER_TOKENIZER = Tokenizer.train(CORPUS, 290)


@given(st.lists(st.integers(0, 300), max_size=30))
def test_decode_matches_the_spec_decoder(ids: list[int]) -> None:
    """Also with the ids joined a few at a time, as a long list is (``JOIN_WINDOW``)."""
    tokenizer = SPEC_DECODER_TOKENIZER
    try:
        expected: str | type[Exception] = reference.decode(tokenizer, ids)
    except (KeyError, UnicodeDecodeError) as error:
        expected = type(error)
    for window in (1, 3, _decoder.JOIN_WINDOW):
        with patch.object(_decoder, "JOIN_WINDOW", window):
            if isinstance(expected, str):
                assert tokenizer.decode(ids) == expected
            else:
                with pytest.raises(expected):
                    tokenizer.decode(ids)


def test_an_unknown_id_in_a_later_window_is_named() -> None:
    tokenizer = Tokenizer.train("ab ab", 257)
    with patch.object(_decoder, "JOIN_WINDOW", 2):
        assert tokenizer.decode([97, 98, 256, 97, 256]) == "a" + "b" + "ab" + "a" + "ab"
        with pytest.raises(KeyError, match="unknown token id 300 at position 4"):
            tokenizer.decode([97, 98, 256, 97, 300])


def test_decode_accepts_any_sequence() -> None:
    tokenizer = Tokenizer.train("ab ab", 257)
    assert tokenizer.decode((97, 256)) == "aab"
    assert tokenizer.decode(range(97, 99)) == "ab"


def test_public_api_is_the_spec_methods_plus_the_documented_surface() -> None:
    public = {name for name in vars(Tokenizer) if not name.startswith("_")}
    spec = {"train", "encode", "decode", "save", "load"}
    surface = {
        "train_from_counts",
        "encode_ordinary",
        "encode_chunk",
        "encode_single_token",
        "decode_bytes",
        "token_bytes",
        "merges",
        "vocab",
        "special_tokens",
        "mergeable_vocab_size",
        "n_vocab",
        "pattern",
        "pattern_name",
        "split_pattern",
        "byte_order",
        "training",
        # Many documents at once: tiktoken's and Hugging Face's names.
        "encode_batch",
        "encode_ordinary_batch",
        "train_from_iterator",
        "MAX_VOCAB_SIZE",
        # The bytes save writes, for a hash or another store, and back.
        "dumps",
        "loads",
        # encode_ordinary into a machine array, for datasets and numpy.
        "encode_ordinary_array",
        # tiktoken's Encoding surface, offsets, counting and streaming decode.
        "decode_batch",
        "decode_bytes_batch",
        "is_special_token",
        "decode_tokens_bytes",
        "decode_single_token_bytes",
        "decode_with_offsets",
        "encode_with_offsets",
        "encode_to_numpy",
        "encode_bytes",
        "encode_with_unstable",
        "count_tokens",
        "token_byte_values",
        "eot_token",
        "special_tokens_set",
        "max_token_value",
        "stream_decoder",
        # The label get_encoding gives (tiktoken's Encoding.name).
        "name",
        # Every step of an encode, printed or as a page (docs/visualize.md).
        "explain",
        # Vocabulary surgery, every existing id kept (docs/api.md).
        "extended",
        "truncated",
        "with_special_tokens",
        # Token budgets and chat (docs/api.md): the RAG and chat users' names.
        "truncate",
        "chunk",
        "chunk_with_offsets",
        "is_within_limit",
        "apply_chat_template",
    }
    assert public == spec | surface
    assert "Tokenizer" in bpetite.__all__


@pytest.mark.parametrize(
    "merges",
    [[(97, 256)], [(97,)], [(-1, 97)], [(97, True)], [(97, 98), (258, 97)], [(97.0, 98)]],
)
def test_constructor_rejects_merges_that_reference_missing_ids(merges: list[object]) -> None:
    with pytest.raises(ValueError, match=r"merges\[\d\] must be two token ids below"):
        Tokenizer(merges)  # type: ignore[arg-type]
