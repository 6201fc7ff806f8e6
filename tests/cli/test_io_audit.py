"""What the CLI says about its inputs and outputs: a temp spool that cannot be written,
repeated options, the notes after ``--output``, bad bytes on ``decode --stream``, an empty
``--output``, and demo's ratio for an empty text.

Oracles: the library (``encode``, ``count_tokens``, ``is_within_limit``) for every value
written; the temp folder is ``tempfile.gettempdir()``, whatever TMPDIR is on the machine.
"""

from __future__ import annotations

import errno
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bpetite import Tokenizer
from bpetite.cli import _files, _inputs
from tests.cli.running import Result, run

TEXT = "naïve café 日本語 🤔 hello world 12345"


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(TEXT * 20, 300)


@pytest.fixture
def model(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "model.json"
    tokenizer.save(path)
    return path


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "text.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    return path


def one_line_failure(result: Result, *fragments: str, code: int = 1) -> str:
    assert (result.code, result.out) == (code, "")
    assert "Traceback" not in result.err
    last = result.err.splitlines()[-1]
    for fragment in fragments:
        assert fragment in last, (fragment, last)
    return last


# --------------------------------------------------------------------------- a full temp folder


class _FullDisk(io.BytesIO):
    """The temp file a spool rolls over to, on a disk with no room left."""

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def full_temp_folder(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every spool rolls over past its first byte, to a temp file that takes none."""
    monkeypatch.setattr(_inputs, "SPOOL_BYTES", 1)
    monkeypatch.setattr(_files, "SPOOL_BYTES", 1, raising=False)
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda *args, **kwargs: _FullDisk())
    return f"in a temporary file in '{tempfile.gettempdir()}'"


@pytest.mark.parametrize(
    "command",
    [
        ["encode", "--text", TEXT],
        ["encode", "--text", TEXT, "--offsets"],
        ["encode", "--text", TEXT, "--count"],
        ["chunk", "--text", TEXT, "--max-tokens", "4"],
        ["truncate", "--text", TEXT, "--max-tokens", "4"],
        ["decode", "--ids", "104", "105"],
    ],
)
def test_a_result_the_temp_folder_cannot_hold_is_one_line(
    capsys: pytest.CaptureFixture[str], model: Path, full_temp_folder: str, command: list[str]
) -> None:
    result = run(capsys, command[0], "--model", model, *command[1:])
    one_line_failure(
        result,
        f"cannot hold the result {full_temp_folder}",
        "No space left on device",
        "nothing was written",
    )


def test_standard_input_the_temp_folder_cannot_hold_is_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    full_temp_folder: str,
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(TEXT.encode("utf-8")), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    result = run(capsys, "encode", "--model", model, "--input", "-", "--count")
    one_line_failure(result, f"cannot hold standard input {full_temp_folder}", "No space left")


def test_a_spool_failure_is_not_blamed_on_the_input_file(
    capsys: pytest.CaptureFixture[str], model: Path, text_file: Path, full_temp_folder: str
) -> None:
    """The input was read: the copy of it could not be written."""
    result = run(capsys, "encode", "--model", model, "--input", text_file, "--count")
    last = one_line_failure(
        result, f"cannot hold a copy of --input '{text_file}' {full_temp_folder}", "No space left"
    )
    assert "cannot be read" not in last


# --------------------------------------------------------------------------- repeated options


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["encode", "--input", "a.txt", "--input", "b.txt"], "--input"),
        (["encode", "--text", "a", "--text", "b"], "--text"),
        (["encode", "--text", "a", "--output", "x", "--output", "y"], "--output"),
        (["decode", "--ids", "1", "--ids", "2"], "--ids"),
        (["decode", "--input", "a.json", "--input", "b.json"], "--input"),
        (["truncate", "--text", "a", "--text", "b", "--max-tokens", "1"], "--text"),
        (["truncate", "--text", "a", "--max-tokens", "1", "--max-tokens", "2"], "--max-tokens"),
        (["chunk", "--input", "a.txt", "--input", "b.txt", "--max-tokens", "1"], "--input"),
        # every command: the parser of each refuses repeats (cli/_parser.py, add_command)
        (
            ["train", "--input", "a", "--vocab-size", "300", "--output", "x", "--output", "y"],
            "--output",
        ),
        (["count", "--input", "a", "--output", "x", "--output", "y"], "--output"),
        (["dataset", "--input", "a", "--output", "x", "--output", "y"], "--output"),
        (["show", "--text", "a", "--text", "b"], "--text"),
        (["inspect", "--model", "gpt2"], "--model"),
        (["export", "--format", "hf", "--format", "tiktoken", "--output", "x"], "--format"),
    ],
)
def test_a_single_valued_option_given_twice_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], model: Path, command: list[str], option: str
) -> None:
    """The last value is not silently taken: which file did the user mean?"""
    result = run(capsys, command[0], "--model", model, *command[1:])
    one_line_failure(result, f"bpetite {command[0]}: error: {option} given twice", code=2)


# --------------------------------------------------------------------------- notes after --output


def test_each_encode_note_says_what_the_output_holds(
    capsys: pytest.CaptureFixture[str], model: Path, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    ids = tokenizer.encode(TEXT)
    count = tmp_path / "count.json"
    result = run(capsys, "encode", "--model", model, "--text", TEXT, "--count", "--output", count)
    assert result.code == 0 and count.read_text() == f"{tokenizer.count_tokens(TEXT)}\n"
    assert result.err == f"bpetite: wrote the count of ids ({len(ids)}) to '{count}'\n"

    offsets = tmp_path / "offsets.json"
    result = run(
        capsys, "encode", "--model", model, "--text", TEXT, "--offsets", "--output", offsets
    )
    assert result.code == 0 and len(json.loads(offsets.read_text())) == len(ids)
    assert result.err == f"bpetite: wrote {len(ids)} ids with their offsets to '{offsets}'\n"

    limit = len(ids) - 1
    verdict = tmp_path / "within.json"
    argv = ["--text", TEXT, "--within-limit", limit, "--output", verdict]
    result = run(capsys, "encode", "--model", model, *argv)
    assert not tokenizer.is_within_limit(TEXT, limit)
    assert result.code == 0 and verdict.read_text() == "false\n"
    assert result.err == f"bpetite: wrote false (the text is over {limit} ids) to '{verdict}'\n"


# --------------------------------------------------------------------------- decode --stream


def test_a_bad_byte_on_decode_stream_is_named_with_its_offset(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    tokenizer: Tokenizer,
) -> None:
    first = tokenizer.encode("hi")
    data = f"{json.dumps(first)}\n".encode() + b"\xff\n"
    for errors in ("surrogateescape", "strict"):  # a C locale's stdin, and a UTF-8 one's
        stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors)
        monkeypatch.setattr(sys, "stdin", stdin)
        result = run(capsys, "decode", "--model", model, "--stream")
        assert (result.code, result.out) == (1, "hi")
        last = result.err.splitlines()[-1]
        offset = data.index(b"\xff")
        assert (
            f"line 2: standard input is not valid UTF-8: byte 0xff at byte offset {offset}" in last
        )
        assert "\\udcff" not in last and "Traceback" not in result.err


# --------------------------------------------------------------------------- empty --output, demo


@pytest.mark.parametrize("command", ["encode", "decode", "truncate", "chunk"])
def test_an_empty_output_path_is_called_empty(
    capsys: pytest.CaptureFixture[str], model: Path, command: str
) -> None:
    source = ["--ids", "104"] if command == "decode" else ["--text", "hi"]
    budget = ["--max-tokens", "1"] if command in ("truncate", "chunk") else []
    result = run(capsys, command, "--model", model, *source, *budget, "--output", "")
    last = one_line_failure(result, "--output '' is empty")
    assert "directory" not in last


def test_demo_of_an_empty_text_has_no_bytes_per_token(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """0 bytes in 0 tokens is no ratio: null, as ``inspect`` reports it, not 0.0."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT * 5, encoding="utf-8")
    result = run(capsys, "demo", "--input", corpus, "--text", "", "--vocab-size", 260)
    assert result.code == 0
    report = json.loads(result.out)
    assert (report["tokens"], report["bytes_per_token"]) == (0, None)
