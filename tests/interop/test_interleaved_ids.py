"""Ids that skip a special token's, and aliases, through every format and back.

p50k_base's ``<|endoftext|>`` holds 50256 between its merged tokens; an extended GPT-2 or
cl100k_base that keeps every id puts its new tokens after (and around) the special ids;
o200k_harmony gives 200018 two texts. The oracles are the peers themselves: real
tiktoken (its own p50k_base built offline, and the exports loaded with
``load_tiktoken_bpe``), Hugging Face ``tokenizers`` and ``transformers.AutoTokenizer``,
which must give bpetite's ids on large and adversarial texts, and OpenAI's committed
rank file, which the export must reproduce byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tokenizers
from tiktoken.load import load_tiktoken_bpe

from bpetite import Tokenizer, get_encoding
from bpetite.errors import InteropError
from bpetite.interop import (
    TiktokenExport,
    export_hf,
    import_vocabulary,
    write_hf,
    write_hf_pretrained,
    write_tiktoken,
)
from tests import datafiles
from tests.strategies import MULTILINGUAL

#: Runs of spaces (p50k_base's 24 whitespace tokens are 2 to 25 spaces), code, every
#: special text, and specials glued to words and to each other.
ADVERSARIAL = [
    " " * 100,
    "x" + " " * 26 + "y" + "\t" * 9 + "\n" * 5,
    "def f():\n        return 1\n\n\n    " + " " * 40 + "pass",
    "<|endoftext|><|endoftext|>a<|endoftext|>  <|endoftext|>",
    "<|fim_prefix|>def<|fim_middle|>  <|fim_suffix|><|endoftext|>",
    "<|endofprompt|><|reserved_200018|><|start|>user<|message|>hi<|end|>",
    "<|endoftext",
    "endoftext|>",
    MULTILINGUAL,
]


@pytest.fixture(scope="module")
def legal_text() -> str:
    return datafiles.shakespeare_text()[:30_000] + "The lessee shall indemnify the lessor. " * 40


@pytest.fixture(scope="module")
def samples() -> list[str]:
    text = datafiles.shakespeare_text()
    return [text[100_000:300_000], *ADVERSARIAL]


@pytest.fixture(scope="module")
def extended_gpt2(legal_text: str) -> Tokenizer:
    """GPT-2 grown by 40 tokens, every id kept: <|endoftext|> stays 50256."""
    extended = get_encoding("gpt2").extended(legal_text, 50256 + 40)
    assert dict(extended.special_tokens) == {"<|endoftext|>": 50256}
    assert 50256 + 40 in extended.vocab and 50256 + 41 not in extended.vocab
    return extended


@pytest.fixture(scope="module")
def extended_cl100k(legal_text: str) -> Tokenizer:
    """cl100k_base grown past its special ids (100257..100260, 100276): the new merges
    take 100256, then the ids between and after the specials'."""
    cl100k = get_encoding("cl100k_base")
    extended = cl100k.extended(legal_text, 100256 + 40)
    assert extended.special_tokens == cl100k.special_tokens
    new = sorted(set(extended.vocab) - set(cl100k.vocab))
    assert new[:2] == [100256, 100261] and 100276 not in new and len(new) == 40
    return extended


@dataclass(frozen=True)
class Written:
    """A tokenizer's artifact, tokenizer.json and .tiktoken file, as the writers left them."""

    artifact: Path
    tokenizer_json: Path
    tiktoken: Path
    #: What write_tiktoken returned: the file's text and the rest tiktoken needs.
    export: TiktokenExport


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Tokenizer], Written]:
    """Each tokenizer's three files, written once for the module and only read after:
    the round trips, tiktoken and tokenizers all load the same files."""
    done: dict[int, tuple[Tokenizer, Written]] = {}

    def write(tokenizer: Tokenizer) -> Written:
        if id(tokenizer) not in done:
            folder = tmp_path_factory.mktemp("written")
            tokenizer.save(folder / "model.json")
            write_hf(tokenizer, folder / "tokenizer.json")
            export = write_tiktoken(tokenizer, folder / "model.tiktoken")
            files = Written(
                folder / "model.json", folder / "tokenizer.json", folder / "model.tiktoken", export
            )
            done[id(tokenizer)] = (tokenizer, files)  # the tokenizer kept: its id stays its own
        return done[id(tokenizer)][1]

    return write


def _tiktoken_of_export(export: TiktokenExport, path: Path) -> Any:
    """Real tiktoken on the exported .tiktoken file at `path`, built as the export's code says."""
    return tiktoken.Encoding(
        "export",
        pat_str=export.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path), expected_hash=export.sha256),
        special_tokens=dict(export.special_tokens),
        explicit_n_vocab=export.n_vocab,
    )


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    yield


# ------------------------------------------------------------------ p50k_base


def test_p50k_exports_openais_rank_file_byte_for_byte(
    written: Callable[[Tokenizer], Written],
) -> None:
    export = written(get_encoding("p50k_base")).export  # what write_tiktoken wrote
    assert export.ranks.encode("ascii") == datafiles.read_bytes("p50k_base.tiktoken")
    assert export.n_vocab == 50281  # tiktoken's explicit_n_vocab for p50k_base
    assert "50256" not in export.ranks.split()[1::2]


@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit"])
def test_p50k_gives_tiktokens_ids_and_bytes(name: str, samples: list[str]) -> None:
    tokenizer, oracle = get_encoding(name), datafiles.tiktoken_encoding(name)
    for text in samples:
        ids = tokenizer.encode(text)
        assert ids == oracle.encode(text, allowed_special="all")
        assert tokenizer.encode_ordinary(text) == oracle.encode_ordinary(text)
        assert tokenizer.decode(ids) == oracle.decode(ids) == text
    for token_id in range(oracle.n_vocab):
        assert tokenizer.decode_single_token_bytes(token_id) == (
            oracle.decode_single_token_bytes(token_id)
        )


def test_p50k_refuses_a_special_as_tiktoken_does() -> None:
    tokenizer, oracle = get_encoding("p50k_base"), datafiles.tiktoken_encoding("p50k_base")
    text = "a  <|endoftext|>"
    with pytest.raises(ValueError):
        oracle.encode(text)
    with pytest.raises(ValueError, match="allowed_special"):
        tokenizer.encode(text, allowed_special=set())
    ordinary = oracle.encode(text, disallowed_special=())
    assert tokenizer.encode(text, allowed_special=set(), disallowed_special=()) == ordinary
    assert 50256 not in ordinary


@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit"])
def test_p50k_round_trips_through_every_format(
    name: str, written: Callable[[Tokenizer], Written]
) -> None:
    tokenizer = get_encoding(name)
    files = written(tokenizer)
    from_hf = import_vocabulary([files.tokenizer_json])
    from_tiktoken = import_vocabulary(
        [files.tiktoken],
        pattern="gpt2",
        special_tokens=dict(tokenizer.special_tokens),
    )
    for result in (from_hf, from_tiktoken):
        assert result.id_layout == "bytes permuted"  # the source's ids, spoken directly
        assert result.tokenizer == tokenizer
    assert Tokenizer.load(files.artifact) == tokenizer


def test_openais_p50k_file_is_recognised(tmp_path: Path) -> None:
    path = datafiles.unpack(["p50k_base.tiktoken"], tmp_path) / "p50k_base.tiktoken"
    result = import_vocabulary([path])
    assert result.name == "p50k_base"
    # the shipped merges stand in for recovering them: the same model, byte for byte
    assert (
        result.tokenizer.dumps()
        == datafiles.recovered_rank_file("p50k_base.tiktoken").tokenizer.dumps()
    )


def test_p50k_tokenizer_json_gives_bpetites_ids(
    samples: list[str], written: Callable[[Tokenizer], Written]
) -> None:
    tokenizer = get_encoding("p50k_base")
    hf = tokenizers.Tokenizer.from_file(str(written(tokenizer).tokenizer_json))
    assert hf.token_to_id("<|endoftext|>") == 50256
    for text in samples:
        assert hf.encode(text).ids == tokenizer.encode(text)


# ------------------------------------------------------------------ extended, ids kept


@pytest.fixture(params=["gpt2", "cl100k_base"])
def extended(
    request: pytest.FixtureRequest, extended_gpt2: Tokenizer, extended_cl100k: Tokenizer
) -> Tokenizer:
    return extended_gpt2 if request.param == "gpt2" else extended_cl100k


def test_the_extension_keeps_every_id_of_the_original(extended: Tokenizer) -> None:
    """Every old token keeps its id and bytes, and text the new merges do not touch
    encodes as the original (and so as tiktoken's own encoding) does."""
    original = get_encoding("gpt2" if extended.mergeable_vocab_size < 100_000 else "cl100k_base")
    assert all(extended.vocab[i] == token for i, token in original.vocab.items())
    oracle = datafiles.tiktoken_encoding(original.name or "")
    text = "<|endoftext|>zyx 12345 !?" + MULTILINGUAL
    assert extended.encode(text) == oracle.encode(text, allowed_special="all")


def test_tiktoken_loads_the_extension_with_the_same_ids(
    extended: Tokenizer,
    samples: list[str],
    legal_text: str,
    written: Callable[[Tokenizer], Written],
) -> None:
    files = written(extended)
    encoding = _tiktoken_of_export(files.export, files.tiktoken)
    for text in [legal_text, *samples]:
        ids = extended.encode(text)
        assert encoding.encode(text, allowed_special="all") == ids
        assert encoding.decode(ids) == text
    for token_id in extended.vocab:
        assert encoding.decode_single_token_bytes(token_id) == extended.vocab[token_id]


def test_tokenizers_and_transformers_load_the_extension_with_the_same_ids(
    extended: Tokenizer,
    samples: list[str],
    legal_text: str,
    tmp_path: Path,
    written: Callable[[Tokenizer], Written],
) -> None:
    from transformers import AutoTokenizer  # slow to import: only here

    hf = tokenizers.Tokenizer.from_file(str(written(extended).tokenizer_json))
    write_hf_pretrained(extended, tmp_path / "model", eos_token="<|endoftext|>")
    loaded = AutoTokenizer.from_pretrained(str(tmp_path / "model"), local_files_only=True)
    assert loaded.eos_token_id == extended.special_tokens["<|endoftext|>"]
    for text in [legal_text, *samples]:
        ids = extended.encode(text)
        assert hf.encode(text).ids == ids
        assert loaded.encode(text) == ids
        assert loaded.decode(ids) == text


def test_the_extension_round_trips_through_every_format(
    extended: Tokenizer, written: Callable[[Tokenizer], Written]
) -> None:
    files = written(extended)
    assert Tokenizer.load(files.artifact) == extended
    assert import_vocabulary([files.tokenizer_json]).tokenizer == extended
    from_tiktoken = import_vocabulary(
        [files.tiktoken],
        pattern=extended.pattern_name,
        special_tokens=dict(extended.special_tokens),
    )
    assert from_tiktoken.tokenizer == extended
    assert from_tiktoken.id_layout == "bytes permuted"


# ------------------------------------------------------------------ aliases


def test_harmony_exports_to_tiktoken_with_its_alias(tmp_path: Path) -> None:
    harmony = get_encoding("o200k_harmony")
    oracle = datafiles.tiktoken_encoding("o200k_harmony")
    path = tmp_path / "harmony.tiktoken"
    encoding = _tiktoken_of_export(write_tiktoken(harmony, path), path)
    text = "<|start|>user<|message|>hi<|end|><|endofprompt|><|reserved_200018|>"
    assert encoding.encode(text, allowed_special="all") == harmony.encode(text)
    assert harmony.encode(text) == oracle.encode(text, allowed_special="all")
    assert harmony.decode([200018]) == oracle.decode([200018]) == encoding.decode([200018])


def test_tokenizer_json_refuses_an_alias_naming_the_fix(tmp_path: Path) -> None:
    harmony = get_encoding("o200k_harmony")
    with pytest.raises(InteropError, match=r"share the id 200018") as raised:
        export_hf(harmony)
    assert "with_special_tokens(drop=['<|reserved_200018|>'])" in str(raised.value)
    without = harmony.with_special_tokens(drop=["<|reserved_200018|>"])
    hf = tokenizers.Tokenizer.from_str(export_hf(without))
    text = "<|start|>user<|message|>hi <|endofprompt|><|end|>" + MULTILINGUAL
    assert hf.encode(text).ids == harmony.encode(text)


def test_an_alias_survives_the_artifact(tmp_path: Path) -> None:
    harmony = get_encoding("o200k_harmony")
    harmony.save(tmp_path / "harmony.json")
    loaded = Tokenizer.load(tmp_path / "harmony.json")
    assert loaded == harmony
    assert loaded.decode([200018]) == "<|endofprompt|>"
    assert loaded.encode("<|reserved_200018|>") == [200018]


def test_the_export_code_builds_the_encoding(written: Callable[[Tokenizer], Written]) -> None:
    """The snippet an export hands over runs as written, for an interleaved layout."""
    tokenizer = get_encoding("p50k_edit")
    files = written(tokenizer)
    scope: dict[str, Any] = {}
    exec(files.export.python_code(os.fspath(files.tiktoken)), scope)  # the code a user copies
    text = "<|fim_prefix|>x<|endoftext|>" + " " * 30
    assert scope["encoding"].encode(text, allowed_special="all") == tokenizer.encode(text)
