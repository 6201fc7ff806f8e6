"""GPT-2's, cl100k_base's and o200k_base's files imported, checked id for id against tiktoken.

The oracle is tiktoken's own encoding, built offline: tiktoken's constructor functions
in ``tiktoken_ext.openai_public`` (its pattern and special tokens, not bpetite's) with
their rank files read from the committed copies instead of downloaded.
"""

import os
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

from bpetite import Tokenizer, get_encoding
from bpetite.errors import DisallowedSpecialError, UnknownTokenError
from bpetite.interop import import_vocabulary
from tests import datafiles
from tests.strategies import MULTILINGUAL, texts, tricky_text

#: tiktoken's encoding name -> the committed rank file it reads.
RANK_FILES = {
    "r50k_base": "gpt2.tiktoken",
    "cl100k_base": "cl100k_base.tiktoken",
    "o200k_base": "o200k_base.tiktoken",
}
EXAMPLES = int(os.environ.get("BPETITE_OPENAI_EXAMPLES", "1000"))


@pytest.fixture(scope="module")
def rank_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return datafiles.unpack(RANK_FILES.values(), tmp_path_factory.mktemp("ranks"))


@pytest.fixture(scope="module", params=list(RANK_FILES))
def pair(request: pytest.FixtureRequest, rank_dir: Path) -> Iterator[tuple[Tokenizer, Any]]:
    name = request.param
    path = rank_dir / RANK_FILES[name]
    result = import_vocabulary([path])
    assert result.name == name
    yield _through_the_artifact(result.tokenizer, rank_dir), _tiktoken_encoding(name, path)


def _through_the_artifact(imported: Tokenizer, folder: Path) -> Tokenizer:
    """What a user runs: the imported model saved (schema v2's compact lane) and loaded."""
    artifact = folder / "model.json"
    imported.save(artifact, overwrite=True)
    loaded = Tokenizer.load(artifact)
    assert loaded.merges == imported.merges
    assert loaded.byte_order == imported.byte_order
    assert dict(loaded.special_tokens) == dict(imported.special_tokens)
    assert loaded.pattern == imported.pattern
    return loaded


def _tiktoken_encoding(name: str, path: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            openai_public, "load_tiktoken_bpe", lambda *_, **__: load_tiktoken_bpe(str(path))
        )
        constructor = getattr(openai_public, name)()
    return tiktoken.Encoding(**constructor)


def test_the_builtin_of_the_name_is_the_imported_file(pair: tuple[Tokenizer, Any]) -> None:
    """get_encoding ships the merges this import recovers from the rank file, not the file:
    the two must be one model."""
    imported, encoding = pair
    builtin = get_encoding(encoding.name)
    assert builtin.merges == imported.merges
    assert builtin.byte_order == imported.byte_order
    assert dict(builtin.special_tokens) == dict(imported.special_tokens)
    assert builtin.pattern == imported.pattern


def test_every_token_has_tiktokens_bytes(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    for token_id in range(encoding.n_vocab):
        try:
            expected = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            with pytest.raises(UnknownTokenError):
                tokenizer.decode_bytes([token_id])
            continue
        assert tokenizer.decode_bytes([token_id]) == expected
    assert tokenizer.n_vocab == encoding.n_vocab
    assert encoding.special_tokens_set == set(tokenizer.special_tokens)
    for special, token_id in tokenizer.special_tokens.items():
        assert encoding.encode_single_token(special) == token_id


def test_tinyshakespeare_and_multilingual_text_encode_as_tiktoken(
    pair: tuple[Tokenizer, Any],
) -> None:
    tokenizer, encoding = pair
    for text in (datafiles.shakespeare_text(), MULTILINGUAL, MULTILINGUAL.upper() * 3):
        assert tokenizer.encode(text) == encoding.encode(text, allowed_special="all")
        assert tokenizer.encode_ordinary(text) == encoding.encode_ordinary(text)
        assert tokenizer.decode(tokenizer.encode(text)) == text


def test_special_tokens_behave_as_tiktokens(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    for special in tokenizer.special_tokens:
        text = f"before{special}after {special}"
        assert tokenizer.encode(text) == encoding.encode(text, allowed_special="all")
        with pytest.raises(ValueError):
            encoding.encode(text)
        with pytest.raises(DisallowedSpecialError):
            tokenizer.encode(text, allowed_special=set(), disallowed_special="all")


def _assigned_in_this_pythons_unicode(text: str) -> bool:
    """Characters new in Unicode 17 are letters to `regex` but not to tiktoken's Unicode 16
    engine (a documented limit, docs/interop.md); Python's own tables are older than both."""
    return all(unicodedata.category(char) != "Cn" for char in text)


_mixed = st.one_of(
    texts, tricky_text, st.sampled_from(MULTILINGUAL.splitlines(keepends=True))
).filter(_assigned_in_this_pythons_unicode)


@settings(max_examples=EXAMPLES)
@given(st.lists(_mixed, max_size=4).map("".join))
def test_hypothesis_text_encodes_as_tiktoken(text: str) -> None:
    for tokenizer, encoding in _all_pairs():
        assert tokenizer.encode_ordinary(text) == encoding.encode_ordinary(text)


_PAIRS: list[tuple[Tokenizer, Any]] = []


def _all_pairs() -> list[tuple[Tokenizer, Any]]:
    """The three pairs, built once (a hypothesis test cannot take a module fixture)."""
    if not _PAIRS:
        with tempfile.TemporaryDirectory() as folder:
            rank_dir = datafiles.unpack(RANK_FILES.values(), Path(folder))
            for name, file_name in RANK_FILES.items():
                path = rank_dir / file_name
                tokenizer = import_vocabulary([path]).tokenizer
                loaded = _through_the_artifact(tokenizer, Path(folder))
                _PAIRS.append((loaded, _tiktoken_encoding(name, path)))
    return _PAIRS


def test_an_unused_id_is_unknown(rank_dir: Path) -> None:
    tokenizer = import_vocabulary([rank_dir / "cl100k_base.tiktoken"]).tokenizer
    with pytest.raises(UnknownTokenError, match="100256"):
        tokenizer.decode([100256])
    assert tokenizer.decode([100257]) == "<|endoftext|>"


def test_a_file_that_is_not_official_keeps_the_defaults(rank_dir: Path, tmp_path: Path) -> None:
    """One changed byte and the hash no longer matches: no pattern is assumed but GPT-2's."""
    data = (rank_dir / "cl100k_base.tiktoken").read_bytes() + b"\n"
    copy = tmp_path / "copy.tiktoken"
    copy.write_bytes(data)
    with pytest.raises(ValueError, match="pattern"):
        import_vocabulary([copy])


def test_another_tiktoken_file_takes_its_pattern_and_specials(
    rank_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.tiktoken"
    copy.write_bytes((rank_dir / "cl100k_base.tiktoken").read_bytes() + b"\n")
    specials = {"<|endoftext|>": 100257, "<|im_start|>": 100264}
    result = import_vocabulary([copy], pattern="cl100k", special_tokens=specials)
    assert result.name is None
    assert result.tokenizer.pattern_name == "cl100k"
    assert dict(result.tokenizer.special_tokens) == specials
    official = import_vocabulary([rank_dir / "cl100k_base.tiktoken"]).tokenizer
    assert result.tokenizer.encode_ordinary(MULTILINGUAL) == official.encode_ordinary(MULTILINGUAL)


def test_patterns_are_refused_for_formats_that_record_their_own(gpt2_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"only be given for a \.tiktoken file"):
        import_vocabulary([gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"], pattern="cl100k")


def test_a_character_new_in_unicode_17_is_the_documented_difference() -> None:
    """U+3D000 is a letter to `regex` (Unicode 17) and unassigned to tiktoken (Unicode 16)."""
    tokenizer, encoding = _all_pairs()[1]
    text = "\U0003d000/A"
    assert unicodedata.category(text[0]) == "Cn"  # unassigned in Python's older tables
    assert tokenizer.encode_ordinary(text) != encoding.encode_ordinary(text)
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == text


def test_a_gzipped_rank_file_is_read_as_itself(tmp_path: Path) -> None:
    """The committed .gz is recognised by the hash of what it holds."""
    result = import_vocabulary([datafiles.gz_path("cl100k_base.tiktoken")])
    assert result.name == "cl100k_base"
    truncated = tmp_path / "cut.tiktoken.gz"
    truncated.write_bytes(datafiles.gz_path("cl100k_base.tiktoken").read_bytes()[:5000])
    with pytest.raises(ValueError, match="truncated gzip"):
        import_vocabulary([truncated])
