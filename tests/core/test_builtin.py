"""get_encoding: tiktoken's encodings by name, from the package's files, id for id.

The oracle is tiktoken itself, built offline: tiktoken's own constructors in
``tiktoken_ext.openai_public`` (its patterns, special tokens and ``explicit_n_vocab``,
not bpetite's table), reading the files from this repository instead of the network,
with tiktoken's own hash checks. ``gpt2`` is read by tiktoken from GPT-2's
``encoder.json`` and ``vocab.bpe``, a source independent of the rank file bpetite uses.
"""

from __future__ import annotations

import gzip
import os
import pickle
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

import bpetite
from bpetite import ArtifactError, ParameterError, Tokenizer, get_encoding, list_encoding_names
from bpetite.core import _builtin
from tests import datafiles
from tests.strategies import MULTILINGUAL, texts, tricky_text

NAMES = ("gpt2", "r50k_base", "cl100k_base", "o200k_base")
EXAMPLES = int(os.environ.get("BPETITE_OPENAI_EXAMPLES", "200"))
#: The file tiktoken downloads, by its URL's last part -> the committed copy's test name.
LOCAL_NAMES = {
    "r50k_base.tiktoken": "gpt2.tiktoken",
    "cl100k_base.tiktoken": "cl100k_base.tiktoken",
    "o200k_base.tiktoken": "o200k_base.tiktoken",
    "encoder.json": "encoder.json",
    "vocab.bpe": "vocab.bpe",
}


@pytest.fixture(scope="module")
def local_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return datafiles.unpack(set(LOCAL_NAMES.values()), tmp_path_factory.mktemp("openai"))


def tiktoken_encoding(name: str, folder: Path) -> Any:
    """tiktoken's encoding `name`, its files read from `folder` (and hash-checked by tiktoken)."""

    def local(url: str) -> str:
        return str(folder / LOCAL_NAMES[url.rsplit("/", 1)[-1]])

    def ranks(url: str, expected_hash: str) -> dict[bytes, int]:
        return load_tiktoken_bpe(local(url), expected_hash=expected_hash)

    def gpt2_ranks(**files: str) -> dict[bytes, int]:
        return data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=local(files["vocab_bpe_file"]),
            encoder_json_file=local(files["encoder_json_file"]),
            vocab_bpe_hash=files["vocab_bpe_hash"],
            encoder_json_hash=files["encoder_json_hash"],
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache files written anywhere
        patch.setattr(openai_public, "load_tiktoken_bpe", ranks)
        patch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", gpt2_ranks)
        constructor = getattr(openai_public, name)()
    return tiktoken.Encoding(**constructor), constructor["pat_str"]


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest, local_files: Path) -> Iterator[tuple[Tokenizer, Any]]:
    encoding, _ = tiktoken_encoding(request.param, local_files)
    yield get_encoding(request.param), encoding


def test_the_names_are_tiktokens() -> None:
    assert list_encoding_names() == list(NAMES)
    assert set(NAMES) <= set(tiktoken.list_encoding_names())  # lists plugins, downloads nothing


def test_every_id_is_tiktokens_token(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    assert tokenizer.name == encoding.name
    assert tokenizer.n_vocab == encoding.n_vocab
    assert tokenizer.mergeable_vocab_size == len(encoding.token_byte_values())
    for token_id in range(encoding.n_vocab):
        try:
            expected = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            assert token_id not in tokenizer.vocab
            continue
        assert tokenizer.vocab[token_id] == expected


def test_every_special_token_has_tiktokens_id(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    assert set(tokenizer.special_tokens) == encoding.special_tokens_set
    for special, token_id in tokenizer.special_tokens.items():
        assert encoding.encode_single_token(special) == token_id
        text = f"a{special}b {special}"
        assert tokenizer.encode(text) == encoding.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", NAMES)
def test_the_pattern_splits_as_tiktokens(name: str, local_files: Path) -> None:
    """cl100k's and o200k's patterns are tiktoken's to the character; GPT-2's splits alike."""
    _, pat_str = tiktoken_encoding(name, local_files)
    tokenizer = get_encoding(name)
    if name in ("cl100k_base", "o200k_base"):
        assert tokenizer.pattern == pat_str
    theirs = regex.compile(pat_str)
    for text in (datafiles.shakespeare_text()[:100_000], MULTILINGUAL, " a  \n\n b   ", "x \t"):
        assert tokenizer.split_pattern.split(text) == theirs.findall(text)


def test_texts_encode_and_decode_as_tiktoken(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    for text in (datafiles.shakespeare_text()[:200_000], MULTILINGUAL, MULTILINGUAL.upper()):
        ids = tokenizer.encode(text)
        assert ids == encoding.encode(text, allowed_special="all")
        assert tokenizer.decode(ids) == encoding.decode(ids) == text


def _assigned_in_this_pythons_unicode(text: str) -> bool:
    """Characters new in Unicode 17 are letters to `regex` but not to tiktoken's Unicode 16
    engine (a documented limit, docs/interop.md); Python's own tables are older than both."""
    return all(unicodedata.category(char) != "Cn" for char in text)


_mixed = st.one_of(
    texts, tricky_text, st.sampled_from(MULTILINGUAL.splitlines(keepends=True))
).filter(_assigned_in_this_pythons_unicode)
_ORACLES: dict[str, Any] = {}


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(NAMES), st.lists(_mixed, max_size=4).map("".join))
def test_hypothesis_text_encodes_as_tiktoken(name: str, text: str) -> None:
    if name not in _ORACLES:  # a hypothesis test cannot take a module fixture
        with tempfile.TemporaryDirectory() as folder:  # tiktoken keeps the ranks in memory
            files = datafiles.unpack(set(LOCAL_NAMES.values()), Path(folder))
            _ORACLES[name] = tiktoken_encoding(name, files)[0]
    assert get_encoding(name).encode_ordinary(text) == _ORACLES[name].encode_ordinary(text)


def test_each_vocabulary_is_built_once_and_shared() -> None:
    assert get_encoding("cl100k_base") is get_encoding("cl100k_base")
    gpt2, r50k = get_encoding("gpt2"), get_encoding("r50k_base")
    assert gpt2 is not r50k and (gpt2.name, r50k.name) == ("gpt2", "r50k_base")
    assert gpt2.merges is r50k.merges  # one file, derived once


def test_a_pickled_builtin_keeps_its_name_and_ids() -> None:
    tokenizer = get_encoding("gpt2")
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.name == "gpt2"
    assert copy.encode("hello world<|endoftext|>") == [31373, 995, 50256]


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("gpt3", ParameterError, "unknown encoding 'gpt3': bpetite has gpt2, r50k_base, "),
        ("p50k_base", ParameterError, "o200k_base"),
        ("", ParameterError, "unknown encoding ''"),
        (b"gpt2", TypeError, "encoding_name must be a str, got bytes"),
    ],
)
def test_an_unknown_name_is_refused(name: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        get_encoding(name)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data[:-1000], "is damaged (Compressed file ended"),
        (lambda data: b"not gzip" + data, "is damaged (Not a gzipped file"),
        (
            lambda data: _regzip(lambda plain: plain.replace(b"IQ== 0", b"Ig== 0", 1))(data),
            "its sha256 is ",
        ),
    ],
)
def test_a_damaged_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes], message: str
) -> None:
    genuine = _builtin.read_packaged("r50k_base.tiktoken.gz")
    monkeypatch.setattr(_builtin, "read_packaged", lambda file: damage(genuine))
    vocabulary = _builtin.BUILTIN_VOCABULARIES["gpt2"]
    with pytest.raises(ArtifactError) as raised:
        _builtin._model.__wrapped__(vocabulary.file, vocabulary.sha256)
    assert message in str(raised.value)
    assert "bpetite/_data/r50k_base.tiktoken.gz" in str(raised.value)
    assert "reinstall bpetite" in str(raised.value)


def _regzip(change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda data: gzip.compress(change(gzip.decompress(data)))


def test_loading_needs_no_network() -> None:
    """A fresh process with every socket refused builds a vocabulary and encodes."""
    code = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('network use')\n"
        "socket.socket = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "import bpetite\n"
        "print(bpetite.get_encoding('r50k_base').encode('hello world'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[31373, 995]\n"


def test_the_face_offers_get_encoding() -> None:
    assert bpetite.get_encoding is get_encoding
    assert "get_encoding" in bpetite.__all__ and "list_encoding_names" in bpetite.__all__
