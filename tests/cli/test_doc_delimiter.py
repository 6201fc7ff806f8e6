"""``bpetite dataset --doc-delimiter``: documents inside a text file, from the shell.

The oracle: ``str.split`` of the file's text, blank documents dropped,
``encode_ordinary`` of each between the BOS and separator ids, document ``i`` to
validation when ``floor((i+1)F) > floor(iF)``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy
import pytest

from bpetite import Tokenizer, reference
from bpetite.corpus import load_counts
from tests.cli.running import run

EOT = "<|endoftext|>"
STORIES = ["Once upon a time, a cat sat.", "Tom had a red ball. It'll be fine.", "中文 😀 end."] * 4
#: TinyStories' layout: each story, the delimiter, a newline.
TINYSTORIES = "".join(f"{story}{EOT}\n" for story in STORIES)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tok.json"
    Tokenizer.train(TINYSTORIES * 2, vocab_size=330).save(path)
    return path


@pytest.fixture
def stories(tmp_path: Path) -> Path:
    path = tmp_path / "stories.txt"
    path.write_bytes(TINYSTORIES.encode("utf-8"))
    return path


def expected(
    model: Path, text: str, delimiter: str, fraction: float = 0.0
) -> tuple[list[int], list[int]]:
    tokenizer = Tokenizer.load(model)
    split = Fraction(repr(fraction))
    arrays: tuple[list[int], list[int]] = ([], [])
    documents = [document for document in text.split(delimiter) if document.strip()]
    for index, document in enumerate(documents):
        in_val = (index + 1) * split // 1 > index * split // 1
        arrays[in_val].extend([*tokenizer.encode_ordinary(document), tokenizer.special_tokens[EOT]])
    return arrays


def memmap(path: Path) -> list[int]:
    return [int(value) for value in numpy.memmap(path, dtype=numpy.dtype("<u2"), mode="r")]


def test_a_single_file_splits_into_train_and_val_by_document(
    capsys: pytest.CaptureFixture[str], model: Path, stories: Path, tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    result = run(capsys, "dataset", "--model", model, "--input", stories, "--output", output,
                 "--doc-delimiter", EOT, "--val-fraction", "0.25", "--workers", "2")  # fmt: skip
    assert result.code == 0, result.err
    train, val = expected(model, TINYSTORIES, EOT, 0.25)
    assert (memmap(output), memmap(tmp_path / "val.bin")) == (train, val)
    summary = json.loads(result.out)
    assert (summary["train"]["documents"], summary["val"]["documents"]) == (9, 3)
    manifest = json.loads((tmp_path / "train.bin.json").read_text(encoding="utf-8"))
    assert manifest["options"]["doc_delimiter"] == EOT
    assert manifest["document_sources"] == [str(stories)] * 9


def test_without_a_delimiter_the_val_error_points_at_it(
    capsys: pytest.CaptureFixture[str], model: Path, stories: Path, tmp_path: Path
) -> None:
    result = run(capsys, "dataset", "--model", model, "--input", stories,
                 "--output", tmp_path / "t.bin", "--val-fraction", "0.25")  # fmt: skip
    assert result.code == 1
    assert result.err.strip() == (
        "bpetite: error: --val-fraction 0.25 of 1 document(s) selects none for validation; "
        "give more documents or a larger fraction, or --doc-delimiter to cut the text files "
        "into documents (each text file is one document without it)"
    )
    assert not (tmp_path / "t.bin").exists()


def test_newlines_made_by_the_shell_cut_paragraphs(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    """What bash's $'\\n\\n' hands over: two real newlines. No note is printed."""
    text = "First paragraph.\nStill first.\n\nSecond.\n\n\n\nThird.\n"
    (tmp_path / "p.txt").write_text(text, encoding="utf-8", newline="")
    output = tmp_path / "p.bin"
    result = run(capsys, "dataset", "--model", model, "--input", tmp_path / "p.txt",
                 "--output", output, "--doc-delimiter", "\n\n")  # fmt: skip
    assert result.code == 0, result.err
    assert memmap(output) == expected(model, text, "\n\n")[0]
    assert json.loads(result.out)["train"]["documents"] == 3
    assert "note" not in result.err


def test_a_backslash_escape_is_literal_and_says_so(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    """'\\n\\n' typed in single quotes is a backslash and an n, twice: never in the text,
    so the file stays one document, and a note says how to write a newline."""
    text = "one\n\ntwo\\n\\nthree"
    (tmp_path / "p.txt").write_text(text, encoding="utf-8")
    output = tmp_path / "p.bin"
    result = run(capsys, "dataset", "--model", model, "--input", tmp_path / "p.txt",
                 "--output", output, "--doc-delimiter", "\\n\\n")  # fmt: skip
    assert result.code == 0, result.err
    assert memmap(output) == expected(model, text, "\\n\\n")[0]
    assert json.loads(result.out)["train"]["documents"] == 2  # "one\n\ntwo", "three"
    assert (
        "bpetite: note: --doc-delimiter is taken literally: its '\\n' is a backslash and a "
        "letter; for a newline or a tab, let the shell make it, e.g. $'\\n\\n' in bash"
    ) in result.err.splitlines()


def test_standard_input_is_cut_too(model: Path, tmp_path: Path) -> None:
    output = tmp_path / "stdin.bin"
    result = subprocess.run(
        [sys.executable, "-m", "bpetite", "dataset", "--model", str(model), "--input", "-",
         "--output", str(output), "--doc-delimiter", EOT + "\n", "--val-fraction", "0.5"],
        input=TINYSTORIES.encode("utf-8"), capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    train, val = expected(model, TINYSTORIES, EOT + "\n", 0.5)
    assert (memmap(output), memmap(tmp_path / "val.bin")) == (train, val)
    manifest = json.loads(output.with_name("stdin.bin.json").read_text(encoding="utf-8"))
    assert manifest["document_sources"] == ["-"] * 6


def test_mistakes_are_one_line_and_write_nothing(
    capsys: pytest.CaptureFixture[str], model: Path, stories: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    bad = tmp_path / "bad.txt"
    data = f"ok{EOT}fine{EOT}".encode() + b"\xc3(" + EOT.encode()
    bad.write_bytes(data)
    parquet = tmp_path / "shard.parquet"
    parquet.write_bytes(b"PAR1" + b"\0" * 8 + b"PAR1")
    cases = [
        (["--input", stories, bad, "--doc-delimiter", EOT],
         f"'{bad}' is not valid UTF-8: byte 0xc3 at byte offset 32 (invalid continuation byte)"),
        (["--input", stories, parquet, "--doc-delimiter", EOT],
         f"'{parquet}' is a Parquet file, whose rows are already documents; --doc-delimiter "
         "cuts text files only: give it without them"),
        (["--input", stories, "--doc-delimiter", "\udcff"],
         "--doc-delimiter is not valid UTF-8: byte 0xff at character 0"),
    ]  # fmt: skip
    assert data.index(b"\xc3") == 32
    for extra, message in cases:
        result = run(capsys, "dataset", "--model", model, "--output", out / "t.bin",
                     *extra)  # fmt: skip
        assert result.code == 1, result
        assert result.out == ""
        *progress, error = result.err.strip().splitlines()
        assert error == f"bpetite: error: {message}", result.err
        assert all(line.startswith("encode: ") for line in progress), result.err
        assert list(out.iterdir()) == []


def test_an_empty_delimiter_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], model: Path, stories: Path, tmp_path: Path
) -> None:
    result = run(capsys, "dataset", "--model", model, "--input", stories,
                 "--output", tmp_path / "t.bin", "--doc-delimiter", "")  # fmt: skip
    assert result.code == 2
    assert result.err.strip().splitlines()[-1] == (
        "bpetite dataset: error: argument --doc-delimiter: must not be empty: it is the text "
        "between two documents, e.g. '<|endoftext|>'"
    )
    assert not (tmp_path / "t.bin").exists()


def test_the_help_shows_the_delimiter_and_how_to_write_newlines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "dataset", "--help")
    assert result.code == 0
    help_text = " ".join(result.out.split())
    assert "--doc-delimiter '<|endoftext|>' --val-fraction 0.01" in help_text
    assert "$'\\n\\n'" in help_text and "taken literally" in help_text


# --------------------------------------------------------------------------- count and train


def reference_counts(text: str, delimiter: str, doc_cap: int | None = None) -> Counter[bytes]:
    documents = [d[:doc_cap] for d in text.split(delimiter) if d.strip()]
    return Counter(chunk.encode("utf-8") for d in documents for chunk in reference.split(d))


def test_count_cuts_documents_and_counts_no_delimiter(
    capsys: pytest.CaptureFixture[str], stories: Path, tmp_path: Path
) -> None:
    output = tmp_path / "counts.json"
    result = run(capsys, "count", "--input", stories, "--doc-delimiter", EOT, "--doc-cap", "20",
                 "--workers", "2", "--output", output)  # fmt: skip
    assert result.code == 0, result.err
    assert load_counts(output) == reference_counts(TINYSTORIES, EOT, 20)
    summary = json.loads(result.out)
    assert summary["documents"] is None  # known only by reading the files
    assert summary["corpus_bytes"] == len(TINYSTORIES.encode("utf-8"))


def test_count_reads_standard_input_as_a_file_to_cut_it(tmp_path: Path) -> None:
    output = tmp_path / "counts.json"
    result = subprocess.run(
        [sys.executable, "-m", "bpetite", "count", "--input", "-", "--doc-delimiter",
         EOT + "\n", "--output", str(output)],
        input=TINYSTORIES.encode("utf-8"), capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert load_counts(output) == reference_counts(TINYSTORIES, EOT + "\n")


def test_train_learns_from_the_documents(
    capsys: pytest.CaptureFixture[str], stories: Path, tmp_path: Path
) -> None:
    output = tmp_path / "tok.json"
    result = run(capsys, "train", "--input", stories, "--doc-delimiter", EOT,
                 "--vocab-size", "300", "--output", output)  # fmt: skip
    assert result.code == 0, result.err
    expected_merges = reference.train_counts(reference_counts(TINYSTORIES, EOT), 300)
    assert list(Tokenizer.load(output).merges) == expected_merges


def test_count_and_train_mistakes(
    capsys: pytest.CaptureFixture[str], stories: Path, tmp_path: Path
) -> None:
    counts = tmp_path / "counts.json"
    assert run(capsys, "count", "--input", stories, "--output", counts).code == 0
    parquet = tmp_path / "shard.parquet"
    parquet.write_bytes(b"PAR1" + b"\0" * 8 + b"PAR1")
    cases = [
        (["train", "--counts", counts, "--vocab-size", "300", "--output", tmp_path / "t.json"],
         "--doc-delimiter applies to --input, not to --counts"),
        (["count", "--input", "-", "--dask", "local", "--output", tmp_path / "c.json"],
         "--doc-delimiter needs files, not streams, with --dask"),
        (["count", "--input", parquet, "--output", tmp_path / "c.json"],
         f"'{parquet}' is a Parquet file, whose rows are already documents; --doc-delimiter "
         "cuts text files only: give it without them"),
    ]  # fmt: skip
    for argv, message in cases:
        result = run(capsys, *argv, "--doc-delimiter", EOT)
        assert result.code == 1, result
        assert result.err.strip().splitlines()[-1] == f"bpetite: error: {message}"
        assert not (tmp_path / "t.json").exists() and not (tmp_path / "c.json").exists()
    result = run(capsys, "train", "--input", stories, "--doc-delimiter", "", "--vocab-size",
                 "300", "--output", tmp_path / "t.json")  # fmt: skip
    assert result.code == 2
