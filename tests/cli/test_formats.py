"""Inputs that are not UTF-8 text: the message names what they are and what reads them.

A token array, a Parquet table, a compressed file or UTF-16 text given where text or a
JSON array of ids is expected gets one line naming it, never "byte 0x.. at byte offset
0"; a text with a bad byte inside keeps the line that names the byte and its offset.
"""

from __future__ import annotations

import gzip
import io
import sys
from array import array
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli import main

TEXT = "The cat sat on the mat. " * 20
#: A Parquet file's shape: its magic number at both ends, binary pages between.
PARQUET = b"PAR1" + bytes(range(256)) * 4 + b"\x15\x00\x15\xe8\x07" + b"PAR1"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tok.json"
    Tokenizer.train(TEXT, vocab_size=300).save(path)
    return path


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI, which must fail with exit 1 and nothing on stdout; its one error line."""
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    last = captured.err.splitlines()[-1]
    assert last.startswith("bpetite: error: ")
    return last.removeprefix("bpetite: error: ")


def text_commands(model: Path, tmp_path: Path, source: str) -> dict[str, list[str]]:
    """Every command that reads UTF-8 text from `source`."""
    return {
        "train": ["train", "--input", source, "--vocab-size", "260", "--output",
                  str(tmp_path / "o.json")],
        "count": ["count", "--input", source, "--output", str(tmp_path / "c.json")],
        "encode": ["encode", "--model", str(model), "--input", source],
        "show": ["show", "--model", str(model), "--input", source],
        "dataset": ["dataset", "--model", str(model), "--input", source, "--output",
                    str(tmp_path / "d.bin")],
    }  # fmt: skip


COMMANDS = ["train", "count", "encode", "show", "dataset"]


#: What a text-only command says of Parquet: who reads it, and with which flags.
READS_PARQUET = "(train, count and dataset read Parquet: --input FILE.parquet --text-column NAME)"


@pytest.mark.parametrize("command", ["encode", "show"])
def test_a_parquet_file_is_named_as_one(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, command: str
) -> None:
    source = tmp_path / "x.parquet"
    source.write_bytes(PARQUET)
    argv = text_commands(model, tmp_path, str(source))[command]
    assert error_line(capsys, argv) == (
        f"'{source}' is a Parquet file, not UTF-8 text; bpetite reads UTF-8 text files "
        f"{READS_PARQUET}"
    )


@pytest.mark.parametrize("command", ["train", "count", "dataset"])
def test_commands_that_read_parquet_say_when_it_cannot_be_read(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, command: str
) -> None:
    """PAR1 at both ends, garbage between: read as Parquet, and pyarrow's reason given."""
    source = tmp_path / "x.parquet"
    source.write_bytes(PARQUET)
    argv = text_commands(model, tmp_path, str(source))[command]
    assert error_line(capsys, argv).startswith(f"'{source}' is not a readable Parquet file: ")


def test_parquet_on_standard_input_is_named_from_its_start(
    capsys: pytest.CaptureFixture[str], model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PARQUET)))
    assert error_line(capsys, ["encode", "--model", str(model), "--input", "-"]) == (
        "standard input is Parquet data (it starts with Parquet's magic bytes), not UTF-8 "
        f"text; bpetite reads UTF-8 text files {READS_PARQUET}"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_compressed_file_says_how_to_decompress_it(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, command: str
) -> None:
    source = tmp_path / "corpus.txt.gz"
    source.write_bytes(gzip.compress(TEXT.encode()))
    argv = text_commands(model, tmp_path, str(source))[command]
    assert error_line(capsys, argv) == (
        f"'{source}' is a gzip-compressed file, not UTF-8 text; decompress it first: "
        f"gzip -dc '{source}' | bpetite ... --input -"
    )


def test_utf16_text_says_to_convert_it(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    source = tmp_path / "notes.txt"
    source.write_bytes(TEXT.encode("utf-16"))  # with its byte order mark
    assert error_line(capsys, ["encode", "--model", str(model), "--input", str(source)]) == (
        f"'{source}' is UTF-16 text (it starts with a UTF-16 byte order mark); bpetite reads "
        f"UTF-8: convert it first, e.g. iconv -f UTF-16 -t UTF-8"
    )


def test_a_binary_file_is_named_binary(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    source = tmp_path / "program"
    source.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    argv = ["train", "--input", str(source), "--vocab-size", "260", "--output",
            str(tmp_path / "o.json")]  # fmt: skip
    assert error_line(capsys, argv) == (
        f"'{source}' is a binary file (it holds NUL bytes), not UTF-8 text; bpetite reads "
        f"UTF-8 text files"
    )


@pytest.mark.parametrize("name", ["latin1.txt", "latin1.bin"])
def test_a_text_with_a_bad_byte_keeps_the_byte_and_its_offset(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, name: str
) -> None:
    """Far past the start, even in a file named .bin: a damaged text, not another format."""
    source = tmp_path / name
    source.write_bytes(TEXT.encode() * 20 + "café au lait".encode("latin-1"))
    offset = len(TEXT.encode()) * 20 + 3
    assert error_line(capsys, ["encode", "--model", str(model), "--input", str(source)]) == (
        f"'{source}' is not valid UTF-8: byte 0xe9 at byte offset {offset} (invalid "
        f"continuation byte)"
    )


# --------------------------------------------------------------------------- decode


def test_decode_names_a_token_file_written_by_dataset(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    train = tmp_path / "train.bin"
    argv = ["dataset", "--model", str(model), "--input", str(corpus), "--output", str(train)]
    assert main(argv) == 0
    capsys.readouterr()
    assert error_line(capsys, ["decode", "--model", str(model), "--input", str(train)]) == (
        f"'{train}' is a token file written by bpetite dataset (uint16 ids, described by "
        f"'{train}.json'; numpy.fromfile('{train}', dtype=numpy.uint16) reads it), not a "
        f"JSON array of token ids; decode reads a JSON array of ids, as bpetite encode "
        f"prints them"
    )


def test_decode_names_a_nanogpt_token_file(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    """nanoGPT's prepare.py writes the ids as raw uint16, with no manifest beside them."""
    source = tmp_path / "val.bin"
    source.write_bytes(array("H", Tokenizer.load(model).encode(TEXT)).tobytes())
    assert error_line(capsys, ["decode", "--model", str(model), "--input", str(source)]) == (
        f"'{source}' is a .bin file, most likely token ids as bpetite dataset or nanoGPT "
        f"write them (numpy.fromfile reads them, with the dtype they were written in), not a "
        f"JSON array of token ids; decode reads a JSON array of ids, as bpetite encode "
        f"prints them"
    )


def test_decode_names_parquet(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    source = tmp_path / "ids.parquet"
    source.write_bytes(PARQUET)
    assert error_line(capsys, ["decode", "--model", str(model), "--input", str(source)]) == (
        f"'{source}' is a Parquet file, not a JSON array of token ids; decode reads a JSON "
        f"array of ids, as bpetite encode prints them {READS_PARQUET}"
    )


def test_decode_names_an_llmc_shard(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    """llm.c's header, written here from the format's facts: 256 int32, then uint16 ids."""
    source = tmp_path / "fineweb_train_000001.bin"
    ids = Tokenizer.load(model).encode(TEXT)
    header = array("i", [20240520, 1, len(ids)] + [0] * 253)
    source.write_bytes(header.tobytes() + array("H", ids).tobytes())
    assert error_line(capsys, ["decode", "--model", str(model), "--input", str(source)]) == (
        f"'{source}' is a token shard in llm.c's format (header magic 20240520, version 1, "
        f"{len(ids):,} uint16 ids after its 1,024-byte header, as bpetite dataset --format "
        f"llmc writes it), not a JSON array of token ids; decode reads a JSON array of ids, "
        f"as bpetite encode prints them"
    )
