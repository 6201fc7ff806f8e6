"""``--model`` takes OpenAI's model names too, mapped to a built-in as tiktoken maps them.

The ids are tiktoken's, built offline from the committed files, for the vocabulary
tiktoken's own ``encoding_name_for_model`` gives; a file of that name still wins, and a
value that looks like a path is never read as a model's name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiktoken.model

from bpetite import Tokenizer
from bpetite.cli import main
from tests import datafiles

TEXT = "def f():\n        return 1  # naïve 🤔<|endoftext|>"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o",
        "gpt-4o-2024-05-13",
        "gpt-4",
        "gpt-3.5-turbo-0301",
        "ft:gpt-4o-mini-2024-07-18:acme::id",
        "text-davinci-003",
        "code-davinci-edit-001",
        "davinci",
        "gpt-oss-20b",
    ],
)
def test_encode_with_a_model_name_gives_tiktokens_ids(
    model: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "encode", "--model", model, "--text", TEXT)
    assert (code, err) == (0, "")
    oracle = datafiles.tiktoken_encoding(tiktoken.model.encoding_name_for_model(model))
    assert json.loads(out) == oracle.encode(TEXT, allowed_special="all")


def test_a_file_named_like_a_model_wins_and_a_note_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    trained = Tokenizer.train("hello hello hello", vocab_size=260)
    trained.save(tmp_path / "gpt-4o")
    code, out, err = run(capsys, "encode", "--model", "gpt-4o", "--text", "hello world")
    assert code == 0
    assert json.loads(out) == trained.encode("hello world")
    assert err == (
        "bpetite: --model gpt-4o is the file 'gpt-4o' in the current directory, not the "
        "built-in vocabulary of that name\n"
    )


@pytest.mark.parametrize("value", ["gpt-4-tokenizer.json", "models/gpt-4o", "claude-3"])
def test_a_path_or_an_unknown_name_is_a_missing_file(
    value: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``gpt-4-`` is a model prefix, but a value ending in .json or holding a separator
    names a file: a missing one is an error, never a silent built-in."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "encode", "--model", value, "--text", "x")
    assert (code, out) == (1, "")
    assert err.startswith(f"bpetite: error: model file '{value}' does not exist")


def test_inspect_names_each_merges_own_id_where_a_special_sits_among_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """p50k_base's last merge makes 50280, not 256 + 50023: 50256 is <|endoftext|>'s."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "inspect", "--model", "text-davinci-003")
    assert (code, err) == (0, "")
    last = json.loads(out)["last_merges"][-1]
    oracle = datafiles.tiktoken_encoding("p50k_base")
    assert last["rank"] == 50023
    assert last["token"]["id"] == 50280
    assert (
        oracle.decode_single_token_bytes(50280)
        == b" " * 25
        == bytes.fromhex(last["token"]["hex"].replace(" ", ""))
    )
