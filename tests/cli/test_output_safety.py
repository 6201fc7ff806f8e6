"""Outputs that must not be written: an input, a node that is no regular file, a name that
ends in a separator; and outputs that fail part-way (a full disk) leave nothing behind."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from bpetite import Tokenizer
from bpetite.errors import NotARegularFileError
from tests.cli.running import Result, run

TEXT = "The cat sat on the mat.\nIt'll be fine, 中文 😀\r\n  spaces \nend"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tok.json"
    Tokenizer.train(TEXT * 4, vocab_size=350).save(path)
    return path


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "text.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    return path


def one_line_failure(result: Result, *fragments: str) -> str:
    assert result.code == 1, result
    assert result.out == ""
    assert "Traceback" not in result.err
    (line,) = result.err.splitlines()[-1:]
    assert result.err.count("bpetite: error: ") == 1, result.err
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


# --------------------------------------------------------------------------- inputs


def test_dataset_never_overwrites_its_input(
    model: Path, text_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["dataset", "--model", model, "--input", text_file, "--output", text_file]
    result = run(capsys, *argv, "--force", "--workers", "1")
    one_line_failure(result, "is the input", "even with --force")
    assert text_file.read_bytes() == TEXT.encode("utf-8")
    assert not Path(f"{text_file}.json").exists()


def test_dataset_never_overwrites_the_model_with_a_manifest(
    model: Path, text_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--output tok`` writes its manifest to ``tok.json``: the model."""
    before = model.read_bytes()
    output = model.with_suffix("")
    argv = ["dataset", "--model", model, "--input", text_file, "--output", output, "--force"]
    one_line_failure(run(capsys, *argv), f"'{model}' is the input", "--force")
    assert model.read_bytes() == before
    assert not output.exists()


def test_dataset_never_overwrites_a_shard_that_is_an_input(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard's name is known only once the shards are counted: refused before publishing."""
    folder = tmp_path / "data"
    folder.mkdir()
    shard = folder / "train_000000.bin"
    shard.write_bytes(TEXT.encode("utf-8"))
    argv = ["dataset", "--model", model, "--input", folder, "--shard-tokens", "1000"]
    result = run(capsys, *argv, "--output", folder / "train_{shard}.bin", "--force")
    one_line_failure(result, "is the input", "--force")
    assert shard.read_bytes() == TEXT.encode("utf-8")
    assert sorted(path.name for path in folder.iterdir()) == ["train_000000.bin"]


@pytest.mark.parametrize("which", ["input", "model"])
def test_eval_html_never_overwrites_an_input_or_the_model(
    model: Path, text_file: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    target = text_file if which == "input" else model
    before = target.read_bytes()
    argv = ["eval", "--model", model, "--input", text_file, "--html", target, "--force"]
    one_line_failure(run(capsys, *argv), "--html", "is the input", "even with --force")
    assert target.read_bytes() == before


# --------------------------------------------------------------------------- nodes


def _node(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    else:
        try:  # the numbers of /dev/full; nothing is ever written to it here
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except PermissionError:
            pytest.skip("platform limit: making a character device needs root")
    return path


@pytest.mark.parametrize(("kind", "words"), [("fifo", "FIFO"), ("device", "character device")])
def test_encode_refuses_to_replace_a_node_that_is_no_regular_file(
    model: Path,
    text_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    words: str,
) -> None:
    node = _node(tmp_path, kind)
    mode = node.lstat().st_mode
    argv = ["encode", "--model", model, "--input", text_file, "--output", node, "--force"]
    one_line_failure(run(capsys, *argv), words, "only replaces regular files", "stdout")
    assert node.lstat().st_mode == mode  # still the FIFO or the device


@pytest.mark.parametrize("command", ["train", "dataset"])
def test_other_commands_refuse_a_fifo_too(
    model: Path, text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    node = _node(tmp_path, "fifo")
    if command == "train":
        argv: list[Any] = ["train", "--input", text_file, "--vocab-size", "260"]
    else:
        argv = ["dataset", "--model", model, "--input", text_file, "--workers", "1"]
    one_line_failure(run(capsys, *argv, "--output", node, "--force"), "FIFO", "regular files")
    assert stat.S_ISFIFO(node.lstat().st_mode)


def test_the_library_refuses_a_fifo_with_a_typed_error(model: Path, tmp_path: Path) -> None:
    node = _node(tmp_path, "fifo")
    with pytest.raises(NotARegularFileError, match="it is a FIFO") as caught:
        Tokenizer.load(model).save(node, overwrite=True)
    assert isinstance(caught.value, OSError)
    assert caught.value.filename == node
    assert stat.S_ISFIFO(node.lstat().st_mode)


def test_a_symlink_is_written_through_to_its_target(
    model: Path, text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "ids.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    argv = ["encode", "--model", model, "--input", text_file, "--output", link, "--force"]
    assert run(capsys, *argv).code == 0
    assert link.is_symlink()
    assert json.loads(target.read_text()) == Tokenizer.load(model).encode_ordinary(TEXT)


def test_a_dangling_symlink_is_refused(
    model: Path, text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere.json")
    argv = ["encode", "--model", model, "--input", text_file, "--output", link, "--force"]
    one_line_failure(run(capsys, *argv), "symbolic link", "does not exist")
    assert link.is_symlink()
    assert not (tmp_path / "nowhere.json").exists()


# --------------------------------------------------------------------------- trailing separator


@pytest.mark.parametrize("command", ["encode", "train", "dataset"])
def test_a_one_file_output_ending_in_a_separator_is_refused(
    model: Path, text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    output = f"{tmp_path / 'newdir'}{os.sep}"
    argv: list[Any] = {
        "encode": ["encode", "--model", model, "--input", text_file],
        "train": ["train", "--input", text_file, "--vocab-size", "260"],
        "dataset": ["dataset", "--model", model, "--input", text_file, "--workers", "1"],
    }[command]
    one_line_failure(run(capsys, *argv, "--output", output), "names a directory")
    assert not (tmp_path / "newdir").exists()


def test_an_hf_directory_export_may_end_in_a_separator(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = f"{tmp_path / 'hf'}{os.sep}"
    result = run(capsys, "export", "--model", model, "--format", "hf", "--output", output)
    assert result.code == 0, result
    assert (tmp_path / "hf" / "tokenizer.json").is_file()


# --------------------------------------------------------------------------- a full disk


def _no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_dataset_on_a_full_disk_is_one_line_and_leaves_nothing(
    model: Path,
    text_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("bpetite.corpus._dataset.publish_atomically", _no_space)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["dataset", "--model", model, "--input", text_file, "--workers", "1"]
    result = run(capsys, *argv, "--output", out / "train.bin")
    one_line_failure(result, f"cannot write --output '{out / 'train.bin'}'", "No space left")
    assert list(out.iterdir()) == []


def test_hf_export_on_a_full_disk_is_one_line_and_leaves_nothing(
    model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The disk fills while the second file is published, after the first was."""
    import bpetite.core._atomic as atomic

    publish = atomic._publish
    calls: list[Path] = []

    def fill_on_second(temp: Path, destination: Path, *, overwrite: bool) -> None:
        calls.append(destination)
        if len(calls) == 2:
            temp.unlink()
            _no_space()
        publish(temp, destination, overwrite=overwrite)

    monkeypatch.setattr(atomic, "_publish", fill_on_second)
    output = tmp_path / "hf"
    result = run(capsys, "export", "--model", model, "--format", "hf", "--output", output)
    one_line_failure(result, f"cannot write --output '{output}'", "No space left")
    assert len(calls) == 2  # one file was published before the failure
    assert [path.name for path in tmp_path.iterdir()] == ["tok.json"]  # no hf/ left
