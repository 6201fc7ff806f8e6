"""The CLI for large corpora: train on many files, count into files, train from counts.

Driven in-process through ``main(argv)``, plus one real process run with workers.
"""

import io
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bpetite import Tokenizer, reference
from bpetite.cli.commands import _encode
from tests.cli.running import Result, run
from tests.conftest import REPO_ROOT
from tests.docs_runner import check_output, console_commands, doc_blocks, run_console
from tests.processes import none_left_mentioning

VOCAB = 400


def assert_one_line_failure(result: Result, *fragments: str, code: int = 1) -> str:
    assert result.code == code, result
    assert result.out == ""
    assert "Traceback" not in result.err
    line = result.err.splitlines()[-1]
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    if code == 1:
        assert result.err == line + "\n"
        assert line.startswith("bpetite: error: ")
    return line


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    (root / "plays").mkdir()
    for index in range(3):
        part = shakespeare_text[index * 20_000 : (index + 1) * 20_000]
        (root / "plays" / f"{index}.txt").write_bytes(part.encode("utf-8"))
    (root / "notes.txt").write_bytes("naïve café 中文 😀 it's 123\r\n".encode() * 100)
    return root


def simple_artifact(paths: list[Path], out: Path) -> bytes:
    counts: Counter[bytes] = Counter()
    for path in paths:
        counts.update(
            [chunk.encode() for chunk in reference.split(path.read_bytes().decode("utf-8"))]
        )
    Tokenizer.train_from_counts(counts, VOCAB).save(str(out))
    return out.read_bytes()


def all_files(corpus: Path) -> list[Path]:
    return sorted(corpus.rglob("*.txt"))


# --------------------------------------------------------------------------- train --input


def test_train_on_directories_and_files_with_workers(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "t.json"
    result = run(
        capsys, "train", "--input", corpus / "plays", corpus / "notes.txt",
        "--workers", 2, "--vocab-size", VOCAB, "--output", output,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert output.read_bytes() == simple_artifact(all_files(corpus), tmp_path / "simple.json")
    summary = json.loads(result.out)
    assert result.out == json.dumps(summary) + "\n"
    total = sum(path.stat().st_size for path in all_files(corpus))
    assert summary["corpus_bytes"] == total
    assert summary["actual_mergeable_vocab_size"] == VOCAB
    for key in ("count_ms", "merge_ms", "elapsed_ms"):
        assert isinstance(summary[key], int)
        assert summary[key] >= 0
    assert summary["count_ms"] + summary["merge_ms"] - 1 <= summary["elapsed_ms"]
    lines = result.err.splitlines()
    assert lines[0] == f"count: started, 0/{total} bytes"
    done = lines.index(next(line for line in lines if line.startswith("count: done")))
    assert lines[done].startswith(f"count: done, {total}/{total} bytes in ")
    assert lines[done + 1] == f"train: started, 0/{VOCAB - 256} merges"


@pytest.mark.parametrize("workers", [1, 3])
def test_train_artifact_is_the_same_for_any_worker_count(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path, workers: int
) -> None:
    output = tmp_path / "t.json"
    argv = ["train", "--input", corpus, "--workers", workers, "--vocab-size", VOCAB]
    assert run(capsys, *argv, "--output", output).code == 0
    assert output.read_bytes() == simple_artifact(all_files(corpus), tmp_path / "simple.json")


def test_stdin_is_one_more_document(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    corpus: Path,
    tmp_path: Path,
) -> None:
    notes = corpus / "notes.txt"
    data = notes.read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    output = tmp_path / "t.json"
    result = run(
        capsys, "train", "--input", "-", corpus / "plays", "--vocab-size", VOCAB,
        "--output", output,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert output.read_bytes() == simple_artifact(all_files(corpus), tmp_path / "simple.json")
    assert json.loads(result.out)["corpus_bytes"] == sum(
        p.stat().st_size for p in all_files(corpus)
    )


def test_invalid_utf8_in_one_file_writes_nothing(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nfine\n" * 100 + b"caf\xe9!")
    output = tmp_path / "t.json"
    result = run(
        capsys, "train", "--input", corpus, bad, "--workers", 2, "--vocab-size", VOCAB,
        "--output", output,
    )  # fmt: skip
    assert_one_line_failure(result, f"'{bad}' is not valid UTF-8", "byte 0xe9 at byte offset 1003")
    assert not output.exists()


def test_unreadable_file_fails_before_counting(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    corpus: Path,
    tmp_path: Path,
) -> None:
    """Simulated, because root reads any file."""
    locked = corpus / "notes.txt"
    real_open = Path.open

    def deny(self: Path, *args: object, **kwargs: object) -> object:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", deny)
    result = run(
        capsys, "train", "--input", corpus, "--vocab-size", VOCAB, "--output", tmp_path / "t.json"
    )
    assert_one_line_failure(result, str(locked), "permission denied")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--input", "{tmp}/missing.txt"], "does not exist"),
        (["--input", "{tmp}/empty"], "is a directory with no regular files"),
        (["--input", "-", "-"], "can be given only once"),
        (["--counts", "{tmp}/missing.json"], "--counts file"),
        (["--counts", "{tmp}/empty"], "is a directory"),
        (["--counts", "{tmp}/not-counts.json"], "is not a valid counts file: missing key"),
    ],
)
def test_train_input_failures_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], fragment: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "not-counts.json").write_text("{}", encoding="utf-8")
    args = [arg.format(tmp=tmp_path) for arg in argv]
    output = tmp_path / "t.json"
    result = run(capsys, "train", *args, "--vocab-size", VOCAB, "--output", output)
    assert_one_line_failure(result, fragment)
    assert not output.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--input", "a.txt", "--counts", "c.json"],  # one or the other
        [],  # one is required
        ["--input", "a.txt", "--workers", "0"],
        ["--input", "a.txt", "--workers", "two"],
    ],
)
def test_train_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    result = run(capsys, "train", *argv, "--vocab-size", VOCAB, "--output", "o.json")
    assert result.code == 2
    assert result.out == ""
    assert "usage: bpetite train" in result.err


# --------------------------------------------------------------------------- count, --counts


def test_count_then_train_from_several_counts_files(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "plays.json", tmp_path / "notes.json"
    result = run(capsys, "count", "--input", corpus / "plays", "--output", first, "--workers", 2)
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    plays = sorted((corpus / "plays").iterdir())
    counts: Counter[bytes] = Counter()
    for path in plays:
        counts.update(
            [chunk.encode() for chunk in reference.split(path.read_bytes().decode("utf-8"))]
        )
    assert summary["documents"] == 3
    assert summary["corpus_bytes"] == sum(path.stat().st_size for path in plays)
    assert summary["distinct_chunks"] == len(counts)
    assert summary["total_chunks"] == sum(counts.values())
    assert {"count_ms", "elapsed_ms"} <= set(summary)
    assert result.err.splitlines()[0].startswith("count: started, 0/")
    assert run(capsys, "count", "--input", corpus / "notes.txt", "--output", second).code == 0

    output = tmp_path / "t.json"
    result = run(
        capsys, "train", "--counts", first, second, "--vocab-size", VOCAB, "--output", output
    )
    assert result.code == 0, result.err
    assert output.read_bytes() == simple_artifact(all_files(corpus), tmp_path / "simple.json")
    summary = json.loads(result.out)
    assert summary["corpus_bytes"] is None  # counts files do not record bytes
    assert {"count_ms", "merge_ms", "elapsed_ms"} <= set(summary)
    assert result.err.splitlines()[0] == f"train: started, 0/{VOCAB - 256} merges"


def test_count_refuses_an_existing_output_unless_forced(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "c.json"
    output.write_bytes(b"precious")
    result = run(capsys, "count", "--input", corpus / "notes.txt", "--output", output)
    assert_one_line_failure(result, "already exists", "--force")
    assert output.read_bytes() == b"precious"
    forced = run(capsys, "count", "--input", corpus / "notes.txt", "--output", output, "--force")
    assert forced.code == 0, forced.err
    assert json.loads(output.read_bytes())["format"] == "bpetite-chunk-counts"


def test_count_invalid_utf8_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xc3(")
    result = run(capsys, "count", "--input", bad, "--output", tmp_path / "c.json")
    assert_one_line_failure(result, "byte 0xc3 at byte offset 3 (invalid continuation byte)")
    assert [path.name for path in tmp_path.iterdir()] == ["bad.txt"]


# --------------------------------------------------------------------------- encode --input


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str) -> Path:
    path = tmp_path_factory.mktemp("model") / "m.json"
    Tokenizer.train(shakespeare_text[:50_000] + " <|endoftext|>\n \n", 500).save(str(path))
    return path


@pytest.mark.parametrize("block_size", [1, 5, 1 << 20])
def test_encode_input_streams_the_ids_of_the_whole_text(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    tmp_path: Path,
    shakespeare_text: str,
    block_size: int,
) -> None:
    text = (
        shakespeare_text[:3000] + "<|endoftext|>" + "naïve 😀 it'll \r\n  x<|endoftext|><|end"
        + shakespeare_text[3000:6000]
    )  # fmt: skip
    source = tmp_path / "in.txt"
    source.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(_encode, "BLOCK_SIZE", block_size)
    result = run(capsys, "encode", "--model", model, "--input", source)
    assert result.code == 0, result.err
    expected = Tokenizer.load(str(model)).encode(text)
    assert result.out == json.dumps(expected, separators=(",", ":")) + "\n"


def test_encode_input_empty_file(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    source = tmp_path / "empty.txt"
    source.write_bytes(b"")
    assert run(capsys, "encode", "--model", model, "--input", source).out == "[]\n"


def test_encode_input_invalid_utf8_late_in_the_file_prints_no_ids(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: Path,
    tmp_path: Path,
) -> None:
    """The file is checked before the first id is written, even across many blocks."""
    source = tmp_path / "bad.txt"
    source.write_bytes(b"hello world\n" * 100 + b"\xff")
    monkeypatch.setattr(_encode, "BLOCK_SIZE", 64)
    result = run(capsys, "encode", "--model", model, "--input", source)
    assert_one_line_failure(result, str(source), "byte 0xff at byte offset 1200")


# --------------------------------------------------------------------------- real processes


def test_docs_scaling_runs_as_shown(tmp_path: Path) -> None:
    """Every command in docs/scaling.md's console blocks, in order, output for output."""
    ran = []
    env = dict(os.environ, README_TEST_PYTHON=sys.executable, TERM="dumb")
    text = (REPO_ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    for block in doc_blocks(text):
        if block.language != "console":
            continue
        for command in console_commands(block):
            check_output(command, run_console(command, tmp_path, env))
            ran.append(command.command)
    words = {word for command in ran for word in command.split()}
    assert {"count", "--counts", "--workers", "cmp"} <= words


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="platform limit: needs /proc")
def test_ctrl_c_while_workers_count_stops_them_and_writes_nothing(
    tmp_path: Path, shakespeare_text: str
) -> None:
    """A real SIGINT to the parent: exit 130, one error line, no file, no worker left."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for index in range(16):  # 18 MB: seconds of counting, interrupted as it starts
        (corpus / f"{index}.txt").write_text(shakespeare_text, encoding="utf-8")
    output = tmp_path / "interrupted.counts.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "count", "--input", str(corpus), "--workers", "2",
         "--output", str(output)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith(b"count: started"), first
    assert process.poll() is None, "counting finished before the signal"
    process.send_signal(signal.SIGINT)
    stdout, rest = process.communicate(timeout=60)
    err = (first + rest).decode()
    assert process.returncode == 130, err
    assert stdout == b""
    assert err.splitlines()[-1] == "bpetite: error: interrupted; nothing was written"
    assert "Traceback" not in err
    assert not output.exists()
    assert none_left_mentioning(str(output)), "a worker outlived us"


def test_count_and_train_through_real_processes(corpus: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COLUMNS", "FORCE_COLOR"))}
    env["TERM"] = "dumb"

    def bpetite(*argv: object) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "bpetite", *map(str, argv)],
            capture_output=True, timeout=120, check=False, env=env,
        )  # fmt: skip

    counts = tmp_path / "c.json"
    counted = bpetite("count", "--input", corpus, "--workers", 2, "--output", counts)
    assert counted.returncode == 0, counted.stderr
    output = tmp_path / "t.json"
    trained = bpetite("train", "--counts", counts, "--vocab-size", VOCAB, "--output", output)
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout)["actual_mergeable_vocab_size"] == VOCAB
    assert output.read_bytes() == simple_artifact(all_files(corpus), tmp_path / "simple.json")


def test_encode_stdin_with_invalid_utf8_late_writes_nothing_to_stdout(tmp_path: Path) -> None:
    """Standard input is spooled and checked before the first id is written."""
    model = tmp_path / "tok.json"
    Tokenizer.train("hello world " * 50, 300).save(str(model))
    data = ("hello world " * 200_000).encode("utf-8") + b"\xff tail"
    result = subprocess.run(
        [sys.executable, "-m", "bpetite", "encode", "--model", str(model), "--input", "-"],
        input=data,
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == b""
    assert b"standard input is not valid UTF-8" in result.stderr
    assert f"byte 0xff at byte offset {len(data) - 6}".encode() in result.stderr
