"""``encode --count``/``--offsets`` and ``decode --errors``/``--stream``, in process and as a
real process fed one line at a time.

Oracles: the library's ``encode``/``encode_with_offsets`` on the whole text (the CLI
streams files in blocks and computes spans per block), and ``bytes.decode`` of the
tokens' bytes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli.commands import _encode as encode_command
from tests.cli.running import run
from tests.processes import clean_env

TEXT = "naïve café 日本語 🤔🤔!\r\n<|endoftext|> tail <|endoftext"
CORPUS = TEXT * 20


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(CORPUS, 300)


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


@pytest.mark.parametrize("special", ["allow", "ordinary"])
def test_count_is_the_number_of_ids(
    capsys: pytest.CaptureFixture[str],
    model: Path,
    text_file: Path,
    tokenizer: Tokenizer,
    special: str,
) -> None:
    expected = tokenizer.encode(TEXT) if special == "allow" else tokenizer.encode_ordinary(TEXT)
    for source in (["--text", TEXT], ["--input", str(text_file)]):
        result = run(
            capsys, "encode", "--model", str(model), *source, "--special", special, "--count"
        )
        assert (result.code, result.out) == (0, f"{len(expected)}\n")


def test_count_with_special_raise_fails_cleanly(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    result = run(
        capsys, "encode", "--model", str(model), "--text", TEXT, "--special", "raise", "--count"
    )
    assert result.code == 1 and result.out == ""
    assert "'<|endoftext|>' at character" in result.err


@pytest.mark.parametrize("block_size", [1, 3, 7, 1 << 16])
def test_offsets_equal_the_librarys_spans_whatever_the_block_size(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    text_file: Path,
    tokenizer: Tokenizer,
    block_size: int,
) -> None:
    """Blocks cut characters and specials; the spans must still be the whole text's."""
    monkeypatch.setattr(encode_command, "BLOCK_SIZE", block_size)
    text = TEXT * 3
    text_file.write_bytes(text.encode("utf-8"))
    ids, spans = tokenizer.encode_with_offsets(text)
    expected = [[token, start, end] for token, (start, end) in zip(ids, spans, strict=True)]
    result = run(capsys, "encode", "--model", str(model), "--input", str(text_file), "--offsets")
    assert result.code == 0
    assert json.loads(result.out) == expected
    assert result.out == json.dumps(expected, separators=(",", ":")) + "\n"


def test_offsets_of_a_cut_character(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bytes.json"
    Tokenizer([]).save(path)
    result = run(capsys, "encode", "--model", str(path), "--text", "hé!", "--offsets")
    assert result.out == "[[104,0,1],[195,1,2],[169,1,2],[33,2,3]]\n"


def test_count_and_offsets_exclude_each_other(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    result = run(capsys, "encode", "--model", str(model), "--text", "x", "--count", "--offsets")
    assert (result.code, result.out) == (2, "")
    assert "not allowed with argument --count" in result.err


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_decode_errors_is_bytes_decode(
    capsys: pytest.CaptureFixture[str], model: Path, tokenizer: Tokenizer, errors: str
) -> None:
    ids = [*tokenizer.encode("日本"), 0xE6, 0x97, *tokenizer.encode(" ok"), 0xFF, 0xC3]
    data = b"".join(tokenizer.vocab[token] for token in ids)
    result = run(
        capsys, "decode", "--model", str(model), "--errors", errors, "--ids", *map(str, ids)
    )
    assert result.code == 0
    assert result.out == data.decode("utf-8", errors=errors)
    strict = run(capsys, "decode", "--model", str(model), "--ids", *map(str, ids))
    assert strict.code == 1 and strict.out == ""


def test_stream_in_process(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    tokenizer: Tokenizer,
) -> None:
    ids = tokenizer.encode(TEXT)
    lines = [str(ids[0]), json.dumps(ids[1:5]), "", *map(str, ids[5:])]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    result = run(capsys, "decode", "--model", str(model), "--stream")
    assert (result.code, result.out, result.err) == (0, TEXT, "")


@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        (["104", "x"], "line 2 is not a token id"),
        (["104", "[1, true]"], "line 2 is not a token id"),
        (["104", "99999"], "line 2: unknown token id 99999"),
        (["104", "195", "65"], "line 3: token 65 does not continue valid UTF-8"),
        (["104", "195"], "ended inside a character (after line 2)"),
    ],
)
def test_stream_failures_say_what_was_written(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    lines: list[str],
    fragment: str,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    result = run(capsys, "decode", "--model", str(model), "--stream")
    assert result.code == 1
    assert result.out == "h"  # the first line's text went out before the failure
    last = result.err.splitlines()[-1]
    assert fragment in last and "1 byte was written to standard output" in last
    assert "Traceback" not in result.err


def test_stream_replace_never_fails_and_refuses_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: Path
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("104\n195\n65\n226\n"))
    result = run(capsys, "decode", "--model", str(model), "--stream", "--errors", "replace")
    assert (result.code, result.out) == (0, b"h\xc3A\xe2".decode("utf-8", errors="replace"))
    refused = run(capsys, "decode", "--model", str(model), "--stream", "--output", "x.txt")
    assert refused.code == 2 and "drop --output" in refused.err


def test_stream_writes_each_line_before_the_next_arrives(model: Path, tokenizer: Tokenizer) -> None:
    """A real process: the text of a line comes out while stdin is still open."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "decode", "--model", str(model), "--stream"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        emoji = list("🤔".encode())
        # The first three bytes of the emoji: nothing may come out for them.
        for line in (json.dumps(tokenizer.encode("naïve ")), *map(str, emoji[:3])):
            process.stdin.write(line.encode() + b"\n")
            process.stdin.flush()
        assert os.read(process.stdout.fileno(), 100) == "naïve ".encode()
        process.stdin.write(f"{emoji[3]}\n".encode())
        process.stdin.flush()
        assert os.read(process.stdout.fileno(), 100) == "🤔".encode()
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert process.stdout.read() == b""
    finally:
        process.kill()
        process.wait()
