"""GPT-2's, cl100k_base's and o200k_base's files imported, checked id for id against tiktoken.

The oracle is tiktoken's own encoding, built offline: tiktoken's constructor functions
in ``tiktoken_ext.openai_public`` (its pattern and special tokens, not bpetite's) with
their rank files read from the committed copies instead of downloaded. Importing an
official file takes the merges the package ships; recovering them from the file's ranks
is the oracle for that, for p50k_base's file too.
"""

import os
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer, get_encoding
from bpetite.errors import DisallowedSpecialError, InteropError, UnknownTokenError
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
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, Any]:
    return _pair(request.param)


_PAIRS: dict[str, tuple[Tokenizer, Any]] = {}


def _pair(name: str) -> tuple[Tokenizer, Any]:
    """The rank file imported (tests/datafiles.py) then saved and loaded, and tiktoken's
    encoding of it: built once, for the fixture and for the hypothesis tests, which cannot
    take a module fixture."""
    if name not in _PAIRS:
        result = datafiles.imported_rank_file(RANK_FILES[name])
        assert result.name == name
        with tempfile.TemporaryDirectory() as folder:
            loaded = _through_the_artifact(result.tokenizer, Path(folder))
        _PAIRS[name] = (loaded, datafiles.tiktoken_encoding(name))
    return _PAIRS[name]


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


def test_the_builtin_of_the_name_is_the_imported_file(pair: tuple[Tokenizer, Any]) -> None:
    """get_encoding ships the merges an import recovers from the rank file, not the file:
    the two must be one model (recovered here explicitly, as importing an official file
    now takes the shipped merges instead)."""
    _, encoding = pair
    recovered = datafiles.recovered_rank_file(RANK_FILES[encoding.name]).tokenizer
    builtin = get_encoding(encoding.name)
    assert builtin.merges == recovered.merges
    assert builtin.byte_order == recovered.byte_order
    assert dict(builtin.special_tokens) == dict(recovered.special_tokens)
    assert builtin.pattern == recovered.pattern


#: Every official rank file (by its test name) and the vocabulary it is recognised as:
#: the first encoding of the file, so r50k_base (not gpt2) and p50k_base (not p50k_edit).
OFFICIAL_FILES = {
    "gpt2.tiktoken": "r50k_base",
    "p50k_base.tiktoken": "p50k_base",
    "cl100k_base.tiktoken": "cl100k_base",
    "o200k_base.tiktoken": "o200k_base",
}


@pytest.mark.parametrize("file", list(OFFICIAL_FILES))
def test_an_official_file_imports_as_recovering_its_merges_does(file: str) -> None:
    """Importing an official file takes the merges the package ships instead of recovering
    them from the ranks; the result must be exactly the recovered one, p50k_base's
    ``<|endoftext|>`` among the merged ids included. The tokenizer's name is the
    recognised vocabulary's (the recovered tokenizer has none; names are provenance)."""
    imported = datafiles.imported_rank_file(file)
    recovered = datafiles.recovered_rank_file(file)
    assert imported.name == recovered.name == OFFICIAL_FILES[file]
    assert imported.format == recovered.format == "tiktoken"
    assert imported.source_ids == recovered.source_ids
    assert imported.id_layout == recovered.id_layout
    assert imported == recovered
    assert imported.tokenizer.dumps() == recovered.tokenizer.dumps()
    assert imported.tokenizer.pattern == recovered.tokenizer.pattern
    assert dict(imported.tokenizer.special_tokens) == dict(recovered.tokenizer.special_tokens)
    assert dict(imported.tokenizer.vocab) == dict(recovered.tokenizer.vocab)
    assert imported.tokenizer.name == imported.name


def test_an_official_file_given_a_pattern_takes_the_shipped_merges_too(rank_dir: Path) -> None:
    """Given a pattern or special tokens, an official file still takes the shipped merges
    (they depend on the ranks alone): the recovered model, with no name; and given only
    special tokens, GPT-2's pattern is assumed and refused as for any other file."""
    recovered = datafiles.recovered_rank_file("gpt2.tiktoken")
    specials = dict(recovered.tokenizer.special_tokens)
    result = import_vocabulary(
        [rank_dir / "gpt2.tiktoken"], pattern="gpt2", special_tokens=specials
    )
    assert result.name is None
    assert result.tokenizer.name is None
    assert result.source_ids == recovered.source_ids
    assert result.tokenizer == recovered.tokenizer
    assert result.tokenizer.pattern == recovered.tokenizer.pattern
    with pytest.raises(InteropError, match=r'token ";\\n" spans two chunks'):
        import_vocabulary([rank_dir / "cl100k_base.tiktoken"], special_tokens=specials)


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
        ids = tokenizer.encode(text)
        assert ids == encoding.encode(text, allowed_special="all")
        assert tokenizer.encode_ordinary(text) == encoding.encode_ordinary(text)
        assert tokenizer.decode(ids) == text


def test_special_tokens_behave_as_tiktokens(pair: tuple[Tokenizer, Any]) -> None:
    tokenizer, encoding = pair
    for special in tokenizer.special_tokens:
        text = f"before{special}after {special}"
        assert tokenizer.encode(text) == encoding.encode(text, allowed_special="all")
        with pytest.raises(ValueError):
            encoding.encode(text)
        with pytest.raises(DisallowedSpecialError):
            tokenizer.encode(text, allowed_special=set(), disallowed_special="all")


_mixed = st.one_of(
    texts, tricky_text, st.sampled_from(MULTILINGUAL.splitlines(keepends=True))
)  # texts: characters every engine classifies alike


@settings(max_examples=EXAMPLES)
@given(st.lists(_mixed, max_size=4).map("".join))
def test_hypothesis_text_encodes_as_tiktoken(text: str) -> None:
    for tokenizer, encoding in _all_pairs():
        assert tokenizer.encode_ordinary(text) == encoding.encode_ordinary(text)


def _all_pairs() -> list[tuple[Tokenizer, Any]]:
    return [_pair(name) for name in RANK_FILES]


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
