"""What the CLI audit found: each case a user met, and what the command now says.

``--version`` with stdout closed or gone, a repeated ``specials --drop``, an id in other
digits than 0-9, ``import`` of a FIFO or an empty device, usage mistakes that are usage
errors (exit 2) or say the option's name, and export refusals that give the command's
remedy, not the library's.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import bpetite
from bpetite import Tokenizer
from bpetite.interop import export_hf
from tests.cli.running import Result, run
from tests.processes import watchdog

END = "<|endoftext|>"
CORPUS = "hello world the cat sat on the mat " * 20

needs_posix = pytest.mark.skipif(os.name != "posix", reason="platform limit: FIFOs and >&-")


@pytest.fixture
def model(tmp_path: Path) -> str:
    path = tmp_path / "model.json"
    Tokenizer.train(CORPUS, 280, special_tokens=[END]).save(path)
    return str(path)


def one_line_failure(result: Result, message: str) -> None:
    assert (result.code, result.out) == (1, "")
    assert result.err == f"bpetite: error: {message}\n"


def usage_error(result: Result, command: str, message: str) -> None:
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith(f"usage: bpetite {command} ")
    assert result.err.endswith(f"\nbpetite {command}: error: {message}\n")


# ----------------------------------------------------------------------------- --version


class _GoneReader(io.StringIO):
    """A stdout whose reader went away (``bpetite --version | head -c 0``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_version_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == Result(0, f"bpetite {bpetite.__version__}\n", "")


def test_version_with_stdout_closed_goes_to_stderr_as_help_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    code = bpetite.cli.main(["--version"])
    assert (code, capsys.readouterr().err) == (0, f"bpetite {bpetite.__version__}\n")


def test_version_to_a_reader_gone_ends_quietly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", _GoneReader())
    code = bpetite.cli.main(["--version"])
    assert (code, capsys.readouterr().err) == (0, "")


@needs_posix
@pytest.mark.parametrize("option", ["--version", "--help"])
def test_a_closed_stdout_gives_no_traceback_in_a_real_process(option: str) -> None:
    process = subprocess.run(
        ["bash", "-c", f'"$PYTHON" -m bpetite {option} >&-'],
        capture_output=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=120,
        check=False,
    )
    assert process.returncode == 0
    assert process.stderr.startswith(b"bpetite " if option == "--version" else b"usage: ")
    assert b"Traceback" not in process.stderr


# ----------------------------------------------------------------------------- specials


def test_specials_refuses_a_repeated_drop_as_a_repeated_add(
    capsys: pytest.CaptureFixture[str], model: str, tmp_path: Path
) -> None:
    output = tmp_path / "out.json"
    result = run(
        capsys, "specials", "--model", model, "--drop", END, "--drop", END, "--output", output
    )
    one_line_failure(result, f"--drop names the special token '{END}' twice")
    assert not output.exists()


@pytest.mark.parametrize("digits", ["\u0661\u0662", "\uff11\uff12", "1\u0662"])
def test_specials_refuses_an_id_in_other_digits_than_0_to_9(
    capsys: pytest.CaptureFixture[str], model: str, tmp_path: Path, digits: str
) -> None:
    """int() reads Arabic-Indic or full-width digits as 12; the id is refused, as a
    signed one is, not taken as part of the text."""
    output = tmp_path / "out.json"
    given = f"<|a|>={digits}"
    result = run(capsys, "specials", "--model", model, "--add", given, "--output", output)
    one_line_failure(
        result,
        f"--add '{given}': the id after the last '=' must be 0 or more, in digits 0-9 alone, "
        f"got {digits}; a text that itself ends in '={digits}' takes its id after it: "
        f"--add '{given}=ID'",
    )
    assert not output.exists()


# ----------------------------------------------------------------------------- import


def test_import_reads_an_empty_device_and_says_it_is_empty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "import", os.devnull, "--output", tmp_path / "x.json")
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(
        f"bpetite: error: cannot import: cannot tell the format of '{os.devnull}' (it is empty)"
    )


@needs_posix
def test_import_reads_a_fifo_as_encode_reads_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    tokenizer = Tokenizer.train(CORPUS, 280, special_tokens=[END])
    fifo = tmp_path / "tokenizer.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(export_hf(tokenizer), "utf-8"))
    writer.start()
    try:
        with watchdog():  # a command opening the FIFO twice would wait for a second writer
            result = run(capsys, "import", fifo.name, "--output", "imported.json")
    finally:
        # Be the reader the writer waits for in open() if the command never was. Opened
        # without blocking: a writer that has just finished (alive a moment longer than
        # its write) is never coming back, and a blocking open would wait for it for good.
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            while writer.is_alive():
                with contextlib.suppress(BlockingIOError):
                    os.read(reader, 1 << 16)
                writer.join(0.01)
        finally:
            os.close(reader)
    assert result.code == 0, result.err
    imported = Tokenizer.load(tmp_path / "imported.json")
    text = f"the cat sat{END} on a hat"
    assert imported.encode(text) == tokenizer.encode(text)


# ----------------------------------------------------------------- usage mistakes, in CLI words


def test_chunk_overlap_as_large_as_the_budget_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    argv = ["chunk", "--model", model, "--text", "abc", "--max-tokens", "2", "--overlap", "2"]
    usage_error(run(capsys, *argv), "chunk", "--overlap (2) must be less than --max-tokens (2)")


def test_decode_stream_with_output_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("72\n"))
    result = run(capsys, "decode", "--model", model, "--stream", "--output", "st.txt")
    usage_error(
        result, "decode", "--stream writes to standard output as the ids arrive: drop --output"
    )


def test_decode_usage_offers_output_only_without_stream(capsys: pytest.CaptureFixture[str]) -> None:
    """Two forms, and between them every option of decode's help."""
    text = run(capsys, "decode", "--help").out
    usage, _, rest = text.partition("\n\n")
    with_ids, _, streaming = usage.partition("\n   or: ")
    assert "--output" in with_ids and "--stream" not in with_ids
    assert "--stream" in streaming and "--output" not in streaming and "--force" not in streaming
    options = {line.split()[0] for line in rest.splitlines() if line.startswith("  --")}
    assert len(options) > 5 and all(option in usage for option in options)


@pytest.mark.parametrize("command", ["train", "demo"])
def test_a_vocabulary_size_below_256_names_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    argv = [command, "--input", corpus, "--vocab-size", "255"]
    if command == "train":
        argv += ["--output", tmp_path / "a.json"]
    one_line_failure(
        run(capsys, *argv), "--vocab-size must be at least 256 (one token per byte), got 255"
    )


# ----------------------------------------------------------------- export's remedies


def test_export_gives_the_specials_command_not_the_library_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "prefixes.json"
    Tokenizer.train(CORPUS, 270, special_tokens=["<s", "<s>"]).save(path)
    argv = ["export", "--model", path, "--format", "tiktoken", "--output", tmp_path / "t.tiktoken"]
    result = run(capsys, *argv)
    assert (result.code, result.out) == (1, "")
    assert "(bpetite specials --drop '<s')" in result.err
    assert "with_special_tokens" not in result.err
    # Following it works.
    dropped = tmp_path / "dropped.json"
    run(capsys, "specials", "--model", path, "--drop", "<s", "--output", dropped)
    assert run(capsys, "export", *argv[1:2], dropped, *argv[3:]).code == 0


def test_export_of_an_alias_gives_the_specials_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(
        capsys, "export", "--model", "o200k_harmony", "--format", "hf", "--output", tmp_path / "h"
    )
    assert (result.code, result.out) == (1, "")
    assert result.err.endswith(
        "so drop the second first: bpetite specials --drop '<|reserved_200018|>'\n"
    )
