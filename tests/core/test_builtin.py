"""get_encoding: tiktoken's encodings by name, from the package's files, id for id.

The oracle is tiktoken itself, built offline: tiktoken's own constructors in
``tiktoken_ext.openai_public`` (its patterns, special tokens and ``explicit_n_vocab``,
not bpetite's table), reading the files from this repository instead of the network,
with tiktoken's own hash checks. ``gpt2`` is read by tiktoken from GPT-2's
``encoder.json`` and ``vocab.bpe``, a source independent of the rank file bpetite's
model was recovered from. The package ships merges, not rank files: each built-in is
checked against its rank file as tiktoken reads it (every token's bytes and id), and
the rank file written back from it must be the committed one, byte for byte.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

import bpetite
from bpetite import ArtifactError, Tokenizer, get_encoding, list_encoding_names
from bpetite.core import _builtin
from bpetite.errors import ParameterError
from tests import datafiles
from tests.strategies import MULTILINGUAL, texts, tricky_text

NAMES = (
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
)
#: The committed rank file (by its test name) each built-in's model was recovered from.
RANK_FILES = {
    "gpt2": "gpt2.tiktoken",
    "r50k_base": "gpt2.tiktoken",
    "p50k_base": "p50k_base.tiktoken",
    "p50k_edit": "p50k_base.tiktoken",
    "cl100k_base": "cl100k_base.tiktoken",
    "o200k_base": "o200k_base.tiktoken",
    "o200k_harmony": "o200k_base.tiktoken",
}
EXAMPLES = int(os.environ.get("BPETITE_OPENAI_EXAMPLES", "200"))


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, Any]:
    return get_encoding(request.param), datafiles.tiktoken_encoding(request.param)


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
def test_the_pattern_splits_as_tiktokens(name: str) -> None:
    """cl100k's and o200k's patterns are tiktoken's to the character; GPT-2's splits alike."""
    pat_str = datafiles.tiktoken_constructor(name)["pat_str"]
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


_mixed = st.one_of(
    texts, tricky_text, st.sampled_from(MULTILINGUAL.splitlines(keepends=True))
)  # texts: characters every engine classifies alike


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(NAMES), st.lists(_mixed, max_size=4).map("".join))
def test_hypothesis_text_encodes_as_tiktoken(name: str, text: str) -> None:
    oracle = datafiles.tiktoken_encoding(name)
    assert get_encoding(name).encode_ordinary(text) == oracle.encode_ordinary(text)


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
        ("p50k", ParameterError, "o200k_harmony"),
        ("", ParameterError, "unknown encoding ''"),
        (b"gpt2", TypeError, "encoding_name must be a str, got bytes"),
    ],
)
def test_an_unknown_name_is_refused(name: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        get_encoding(name)
    assert message in str(raised.value)


@functools.cache
def tiktokens_reading(rank_file: str, sha256: str) -> Mapping[bytes, int]:
    """The committed rank file `rank_file` as tiktoken's own loader reads it, checking
    `sha256`; read once for the names that share it (gpt2 and r50k_base, ...)."""
    with tempfile.TemporaryDirectory() as folder:
        path = datafiles.unpack([rank_file], Path(folder)) / rank_file
        return MappingProxyType(load_tiktoken_bpe(str(path), expected_hash=sha256))


@pytest.mark.parametrize("name", NAMES)
def test_the_model_holds_its_rank_files_tokens_and_ids(name: str) -> None:
    """Every mergeable token's bytes and id as tiktoken's own loader reads the rank file,
    nothing more, and tiktoken's special tokens."""
    sha256 = _builtin.BUILTIN_VOCABULARIES[name].rank_file_sha256
    ranks = tiktokens_reading(RANK_FILES[name], sha256)
    tokenizer = get_encoding(name)
    assert tokenizer.mergeable_vocab_size == len(ranks)
    special_ids = set(tokenizer.special_tokens.values())
    mergeable = {token: i for i, token in tokenizer.vocab.items() if i not in special_ids}
    assert mergeable == ranks
    constructor = datafiles.tiktoken_constructor(name)
    assert dict(tokenizer.special_tokens) == constructor["special_tokens"]
    if "explicit_n_vocab" in constructor:  # gpt2's and r50k_base's
        assert tokenizer.n_vocab == constructor["explicit_n_vocab"]


@pytest.mark.parametrize("name", NAMES)
def test_the_rank_file_written_back_is_the_committed_one(name: str) -> None:
    """The strongest check of the shipped model: its tokens, written as a rank file, are
    byte for byte the file OpenAI publishes (and so have tiktoken's sha256 for it)."""
    written, _ = _builtin.rank_file(name)
    assert written == datafiles.read_bytes(RANK_FILES[name])
    vocabulary = _builtin.BUILTIN_VOCABULARIES[name]
    assert hashlib.sha256(written).hexdigest() == vocabulary.rank_file_sha256


def test_a_model_file_reads_back_as_written() -> None:
    """The format's round trip, with ids at every plane's edges."""
    byte_order = bytes(reversed(range(256)))
    merges = [(0, 255), (256, 1), (257, 257), *((i, i + 1) for i in range(258, 70_000))]
    merges.append((0xFFFF, 0x10000))
    data = _builtin.write_model_file(byte_order, merges)
    assert data.startswith(_builtin.MODEL_FILE_HEADER)
    order, lefts, rights = _builtin.parse_model_file(data)
    assert order == byte_order
    assert list(zip(lefts, rights, strict=True)) == merges
    with pytest.raises(ValueError, match="not a bpetite model file"):
        _builtin.parse_model_file(data[:-1])
    with pytest.raises(ValueError, match="does not fit in 3 bytes"):
        _builtin.write_model_file(byte_order, [(0, 1 << 24)])


def test_the_script_writes_the_shipped_files() -> None:
    """scripts/write_builtin_vocabularies.py --check: each shipped model is what the
    script recovers from its rank file now, and the table holds its sha256."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "write_builtin_vocabularies.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DIFFERS" not in result.stdout


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data[:-1000], "is damaged (Error -5"),
        (lambda data: b"not gzip" + data, "is damaged (Error -3"),
        (lambda data: _regzip(lambda plain: plain[:-1] + bytes([plain[-1] ^ 1]))(data), "sha256"),
    ],
)
def test_a_damaged_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes], message: str
) -> None:
    genuine = _builtin.read_packaged("r50k_base.merges.gz")
    monkeypatch.setattr(_builtin, "read_packaged", lambda file: damage(genuine))
    vocabulary = _builtin.BUILTIN_VOCABULARIES["gpt2"]
    with pytest.raises(ArtifactError) as raised:
        _builtin._model.__wrapped__(vocabulary.file, vocabulary.file_sha256)
    assert message in str(raised.value)
    assert "bpetite/_data/r50k_base.merges.gz" in str(raised.value)
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
