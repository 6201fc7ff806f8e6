"""``--model NAME``: every command that loads a model takes a built-in vocabulary's name.

The ids are checked against tiktoken built offline from the committed files, and the
rule for a file of the same name (the file wins, with a note) against real files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli import main
from tests import datafiles

TEXT = "Hello world, naïve café 🤔<|endoftext|> end"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "name",
    [
        "gpt2",
        "r50k_base",
        "p50k_base",
        "p50k_edit",
        "cl100k_base",
        "o200k_base",
        "o200k_harmony",
    ],
)
def test_encode_with_a_builtin_gives_tiktokens_ids(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "encode", "--model", name, "--text", TEXT)
    assert (code, err) == (0, "")
    expected = datafiles.tiktoken_encoding(name).encode(TEXT, allowed_special="all")
    assert json.loads(out) == expected


def test_decode_with_a_builtin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ids = datafiles.tiktoken_encoding("cl100k_base").encode(TEXT, allowed_special="all")
    code, out, err = run(capsys, "decode", "--model", "cl100k_base", "--ids", *map(str, ids))
    assert (code, err) == (0, "")
    assert out == TEXT


def test_a_directory_of_that_name_leaves_the_name_to_the_builtin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's examples keep GPT-2's files in a folder called gpt2/."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpt2").mkdir()
    code, out, err = run(capsys, "encode", "--model", "gpt2", "--text", "hello world")
    assert (code, out, err) == (0, "[31373,995]\n", "")


def test_a_file_of_that_name_wins_and_a_note_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    trained = Tokenizer.train("hello hello hello", vocab_size=260)
    trained.save(tmp_path / "gpt2")
    code, out, err = run(capsys, "encode", "--model", "gpt2", "--text", "hello world")
    assert code == 0
    assert json.loads(out) == trained.encode("hello world")
    assert err == (
        "bpetite: --model gpt2 is the file 'gpt2' in the current directory, not the "
        "built-in vocabulary of that name\n"
    )
    code, out, err = run(capsys, "encode", "--model", "./gpt2", "--text", "hello world")
    assert (code, err) == (0, "")  # a path is a path: no note
    assert json.loads(out) == trained.encode("hello world")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "cl100k",
            "bpetite: error: model file 'cl100k' does not exist (the built-in vocabularies "
            "are gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, "
            "o200k_harmony)\n",
        ),
        ("./gpt2", "bpetite: error: model file './gpt2' does not exist\n"),
    ],
)
def test_a_missing_model_names_the_builtins_when_it_looks_like_a_name(
    value: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "encode", "--model", value, "--text", "x")
    assert (code, out, err) == (1, "", message)


@pytest.mark.parametrize("command", ["encode", "decode", "show", "inspect", "export", "dataset"])
def test_every_model_option_says_it_takes_a_name(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--model PATH|NAME" in text
    assert (
        "built-in vocabulary: gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, "
        "o200k_base, o200k_harmony (tiktoken's, shipped with bpetite), or of an OpenAI "
        "model that uses one" in text
    )


def test_dataset_with_a_builtin_writes_tiktokens_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("hello world\nfoo bar\n", encoding="utf-8")
    code, _, _ = run(
        capsys, "dataset", "--model", "gpt2", "--input", "a.txt", "--output", "train.bin"
    )
    assert code == 0
    data = (tmp_path / "train.bin").read_bytes()
    ids = [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]
    assert ids == [*datafiles.tiktoken_encoding("gpt2").encode("hello world\nfoo bar\n"), 50256]


def test_export_of_a_builtin_round_trips_through_tiktokens_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(
        capsys, "export", "--model", "r50k_base", "--format", "tiktoken", "--output", "r.tiktoken"
    )
    assert code == 0
    assert (tmp_path / "r.tiktoken").read_bytes() == datafiles.read_bytes("gpt2.tiktoken")
