"""Export to and import from Hugging Face tokenizers and tiktoken, checked with the real libraries.

Every parity claim is checked against ``tokenizers`` and ``tiktoken`` themselves (no
mocks), and GPT-2's tiktoken encoding is built offline from the committed GPT-2 files.
The three regex engines (``regex`` for bpetite, Rust's for tiktoken and tokenizers)
each carry their own Unicode tables; :func:`portable` drops the few characters they
classify differently from generated text, and one test pins that limitation down.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
import tiktoken
import tokenizers
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe
from tiktoken_ext.openai_public import r50k_pat_str

from bpetite import PRESETS, Tokenizer, reference
from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.interop import (
    ImportResult,
    InteropError,
    export_hf,
    export_tiktoken,
    gpt2_byte_permutation,
    import_vocabulary,
    write_hf,
    write_tiktoken,
)
from bpetite.interop._alphabet import BYTE_TO_CHAR, from_alphabet, to_alphabet
from bpetite.interop._hf import EQUIVALENT_PATTERNS
from bpetite.interop._model import first_token_outside_chunks
from tests.strategies import ROUNDTRIP_CASES, merge_lists, texts, tricky_text

#: Examples per property; a deep run is BPETITE_HYPOTHESIS_EXAMPLES=2000.
EXAMPLES = int(os.environ.get("BPETITE_HYPOTHESIS_EXAMPLES", "50"))
END = "<|endoftext|>"
#: The spec's roundtrip fixtures, plus whitespace around the special token (a tokenizer
#: that strips it, like an added token with lstrip/rstrip, fails these).
FIXTURES = {
    **ROUNDTRIP_CASES,
    "spaces around special": "a <|endoftext|> b  <|endoftext|>\t",
    "special between lines": "x\n<|endoftext|>\n\ny",
}
#: Merges whose third token is not what its own bytes encode to: "abc" encodes as ab, c.
MISFIT_MERGES = [(97, 98), (98, 99), (97, 257)]


# --------------------------------------------------------------------------- helpers


@functools.cache
def _class_probes() -> list[tuple[regex.Pattern[str], Any, Any]]:
    """Each engine asked for one character class: which characters match it?

    tiktoken drops text its regex does not match, so with single-byte tokens its
    output is exactly the matching characters; a tokenizers Split that removes the
    matches leaves exactly the others.
    """
    byte_ranks = {bytes((byte,)): byte for byte in range(256)}
    probes = []
    for index, pattern in enumerate((r"\p{L}", r"\p{N}", r"\s")):
        encoding = tiktoken.Encoding(
            f"probe{index}", pat_str=pattern, mergeable_ranks=byte_ranks, special_tokens={}
        )
        split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "removed")
        probes.append((regex.compile(pattern), encoding, split))
    return probes


def disputed_characters(text: str) -> set[str]:
    """The characters of `text` that regex, tiktoken and tokenizers classify differently."""
    chars = "".join(sorted(set(text)))
    disputed: set[str] = set()
    for pattern, encoding, split in _class_probes():
        ours = set(pattern.findall(chars))
        tiktoken_matches = set(encoding.decode_bytes(encoding.encode_ordinary(chars)).decode())
        hf_kept = "".join(piece for piece, _ in split.pre_tokenize_str(chars))
        hf_matches = set(chars) - set(hf_kept)
        disputed |= (ours ^ tiktoken_matches) | (ours ^ hf_matches)
    return disputed


def portable(text: str) -> str:
    """`text` without the characters whose Unicode class the engines disagree on."""
    disputed = disputed_characters(text)
    return "".join(char for char in text if char not in disputed)


def hf_ids(hf: Any, text: str) -> list[int]:
    return list(hf.encode(text).ids)


def tiktoken_ids(encoding: Any, text: str) -> list[int]:
    """bpetite reads every exact <|endoftext|> as the special token; tiktoken must be told."""
    return list(encoding.encode(text, allowed_special="all"))


def encoding_from_ranks(ranks: dict[bytes, int], pattern: str, special: dict[str, int]) -> Any:
    return tiktoken.Encoding("test", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def vocab_ranks(tokenizer: Tokenizer) -> dict[bytes, int]:
    """The tokenizer's mergeable tokens as tiktoken ranks, built here by hand."""
    size = 256 + len(tokenizer.merges)
    return {tokenizer.vocab[token_id]: token_id for token_id in range(size)}


def artifact_bytes(tokenizer: Tokenizer, path: Path) -> bytes:
    tokenizer.save(str(path))
    return path.read_bytes()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """tiktoken caches every file it reads; keep that cache inside the test's temp dir."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        yield cache


@pytest.fixture(scope="module")
def shakespeare_tokenizer(shakespeare_text: str) -> Tokenizer:
    return Tokenizer.train(shakespeare_text, 2000)


@pytest.fixture(scope="module")
def exported_hf(shakespeare_tokenizer: Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    write_hf(shakespeare_tokenizer, path)
    return tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def exported_tiktoken(
    shakespeare_tokenizer: Tokenizer, tmp_path_factory: pytest.TempPathFactory, tiktoken_cache: Path
) -> Any:
    path = tmp_path_factory.mktemp("tiktoken") / "shakespeare.tiktoken"
    export = write_tiktoken(shakespeare_tokenizer, path)
    assert export.pattern == PRETOKENIZER_PATTERN
    return tiktoken.Encoding(
        "bpetite",
        pat_str=export.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path), expected_hash=export.sha256),
        special_tokens=dict(export.special_tokens),
        explicit_n_vocab=export.n_vocab,
    )


@pytest.fixture(scope="module")
def gpt2_import(gpt2_dir: Path) -> ImportResult:
    return import_vocabulary([gpt2_dir / "encoder.json", gpt2_dir / "vocab.bpe"])


@pytest.fixture(scope="module")
def gpt2_ranks(gpt2_dir: Path, tiktoken_cache: Path) -> dict[bytes, int]:
    """tiktoken's own reading of GPT-2's files, offline."""
    ranks: dict[bytes, int] = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(gpt2_dir / "vocab.bpe"),
        encoder_json_file=str(gpt2_dir / "encoder.json"),
    )
    return ranks


@pytest.fixture(scope="module")
def gpt2_tiktoken(gpt2_ranks: dict[bytes, int]) -> Any:
    """tiktoken's gpt2 encoding exactly as tiktoken_ext defines it, from the local files."""
    return tiktoken.Encoding(
        "gpt2",
        pat_str=r50k_pat_str,
        mergeable_ranks=gpt2_ranks,
        special_tokens={END: 50256},
        explicit_n_vocab=50257,
    )


# --------------------------------------------------------------------------- GPT-2's byte alphabet


def test_gpt2_byte_permutation_is_the_one_in_gpt2s_files(
    gpt2_dir: Path, gpt2_ranks: dict[bytes, int]
) -> None:
    """Checked against encoder.json as the data README describes it, and against tiktoken."""
    permutation = gpt2_byte_permutation()
    encoder = json.loads((gpt2_dir / "encoder.json").read_text(encoding="utf-8"))
    by_id = {token_id: token for token, token_id in encoder.items()}
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = sorted(set(range(256)) - set(printable))
    assert list(permutation.byte_of_id) == printable + others
    for gpt2_id in range(256):
        byte = permutation.byte_of_id[gpt2_id]
        written = chr(byte) if gpt2_id < 188 else chr(256 + gpt2_id - 188)
        assert by_id[gpt2_id] == written
        assert permutation.id_of_byte[byte] == gpt2_id
        assert gpt2_ranks[bytes((byte,))] == gpt2_id


def test_alphabet_writes_every_byte_as_one_visible_character() -> None:
    """No character is a space, so "left right" merge lines are never ambiguous."""
    assert len(set(BYTE_TO_CHAR)) == 256
    assert all(char.isprintable() and not char.isspace() for char in BYTE_TO_CHAR)
    every_byte = bytes(range(256))
    assert from_alphabet(to_alphabet(every_byte)) == every_byte
    assert to_alphabet(b" the\n") == "\u0120the\u010a"
    assert from_alphabet("a b") is None


# --------------------------------------------------------------------------- Hugging Face export


def test_hf_export_matches_bpetite_on_tinyshakespeare(
    exported_hf: Any, shakespeare_tokenizer: Tokenizer, shakespeare_text: str
) -> None:
    ids = shakespeare_tokenizer.encode(shakespeare_text)
    assert hf_ids(exported_hf, shakespeare_text) == ids
    assert exported_hf.decode(ids, skip_special_tokens=False) == shakespeare_text


@pytest.mark.parametrize("text", FIXTURES.values(), ids=FIXTURES.keys())
def test_hf_export_matches_bpetite_on_the_fixtures(
    exported_hf: Any, shakespeare_tokenizer: Tokenizer, text: str
) -> None:
    ids = shakespeare_tokenizer.encode(text)
    assert hf_ids(exported_hf, text) == ids
    assert exported_hf.decode(ids, skip_special_tokens=False) == text


@settings(max_examples=EXAMPLES)
@given(texts)
def test_hf_export_matches_bpetite_on_any_text(
    exported_hf: Any, shakespeare_tokenizer: Tokenizer, text: str
) -> None:
    text = portable(text)
    ids = shakespeare_tokenizer.encode(text)
    assert hf_ids(exported_hf, text) == ids
    assert exported_hf.decode(ids, skip_special_tokens=False) == text


def test_hf_export_declares_the_special_token_and_the_regex(
    exported_hf: Any, shakespeare_tokenizer: Tokenizer
) -> None:
    document = json.loads(export_hf(shakespeare_tokenizer))
    split = document["pre_tokenizer"]["pretokenizers"][0]
    assert split["pattern"]["Regex"] == PRETOKENIZER_PATTERN
    assert exported_hf.token_to_id(END) == 2000 == shakespeare_tokenizer.encode(END)[0]
    assert exported_hf.get_vocab_size() == 2001


def test_hf_export_is_exact_even_when_a_token_does_not_encode_to_itself(tmp_path: Path) -> None:
    """Hugging Face merges by pair rank like bpetite, so the hand-made "abc" needs no check."""
    tokenizer = Tokenizer(MISFIT_MERGES)
    path = tmp_path / "tokenizer.json"
    write_hf(tokenizer, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in ("abc", "abcd", "xabc", "abc abc<|endoftext|>bc"):
        assert (
            hf_ids(hf, text)
            == tokenizer.encode(text)
            == reference.encode(reference.Model(MISFIT_MERGES), text)
        )
    assert tokenizer.encode("abc") == [256, 99]


# --------------------------------------------------------------------------- tiktoken export


def test_tiktoken_export_matches_bpetite_on_tinyshakespeare(
    exported_tiktoken: Any, shakespeare_tokenizer: Tokenizer, shakespeare_text: str
) -> None:
    ids = shakespeare_tokenizer.encode(shakespeare_text)
    assert tiktoken_ids(exported_tiktoken, shakespeare_text) == ids
    assert exported_tiktoken.decode(ids) == shakespeare_text


@pytest.mark.parametrize("text", FIXTURES.values(), ids=FIXTURES.keys())
def test_tiktoken_export_matches_bpetite_on_the_fixtures(
    exported_tiktoken: Any, shakespeare_tokenizer: Tokenizer, text: str
) -> None:
    ids = shakespeare_tokenizer.encode(text)
    assert tiktoken_ids(exported_tiktoken, text) == ids
    assert exported_tiktoken.decode(ids) == text


@settings(max_examples=EXAMPLES)
@given(texts)
def test_tiktoken_export_matches_bpetite_on_any_text(
    exported_tiktoken: Any, shakespeare_tokenizer: Tokenizer, text: str
) -> None:
    text = portable(text)
    assert tiktoken_ids(exported_tiktoken, text) == shakespeare_tokenizer.encode(text)


def test_tiktoken_file_lists_every_mergeable_token_by_id(shakespeare_tokenizer: Tokenizer) -> None:
    export = export_tiktoken(shakespeare_tokenizer)
    lines = export.ranks.splitlines()
    assert export.ranks.endswith("\n")
    assert len(lines) == 2000
    assert export.n_vocab == 2001
    vocab = reference.vocab(shakespeare_tokenizer.merges)
    for token_id, line in enumerate(lines):
        encoded, rank = line.split(" ")
        assert base64.b64decode(encoded) == vocab[token_id]
        assert rank == str(token_id)
    assert dict(export.special_tokens) == {END: 2000}


def test_tiktoken_export_refuses_a_token_tiktoken_would_reach_differently() -> None:
    """tiktoken merges by the rank of concatenated bytes and looks whole pieces up.

    With merges ab, bc, a+bc, bpetite encodes "abc" as ab, c (the pair ab, c is not a
    merge), but "abc" is a token, so tiktoken returns it; the real tiktoken shows that
    the refusal is needed, and not only on the token's own bytes.
    """
    tokenizer = Tokenizer(MISFIT_MERGES)
    with pytest.raises(InteropError, match=r"token 258 \"abc\" is merge 97 \+ 257"):
        export_tiktoken(tokenizer)
    encoding = encoding_from_ranks(vocab_ranks(tokenizer), PRETOKENIZER_PATTERN, {END: 259})
    assert tiktoken_ids(encoding, "abc") == [258] != tokenizer.encode("abc")
    assert tiktoken_ids(encoding, "abcd") == [258, 100] != tokenizer.encode("abcd")


def test_a_failed_write_leaves_neither_the_file_nor_a_temp_file(
    small_tokenizer: Tokenizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(fd: int) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "fsync", fail)
    for overwrite in (False, True):
        with pytest.raises(OSError, match="disk on fire"):
            write_tiktoken(small_tokenizer, tmp_path / "x.tiktoken", overwrite=overwrite)
        assert list(tmp_path.iterdir()) == []


def test_exports_refuse_two_tokens_with_the_same_bytes(tmp_path: Path) -> None:
    tokenizer = Tokenizer([(97, 98), (97, 98)])
    for export in (export_hf, export_tiktoken):
        with pytest.raises(InteropError, match=r'tokens 256 and 257 have the same bytes "ab"'):
            export(tokenizer)
    with pytest.raises(InteropError, match="same bytes"):
        write_hf(tokenizer, tmp_path / "tokenizer.json")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=EXAMPLES)
@given(merge_lists(), st.lists(st.text("ab c", max_size=24), max_size=8))
def test_tiktoken_export_check_is_exact(merges: list[tuple[int, int]], chunks: list[str]) -> None:
    """Accepted: the real tiktoken equals bpetite on every chunk. Refused: it must differ.

    A pattern that keeps the whole text as one piece compares the merge algorithms
    themselves, tiktoken's whole-piece lookup included.
    """
    tokenizer = Tokenizer(merges)
    vocab = reference.vocab(merges)
    try:
        export = export_tiktoken(tokenizer)
    except InteropError as error:
        if len(set(vocab.values())) < len(vocab):
            assert "same bytes" in str(error)
            return
        encoding = encoding_from_ranks(vocab_ranks(tokenizer), r"[\s\S]+", {})
        token_id = int(str(error).split()[1])
        token = vocab[token_id]
        assert encoding.encode_ordinary(token.decode()) == [token_id]
        assert reference.encode_chunk(token, merges) != [token_id]
        return
    ranks = {
        base64.b64decode(line.split()[0]): int(line.split()[1])
        for line in export.ranks.splitlines()
    }
    encoding = encoding_from_ranks(ranks, r"[\s\S]+", {})
    for chunk in chunks + [vocab[token_id].decode() for token_id in range(256, len(vocab) - 1)]:
        expected = reference.encode_chunk(chunk.encode(), merges)
        assert encoding.encode_ordinary(chunk) == expected == tokenizer.encode_chunk(chunk.encode())


@settings(max_examples=EXAMPLES)
@given(tricky_text, st.integers(256, 400))
def test_trained_vocabularies_always_export_to_tiktoken(corpus: str, vocab_size: int) -> None:
    """A merge is learned from halves earlier merges built, so each token encodes to itself."""
    tokenizer = Tokenizer.train(corpus, vocab_size)
    mergeable = range(tokenizer.mergeable_vocab_size)
    assert all(tokenizer.encode_chunk(tokenizer.vocab[i]) == [i] for i in mergeable)
    export = export_tiktoken(tokenizer)  # refuses a vocabulary without that property
    ranks = {
        base64.b64decode(line.split()[0]): int(line.split()[1])
        for line in export.ranks.splitlines()
    }
    assert ranks == {tokenizer.vocab[i]: i for i in mergeable}


# --------------------------------------------------------------------------- importing GPT-2


def test_gpt2_import_keeps_gpt2_ids(
    gpt2_import: ImportResult, gpt2_ranks: dict[bytes, int]
) -> None:
    """Every token keeps GPT-2's id, the bytes included (through the byte order)."""
    tokenizer = gpt2_import.tokenizer
    assert len(tokenizer.merges) == 50000
    assert tokenizer.encode(END) == [50256]
    for token, rank in gpt2_ranks.items():
        assert tokenizer.vocab[rank] == token
    permutation = gpt2_byte_permutation().id_of_byte
    assert [permutation[byte] for byte in tokenizer.byte_order] == list(range(256))
    assert gpt2_import.source_ids is None
    assert gpt2_import.id_layout == "bytes permuted"
    assert gpt2_import.format == "vocab+merges"


def test_gpt2_import_matches_tiktoken_on_tinyshakespeare(
    gpt2_import: ImportResult, gpt2_tiktoken: Any, shakespeare_text: str
) -> None:
    ids = gpt2_import.tokenizer.encode(shakespeare_text)
    expected = tiktoken_ids(gpt2_tiktoken, shakespeare_text)
    assert gpt2_import.to_source_ids(ids) == expected
    assert gpt2_import.from_source_ids(expected) == ids


@pytest.mark.parametrize("text", FIXTURES.values(), ids=FIXTURES.keys())
def test_gpt2_import_matches_tiktoken_on_the_fixtures(
    gpt2_import: ImportResult, gpt2_tiktoken: Any, text: str
) -> None:
    ids = gpt2_import.tokenizer.encode(text)
    assert gpt2_import.to_source_ids(ids) == tiktoken_ids(gpt2_tiktoken, text)
    assert gpt2_import.tokenizer.decode(ids) == text


@settings(max_examples=EXAMPLES)
@given(texts)
def test_gpt2_import_matches_tiktoken_on_any_text(
    gpt2_import: ImportResult, gpt2_tiktoken: Any, text: str
) -> None:
    text = portable(text)
    ids = gpt2_import.tokenizer.encode(text)
    assert gpt2_import.to_source_ids(ids) == tiktoken_ids(gpt2_tiktoken, text)


def test_gpt2_hello_world(gpt2_import: ImportResult, gpt2_tiktoken: Any) -> None:
    """The README's example, against tiktoken's documented [31373, 995]."""
    ids = gpt2_import.tokenizer.encode("hello world")
    assert gpt2_import.to_source_ids(ids) == [31373, 995] == gpt2_tiktoken.encode("hello world")


def test_gpt2_tiktoken_file_imports_to_the_same_model(
    gpt2_dir: Path, gpt2_import: ImportResult
) -> None:
    """Recovering merges from ranks alone rebuilds vocab.bpe's 50,000 merges exactly.

    (The merges are the whole artifact; the round-trip tests compare artifact bytes.)
    """
    result = import_vocabulary([gpt2_dir / "gpt2.tiktoken"])
    assert result.format == "tiktoken"
    assert result.source_ids == gpt2_import.source_ids
    assert result.tokenizer.merges == gpt2_import.tokenizer.merges


@pytest.fixture(scope="module")
def gpt2_tokenizer_json(gpt2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPT-2 as Hugging Face builds it: ByteLevel(use_regex), the special token in the vocab."""
    model = tokenizers.models.BPE.from_file(
        str(gpt2_dir / "encoder.json"), str(gpt2_dir / "vocab.bpe")
    )
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens([tokenizers.AddedToken(END, special=True)])
    path = tmp_path_factory.mktemp("gpt2-hf") / "tokenizer.json"
    hf.save(str(path))
    return path


@pytest.mark.parametrize("merges_as", ["pairs", "strings"])
def test_gpt2_tokenizer_json_made_by_tokenizers_imports_to_the_same_model(
    gpt2_tokenizer_json: Path, gpt2_import: ImportResult, tmp_path: Path, merges_as: str
) -> None:
    """tokenizers 0.23 writes merges as pairs; older versions wrote "left right" strings."""
    path = gpt2_tokenizer_json
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document["model"]["merges"][0], list)
    if merges_as == "strings":
        document["model"]["merges"] = [" ".join(pair) for pair in document["model"]["merges"]]
        path = _write_json(tmp_path / "tokenizer.json", document)
    result = import_vocabulary([path])
    assert result.format == "tokenizer.json"
    assert result.source_ids == gpt2_import.source_ids
    assert result.tokenizer.merges == gpt2_import.tokenizer.merges


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("write", [write_hf, write_tiktoken], ids=["hf", "tiktoken"])
def test_export_then_import_gives_back_the_same_artifact(
    shakespeare_tokenizer: Tokenizer, tmp_path: Path, write: Any
) -> None:
    exported = tmp_path / "exported"
    write(shakespeare_tokenizer, exported)
    result = import_vocabulary([exported])
    assert result.id_layout == "identical"
    assert artifact_bytes(result.tokenizer, tmp_path / "a.json") == artifact_bytes(
        shakespeare_tokenizer, tmp_path / "b.json"
    )


@settings(max_examples=EXAMPLES)
@given(merge_lists())
def test_any_exportable_vocabulary_round_trips(merges: list[tuple[int, int]]) -> None:
    """Through hf always; through tiktoken unless a token spans two chunks.

    A .tiktoken file does not record its pattern, so a token no text could produce
    under bpetite's pattern is taken as a sign of another pattern and refused.
    """
    tokenizer = Tokenizer(merges)
    vocab = reference.vocab(merges)
    assume(len(set(vocab.values())) == len(vocab))
    with_hf = _import_text("tokenizer.json", export_hf(tokenizer))
    assert with_hf.tokenizer.merges == tokenizer.merges
    try:
        ranks = export_tiktoken(tokenizer).ranks
    except InteropError:
        return  # a token that does not encode to itself: covered above
    tokens = [vocab[token_id] for token_id in range(256, len(vocab) - 1)]
    if first_token_outside_chunks(tokens) is None:
        assert _import_text("x.tiktoken", ranks).tokenizer.merges == tokenizer.merges
    else:
        with pytest.raises(InteropError, match="spans two chunks"):
            _import_text("x.tiktoken", ranks)


def _import_text(name: str, text: str) -> ImportResult:
    """Import one file's text (hypothesis cannot use the function-scoped tmp_path)."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / name
        path.write_text(text, encoding="utf-8")
        return import_vocabulary([path])


@settings(max_examples=EXAMPLES)
@given(
    st.lists(st.text("abc", min_size=2, max_size=4), unique=True, max_size=12),
    st.lists(st.text("abc", max_size=20), max_size=6),
)
def test_an_imported_tiktoken_file_encodes_like_tiktoken(
    tokens: list[str], samples: list[str]
) -> None:
    """Arbitrary rank files: imported, bpetite must equal the real tiktoken on them."""
    ranks = {bytes((byte,)): byte for byte in range(256)}
    ranks.update({token.encode(): 256 + rank for rank, token in enumerate(tokens)})
    text = "".join(f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items())
    try:
        result = _import_text("x.tiktoken", text)
    except InteropError as error:
        assert "cannot be made by merging two tokens of lower ids" in str(error)
        return
    encoding = encoding_from_ranks(ranks, PRETOKENIZER_PATTERN, {})
    for sample in samples + tokens:
        ids = result.tokenizer.encode(sample)
        assert result.to_source_ids(ids) == encoding.encode_ordinary(sample)


# --------------------------------------------------------------------------- refusals


@pytest.fixture
def small_tokenizer() -> Tokenizer:
    return Tokenizer.train("the cat sat on the mat, the end " * 4, 270)


def _hf_document(tokenizer: Tokenizer) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(export_hf(tokenizer))
    return document


def _write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["pre_tokenizer"]["pretokenizers"][0]["pattern"].update(
                Regex=r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
            ),
            r"splits text with the regex .* not bpetite's gpt2, cl100k or o200k pattern",
        ),
        (lambda d: d["pre_tokenizer"]["pretokenizers"][1].update(use_regex=True), "use_regex"),
        (lambda d: d["pre_tokenizer"].update(type="Whitespace"), "pre-tokenizer"),
        (
            lambda d: d.update(pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True}),
            "add_prefix_space",
        ),
        (lambda d: d.update(normalizer={"type": "NFC"}), "sets normalizer"),
        (lambda d: d.update(post_processor={"type": "TemplateProcessing"}), "TemplateProcessing"),
        (lambda d: d.update(decoder={"type": "Metaspace"}), "Metaspace"),
        (lambda d: d["model"].update(dropout=0.1), "model.dropout"),
        (lambda d: d["model"].update(type="WordPiece"), "WordPiece"),
        (
            lambda d: d["added_tokens"].append({"id": 999, "content": "a"}),
            'gives "a" the id 999 as an added token but 97',
        ),
        (
            lambda d: d["added_tokens"].append({"id": 999, "content": ""}),
            "special token must be a non-empty str",
        ),
        (
            lambda d: d["added_tokens"].append({"id": 5, "content": "<pad>"}),
            "gives id 5 to two tokens",
        ),
        (lambda d: d["added_tokens"][0].update(lstrip=True), "lstrip"),
        (lambda d: d["model"]["vocab"].update({"<s>": 999}), "neither a byte, nor made by a merge"),
        (lambda d: d["model"]["merges"].append("Ġ t h"), 'must be "left right"'),
        (lambda d: d["model"]["merges"].insert(0, d["model"]["merges"][-1]), "earlier merge"),
        (lambda d: d["model"]["vocab"].pop("a"), "no entry for byte 0x61"),
        (
            lambda d: (d["added_tokens"].clear(), d["model"]["vocab"].update({END: 270})),
            "not as an added token",
        ),
    ],
)
def test_tokenizer_json_that_bpetite_cannot_reproduce_is_refused(
    small_tokenizer: Tokenizer, tmp_path: Path, edit: Any, message: str
) -> None:
    document = _hf_document(small_tokenizer)
    edit(document)
    with pytest.raises(InteropError, match=message):
        import_vocabulary([_write_json(tmp_path / "tokenizer.json", document)])


def test_a_tokenizer_json_without_added_tokens_imports_with_no_special_token(
    small_tokenizer: Tokenizer, tmp_path: Path
) -> None:
    """The source has no special token, so neither has the import: its literal is text."""
    document = _hf_document(small_tokenizer)
    document["added_tokens"].clear()
    path = _write_json(tmp_path / "tokenizer.json", document)
    result = import_vocabulary([path])
    assert result.tokenizer.merges == small_tokenizer.merges
    assert dict(result.tokenizer.special_tokens) == {}
    text = f"the cat{END} sat"
    expected = tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    assert result.to_source_ids(result.tokenizer.encode(text)) == expected


def test_id_mappings_reject_ids_they_do_not_know(gpt2_import: ImportResult) -> None:
    """The ids are GPT-2's own; a negative id must not quietly index from the end."""
    assert gpt2_import.to_source_ids([0, 50256]) == [0, 50256]
    with pytest.raises(KeyError, match="-1 is not one of bpetite's ids"):
        gpt2_import.to_source_ids([-1])
    with pytest.raises(KeyError, match="50257 is not one of the source's ids"):
        gpt2_import.from_source_ids([50257])


def test_the_library_does_not_load_the_real_libraries_or_rich() -> None:
    """tokenizers and tiktoken are test-only; import bpetite stays small."""
    code = (
        "import sys, bpetite\n"
        "assert 'bpetite.interop' not in sys.modules\n"
        "import bpetite.interop\n"
        "print(sorted({'tiktoken', 'tokenizers', 'rich'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


def test_ignore_merges_is_accepted_only_when_it_changes_nothing(
    small_tokenizer: Tokenizer, tmp_path: Path
) -> None:
    document = _hf_document(small_tokenizer)
    document["model"]["ignore_merges"] = True
    result = import_vocabulary([_write_json(tmp_path / "ok.json", document)])
    assert result.tokenizer.merges == small_tokenizer.merges
    misfit = _hf_document(Tokenizer(MISFIT_MERGES))
    misfit["model"]["ignore_merges"] = True
    with pytest.raises(InteropError, match="ignore_merges"):
        import_vocabulary([_write_json(tmp_path / "misfit.json", misfit)])


def _vocab_and_merges(tokenizer: Tokenizer, tmp_path: Path) -> tuple[dict[str, int], list[str]]:
    """The tokenizer as encoder.json + vocab.bpe, written by hand from its vocabulary."""
    vocab = reference.vocab(tokenizer.merges)
    texts = {token_id: to_alphabet(token) for token_id, token in vocab.items()}
    encoder = {text: token_id for token_id, text in texts.items()}
    encoder[END] = len(vocab) - 1
    merges = [f"{texts[left]} {texts[right]}" for left, right in tokenizer.merges]
    return encoder, merges


def _write_pair(tmp_path: Path, encoder: dict[str, int], merges: list[str]) -> list[Path]:
    merges_path = tmp_path / "vocab.bpe"
    merges_path.write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return [_write_json(tmp_path / "encoder.json", encoder), merges_path]


def test_vocab_and_merges_import_in_either_order(
    small_tokenizer: Tokenizer, tmp_path: Path
) -> None:
    paths = _write_pair(tmp_path, *_vocab_and_merges(small_tokenizer, tmp_path))
    for order in (paths, paths[::-1]):
        result = import_vocabulary(order)
        assert result.tokenizer.merges == small_tokenizer.merges
        assert result.id_layout == "identical"


def test_a_renumbered_vocabulary_is_mapped_not_refused(
    small_tokenizer: Tokenizer, tmp_path: Path
) -> None:
    """Like a tokenizers-trained file: the special token first, so every id is one higher."""
    encoder, merges = _vocab_and_merges(small_tokenizer, tmp_path)
    shifted = {token: (token_id + 1) % len(encoder) for token, token_id in encoder.items()}
    result = import_vocabulary(_write_pair(tmp_path, shifted, merges))
    assert result.id_layout == "renumbered"
    assert result.tokenizer.merges == small_tokenizer.merges
    text = "the cat<|endoftext|>"
    ids = result.tokenizer.encode(text)
    assert result.to_source_ids(ids) == [(i + 1) % len(encoder) for i in ids]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda e, m: e.update({"<s>": 9999}), r"1 vocabulary entry is neither .* \"<s>\""),
        (lambda e, m: m.append(m[0]), "already is"),
        (lambda e, m: m.append("Ġ Ġ"), "which the vocabulary does not list"),
        (lambda e, m: e.update({"a b": 9999}), "not written in GPT-2's byte alphabet"),
        (lambda e, m: e.update({"Ġt": e["a"]}), "gives id"),
    ],
)
def test_vocab_and_merges_that_bpetite_cannot_reproduce_are_refused(
    small_tokenizer: Tokenizer, tmp_path: Path, edit: Any, message: str
) -> None:
    encoder, merges = _vocab_and_merges(small_tokenizer, tmp_path)
    edit(encoder, merges)
    with pytest.raises(InteropError, match=message):
        import_vocabulary(_write_pair(tmp_path, encoder, merges))


def test_a_vocabulary_made_for_another_pattern_is_refused(tmp_path: Path) -> None:
    """cl100k_base-style tokens such as "(self" can never come out of bpetite's pre-tokenizer."""
    ranks = "".join(f"{base64.b64encode(bytes((byte,))).decode()} {byte}\n" for byte in range(256))
    for rank, token in enumerate([b"se", b"lf", b"self", b"(self"], start=256):
        ranks += f"{base64.b64encode(token).decode()} {rank}\n"
    path = tmp_path / "cl100k-like.tiktoken"
    path.write_text(ranks, encoding="utf-8")
    with pytest.raises(InteropError, match=r"token \"\(self\" spans two chunks"):
        import_vocabulary([path])


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["YWJj 256"], "cannot be made by merging two tokens of lower ids"),
        (["YWI= 256", "YWI= 257"], "already has id 256"),
        (["YWI= 256", "YmM= 256"], "id 256 already belongs to"),
        (["YW?= 256"], "expected 'base64 id'|not valid base64"),
        (["YWI= -1"], "expected 'base64 id'"),
    ],
)
def test_tiktoken_files_that_bpetite_cannot_reproduce_are_refused(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    single = [f"{base64.b64encode(bytes((byte,))).decode()} {byte}" for byte in range(256)]
    path = tmp_path / "bad.tiktoken"
    path.write_text("\n".join(single + lines) + "\n", encoding="utf-8")
    with pytest.raises(InteropError, match=message):
        import_vocabulary([path])


def test_a_tiktoken_file_without_every_byte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.tiktoken"
    path.write_text("".join(f"{base64.b64encode(bytes((b,))).decode()} {b}\n" for b in range(255)))
    with pytest.raises(InteropError, match="no token for the byte 0xff"):
        import_vocabulary([path])


def test_files_are_recognised_by_content_and_combinations_checked(
    small_tokenizer: Tokenizer, tmp_path: Path
) -> None:
    encoder, merges = _vocab_and_merges(small_tokenizer, tmp_path)
    vocab_path, merges_path = _write_pair(tmp_path, encoder, merges)
    hf_path = tmp_path / "hf.json"
    write_hf(small_tokenizer, hf_path)
    text_path = tmp_path / "notes.txt"
    text_path.write_text("just some words\non two lines\n", encoding="utf-8")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    cases: list[tuple[list[Path], str]] = [
        ([vocab_path], "give its merges file"),
        ([merges_path], "give its vocabulary JSON"),
        ([hf_path, vocab_path], "cannot import .* together"),
        ([vocab_path, merges_path, hf_path], "cannot import .* together"),
        ([text_path], "cannot tell the format"),
        ([empty], "it is empty"),
        ([_write_json(tmp_path / "list.json", {"a": "b"})], "neither a tokenizer.json"),
        ([], "no input files"),
    ]
    for paths, message in cases:
        with pytest.raises(InteropError, match=message):
            import_vocabulary(paths)
    with pytest.raises(FileNotFoundError):
        import_vocabulary([tmp_path / "missing.json"])


# --------------------------------------------------------------------------- regex engines


@settings(max_examples=EXAMPLES)
@given(texts)
def test_accepted_spellings_of_the_pattern_split_alike(text: str) -> None:
    """GPT-2's original and tiktoken's r50k spellings split text exactly like bpetite's.

    Checked in each engine that uses them: regex, Hugging Face's Split, tiktoken.
    """
    text = portable(text.replace(END, ""))
    expected = regex.findall(PRETOKENIZER_PATTERN, text)
    single_bytes = {bytes((byte,)): byte for byte in range(256)}
    for pattern in EQUIVALENT_PATTERNS:
        assert regex.findall(pattern, text) == expected
        split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
        assert [piece for piece, _ in split.pre_tokenize_str(text)] == expected
        # With every piece in the vocabulary, tiktoken returns one token per piece.
        long_pieces = dict.fromkeys(p.encode() for p in expected if len(p.encode()) > 1)
        ranks = {**single_bytes, **{p: 256 + i for i, p in enumerate(long_pieces)}}
        encoding = encoding_from_ranks(ranks, pattern, {})
        assert encoding.encode_ordinary(text) == [ranks[p.encode()] for p in expected]
    assert r50k_pat_str in EQUIVALENT_PATTERNS


def test_characters_newer_than_an_engines_unicode_tables_can_split_differently() -> None:
    """The documented limit: each engine classifies characters with its own Unicode version.

    regex 2026 knows Unicode 17.0 while tiktoken 0.14 and tokenizers 0.23 know 16.0, so a
    letter new in 17.0 (Sidetic, CJK Extension J, ...) is a letter only to bpetite.
    """
    candidates = "".join(map(chr, [*range(0x10940, 0x10960), *range(0x323B0, 0x323C0)]))
    disputed = sorted(disputed_characters(candidates))
    if not disputed:
        pytest.skip("the installed regex engines now share their Unicode tables")
    letter = disputed[0]
    corpus = f" a{letter}!" * 50
    tokenizer = Tokenizer.train(corpus, 270)
    encoding = encoding_from_ranks(vocab_ranks(tokenizer), PRETOKENIZER_PATTERN, {END: 270})
    assert tiktoken_ids(encoding, corpus) != tokenizer.encode(corpus)


@settings(max_examples=EXAMPLES)
@given(texts)
def test_the_chunk_check_accepts_every_piece_of_a_chunk(text: str) -> None:
    """Every substring of every chunk fits, so the check never refuses a trained token."""
    for chunk in regex.findall(
        PRETOKENIZER_PATTERN, text + " it's 'll 'LL 123 ab12 x!? \t\n \n\n  z"
    ):
        chunk = chunk[:48]
        pieces = [chunk[i:j] for i in range(len(chunk)) for j in range(i + 1, len(chunk) + 1)]
        assert first_token_outside_chunks(piece.encode() for piece in pieces) is None, chunk


def test_the_chunk_check_refuses_what_spans_two_chunks() -> None:
    for spanning in ("a.", "a ", ".\n", "1a", "(self", "s'", "'x", "'S", " \u00e9!"):
        assert first_token_outside_chunks([b"ab", spanning.encode()]) == spanning.encode()
        assert len(regex.findall(PRETOKENIZER_PATTERN, spanning)) > 1


# --------------------------------------------------------------------------- patterns and specials

#: Words from several scripts, numbers, contractions and whitespace runs: the places where
#: gpt2, cl100k and o200k split differently.
_WORDS = [
    "hello",
    "Hello",
    "WORLD",
    "naïve",
    "straße",
    "日本語",
    "中文字",
    "мир",
    "Привет",
    "ελληνικά",
    "عربى",
    "हिन्दी",
    "123",
    "4567890",
    "3.14159",
    "don't",
    "I'M",
    "we'll",
    "they'RE",
    "ABCdef",
    "fooBar",
    "__init__",
    "(x)",
    "[y];",
    "!!",
    "...",
    "émoji😀",
    "👍🏽",
    "٣٤٥",
]
_GLUE = ("", " ", "  ", "\n", "\r\n", "\t", " \n ", "\n\n")
CHAT_SPECIALS = ("<|endoftext|>", "<|user_start|>", "<|user|>", "<|assistant|>")


def _generated_text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(_WORDS) + rng.choice(_GLUE) for _ in range(words))


def _probe_texts() -> list[str]:
    texts = [_generated_text(seed, 1 + seed % 40) for seed in range(60)]
    texts += [
        "<|user|>hi<|assistant|>12345 don't<|endoftext|>",
        "<|user_start|><|user|><|user_start|>x<|user_",
        "  trailing spaces   \n\n\n",
        "1234567890123 abcDEFghi",
    ]
    return [portable(text) for text in texts]


@functools.cache
def _chat_tokenizer(pattern: str) -> Tokenizer:
    corpus = _generated_text(-1, 4000)
    return Tokenizer.train(corpus, 700, pattern=pattern, special_tokens=CHAT_SPECIALS)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_hf_export_carries_the_pattern_and_every_special(pattern: str) -> None:
    tokenizer = _chat_tokenizer(pattern)
    hf = tokenizers.Tokenizer.from_str(export_hf(tokenizer))
    for text in _probe_texts():
        assert hf_ids(hf, text) == tokenizer.encode(text), text
        assert hf.decode(tokenizer.encode(text), skip_special_tokens=False) == text
    for special, token_id in tokenizer.special_tokens.items():
        assert hf.token_to_id(special) == token_id


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_tiktoken_export_carries_the_pattern_and_every_special(
    pattern: str, tmp_path: Path, tiktoken_cache: Path
) -> None:
    """The printed loader code itself is run, so the pattern and specials in it are checked."""
    tokenizer = _chat_tokenizer(pattern)
    path = tmp_path / "chat.tiktoken"
    export = write_tiktoken(tokenizer, path)
    assert export.pattern == PRESETS[pattern]
    assert dict(export.special_tokens) == dict(tokenizer.special_tokens)
    namespace: dict[str, Any] = {}
    exec(export.python_code(path), namespace)
    encoding = namespace["encoding"]
    assert encoding.n_vocab == tokenizer.n_vocab
    for text in _probe_texts():
        assert tiktoken_ids(encoding, text) == tokenizer.encode(text), text


@functools.cache
def _chat_exports(pattern: str) -> tuple[Any, Any]:
    tokenizer = _chat_tokenizer(pattern)
    export = export_tiktoken(tokenizer)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in export.ranks.splitlines())
    }
    encoding = encoding_from_ranks(ranks, export.pattern, dict(export.special_tokens))
    return tokenizers.Tokenizer.from_str(export_hf(tokenizer)), encoding


@settings(max_examples=EXAMPLES)
@given(st.sampled_from(["gpt2", "cl100k", "o200k"]), texts, st.sampled_from(CHAT_SPECIALS))
def test_both_exports_match_bpetite_for_every_preset_on_any_text(
    pattern: str, text: str, special: str
) -> None:
    tokenizer = _chat_tokenizer(pattern)
    hf, encoding = _chat_exports(pattern)
    text = portable(text) + special + portable(text[::-1])
    ids = tokenizer.encode(text)
    assert hf_ids(hf, text) == ids
    assert tiktoken_ids(encoding, text) == ids


def test_hf_spells_a_possessive_count_the_way_its_engine_reads_it() -> None:
    """Oniguruma reads cl100k's \\p{N}{1,3}+ as "runs of 1-3 digits, repeated"."""
    document = json.loads(export_hf(_chat_tokenizer("cl100k")))
    regex_text = document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    assert r"\p{N}{1,3}|" in regex_text
    assert regex_text.replace(r"\p{N}{1,3}|", r"\p{N}{1,3}+|") == PRESETS["cl100k"]
    verbatim = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PRESETS["cl100k"]), "isolated")
    assert [piece for piece, _ in verbatim.pre_tokenize_str("1234567")] == ["1234567"]


def test_a_custom_pattern_is_exported_verbatim_or_refused() -> None:
    custom = Tokenizer.train("abc 123 def", 260, pattern=r"[a-z]+|[0-9]|\s|[^a-z0-9\s]")
    document = json.loads(export_hf(custom))
    assert document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == custom.pattern
    assert export_tiktoken(custom).pattern == custom.pattern
    possessive = Tokenizer.train("abc 123", 258, pattern=r"[a-z]+|[0-9]{1,2}+|\s|[^a-z0-9\s]")
    with pytest.raises(InteropError, match="possessive counted repetition"):
        export_hf(possessive)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_a_tokenizer_json_imports_with_its_pattern_and_specials(
    pattern: str, tmp_path: Path
) -> None:
    tokenizer = _chat_tokenizer(pattern)
    path = tmp_path / "tokenizer.json"
    write_hf(tokenizer, path)
    result = import_vocabulary([path])
    assert result.id_layout == "identical"
    imported = result.tokenizer
    assert imported.pattern_name == pattern
    assert imported.merges == tokenizer.merges
    assert dict(imported.special_tokens) == dict(tokenizer.special_tokens)
    assert artifact_bytes(imported, tmp_path / "a.json") == artifact_bytes(
        tokenizer, tmp_path / "b.json"
    )


def test_special_ids_with_gaps_export_and_import(tmp_path: Path, tiktoken_cache: Path) -> None:
    size = 256 + len(_chat_tokenizer("o200k").merges)
    sparse = Tokenizer(
        _chat_tokenizer("o200k").merges,
        pattern="o200k",
        special_tokens={"<|endoftext|>": size + 1, "<|user|>": size + 17},
    )
    text = portable("<|user|>hello 日本語<|endoftext|>")
    hf = tokenizers.Tokenizer.from_str(export_hf(sparse))
    assert hf_ids(hf, text) == sparse.encode(text)
    export = export_tiktoken(sparse)
    assert export.n_vocab is None
    assert "explicit_n_vocab" not in export.python_code("x.tiktoken")
    ranks = {
        base64.b64decode(line.split()[0]): int(line.split()[1])
        for line in export.ranks.splitlines()
    }
    encoding = encoding_from_ranks(ranks, export.pattern, dict(export.special_tokens))
    assert tiktoken_ids(encoding, text) == sparse.encode(text)
    path = tmp_path / "tokenizer.json"
    write_hf(sparse, path)
    result = import_vocabulary([path])
    assert result.id_layout == "identical"  # the gaps are kept: the ids are the source's
    assert result.tokenizer.special_tokens == sparse.special_tokens
    assert result.tokenizer.encode(text) == sparse.encode(text)
    saved = tmp_path / "sparse.json"
    result.tokenizer.save(saved)
    assert Tokenizer.load(saved).encode(text) == sparse.encode(text)


def test_a_tiktoken_file_of_long_runs_imports_in_near_linear_time() -> None:
    """Tokens a, aa, aaaa, ... up to 2**16 bytes. Re-scanning every pair after each merge
    (the tiktoken merge loop run per token) is quadratic in a token's length and takes
    minutes here; trying a token's splits only at the lengths tokens have (17 here) takes
    well under a second."""
    lines = [f"{base64.b64encode(bytes([byte])).decode()} {byte}" for byte in range(256)]
    lines += [f"{base64.b64encode(b'a' * 2**k).decode()} {255 + k}" for k in range(1, 17)]
    result = _import_text("runs.tiktoken", "\n".join(lines) + "\n")
    assert result.tokenizer.merges == ((97, 97), *((256 + k, 256 + k) for k in range(15)))
    assert result.tokenizer.encode("a" * 2**16) == [256 + 15]
