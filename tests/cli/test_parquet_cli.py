"""Parquet shards, nanochat's budget and pretraining shards through the command line.

The library's results are proven in tests/corpus/; here: the flags reach it, the
results equal the library's, and every failure is one line naming the flag.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
np = pytest.importorskip("numpy")

from bpetite import Tokenizer  # noqa: E402
from bpetite.cli import main  # noqa: E402
from tests.nanochat import nanochat_text_iterator  # noqa: E402

ROWS = [f"row {n}: {'the cat sat on the mat. ' * (n % 5)}\n" for n in range(40)]


@pytest.fixture
def shards(tmp_path: Path) -> list[str]:
    paths = []
    for number, (first, last) in enumerate([(0, 15), (15, 40)]):
        path = tmp_path / f"shard_{number:05}.parquet"
        pq.write_table(pa.table({"text": ROWS[first:last]}), path, row_group_size=4)
        paths.append(str(path))
    return paths


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert main(argv) == 0, capsys.readouterr().err
    summary: dict[str, object] = json.loads(capsys.readouterr().out)
    return summary


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    return captured.err.splitlines()[-1].removeprefix("bpetite: error: ")


def test_train_on_shards_with_nanochats_budget(
    capsys: pytest.CaptureFixture[str], shards: list[str], tmp_path: Path
) -> None:
    output = tmp_path / "tok.json"
    argv = ["train", "--input", *shards, "--max-chars", "1e3", "--doc-cap", "60",
            "--vocab-size", "300", "--output", str(output), "--workers", "2"]  # fmt: skip
    run(capsys, argv)
    taken = nanochat_text_iterator(ROWS, 1000, 60)
    assert Tokenizer.load(output).merges == Tokenizer.train_from_iterator(taken, 300).merges


def test_count_reads_another_text_column_and_names_a_missing_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shard = tmp_path / "s.parquet"
    pq.write_table(pa.table({"content": ["ab ab", "cd"]}), shard)
    summary = run(capsys, ["count", "--input", str(shard), "--text-column", "content",
                           "--output", str(tmp_path / "c.json")])  # fmt: skip
    assert summary["total_chunks"] == 3
    assert summary["documents"] is None  # rows are documents, known only once read
    assert error_line(capsys, ["count", "--input", str(shard), "--output",
                               str(tmp_path / "d.json")]) == (
        f"'{shard}' has no column 'text' (its columns: 'content'); name the text column "
        "with --text-column"
    )  # fmt: skip


def test_without_pyarrow_one_line_names_the_extra(
    capsys: pytest.CaptureFixture[str],
    shards: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    for argv in (
        ["count", "--input", shards[0], "--output", str(tmp_path / "c.json")],
        ["train", "--input", shards[0], "--vocab-size", "260", "--output",
         str(tmp_path / "t.json")],
    ):  # fmt: skip
        assert error_line(capsys, argv) == (
            "reading Parquet files needs pyarrow: pip install 'bpetite[parquet]'"
        )
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("text", ["0", "-5", "1.5", "lots", "1e"])
def test_a_bad_budget_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], shards: list[str], tmp_path: Path, text: str
) -> None:
    argv = ["count", "--input", *shards, "--max-chars", text, "--output",
            str(tmp_path / "c.json")]  # fmt: skip
    assert main(argv) == 2
    assert "--max-chars" in capsys.readouterr().err


def test_a_budget_over_standard_input_and_files_keeps_input_order(
    capsys: pytest.CaptureFixture[str],
    shards: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """stdin is the first document here: the budget must take it first."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"zz zz zz zz")))
    output = tmp_path / "c.json"
    run(capsys, ["count", "--input", "-", *shards, "--max-chars", "30", "--output",
                 str(output)])  # fmt: skip
    from bpetite import count_chunks
    from bpetite.corpus import load_counts

    expected = count_chunks(nanochat_text_iterator(["zz zz zz zz", *ROWS], 30, None))
    assert load_counts(output) == expected


def test_dataset_writes_llmc_shards_with_bos(
    capsys: pytest.CaptureFixture[str], shards: list[str], tmp_path: Path
) -> None:
    model = tmp_path / "tok.json"
    Tokenizer.train(" ".join(ROWS), 300, special_tokens=("<|bos|>",)).save(model)
    summary = run(capsys, ["dataset", "--model", str(model), "--input", *shards, "--bos",
                           "<|bos|>", "--format", "llmc", "--shard-tokens", "200",
                           "--val-shards", "1", "--output", str(tmp_path / "tr_{shard}.bin"),
                           "--val-output", str(tmp_path / "va_{shard}.bin")])  # fmt: skip
    assert summary["format"] == "llmc"
    val = summary["val"]
    assert isinstance(val, dict)
    assert val["shards"] == [str(tmp_path / "va_000000.bin")]
    header = np.fromfile(tmp_path / "va_000000.bin", dtype="<i4", count=256)
    assert list(header[:3]) == [20240520, 1, 200]
    tokenizer = Tokenizer.load(model)
    first = np.fromfile(tmp_path / "va_000000.bin", dtype="<u2", offset=1024)
    expected = [tokenizer.encode_single_token("<|bos|>"), *tokenizer.encode_ordinary(ROWS[0])]
    assert [int(token) for token in first[: len(expected)]] == expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--shard-tokens", "10"], "with --shard-tokens, each output name must hold {shard}"),
        (["--val-shards", "1"], "--val-shards needs --shard-tokens"),
        (["--bos", "<|nope|>"], "bos '<|nope|>' is not a single token of this model"),
    ],
)
def test_dataset_flags_fail_in_one_line(
    capsys: pytest.CaptureFixture[str],
    shards: list[str],
    tmp_path: Path,
    extra: list[str],
    message: str,
) -> None:
    model = tmp_path / "tok.json"
    Tokenizer.train("ab ab", 260).save(model)
    argv = ["dataset", "--model", str(model), "--input", *shards, "--output",
            str(tmp_path / "t.bin"), *extra]  # fmt: skip
    assert message in error_line(capsys, argv)


def test_dataset_names_a_binary_stream_on_standard_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "tok.json"
    Tokenizer.train("ab ab", 260).save(model)
    data = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    argv = ["dataset", "--model", str(model), "--input", "-", "--output", str(tmp_path / "t.bin")]
    assert error_line(capsys, argv) == (
        "standard input is a binary file (it holds NUL bytes), not UTF-8 text; bpetite "
        "reads UTF-8 text files"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tok.json"]


def test_dataset_reads_parquet_on_standard_input(
    capsys: pytest.CaptureFixture[str],
    shards: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = tmp_path / "tok.json"
    Tokenizer.train(" ".join(ROWS), 280).save(model)
    data = Path(shards[0]).read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    output = tmp_path / "t.bin"
    summary = run(capsys, ["dataset", "--model", str(model), "--input", "-", "--output",
                           str(output)])  # fmt: skip
    train = summary["train"]
    assert isinstance(train, dict) and train["documents"] == 15


def test_help_documents_every_new_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for command, flags in [
        ("train", ["--text-column", "--max-chars", "--doc-cap"]),
        ("count", ["--text-column", "--max-chars", "--doc-cap"]),
        ("dataset", ["--bos", "--format", "--shard-tokens", "--val-shards", "--text-column",
                     "--max-chars", "--doc-cap"]),
    ]:  # fmt: skip
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        for flag in flags:
            assert flag in text, (command, flag)
