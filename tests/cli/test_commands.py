"""The CLI driven in-process through ``main(argv)``: every command, every expected failure.

Each result is checked against something the CLI did not produce: the spec's naive
trainer and encoder of ``bpetite.reference``, the bytes of the input, tiktoken built
straight from the committed GPT-2 files. Failures must exit with the exact code, leave
stdout empty and print one ``bpetite: error:`` line without a traceback.
"""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import bpetite
from bpetite import Progress, Tokenizer, reference
from bpetite.cli import _output as output
from bpetite.cli import _progress as progress
from bpetite.cli import main
from bpetite.cli.commands import _demo as demo
from bpetite.cli.commands import _train as train
from bpetite.visualize import render_plain, token_pieces
from tests import datafiles
from tests.cli.running import Result, run
from tests.datafiles import build_tiktoken_cache

# Repeated words for merges, CRLF line ends to catch newline translation, multi-byte
# characters, and the special token literal (ordinary text when training).
CORPUS = (
    "The quick brown fox jumps over the lazy dog; the dog sleeps.\r\n"
    "naïve café, 日本語のテキスト, emoji 🤔🤔 and <|endoftext|> as plain text.\r\n"
) * 12
TEXT = "The lazy fox, naïve 🤔!\r\n<|endoftext|><|endoftext|> <|endoftext tail"
SMALL_VOCAB = 300
#: What `bpetite train` promises on stdout.
SUMMARY_KEYS = frozenset(
    {
        "corpus_bytes",
        "requested_vocab_size",
        "actual_mergeable_vocab_size",
        "special_token_count",
        "elapsed_ms",
    }
)


def assert_fails(result: Result, *fragments: str, code: int = 1) -> str:
    """Exit `code`, nothing on stdout, and the error as the last stderr line; returns it."""
    assert result.code == code, result
    assert result.out == ""
    assert "Traceback" not in result.err
    last = result.err.splitlines()[-1]
    if code == 1:
        assert last.startswith("bpetite: error: "), result.err
    for fragment in fragments:
        assert fragment in last, (fragment, last)
    return last


def assert_one_line_failure(result: Result, *fragments: str) -> str:
    """A failure before any work: stderr is exactly the one error line."""
    line = assert_fails(result, *fragments)
    assert result.err == line + "\n"
    return line


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_bytes(CORPUS.encode("utf-8"))
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """An artifact made by the library itself, independent of ``bpetite train``."""
    path = tmp_path / "model.json"
    Tokenizer.train(CORPUS, SMALL_VOCAB).save(str(path))
    return path


@functools.cache
def reference_merges() -> tuple[tuple[int, int], ...]:
    """The reference's merges of CORPUS, computed once: many tests check against them."""
    return tuple(reference.train(CORPUS, SMALL_VOCAB))


@pytest.fixture
def merges() -> list[tuple[int, int]]:
    return list(reference_merges())


def train_argv(
    source: object, vocab_size: object, output: object, *, force: bool = False
) -> list[str]:
    argv = [
        "train",
        "--input",
        str(source),
        "--vocab-size",
        str(vocab_size),
        "--output",
        str(output),
    ]
    return [*argv, "--force"] if force else argv


def set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def artifact_merges(path: Path) -> list[tuple[int, int]]:
    return [(left, right) for left, right in json.loads(path.read_bytes())["merges"]]


# --------------------------------------------------------------------------- top level


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "--version")
    assert result.code == 0
    assert result.out == f"bpetite {version('bpetite')}\n"


@pytest.mark.parametrize("command", ["train", "encode", "decode", "compare-tiktoken", "demo"])
def test_every_command_has_help_with_an_example(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    result = run(capsys, command, "--help")
    assert result.code == 0
    assert f"usage: bpetite {command}" in result.out
    examples = result.out.split("examples:\n", 1)[1]
    assert f"bpetite {command}" in examples


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys)
    assert_fails(result, code=2)
    assert "usage: bpetite" in result.err


# --------------------------------------------------------------------------- train


def test_train_saves_the_naive_trainers_merges_and_prints_the_summary(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    merges: list[tuple[int, int]],
) -> None:
    output = tmp_path / "out.json"
    result = run(capsys, *train_argv(corpus_file, SMALL_VOCAB, output))
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert result.out == json.dumps(summary) + "\n"  # one line, nothing else
    assert set(summary) >= SUMMARY_KEYS  # more fields may be added, never fewer
    assert summary["corpus_bytes"] == len(CORPUS.encode("utf-8"))
    assert summary["requested_vocab_size"] == SMALL_VOCAB
    assert summary["actual_mergeable_vocab_size"] == 256 + len(merges) == SMALL_VOCAB
    assert summary["special_token_count"] == 1
    assert isinstance(summary["elapsed_ms"], int)
    assert summary["elapsed_ms"] >= 0
    assert artifact_merges(output) == merges
    assert "train: started, 0/44 merges" in result.err
    assert "train: done, 44/44 merges in" in result.err


def test_train_keeps_crlf_bytes_exactly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Text-mode reading would turn \\r\\n into \\n and learn different merges."""
    corpus = "line one\r\nline two\r\n" * 50
    source = tmp_path / "crlf.txt"
    source.write_bytes(corpus.encode("utf-8"))
    output = tmp_path / "crlf.json"
    result = run(capsys, *train_argv(source, 270, output))
    assert result.code == 0, result.err
    assert artifact_merges(output) == reference.train(corpus, 270)
    assert artifact_merges(output) != reference.train(corpus.replace("\r\n", "\n"), 270)
    assert b"\r\n" in reference.vocab(artifact_merges(output)).values()


def test_train_reads_stdin_like_a_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    corpus_file: Path,
) -> None:
    set_stdin(monkeypatch, CORPUS.encode("utf-8"))
    from_stdin = tmp_path / "stdin.json"
    result = run(capsys, *train_argv("-", SMALL_VOCAB, from_stdin))
    assert result.code == 0, result.err
    from_file = tmp_path / "file.json"
    assert run(capsys, *train_argv(corpus_file, SMALL_VOCAB, from_file)).code == 0
    assert from_stdin.read_bytes() == from_file.read_bytes()


def test_train_reports_progress_every_100_merges(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, shakespeare_path: Path
) -> None:
    result = run(capsys, *train_argv(shakespeare_path, 606, tmp_path / "s.json"))
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if line.startswith("train:")]
    assert lines[0] == "train: started, 0/350 merges"
    assert [line.split()[1] for line in lines[1:-1]] == ["100/350", "200/350", "300/350"]
    assert lines[-1].startswith("train: done, 350/350 merges in ")


def test_train_says_when_it_stops_early(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "tiny.txt"
    source.write_bytes(b"ab ab abc")
    output = tmp_path / "tiny.json"
    result = run(capsys, *train_argv(source, 1000, output))
    assert result.code == 0, result.err
    expected = reference.train("ab ab abc", 1000)
    assert json.loads(result.out)["actual_mergeable_vocab_size"] == 256 + len(expected)
    assert artifact_merges(output) == expected
    assert f"done, {len(expected)}/744 merges" in result.err
    assert "stopped early: no adjacent pair left to merge" in result.err


def test_train_at_256_learns_no_merges(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    output = tmp_path / "base.json"
    result = run(capsys, *train_argv(corpus_file, 256, output))
    assert result.code == 0
    assert json.loads(result.out)["actual_mergeable_vocab_size"] == 256
    assert artifact_merges(output) == []


def test_train_refuses_an_existing_output_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    output = tmp_path / "exists.json"
    output.write_bytes(b"precious")
    result = run(capsys, *train_argv(corpus_file, 300, output))
    assert_one_line_failure(result, str(output), "already exists", "--force")
    assert output.read_bytes() == b"precious"


def test_train_refuses_existing_output_even_before_reading_a_missing_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "exists.json"
    output.write_bytes(b"precious")
    result = run(capsys, *train_argv(tmp_path / "nope.txt", 300, output))
    assert_one_line_failure(result, "already exists")


def test_train_force_replaces_an_existing_output(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    merges: list[tuple[int, int]],
) -> None:
    output = tmp_path / "exists.json"
    output.write_bytes(b"old")
    result = run(capsys, *train_argv(corpus_file, 300, output, force=True))
    assert result.code == 0, result.err
    assert artifact_merges(output) == merges


@pytest.mark.parametrize(
    ("make_output", "fragments"),
    [
        (lambda tmp: tmp / "missing-dir" / "out.json", ("missing-dir", "does not exist")),
        (lambda tmp: tmp, ("is a directory",)),
        (lambda tmp: tmp / "corpus.txt" / "out.json", ("is not a directory",)),
    ],
    ids=["missing-parent", "output-is-directory", "parent-is-file"],
)
def test_train_rejects_an_unwritable_output_before_training(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    make_output: Any,
    fragments: tuple[str, ...],
) -> None:
    output = make_output(tmp_path)
    result = run(capsys, *train_argv(corpus_file, 300, output, force=True))
    assert_one_line_failure(result, *fragments)


def test_train_missing_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    result = run(capsys, *train_argv(missing, 300, tmp_path / "o.json"))
    assert_one_line_failure(result, str(missing), "does not exist")
    assert not (tmp_path / "o.json").exists()


def test_train_input_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run(capsys, *train_argv(tmp_path, 300, tmp_path / "o.json"))
    assert_one_line_failure(result, str(tmp_path), "is a directory")


@pytest.mark.parametrize(
    ("data", "offset", "byte"),
    [
        (b"hello \xff world", 6, 0xFF),
        ("caf\u00e9 ".encode() + b"\xc3(", 6, 0xC3),  # a lead byte without its continuation
        ("ok \u00e9".encode() + b"\xe2\x82", 5, 0xE2),  # truncated at the very end
        (b"\xed\xa0\x80", 0, 0xED),  # an encoded surrogate is not UTF-8
    ],
)
def test_train_invalid_utf8_names_the_file_and_byte_offset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: bytes, offset: int, byte: int
) -> None:
    with pytest.raises(UnicodeDecodeError) as expected:
        data.decode("utf-8")
    assert expected.value.start == offset  # the offset we expect is Python's own
    source = tmp_path / "bad.txt"
    source.write_bytes(data)
    result = run(capsys, *train_argv(source, 300, tmp_path / "o.json"))
    assert_fails(
        result, str(source), "not valid UTF-8", f"byte 0x{byte:02x} at byte offset {offset}"
    )
    assert result.err.count("bpetite: error:") == 1
    assert not (tmp_path / "o.json").exists()


def test_train_invalid_utf8_on_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    set_stdin(monkeypatch, b"abc\x80")
    result = run(capsys, *train_argv("-", 300, tmp_path / "o.json"))
    assert_fails(result, "standard input is not valid UTF-8", "byte offset 3")


def test_train_vocab_size_below_256_is_a_runtime_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    result = run(capsys, *train_argv(corpus_file, 255, tmp_path / "o.json"))
    assert_one_line_failure(result, "--vocab-size must be at least 256", "got 255")


@pytest.mark.parametrize("value", ["abc", "512.0", "1e3", ""])
def test_train_vocab_size_not_a_number_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path, value: str
) -> None:
    result = run(capsys, *train_argv(corpus_file, value, tmp_path / "o.json"))
    assert_fails(result, "--vocab-size", "invalid int value", code=2)
    assert "usage: bpetite train" in result.err


def test_train_missing_required_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_fails(run(capsys, "train", "--input", "x"), "required", code=2)


def test_train_interrupted_leaves_no_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    shakespeare_path: Path,
) -> None:
    """Ctrl-C half-way: one line, exit 130, and neither the artifact nor a temp file."""

    def interrupting(phase: progress.PhaseProgress) -> Any:
        forward = progress.training_progress(phase)

        def report(event: Progress) -> None:
            forward(event)
            if event.done >= 200:
                raise KeyboardInterrupt

        return report

    monkeypatch.setattr(train, "training_progress", interrupting)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run(capsys, *train_argv(shakespeare_path, 2000, out_dir / "t.json"))
    assert_fails(result, "interrupted", code=130)
    assert "train: 200/1744 merges" in result.err
    assert list(out_dir.iterdir()) == []


def test_train_failing_save_leaves_no_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    corpus_file: Path,
) -> None:
    """A failure inside the atomic write (here: fsync) must not leave a partial artifact."""

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run(capsys, *train_argv(corpus_file, 300, out_dir / "t.json"))
    assert_fails(result, "No space left on device")
    assert list(out_dir.iterdir()) == []


# --------------------------------------------------------------------------- encode


def test_encode_text_matches_the_naive_encoder(
    capsys: pytest.CaptureFixture[str], model: Path, merges: list[tuple[int, int]]
) -> None:
    result = run(capsys, "encode", "--model", str(model), "--text", TEXT)
    assert result.code == 0, result.err
    expected = reference.encode(reference.Model(merges), TEXT)
    assert json.loads(result.out) == expected
    assert result.out == "[" + ",".join(map(str, expected)) + "]\n"  # compact
    special = 256 + len(merges)
    assert expected.count(special) == 2  # the partial "<|endoftext" stays plain text
    assert result.err == ""


def test_encode_empty_text(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    result = run(capsys, "encode", "--model", str(model), "--text", "")
    assert (result.code, result.out) == (0, "[]\n")


def test_encode_input_file_uses_its_exact_bytes(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model: Path,
    merges: list[tuple[int, int]],
) -> None:
    source = tmp_path / "text.txt"
    source.write_bytes(TEXT.encode("utf-8"))
    result = run(capsys, "encode", "--model", str(model), "--input", str(source))
    assert result.code == 0, result.err
    assert json.loads(result.out) == reference.encode(reference.Model(merges), TEXT)


def test_encode_stdin(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    merges: list[tuple[int, int]],
) -> None:
    set_stdin(monkeypatch, TEXT.encode("utf-8"))
    result = run(capsys, "encode", "--model", str(model), "--input", "-")
    assert json.loads(result.out) == reference.encode(reference.Model(merges), TEXT)


def test_encode_text_with_undecodable_argv_bytes(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    """POSIX argv bytes that are not UTF-8 reach Python as lone surrogates."""
    argument = os.fsdecode(b"ab\xffc")
    assert argument == "ab\udcffc"
    result = run(capsys, "encode", "--model", str(model), "--text", argument)
    assert_one_line_failure(result, "--text is not valid UTF-8", "byte 0xff at character 2")


@pytest.mark.parametrize(
    "argv",
    [
        ["encode", "--model", "m.json"],
        ["encode", "--model", "m.json", "--text", "a", "--input", "b"],
        ["encode", "--text", "a"],
    ],
    ids=["no-source", "two-sources", "no-model"],
)
def test_encode_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert_fails(run(capsys, *argv), code=2)


def test_encode_input_invalid_utf8(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    source = tmp_path / "bad.txt"
    source.write_bytes(b"good \xc0\xaf")
    result = run(capsys, "encode", "--model", str(model), "--input", str(source))
    assert_one_line_failure(result, str(source), "byte 0xc0 at byte offset 5")


def test_missing_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    result = run(capsys, "encode", "--model", str(missing), "--text", "a")
    assert_one_line_failure(result, f"model file '{missing}' does not exist")


def test_model_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run(capsys, "decode", "--model", str(tmp_path), "--ids", "1")
    assert_one_line_failure(result, str(tmp_path), "is a directory")


def deny_reading(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make opening `denied` fail as a file without read permission would.

    Simulated, because root reads any file; test_process.py has a real one.
    Both ``open`` and ``io.open`` are patched (``Path.open`` goes through ``io.open``).
    """
    import builtins

    real_open = io.open

    def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and Path(file) == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", guarded)
    monkeypatch.setattr(builtins, "open", guarded)


def test_model_permission_denied(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: Path
) -> None:
    deny_reading(monkeypatch, model)
    result = run(capsys, "encode", "--model", str(model), "--text", "a")
    assert_one_line_failure(result, str(model), "permission denied")


def test_input_permission_denied(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    model: Path,
) -> None:  # fmt: skip
    source = tmp_path / "text.txt"
    source.write_text("text", encoding="utf-8")
    deny_reading(monkeypatch, source)
    result = run(capsys, "encode", "--model", str(model), "--input", str(source))
    assert_one_line_failure(result, str(source), "permission denied")


def _edit(document: dict[str, Any], change: str) -> dict[str, Any]:
    if change == "schema":
        document["schema_version"] = 3
    elif change == "missing-key":
        del document["merges"]
    elif change == "vocab-byte":
        document["vocab"]["299"] = [*document["vocab"]["299"], 33]
    elif change == "byte-range":
        document["vocab"]["65"] = [256]
    return document


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ("schema", "schema_version 3 is not supported"),
        ("missing-key", "missing required key(s) merges"),
        ("vocab-byte", 'vocab["299"] must be the bytes of merges[43]'),
        ("byte-range", 'vocab["65"][0] must be an integer in 0..255'),
    ],
)
def test_hand_edited_model(
    capsys: pytest.CaptureFixture[str], model: Path, change: str, fragment: str
) -> None:
    model.write_text(json.dumps(_edit(json.loads(model.read_bytes()), change)), encoding="utf-8")
    result = run(capsys, "encode", "--model", str(model), "--text", "a")
    line = assert_one_line_failure(result, f"model '{model}' is not a valid bpetite artifact")
    assert fragment in line
    assert line.count(str(model)) == 1  # the loader's own path prefix is not repeated


@pytest.mark.parametrize("content", [b"", b'{"schema_version": 1,', b"\xff\xfe", b"[]"])
def test_corrupt_model(capsys: pytest.CaptureFixture[str], model: Path, content: bytes) -> None:
    model.write_bytes(content)
    result = run(capsys, "decode", "--model", str(model), "--ids", "1")
    assert_one_line_failure(result, "is not a valid bpetite artifact")


# --------------------------------------------------------------------------- decode


def test_decode_writes_exactly_the_text(
    capsysbinary: pytest.CaptureFixture[bytes], model: Path, merges: list[tuple[int, int]]
) -> None:
    ids = reference.encode(reference.Model(merges), TEXT)
    code = main(["decode", "--model", str(model), "--ids", *map(str, ids)])
    captured = capsysbinary.readouterr()
    assert code == 0
    assert captured.out == TEXT.encode("utf-8")  # CRLF intact, no newline added
    assert captured.err == b""


def test_decode_joins_a_character_split_across_ids(
    capsysbinary: pytest.CaptureFixture[bytes], model: Path
) -> None:
    assert main(["decode", "--model", str(model), "--ids", "195", "169"]) == 0
    assert capsysbinary.readouterr().out == "é".encode()


def test_decode_no_ids_is_empty(capsysbinary: pytest.CaptureFixture[bytes], model: Path) -> None:
    assert main(["decode", "--model", str(model), "--ids"]) == 0
    assert capsysbinary.readouterr().out == b""


def test_decode_json_file_and_stdin(
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    model: Path,
    merges: list[tuple[int, int]],
) -> None:
    ids = reference.encode(reference.Model(merges), TEXT)
    source = tmp_path / "ids.json"
    source.write_text(json.dumps(ids), encoding="utf-8")
    assert main(["decode", "--model", str(model), "--input", str(source)]) == 0
    assert capsysbinary.readouterr().out == TEXT.encode("utf-8")
    set_stdin(monkeypatch, json.dumps(ids, indent=2).encode())
    assert main(["decode", "--model", str(model), "--input", "-"]) == 0
    assert capsysbinary.readouterr().out == TEXT.encode("utf-8")


def test_encode_output_feeds_decode(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: Path
) -> None:
    encoded = run(capsys, "encode", "--model", str(model), "--text", TEXT).out
    set_stdin(monkeypatch, encoded.encode())
    spec_model = reference.Model(Tokenizer.load(str(model)).merges)
    assert reference.decode(spec_model, json.loads(encoded)) == TEXT
    assert run(capsys, "decode", "--model", str(model), "--input", "-").out == TEXT


@pytest.mark.parametrize("bad_id", ["301", "-1", "99999999999999999999"])
def test_decode_unknown_id(capsys: pytest.CaptureFixture[str], model: Path, bad_id: str) -> None:
    result = run(capsys, "decode", "--model", str(model), "--ids", "104", bad_id)
    assert_one_line_failure(result, f"unknown token id {bad_id} at position 1")


def test_decode_ids_that_are_not_utf8(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    """104 is 'h'; 240 alone starts a 4-byte character that never comes."""
    result = run(capsys, "decode", "--model", str(model), "--ids", "104", "240", "104")
    assert_one_line_failure(
        result, "do not decode to valid UTF-8", "at byte 1", "in token 240 at position 1"
    )


def test_decode_ids_not_integers_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    result = run(capsys, "decode", "--model", str(model), "--ids", "1", "two")
    assert_fails(result, "invalid int value: 'two'", code=2)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[1, 2", "is not valid JSON"),
        ('{"ids": [1]}', "must hold a JSON array of token ids, got dict"),
        ("[1, 2.0]", "item 1 is 2.0"),
        ("[true]", "item 0 is true"),
        ('["7"]', 'item 0 is "7"'),
    ],
)
def test_decode_input_must_be_a_json_array_of_ints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, content: str, fragment: str
) -> None:
    source = tmp_path / "ids.json"
    source.write_text(content, encoding="utf-8")
    result = run(capsys, "decode", "--model", str(model), "--input", str(source))
    assert_one_line_failure(result, str(source), fragment)


# --------------------------------------------------------------------------- --output


def source_args(command: str, model: Path) -> list[str]:
    """TEXT for encode, TEXT's ids for decode."""
    if command == "encode":
        return ["--text", TEXT]
    return ["--ids", *map(str, Tokenizer.load(model).encode(TEXT))]


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_output_file_holds_what_stdout_would(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path, model: Path, command: str
) -> None:
    assert main([command, "--model", str(model), *source_args(command, model)]) == 0
    on_stdout = capsysbinary.readouterr().out
    output = tmp_path / "result"
    argv = [command, "--model", str(model), *source_args(command, model), "--output", str(output)]
    assert main(argv) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert output.read_bytes() == on_stdout
    assert f"'{output}'" in captured.err.decode()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model.json", "result"]


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_output_file_is_refused_when_it_exists_unless_forced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, command: str
) -> None:
    output = tmp_path / "result"
    output.write_text("keep me", encoding="utf-8")
    argv = [command, "--model", str(model), *source_args(command, model), "--output", str(output)]
    assert_one_line_failure(run(capsys, *argv), f"--output '{output}' already exists", "--force")
    assert output.read_text(encoding="utf-8") == "keep me"
    assert run(capsys, *argv, "--force").code == 0
    assert output.read_text(encoding="utf-8") != "keep me"


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_output_file_never_replaces_an_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path, command: str
) -> None:
    source = tmp_path / "input"
    content = TEXT if command == "encode" else json.dumps(Tokenizer.load(model).encode(TEXT))
    source.write_bytes(content.encode("utf-8"))
    for target in (source, model):
        argv = [command, "--model", str(model), "--input", str(source), "--output", str(target)]
        result = run(capsys, *argv, "--force")
        assert_one_line_failure(result, "would destroy the input, even with --force")
    assert source.read_bytes() == content.encode("utf-8")


def test_decode_output_file_is_not_made_for_ids_that_are_not_utf8(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: Path
) -> None:
    """The text is checked while it is written to the temp file: a failure removes it."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    argv = ["decode", "--model", str(model), "--ids", "104", "240", "--output", str(out_dir / "t")]
    assert_one_line_failure(run(capsys, *argv), "do not decode to valid UTF-8")
    assert list(out_dir.iterdir()) == []


# --------------------------------------------------------------------------- compare-tiktoken


@pytest.fixture
def tiktoken_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A prepared offline cache, and tiktoken's in-memory registry emptied around the test."""
    tiktoken_registry = pytest.importorskip("tiktoken.registry")
    monkeypatch.setattr(tiktoken_registry, "ENCODINGS", {})
    cache = build_tiktoken_cache(tmp_path / "tiktoken-cache")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def tiktoken_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The test plugin's encoding (an encoding bpetite does not ship) known to tiktoken;
    returns its name.

    tiktoken looks for plugins once and keeps their constructors in
    ``ENCODING_CONSTRUCTORS``; the plugin module is imported from ``sys.path`` and its
    constructor added to that table for the test only (the subprocess test lets tiktoken
    find it on ``PYTHONPATH`` itself), so no other test sees the plugin.
    """
    tiktoken = pytest.importorskip("tiktoken")
    registry = pytest.importorskip("tiktoken.registry")
    monkeypatch.syspath_prepend(str(datafiles.write_tiktoken_plugin(tmp_path / "plugins")))
    tiktoken.list_encoding_names()  # tiktoken's own look for plugins, done once
    plugin = importlib.import_module(datafiles.PLUGIN_MODULE)
    constructors = {**registry.ENCODING_CONSTRUCTORS, **plugin.ENCODING_CONSTRUCTORS}
    monkeypatch.setattr(registry, "ENCODINGS", {})
    monkeypatch.setattr(registry, "ENCODING_CONSTRUCTORS", constructors)
    yield datafiles.PLUGIN_ENCODING
    sys.modules.pop(datafiles.PLUGIN_MODULE, None)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every socket connection fails the test; returns the addresses tried."""
    import socket

    connections: list[object] = []

    def connect(self: socket.socket, address: object) -> None:
        connections.append(address)
        raise AssertionError(f"compare-tiktoken opened a connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    return connections


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty TIKTOKEN_CACHE_DIR."""
    empty = tmp_path / "empty-cache"
    empty.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(empty))
    return empty


@pytest.fixture(scope="module")
def reference_gpt2(gpt2_dir: Path) -> Any:
    """tiktoken's gpt2, built from the files directly: no cache, no get_encoding; once for
    the module, as tiktoken's encodings do not change."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(gpt2_dir / "vocab.bpe"),
        encoder_json_file=str(gpt2_dir / "encoder.json"),
    )
    pattern = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    return tiktoken.Encoding(
        name="gpt2-reference",
        pat_str=pattern,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 50256},
    )


def test_compare_tiktoken_reports_both_tokenizations(
    capsys: pytest.CaptureFixture[str],
    tiktoken_cache: Path,
    reference_gpt2: Any,
    model: Path,
    merges: list[tuple[int, int]],
) -> None:
    text = "Hello world <|endoftext|> naïve 🤔 <|fim_prefix|>"
    result = run(capsys, "compare-tiktoken", "--model", str(model), "--text", text)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    ours = reference.encode(reference.Model(merges), text)
    theirs = reference_gpt2.encode(text, allowed_special={"<|endoftext|>"})
    assert report == {
        "text_bytes": len(text.encode("utf-8")),
        "bpetite": {"count": len(ours), "ids": ours},
        "tiktoken": {"encoding": "gpt2", "count": len(theirs), "ids": theirs},
    }
    assert theirs[:2] == [15496, 995]  # GPT-2's well-known ids for "Hello", " world"
    assert 50256 in theirs  # the special token is special for both
    assert result.err == ""  # the table is only drawn on a terminal


def test_compare_tiktoken_other_encoding(
    capsys: pytest.CaptureFixture[str], tiktoken_cache: Path, reference_gpt2: Any, model: Path
) -> None:
    """r50k_base is GPT-2's vocabulary in tiktoken's own file format."""
    result = run(
        capsys,
        "compare-tiktoken",
        "--model",
        str(model),
        "--text",
        "Hello world",
        "--encoding",
        "r50k_base",
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["tiktoken"] == {
        "encoding": "r50k_base",
        "count": 2,
        "ids": reference_gpt2.encode("Hello world"),
    }


def test_compare_tiktoken_without_tiktoken(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: Path
) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # makes `import tiktoken` fail
    result = run(capsys, "compare-tiktoken", "--model", str(model), "--text", "hi")
    assert_one_line_failure(
        result,
        "needs the optional tiktoken package",
        "uv sync --extra tiktoken",
        "pip install 'bpetite[tiktoken]'",
    )


def test_compare_tiktoken_never_downloads(
    capsys: pytest.CaptureFixture[str],
    tiktoken_plugin: str,
    empty_cache: Path,
    no_network: list[object],
    model: Path,
) -> None:
    """An encoding that is not in tiktoken's cache is an error with the fix, and no socket
    is ever opened."""
    import tiktoken.load

    read_file = tiktoken.load.read_file
    result = run(
        capsys, "compare-tiktoken", "--model", str(model), "--text", "hi",
        "--encoding", tiktoken_plugin,
    )  # fmt: skip
    assert_one_line_failure(
        result,
        "no valid cached copy",
        datafiles.PLUGIN_URL,
        "bpetite never downloads",
        "TIKTOKEN_CACHE_DIR",
        f"tiktoken.get_encoding('{tiktoken_plugin}')",
    )
    assert no_network == []
    assert tiktoken.load.read_file is read_file  # the guard is undone
    assert list(empty_cache.iterdir()) == []


def test_compare_tiktoken_reads_an_encoding_from_the_cache(
    capsys: pytest.CaptureFixture[str],
    tiktoken_plugin: str,
    empty_cache: Path,
    no_network: list[object],
    model: Path,
) -> None:
    """An encoding bpetite does not ship is built from tiktoken's cached file: the test
    plugin's is p50k_base's, so its ids are p50k_base's (tiktoken built from the test data)."""
    datafiles.cache_plugin_file(empty_cache)
    text = "Hello world <|endoftext|> naïve 🤔 12345"
    result = run(
        capsys, "compare-tiktoken", "--model", str(model), "--text", text,
        "--encoding", tiktoken_plugin,
    )  # fmt: skip
    assert result.code == 0, result.err
    expected = datafiles.tiktoken_encoding("p50k_base").encode(
        text, allowed_special={"<|endoftext|>"}
    )
    assert json.loads(result.out)["tiktoken"] == {
        "encoding": tiktoken_plugin,
        "count": len(expected),
        "ids": expected,
    }
    assert no_network == []


@pytest.mark.parametrize(
    "name",
    ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"],
)
def test_compare_tiktoken_builds_the_shipped_encodings_offline(
    capsys: pytest.CaptureFixture[str],
    empty_cache: Path,
    no_network: list[object],
    model: Path,
    name: str,
) -> None:
    """tiktoken builds every encoding bpetite ships from bpetite's copy of the rank file:
    no cache, no socket, and tiktoken's ids (tiktoken built from the test data)."""
    import tiktoken_ext.openai_public as openai_public

    assert name in bpetite.list_encoding_names()
    loader = openai_public.load_tiktoken_bpe
    text = "Hello world <|endoftext|> naïve 🤔 12345"
    result = run(
        capsys, "compare-tiktoken", "--model", str(model), "--text", text, "--encoding", name
    )
    assert result.code == 0, result.err
    expected = datafiles.tiktoken_encoding(name).encode(text, allowed_special={"<|endoftext|>"})
    assert json.loads(result.out)["tiktoken"] == {
        "encoding": name,
        "count": len(expected),
        "ids": expected,
    }
    assert no_network == []
    assert openai_public.load_tiktoken_bpe is loader  # the swap is undone
    assert list(empty_cache.iterdir()) == []


def test_compare_tiktoken_unknown_encoding(
    capsys: pytest.CaptureFixture[str], tiktoken_cache: Path, model: Path
) -> None:
    result = run(
        capsys, "compare-tiktoken", "--model", str(model), "--text", "hi", "--encoding", "gpt5"
    )
    assert_one_line_failure(result, "no encoding 'gpt5'", "gpt2", "cl100k_base")


def test_compare_tiktoken_corrupt_cache_file(
    capsys: pytest.CaptureFixture[str],
    tiktoken_plugin: str,
    empty_cache: Path,
    no_network: list[object],
    model: Path,
) -> None:
    """A cached file that fails tiktoken's hash check must not be re-fetched either: the
    error names the file."""
    datafiles.cache_plugin_file(empty_cache).write_bytes(b"garbage")
    result = run(
        capsys, "compare-tiktoken", "--model", str(model), "--text", "hi",
        "--encoding", tiktoken_plugin,
    )  # fmt: skip
    assert_one_line_failure(result, "no valid cached copy", datafiles.PLUGIN_URL)
    assert no_network == []


# --------------------------------------------------------------------------- demo


@pytest.fixture
def demo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory; temporary files go under tmp_path / "temp"."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return work


def check_demo_report(report: dict[str, Any], text: str, merges: list[tuple[int, int]]) -> None:
    """The summary against the merges the corpus gives, using only the naive reference."""
    ids = reference.encode(reference.Model(merges), text)
    assert report["text"] == text
    assert report["ids"] == ids
    assert report["tokens"] == len(ids)
    assert report["bytes_per_token"] == round(len(text.encode("utf-8")) / len(ids), 2)
    assert report["actual_mergeable_vocab_size"] == 256 + len(merges)
    assert report["roundtrip"] is True
    assert reference.decode(reference.Model(merges), ids) == text


def test_demo_with_input_and_output(
    capsys: pytest.CaptureFixture[str], demo_dir: Path, corpus_file: Path
) -> None:
    result = run(
        capsys,
        "demo",
        "--input",
        str(corpus_file),
        "--vocab-size",
        "300",
        "--output",
        "demo.json",
        "--text",
        TEXT,
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["artifact"] == "demo.json"
    assert report["corpus"] == str(corpus_file)
    assert report["corpus_bytes"] == corpus_file.stat().st_size
    merges = list(reference_merges())  # --vocab-size 300 is SMALL_VOCAB
    assert artifact_merges(demo_dir / "demo.json") == merges
    check_demo_report(report, TEXT, merges)
    pieces = token_pieces(
        reference.encode(reference.Model(merges), TEXT),
        reference.vocab(merges),
        {256 + len(merges)},
    )
    assert "demo: tokens: " + render_plain(pieces) in result.err  # as `bpetite show` draws
    assert "roundtrip: decode(encode(text)) == text: ok" in result.err


def test_demo_shows_partial_characters_in_hex(
    capsys: pytest.CaptureFixture[str], demo_dir: Path, corpus_file: Path
) -> None:
    result = run(
        capsys,
        "demo",
        "--input",
        str(corpus_file),
        "--vocab-size",
        "256",
        "--output",
        "d.json",
        "--text",
        "é",
    )
    assert result.code == 0, result.err
    assert "demo: tokens: ⟨c3⟩|⟨a9⟩\n" in result.err


def test_demo_trains_on_the_packaged_tinyshakespeare_and_keeps_nothing(
    capsys: pytest.CaptureFixture[str],
    demo_dir: Path,
    tmp_path: Path,
    shakespeare_text: str,
    shakespeare_reference: tuple[Counter[bytes], list[tuple[int, int]]],
) -> None:
    result = run(capsys, "demo", "--vocab-size", "300")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["corpus"] == "TinyShakespeare (built in)"
    assert report["corpus_bytes"] == len(shakespeare_text.encode("utf-8"))
    assert report["artifact"] is None
    # reference.train(shakespeare_text, 300), from the naive run the trainer's tests share:
    # its chunk counts are the reference's, and training to 300 makes the first 44 of its
    # merges to 400 (each merge is chosen without looking at the size)
    chunks, merges = shakespeare_reference
    assert chunks == Counter(chunk.encode("utf-8") for chunk in reference.split(shakespeare_text))
    check_demo_report(report, demo.DEFAULT_TEXT, merges[: 300 - 256])
    assert "pass --output PATH to keep it" in result.err
    assert list((tmp_path / "temp").iterdir()) == []  # the temporary artifact is gone
    assert list(demo_dir.iterdir()) == []  # nothing written to the working directory


def test_demo_never_looks_for_a_corpus_beside_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    demo_dir: Path,
    corpus_file: Path,
) -> None:
    """Neither data/ nor ../shared/data/ nor $BPETITE_CORPUS: the default is built in."""
    for where in (demo_dir / "data", demo_dir.parent / "shared" / "data"):
        where.mkdir(parents=True)
        (where / "tinyshakespeare.txt").write_text("other text", encoding="utf-8")
    monkeypatch.setenv("BPETITE_CORPUS", str(corpus_file))
    result = run(capsys, "demo", "--vocab-size", "256")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["corpus"] == "TinyShakespeare (built in)"
    assert report["corpus_bytes"] == 1115394


@pytest.mark.parametrize("failure", ["KeyboardInterrupt", "OSError"])
def test_demo_removes_its_temporary_artifact_when_it_fails(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    demo_dir: Path,
    tmp_path: Path,
    corpus_file: Path,
    failure: str,
) -> None:
    """Ctrl-C or an error while the artifact exists still removes its directory."""
    seen: list[Path] = []

    def fail_after_save(path: str) -> Tokenizer:
        seen.append(Path(path))
        assert Path(path).is_file()
        if failure == "KeyboardInterrupt":
            raise KeyboardInterrupt
        raise OSError(5, "Input/output error", path)  # a read failure names its file

    monkeypatch.setattr(demo, "load_model", fail_after_save)
    result = run(capsys, "demo", "--input", str(corpus_file), "--vocab-size", "300")
    assert_fails(result, code=130 if failure == "KeyboardInterrupt" else 1)
    assert seen and seen[0].parent.parent == tmp_path / "temp"
    assert list((tmp_path / "temp").iterdir()) == []


def test_demo_refuses_an_existing_output(
    capsys: pytest.CaptureFixture[str], demo_dir: Path
) -> None:
    (demo_dir / "taken.json").write_text("x", encoding="utf-8")
    result = run(capsys, "demo", "--output", "taken.json")
    assert_one_line_failure(result, "already exists", "--force")


def test_demo_vocab_size_below_256(capsys: pytest.CaptureFixture[str], demo_dir: Path) -> None:
    assert_one_line_failure(run(capsys, "demo", "--vocab-size", "10"), "at least 256")


# --------------------------------------------------------------------------- helpers


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_phase_progress_plain_lines() -> None:
    log = io.StringIO()
    clock = FakeClock()
    with progress.PhaseProgress("count", "bytes", stream=log, terminal=False, clock=clock) as phase:
        assert not phase.terminal
        phase.start(400)
        clock.now += 1
        phase.advance(100)
        clock.now += 1
        phase.update(300)
        clock.now += 0.5
        phase.finish(400)
    assert log.getvalue().splitlines() == [
        "count: started, 0/400 bytes",
        "count: 100/400 bytes (100 bytes/s, ETA 3.00 s)",
        "count: 300/400 bytes (150 bytes/s, ETA 0.67 s)",
        "count: done, 400/400 bytes in 2.50 s",
    ]


def test_phase_progress_slow_rates_and_long_durations() -> None:
    log = io.StringIO()
    clock = FakeClock()
    phase = progress.PhaseProgress("train", "merges", stream=log, terminal=False, clock=clock)
    phase.start(1000)
    clock.now += 75
    phase.update(10)  # 0.133/s: 990 to go take 7425 s
    clock.now += 50
    phase.finish()
    assert log.getvalue().splitlines()[1:] == [
        "train: 10/1000 merges (0.13 merges/s, ETA 2 h 04 min)",
        "train: done, 10/1000 merges in 2 min 05 s",
    ]


def test_training_progress_adapter() -> None:
    log = io.StringIO()
    phase = progress.PhaseProgress("train", "merges", stream=log, terminal=False)
    report = progress.training_progress(phase)
    report(Progress("merge", "start", 0, 300))
    report(Progress("merge", "update", 100, 300))
    report(Progress("merge", "done", 150, 300))
    lines = log.getvalue().splitlines()
    assert lines[0] == "train: started, 0/300 merges"
    assert lines[1].startswith("train: 100/300 merges")
    assert lines[2].startswith("train: done, 150/300 merges in ")
    assert lines[2].endswith("(stopped early: no adjacent pair left to merge)")


def test_is_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm-256color")
    assert output.is_terminal(Tty())
    assert not output.is_terminal(io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not output.is_terminal(Tty())
    closed = io.StringIO()
    closed.close()
    assert not output.is_terminal(closed)


def test_rich_is_not_needed_off_a_terminal(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    corpus_file: Path,
    model: Path,
) -> None:
    """Every command works with rich unimportable, as long as nothing is drawn live."""
    for name in [name for name in sys.modules if name == "rich" or name.startswith("rich.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rich", None)
    train_out = tmp_path / "t.json"
    assert run(capsys, *train_argv(corpus_file, 300, train_out)).code == 0
    assert run(capsys, "encode", "--model", str(model), "--text", "hi").code == 0
    assert run(capsys, "decode", "--model", str(model), "--ids", "104").code == 0
    assert (
        run(
            capsys,
            "demo",
            "--input",
            str(corpus_file),
            "--vocab-size",
            "300",
            "--output",
            str(tmp_path / "d.json"),
        ).code
        == 0
    )
