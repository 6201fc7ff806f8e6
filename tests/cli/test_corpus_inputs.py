"""What the corpus commands say about their inputs: budgets too large for a number, the
documents a budget takes, counts files of another pattern, an output that is a file the
command reads, extend's smallest size, Parquet columns of any string type or with bad
UTF-8, and files that decode as UTF-8 but are no text (a token file, UTF-16).

Oracles: the library (``count_chunks``, ``Tokenizer.save``) and the UTF-8 bytes of the
texts, computed here.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from bpetite import Tokenizer, count_chunks
from bpetite.corpus import load_counts
from tests.cli.running import Result, run

TEXT = "the cat sat on the mat. naïve café\n"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tok.json"
    Tokenizer.train(TEXT * 20, 260).save(path)
    return path


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def last_error(result: Result, code: int = 1) -> str:
    assert (result.code, result.out) == (code, ""), result
    assert "Traceback" not in result.err
    line = result.err.splitlines()[-1]
    assert line.startswith("bpetite: "), result.err
    return line.split("error: ", 1)[1]


def summary(result: Result) -> dict[str, object]:
    assert result.code == 0, result.err
    loaded: dict[str, object] = json.loads(result.out)
    return loaded


# --------------------------------------------------------------------------- budgets


@pytest.mark.parametrize("option", ["--max-chars", "--doc-cap"])
@pytest.mark.parametrize("value", ["2e400", "1e309", "10000000000000000000"])
@pytest.mark.parametrize("command", ["train", "count", "dataset", "extend"])
def test_a_budget_too_large_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    model: Path,
    text_file: Path,
    tmp_path: Path,
    option: str,
    value: str,
    command: str,
) -> None:
    commands: dict[str, list[object]] = {
        "train": ["train", "--vocab-size", "260"],
        "count": ["count"],
        "dataset": ["dataset", "--model", model],
        "extend": ["extend", "--model", model, "--vocab-size", "270"],
    }
    result = run(
        capsys, *commands[command], "--input", text_file, option, value, "--output", tmp_path / "o"
    )
    assert result.code == 2
    assert f"argument {option}: must be at most 9,223,372,036,854,775,807, got {value}" in (
        result.err
    )
    assert "Traceback" not in result.err
    assert not (tmp_path / "o").exists()


def test_a_budget_in_scientific_notation_is_exact(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--doc-cap 1e18`` keeps every character: 10**18 exactly, not a rounded float."""
    path = tmp_path / "a.txt"
    path.write_text(TEXT, encoding="utf-8")
    result = run(capsys, "count", "--input", path, "--doc-cap", "1e18", "--max-chars", "2e0",
                 "--output", tmp_path / "c.json")  # fmt: skip
    assert summary(result)["corpus_bytes"] == len(TEXT.encode("utf-8"))
    assert run(capsys, "count", "--input", path, "--max-chars", "0e5", "--output",
               tmp_path / "d.json").code == 2  # fmt: skip


def test_count_says_how_many_documents_the_budget_took(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "three"
    folder.mkdir()
    for number in (1, 2, 3):
        (folder / f"{number}.txt").write_text(f"hello world number {number}\n", encoding="utf-8")
    cases = [(["--max-chars", "5"], 1), (["--max-chars", "21"], 2),
             (["--max-chars", "500"], 3), (["--max-chars", "5", "--doc-cap", "2"], 3),
             (["--max-chars", "4", "--doc-cap", "2"], 3),
             (["--max-chars", "3", "--doc-cap", "2"], 2)]  # fmt: skip
    for options, documents in cases:
        output = tmp_path / "c.json"
        result = run(capsys, "count", "--input", folder, *options, "--output", output, "--force")
        assert summary(result)["documents"] == documents, options
        cap = int(options[3]) if len(options) > 2 else None
        taken = [f"hello world number {n}\n"[:cap] for n in (1, 2, 3)][:documents]
        assert load_counts(output) == count_chunks(taken), options


# --------------------------------------------------------------------------- counts files


def test_counts_of_another_pattern_say_which_pattern(
    capsys: pytest.CaptureFixture[str], model: Path, text_file: Path, tmp_path: Path
) -> None:
    counts = tmp_path / "c100.json"
    assert run(capsys, "count", "--input", text_file, "--pattern", "cl100k",
               "--output", counts).code == 0  # fmt: skip
    train = run(capsys, "train", "--counts", counts, "--vocab-size", "260",
                "--output", tmp_path / "out.json")  # fmt: skip
    assert last_error(train) == (
        f"--counts '{counts}' was counted with the 'cl100k' pattern: pass --pattern cl100k "
        "to train on it"
    )
    assert run(capsys, "train", "--counts", counts, "--pattern", "cl100k", "--vocab-size",
               "260", "--output", tmp_path / "out.json").code == 0  # fmt: skip
    extend = run(capsys, "extend", "--model", model, "--counts", counts, "--vocab-size", "270",
                 "--output", tmp_path / "bigger.json")  # fmt: skip
    assert last_error(extend) == (
        f"--counts '{counts}' was counted with the 'cl100k' pattern, but the model uses the "
        "'gpt2' pattern: count with it (bpetite count --pattern gpt2)"
    )


def test_counts_of_a_custom_pattern_name_the_regex(
    capsys: pytest.CaptureFixture[str], text_file: Path, tmp_path: Path
) -> None:
    counts = tmp_path / "c.json"
    assert run(capsys, "count", "--input", text_file, "--pattern-regex", r"\w+|\W+",
               "--output", counts).code == 0  # fmt: skip
    result = run(capsys, "train", "--counts", counts, "--vocab-size", "260",
                 "--output", tmp_path / "out.json")  # fmt: skip
    assert last_error(result) == (
        f"--counts '{counts}' was counted with the custom pattern '\\w+|\\W+': pass "
        "--pattern-regex with that regex to train on it"
    )


# --------------------------------------------------------------------------- outputs and sizes


def test_an_output_that_is_the_model_is_called_the_model(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    before = model.read_bytes()
    result = run(capsys, "encode", "--model", model, "--text", "hi", "--output", model, "--force")
    assert last_error(result) == (
        f"--output '{model}' is the input given to --model '{model}'; writing it would "
        "destroy the input, even with --force: choose another path"
    )
    assert model.read_bytes() == before


@pytest.mark.parametrize("size", ["250", "258", "-1"])
def test_extend_below_the_models_size_says_so_in_cli_words(
    capsys: pytest.CaptureFixture[str], model: Path, text_file: Path, tmp_path: Path, size: str
) -> None:
    result = run(capsys, "extend", "--model", model, "--input", text_file, "--vocab-size", size,
                 "--output", tmp_path / "e.json")  # fmt: skip
    assert last_error(result) == (
        f"--vocab-size {size} is below the model's mergeable vocabulary size 260: extending "
        "keeps every merge ('bpetite trim' drops merges)"
    )


# --------------------------------------------------------------------------- Parquet


def test_parquet_columns_of_any_string_type_are_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = ["héllo wörld", None, "naïve ☃", "héllo wörld"]
    columns = {"dict": pa.array(rows).dictionary_encode(), "plain": pa.array(rows)}
    if hasattr(pa, "string_view"):
        columns["view"] = pa.array(rows, pa.string_view())
    texts = [row for row in rows if row is not None]
    for name, column in columns.items():
        shard = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"text": column}), shard, row_group_size=2)
        output = tmp_path / f"{name}.json"
        result = run(capsys, "count", "--input", shard, "--output", output)
        # corpus_bytes is the text read, in UTF-8: the same whatever the column's encoding
        assert summary(result)["corpus_bytes"] == sum(len(t.encode("utf-8")) for t in texts)
        assert load_counts(output) == count_chunks(texts), name


def test_invalid_utf8_in_a_parquet_row_is_one_line_naming_the_row(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bad = pa.Array.from_buffers(
        pa.string(), 1, [None, pa.py_buffer(b"\0\0\0\0\3\0\0\0"), pa.py_buffer(b"a\xffb")]
    )
    shard = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"text": pa.concat_arrays([pa.array(["ok"]), bad])}), shard)
    expected = (
        f"'{shard}' holds text that is not valid UTF-8: byte 0xff at byte offset 1 (invalid "
        "start byte, in the text of row 1 of row group 0, column 'text')"
    )
    for argv in (["count"], ["train", "--vocab-size", "260"], ["dataset", "--model", model]):
        result = run(capsys, *argv, "--input", shard, "--output", tmp_path / "o.bin")
        assert last_error(result) == expected, argv
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.parquet", "tok.json"]


# --------------------------------------------------------------------------- no text at all


def test_a_token_file_that_decodes_as_utf8_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Ids below 128 as uint16: every other byte NUL, valid UTF-8 all the same."""
    model = tmp_path / "bytes.json"
    Tokenizer(()).save(model)
    source = tmp_path / "s.txt"
    source.write_text("hello world\n", encoding="utf-8")
    array = tmp_path / "train.bin"
    assert run(capsys, "dataset", "--model", model, "--input", source, "--output", array,
               "--no-separator").code == 0  # fmt: skip
    array.read_bytes().decode("utf-8")  # the case at hand: it decodes
    expected = (
        f"'{array}' is a token file written by bpetite dataset (uint16 ids, described by "
        f"'{array}.json'; numpy.fromfile('{array}', dtype=numpy.uint16) reads it), not UTF-8 "
        "text; bpetite reads UTF-8 text files"
    )
    for argv in (["train", "--vocab-size", "260"], ["count"], ["dataset", "--model", model]):
        result = run(capsys, *argv, "--input", array, "--output", tmp_path / "o.json")
        assert last_error(result) == expected, argv
    assert last_error(run(capsys, "encode", "--model", model, "--input", array)) == expected
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("order", ["LE", "BE"])
def test_utf16_without_a_byte_order_mark_is_named(
    capsys: pytest.CaptureFixture[str],
    model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    order: str,
) -> None:
    ascii_text = TEXT.replace("ï", "i").replace("é", "e") * 4  # past the 256 bytes needed
    data = ascii_text.encode(f"utf-16-{order.lower()}")
    path = tmp_path / "u16.txt"
    path.write_bytes(data)
    expected = (
        f"holds a NUL in every other byte: UTF-16{order} text without a byte order mark, "
        "or 16-bit numbers such as token ids, not UTF-8 text; bpetite reads UTF-8 text "
        f"files (for UTF-16: iconv -f UTF-16{order} -t UTF-8)"
    )
    for argv in (["count", "--output", tmp_path / "c.json"], ["encode", "--model", model]):
        result = run(capsys, *argv, "--input", path)
        assert last_error(result) == f"'{path}' {expected}", argv
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        result = run(capsys, *argv, "--input", "-")
        assert last_error(result) == f"standard input {expected}", argv


def test_a_text_with_a_nul_byte_is_still_text(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    """NUL is valid UTF-8; only a kind of file that can be named is refused."""
    text = "a\0b c d\n" + TEXT
    path = tmp_path / "nul.txt"
    path.write_text(text, encoding="utf-8")
    result = run(capsys, "count", "--input", path, "--output", tmp_path / "c.json")
    assert summary(result)["documents"] == 1
    encoded = run(capsys, "encode", "--model", model, "--input", path)
    assert json.loads(encoded.out) == Tokenizer.load(model).encode(text)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("bzh.txt", "BZh9 is my password\0 and more\n"),  # bzip2's magic, and words
        ("records.txt", "a\0b\0c\0d\0"),  # short: a NUL in every other byte
        ("notes.bin", "hello\0world, a plain UTF-8 text with one NUL\n"),  # no manifest
    ],
)
def test_text_that_decodes_is_refused_only_on_certain_evidence(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path, name: str, text: str
) -> None:
    """Magic bytes, a name or a few NULs do not make a text that decodes something else."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    encoded = run(capsys, "encode", "--model", model, "--input", path)
    assert encoded.code == 0, encoded
    assert json.loads(encoded.out) == Tokenizer.load(model).encode(text)
