"""``bpetite dataset``: exit codes, stdout, files, and real processes and signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from bpetite import Tokenizer
from tests.cli.running import run
from tests.processes import none_left_mentioning

SPECIAL = "<|endoftext|>"
TEXT = "The cat sat on the mat.\nIt'll be fine, 中文 😀\r\n  spaces \nend"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tok.json"
    Tokenizer.train(TEXT * 4, vocab_size=350).save(path)
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for index in range(5):
        (folder / f"{index}.txt").write_bytes((TEXT * (index + 1)).encode("utf-8"))
    return folder


def expected(model: Path, texts: list[str], separator: bool = True) -> list[int]:
    tokenizer = Tokenizer.load(model)
    ids: list[int] = []
    for text in texts:
        ids += tokenizer.encode_ordinary(text)
        if separator:
            ids.append(tokenizer.special_tokens[SPECIAL])
    return ids


def memmap(path: Path, dtype: str = "<u2") -> list[int]:
    return [int(value) for value in numpy.memmap(path, dtype=numpy.dtype(dtype), mode="r")]


def files_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.is_file())


def test_dataset_writes_train_and_val_and_a_summary(
    capsys: pytest.CaptureFixture[str], model: Path, corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    result = run(
        capsys, "dataset", "--model", model, "--input", corpus, "--output", output,
        "--val-fraction", "0.2", "--workers", "2",
    )  # fmt: skip
    assert result.code == 0, result.err
    texts = [(TEXT * (index + 1)) for index in range(5)]
    assert memmap(output) == expected(model, texts[:4])
    assert memmap(tmp_path / "val.bin") == expected(model, texts[4:])
    summary = json.loads(result.out)
    assert summary["train"] == {"path": str(output), "tokens": len(memmap(output)), "documents": 4}
    assert summary["val"]["documents"] == 1
    assert summary["input_bytes"] == sum(len(text.encode()) for text in texts)
    assert "encode: done" in result.err  # plain progress lines off a terminal
    manifest = json.loads((tmp_path / "train.bin.json").read_text(encoding="utf-8"))
    assert manifest["model"]["name"] == "tok.json"
    assert manifest["options"]["val_fraction"] == 0.2


def test_no_separator_and_uint32(
    capsys: pytest.CaptureFixture[str], model: Path, corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "d.bin"
    result = run(
        capsys, "dataset", "--model", model, "--input", corpus / "0.txt", corpus / "1.txt",
        "--output", output, "--no-separator", "--dtype", "uint32", "--workers", "1",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert memmap(output, "<u4") == expected(model, [TEXT, TEXT * 2], separator=False)


def test_user_mistakes_are_one_line_and_write_nothing(
    capsys: pytest.CaptureFixture[str], model: Path, corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (corpus / "3.txt").write_bytes(b"ok\n" * 10 + b"\xc3(")
    cases = [
        (["--input", corpus], "'" + str(corpus / "3.txt") + "' is not valid UTF-8: byte 0xc3 "
         "at byte offset 30 (invalid continuation byte)"),
        (["--input", tmp_path / "missing"],
         "--input '" + str(tmp_path / "missing") + "' does not exist"),
        (["--input", corpus / "0.txt", "--separator", "nope"], "'nope' is not a single token"),
        (["--input", corpus / "0.txt", "--val-output", out / "v.bin"],
         "--val-output needs --val-fraction"),
        (["--input", corpus / "0.txt", "--val-fraction", "0.5"], "selects none for validation"),
    ]  # fmt: skip
    for extra, message in cases:
        result = run(capsys, "dataset", "--model", model, "--output", out / "t.bin", *extra)
        assert result.code == 1, result
        assert result.out == ""
        assert message in result.err, result.err
        # Invalid UTF-8 is found while encoding, so progress lines may come first; the
        # error itself is one line, the last.
        *progress, error = result.err.strip().splitlines()
        assert error.startswith("bpetite: error: "), result.err
        assert all(line.startswith("encode: ") for line in progress), result.err
        assert files_in(out) == []
        assert list(out.iterdir()) == []  # no temp directory either


def test_an_id_too_large_for_uint16_names_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model = tmp_path / "wide.json"
    Tokenizer([(97, 98)], special_tokens={SPECIAL: 70_000}).save(model)
    (tmp_path / "a.txt").write_text("ab", encoding="utf-8")
    result = run(capsys, "dataset", "--model", model, "--input", tmp_path / "a.txt",
                 "--output", tmp_path / "t.bin", "--dtype", "uint16")  # fmt: skip
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"bpetite: error: the separator {SPECIAL!r} has id 70000, which does not fit in uint16 "
        f"(at most 65535); use --dtype uint32"
    )
    assert files_in(tmp_path) == ["a.txt", "wide.json"]


def test_existing_output_needs_force(
    capsys: pytest.CaptureFixture[str], model: Path, corpus: Path, tmp_path: Path
) -> None:
    (tmp_path / "t.bin.json").write_text("keep", encoding="utf-8")
    argv = ["dataset", "--model", model, "--input", corpus, "--output", tmp_path / "t.bin"]
    result = run(capsys, *argv)
    assert result.code == 1
    assert "t.bin.json' already exists; pass --force" in result.err
    assert (tmp_path / "t.bin.json").read_text(encoding="utf-8") == "keep"
    assert run(capsys, *argv, "--force").code == 0
    assert json.loads((tmp_path / "t.bin.json").read_text(encoding="utf-8"))["documents"] == 5


def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    base = ["dataset", "--model", model, "--input", "x", "--output", tmp_path / "t.bin"]
    for extra in (["--val-fraction", "1"], ["--workers", "0"], ["--dtype", "int8"],
                  ["--separator", "a", "--no-separator"]):  # fmt: skip
        assert run(capsys, *base, *extra).code == 2


def test_standard_input_is_one_document(model: Path, tmp_path: Path) -> None:
    output = tmp_path / "stdin.bin"
    result = subprocess.run(
        [sys.executable, "-m", "bpetite", "dataset", "--model", str(model), "--input", "-",
         "--output", str(output)],
        input=TEXT.encode("utf-8"), capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert memmap(output) == expected(model, [TEXT])
    manifest = json.loads(output.with_name("stdin.bin.json").read_text(encoding="utf-8"))
    assert manifest["document_sources"] == ["-"]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_ctrl_c_while_workers_encode_writes_nothing(model: Path, tmp_path: Path) -> None:
    """A real SIGINT to the parent: exit 130, one error line, no file, no temp dir, no worker."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for index in range(8):  # about 8 MB: seconds of encoding, interrupted as it starts
        (corpus / f"{index}.txt").write_text(f"{TEXT} {index}\n" * 18_000, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "dataset", "--model", str(model), "--input",
         str(corpus), "--workers", "2", "--output", str(out / "train.bin")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith(b"encode: started"), first
    assert process.poll() is None, "encoding finished before the signal"
    process.send_signal(signal.SIGINT)
    stdout, rest = process.communicate(timeout=60)
    err = (first + rest).decode()
    assert process.returncode == 130, err
    assert stdout == b""
    assert err.splitlines()[-1] == "bpetite: error: interrupted; nothing was written"
    assert "Traceback" not in err
    assert list(out.iterdir()) == []
    assert none_left_mentioning(str(out)), "a worker outlived us"


def test_a_custom_pattern_model_needs_and_takes_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal's advice works: the option it names exists and loads the model."""
    custom = Tokenizer.train(TEXT * 4, vocab_size=300, pattern=r"\S+|\s+")
    custom.save(tmp_path / "custom.json")
    text = tmp_path / "text.txt"
    text.write_bytes(TEXT.encode("utf-8"))
    argv = ["dataset", "--model", tmp_path / "custom.json", "--input", text, "--workers", "1"]
    refused = run(capsys, *argv, "--output", tmp_path / "a.bin")
    assert refused.code == 1 and "pass --trust-custom-pattern" in refused.err
    assert not (tmp_path / "a.bin").exists()
    trusted = run(capsys, *argv, "--output", tmp_path / "b.bin", "--trust-custom-pattern")
    assert trusted.code == 0, trusted.err
    separator = custom.special_tokens[SPECIAL]
    assert memmap(tmp_path / "b.bin") == [*custom.encode_ordinary(TEXT), separator]


def test_a_rerun_with_fewer_shards_leaves_none_of_the_old(
    capsys: pytest.CaptureFixture[str], model: Path, corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "shd"
    out.mkdir()
    base = ["dataset", "--model", model, "--input", corpus, "--output", out / "t_{shard}.bin"]
    assert run(capsys, *base, "--shard-tokens", "50").code == 0
    assert len(files_in(out)) > 4
    result = run(capsys, *base, "--shard-tokens", "100000", "--force")
    assert result.code == 0, result.err
    assert files_in(out) == ["t_000000.bin", "t_000000.bin.json"]
    (out / "t_000009.bin").write_bytes(b"stray")
    result = run(capsys, *base, "--shard-tokens", "100000")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"bpetite: error: '{out / 't_000000.bin'}' and 2 more file(s) named like the shards "
        f"of '{out / 't_{shard}.bin'}' already exist; pass --force to replace them (the old "
        "shards that are not written again are removed once the new ones are all written)"
    )
    assert files_in(out) == ["t_000000.bin", "t_000000.bin.json", "t_000009.bin"]


def test_a_manifest_that_is_an_input_is_called_the_manifest(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    precious = tmp_path / "p.bin.json"
    precious.write_text("precious text", encoding="utf-8")
    result = run(capsys, "dataset", "--model", model, "--input", precious,
                 "--output", tmp_path / "p.bin", "--force")  # fmt: skip
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"bpetite: error: the manifest of --output '{precious}' is the input given to --input "
        f"'{precious}'; writing it would destroy the input, even with --force: choose another "
        "path"
    )
    assert precious.read_text(encoding="utf-8") == "precious text"
