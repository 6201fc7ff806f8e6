"""The command line under faults and hostile input: nothing lost, nothing truncated.

Every result reaches stdout whole or the command fails; an output never replaces one
of the command's inputs; closed streams, pipes, process substitutions, huge values
and huge id lists are handled with one line or a clean result.
"""

from __future__ import annotations

import fcntl
import functools
import io
import json
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from bpetite import Tokenizer, reference
from bpetite.cli import main

CORPUS = ("The quick brown fox jumps over the lazy dog; naïve café 🤔.\r\n" * 40) + "end"
VOCAB = 300

needs_posix = pytest.mark.skipif(os.name != "posix", reason="POSIX pipes and shells")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "model.json"
    Tokenizer.train(CORPUS, VOCAB).save(path)
    return path


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_bytes(CORPUS.encode("utf-8"))
    return path


def bpetite(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bpetite", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def shell(script: str, **paths: Path) -> subprocess.CompletedProcess[bytes]:
    """Run `script` in bash with ``$BPETITE`` the CLI and each path as an env variable."""
    env = {**os.environ, "BPETITE": f"{sys.executable} -m bpetite"}
    env.update({name.upper(): str(path) for name, path in paths.items()})
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, env=env, timeout=120, check=False
    )


def one_error_line(stderr: bytes, *fragments: str) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    (line,) = text.splitlines()
    assert line.startswith("bpetite: error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


@functools.cache
def reference_merges() -> tuple[tuple[int, int], ...]:
    """The reference's merges of CORPUS, computed once: several tests check against them."""
    return tuple(reference.train(CORPUS, VOCAB))


def expected_ids(text: str) -> list[int]:
    return reference.encode(reference.Model(reference_merges()), text)


# --------------------------------------------------------------------------- short writes


class ShortWriter(io.RawIOBase):
    """A raw stream that takes at most `chunk` bytes per write, as a busy pipe does."""

    def __init__(self, chunk: int) -> None:
        self.chunk = chunk
        self.data = bytearray()
        self.writes = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        taken = bytes(data[: self.chunk])
        self.data += taken
        self.writes += 1
        return len(taken)


def run_into(raw: ShortWriter, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    """Run the CLI in-process with a stdout whose binary layer is `raw` (unbuffered)."""
    stdout = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[type-var]
    monkeypatch.setattr(sys, "stdout", stdout)
    return main(list(argv))


@pytest.mark.parametrize(
    "command",
    [
        ["encode", "--text", CORPUS],
        ["decode", "--ids", *map(str, Tokenizer.train(CORPUS, VOCAB).encode(CORPUS))],
        ["show", "--text", CORPUS, "--color", "never"],
    ],
    ids=["encode", "decode", "show"],
)
def test_every_byte_reaches_a_stream_that_takes_short_writes(
    model: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    full = ShortWriter(chunk=1 << 30)
    assert run_into(full, monkeypatch, command[0], "--model", str(model), *command[1:]) == 0
    short = ShortWriter(chunk=7)
    assert run_into(short, monkeypatch, command[0], "--model", str(model), *command[1:]) == 0
    assert short.writes > 1
    assert bytes(short.data) == bytes(full.data)
    if command[0] == "encode":
        assert json.loads(bytes(short.data)) == expected_ids(CORPUS)
    if command[0] == "decode":
        assert bytes(short.data) == CORPUS.encode("utf-8")


class StuckWriter(ShortWriter):
    """A raw non-blocking stream with no room left: every write would block."""

    def write(self, data: Any) -> None:  # type: ignore[override]
        return None


def test_a_stream_that_takes_nothing_fails_instead_of_truncating(
    model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_into(StuckWriter(0), monkeypatch, "encode", "--model", str(model), "--text", "hi")
    assert code == 1
    one_error_line(capsys.readouterr().err.encode(), "standard output")


@needs_posix
@pytest.mark.parametrize("command", ["encode", "decode", "show"])
def test_a_non_blocking_pipe_gets_the_whole_result_unbuffered(
    model: Path, tmp_path: Path, command: str
) -> None:
    """PYTHONUNBUFFERED=1 makes stdout raw; a non-blocking pipe takes only what fits."""
    text = CORPUS * 40  # far more than a pipe buffer holds
    source = tmp_path / "input"
    if command == "decode":
        source.write_text(json.dumps(Tokenizer.load(model).encode(text)), encoding="utf-8")
    else:
        source.write_bytes(text.encode("utf-8"))
    extra = ["--color", "never"] if command == "show" else []
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
    fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    received = bytearray()

    def drain() -> None:
        with os.fdopen(read_end, "rb", buffering=0) as reader:
            while block := reader.read(4096):
                received.extend(block)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        process = subprocess.run(
            [
                sys.executable,
                "-m",
                "bpetite",
                command,
                "--model",
                str(model),
                "--input",
                str(source),
                *extra,
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
        reader.join(timeout=60)
    assert process.returncode == 0, process.stderr.decode()
    if command == "encode":
        assert json.loads(bytes(received)) == Tokenizer.load(model).encode(text)
    elif command == "decode":
        assert bytes(received) == text.encode("utf-8")
    else:
        assert bytes(received).replace(b"|", b"").startswith(b"The")
        assert len(received) > 64 << 10


@needs_posix
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize(
    "command",
    [["encode", "--text", "hello"], ["decode", "--ids", "104", "105"], ["show", "--text", "hi"]],
    ids=["encode", "decode", "show"],
)
def test_a_full_device_is_a_failure(model: Path, command: list[str], unbuffered: str) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    with Path("/dev/full").open("wb") as full:
        process = subprocess.run(
            [sys.executable, "-m", "bpetite", command[0], "--model", str(model), *command[1:]],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=False,
        )
    assert process.returncode == 1
    one_error_line(process.stderr, "No space left on device")


# --------------------------------------------------------------------------- input read once


def test_an_input_that_changes_while_encoding_never_gives_partial_json(
    model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    """Someone rewrites the file (with a bad byte) once it has been read to the end."""
    source = tmp_path / "notes.txt"
    source.write_bytes(CORPUS.encode("utf-8"))
    real_open = Path.open

    class Rewritten(io.BufferedReader):
        changed = False

        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            if not data and not Rewritten.changed:
                Rewritten.changed = True
                with real_open(source, "r+b") as writer:
                    writer.write(b"\xff" * 10)
            return data

        def readinto(self, buffer: Any) -> int:
            data = self.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)

    def opening(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self == source and mode == "rb":
            return Rewritten(io.FileIO(str(self), "rb"))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", opening)
    code = main(["encode", "--model", str(model), "--input", str(source)])
    out = capsysbinary.readouterr().out
    assert Rewritten.changed
    if code == 0:
        assert json.loads(out) == expected_ids(CORPUS)  # the text as it was read
    else:
        assert out == b""


@needs_posix
@pytest.mark.parametrize(
    "script",
    [
        '$BPETITE encode --model "$MODEL" --input <(printf "The lazy dog")',
        '$BPETITE show --model "$MODEL" --input <(printf "The lazy dog") --color never',
        '$BPETITE decode --model "$MODEL" --input <(printf "[84, 104]")',
        '$BPETITE inspect --model "$MODEL" --corpus <(printf "The lazy dog") --top 1',
    ],
    ids=["encode", "show", "decode", "inspect"],
)
def test_process_substitution_inputs_work(model: Path, script: str) -> None:
    process = shell(script, model=model)
    assert process.returncode == 0, process.stderr.decode()
    if "encode" in script:
        assert json.loads(process.stdout) == Tokenizer.load(model).encode("The lazy dog")
    if "decode" in script:
        assert process.stdout == b"Th"


@needs_posix
@pytest.mark.parametrize("command", ["train", "count"])
def test_training_and_counting_read_a_process_substitution(
    tmp_path: Path, corpus_file: Path, command: str
) -> None:
    out = tmp_path / "out.json"
    size = f"--vocab-size {VOCAB}" if command == "train" else ""
    process = shell(
        f'$BPETITE {command} --input <(cat "$CORPUS") {size} --output "$OUT" --workers 1',
        corpus=corpus_file,
        out=out,
    )
    assert process.returncode == 0, process.stderr.decode()
    if command == "train":
        assert out.read_bytes() == _saved(Tokenizer.train(CORPUS, VOCAB), tmp_path)


def _saved(tokenizer: Tokenizer, directory: Path) -> bytes:
    path = directory / "reference.json"
    tokenizer.save(path, overwrite=True)
    return path.read_bytes()


# --------------------------------------------------------------------------- outputs vs inputs


def _link(kind: str, target: Path) -> Path:
    if kind == "same":
        return target
    link = target.with_name(f"{kind}-link")
    if kind == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)
    return link


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_train_never_overwrites_its_input_even_with_force(
    corpus_file: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    output = _link(kind, corpus_file)
    code = main(
        [
            "train",
            "--input",
            str(corpus_file),
            "--vocab-size",
            "300",
            "--output",
            str(output),
            "--force",
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    one_error_line(captured.err.encode(), "is the input", "even with --force")
    assert corpus_file.read_bytes() == CORPUS.encode("utf-8")


def test_train_never_overwrites_a_file_inside_an_input_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_bytes(CORPUS.encode("utf-8"))
    code = main(
        [
            "train",
            "--input",
            str(folder),
            "--vocab-size",
            "300",
            "--output",
            str(folder / "a.txt"),
            "--force",
        ]
    )
    assert code == 1
    one_error_line(capsys.readouterr().err.encode(), "is the input")
    assert (folder / "a.txt").read_bytes() == CORPUS.encode("utf-8")


@pytest.mark.parametrize(
    "case", ["count", "counts", "export", "import", "demo", "show-html", "show-model"]
)
def test_no_command_overwrites_its_input(
    case: str, tmp_path: Path, corpus_file: Path, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own_model = tmp_path / "own-model.json"
    own_model.write_bytes(model.read_bytes())
    counts = tmp_path / "counts.json"
    assert main(["count", "--input", str(corpus_file), "--output", str(counts)]) == 0
    capsys.readouterr()
    argv, victim = {
        "count": (
            ["count", "--input", str(corpus_file), "--output", str(corpus_file)],
            corpus_file,
        ),
        "counts": (
            ["train", "--counts", str(counts), "--vocab-size", "300", "--output", str(counts)],
            counts,
        ),
        "export": (
            ["export", "--model", str(own_model), "--format", "hf", "--output", str(own_model)],
            own_model,
        ),
        "import": (["import", str(own_model), "--output", str(own_model)], own_model),
        "demo": (
            [
                "demo",
                "--input",
                str(corpus_file),
                "--vocab-size",
                "260",
                "--output",
                str(corpus_file),
            ],
            corpus_file,
        ),
        "show-html": (
            [
                "show",
                "--model",
                str(own_model),
                "--input",
                str(corpus_file),
                "--html",
                str(corpus_file),
            ],
            corpus_file,
        ),
        "show-model": (
            ["show", "--model", str(own_model), "--text", "x", "--html", str(own_model)],
            own_model,
        ),
    }[case]
    before = victim.read_bytes()
    code = main([*argv, "--force"])
    captured = capsys.readouterr()
    assert code == 1, captured
    assert captured.out == ""
    one_error_line(captured.err.encode(), "is the input")
    assert victim.read_bytes() == before


# --------------------------------------------------------------------------- closed streams


@needs_posix
@pytest.mark.parametrize(
    "command",
    [
        '$BPETITE encode --model "$MODEL" --text hi >&-',
        '$BPETITE decode --model "$MODEL" --ids 104 >&-',
        '$BPETITE show --model "$MODEL" --text hi >&-',
        '$BPETITE inspect --model "$MODEL" >&-',
    ],
    ids=["encode", "decode", "show", "inspect"],
)
def test_a_closed_stdout_is_one_error_line(model: Path, command: str) -> None:
    process = shell(command, model=model)
    assert process.returncode == 1
    one_error_line(process.stderr, "standard output is closed")


@needs_posix
def test_a_closed_stderr_keeps_progress_off_stdout(tmp_path: Path, corpus_file: Path) -> None:
    out = tmp_path / "tok.json"
    process = shell(
        '$BPETITE train --input "$CORPUS" --vocab-size 300 --output "$OUT" 2>&-',
        corpus=corpus_file,
        out=out,
    )
    assert process.returncode == 0
    summary = json.loads(process.stdout)  # only the summary: no progress line
    assert summary["actual_mergeable_vocab_size"] == 300
    assert out.exists()


@needs_posix
def test_a_closed_stderr_still_gives_the_exit_code(tmp_path: Path) -> None:
    process = shell('$BPETITE encode --model "$MISSING" --text hi 2>&-', missing=tmp_path / "no")
    assert process.returncode == 1
    assert process.stdout == b""


@needs_posix
def test_both_streams_closed_gives_the_exit_code(model: Path) -> None:
    process = shell('$BPETITE encode --model "$MODEL" --text hi >&- 2>&-', model=model)
    assert process.returncode == 1


# --------------------------------------------------------------------------- bounded input


HUGE = "9" * 200_000


@pytest.mark.parametrize(
    "argv",
    [
        ["decode", "--model", "{model}", "--ids", "x" + HUGE],
        ["train", "--input", "x", "--vocab-size", "x" + HUGE, "--output", "o"],
        ["show", "--model", "{model}", "--text", "x", "--color", "x" + HUGE],
        ["encode", "--model", "{model}", "--input", "x" * 200_000],
        ["encode", "--model", "/" + "x" * 200_000, "--text", "x"],
        ["compare-tiktoken", "--model", "{model}", "--text", "x", "--encoding", "x" * 200_000],
    ],
    ids=["ids", "vocab-size", "choice", "input-path", "model-path", "encoding"],
)
def test_error_lines_are_bounded(
    argv: list[str], model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([part.replace("{model}", str(model)) for part in argv])
    captured = capsys.readouterr()
    assert code in (1, 2)
    assert "Traceback" not in captured.err
    assert len(captured.err) < 2000, len(captured.err)


def test_a_huge_bad_item_in_an_id_list_is_shown_shortened(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "ids.json"
    source.write_text(json.dumps([1, "z" * 500_000]), encoding="utf-8")
    assert main(["decode", "--model", str(model), "--input", str(source)]) == 1
    line = one_error_line(capsys.readouterr().err.encode(), f"'{source}'", "item 1 is")
    assert "…[499762 characters elided]…" in line  # of the item's 500,002 with its quotes
    assert len(line) - len(str(source)) < 400


def deep_directory(root: Path) -> Path:
    """A real directory under `root` whose path is about 3,900 bytes: near PATH_MAX."""
    directory = root
    while len(str(directory)) < 3700:
        directory /= "d" * min(200, 3900 - len(str(directory)) - 1)
    directory.mkdir(parents=True)
    return directory


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["train", "--input", "{deep}/missing.txt", "--vocab-size", "300", "--output",
          "{deep}/o.json"], "--input '{deep}/missing.txt' does not exist"),
        (["encode", "--model", "{deep}/missing.json", "--text", "x"],
         "model file '{deep}/missing.json' does not exist"),
        (["encode", "--model", "{model}", "--input", "{deep}/latin1.txt"],
         "'{deep}/latin1.txt' is not valid UTF-8: byte 0xe9 at byte offset 3"),
        (["encode", "--model", "{model}", "--text", "x", "--output", "{deep}/exists.json"],
         "--output '{deep}/exists.json' already exists; pass --force to replace it"),
        (["decode", "--model", "{model}", "--ids", "104", "--output", "{deep}/none/o.txt"],
         "cannot write --output '{deep}/none/o.txt': directory '{deep}/none' does not exist"),
    ],
    ids=["missing-input", "missing-model", "invalid-utf8", "existing-output", "missing-directory"],
)  # fmt: skip
def test_a_path_is_shown_whole_up_to_path_max(
    tmp_path: Path,
    model: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    fragment: str,
) -> None:
    deep = deep_directory(tmp_path)
    (deep / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    (deep / "exists.json").write_text("[]", encoding="utf-8")
    assert main([part.format(deep=deep, model=model) for part in argv]) == 1
    line = one_error_line(capsys.readouterr().err.encode())
    assert fragment.format(deep=deep) in line
    assert "elided" not in line


def test_a_deeply_nested_id_list_is_one_line(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "ids.json"
    source.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["decode", "--model", str(model), "--input", str(source)]) == 1
    one_error_line(capsys.readouterr().err.encode(), "ids.json")


@pytest.mark.parametrize("value", ["١٠٤", "1_04", "٣٠٠", " 300", "300 ", "0x12c", "+"])
@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--input", "c.txt", "--vocab-size", "{v}", "--output", "o.json"],
        ["train", "--input", "c.txt", "--vocab-size", "300", "--output", "o", "--workers", "{v}"],
        ["decode", "--model", "m.json", "--ids", "{v}"],
        ["inspect", "--model", "m.json", "--top", "{v}"],
        ["demo", "--vocab-size", "{v}"],
    ],
    ids=["vocab-size", "workers", "ids", "top", "demo"],
)
def test_integers_are_ascii_digits_only(
    argv: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([part.replace("{v}", value) for part in argv]) == 2
    assert "invalid int value" in capsys.readouterr().err


@pytest.mark.parametrize("size", [Tokenizer.MAX_VOCAB_SIZE, Tokenizer.MAX_VOCAB_SIZE + 1, 10**9])
def test_any_vocab_size_trains_until_the_pairs_run_out(
    corpus_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], size: int
) -> None:
    """The specification's FR-11: training stops early, without error, when no pair is
    left; the ids a character holds bound only a corpus with more pairs (the trainer's)."""
    argv = ["train", "--input", str(corpus_file), "--vocab-size", str(size)]
    assert main([*argv, "--output", str(tmp_path / "o.json"), "--workers", "1"]) == 0
    merges = reference.train(CORPUS, 100_000)
    assert json.loads(capsys.readouterr().out)["actual_mergeable_vocab_size"] == 256 + len(merges)


# --------------------------------------------------------------------------- decode memory


def _decode_peak(model: Path, ids: list[int], directory: Path) -> tuple[int, int]:
    """Decode `ids` from a file into a real file; return (peak traced bytes, input bytes)."""
    source = directory / f"ids-{len(ids)}.json"
    source.write_text(json.dumps(ids), encoding="utf-8")
    sink = directory / f"out-{len(ids)}.txt"
    saved = sys.stdout
    with sink.open("wb") as out:
        sys.stdout = io.TextIOWrapper(out, write_through=True)
        tracemalloc.start()
        try:
            code = main(["decode", "--model", str(model), "--input", str(source)])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            sys.stdout.flush()
            sys.stdout = saved
    assert code == 0
    vocab = reference.vocab(reference_merges())
    assert sink.read_bytes() == b"".join(map(vocab.__getitem__, ids))
    return peak, source.stat().st_size


def test_decoding_many_ids_takes_a_few_bytes_per_id(model: Path, tmp_path: Path) -> None:
    """Memory grows with the ids (a few bytes each), not with their text or objects.

    Measured as the growth from n to 2n ids, so fixed costs (loading the model) cancel.
    """
    piece = Tokenizer.load(model).encode(CORPUS)
    assert max(piece) >= 256  # ids past the small-int cache: each parsed int is an object
    small = piece * (500_000 // len(piece))
    peak_small, bytes_small = _decode_peak(model, small, tmp_path)
    peak_large, bytes_large = _decode_peak(model, small * 2, tmp_path)
    growth = peak_large - peak_small
    # The input's bytes and 8 bytes per id; one int object per id alone would be 28.
    assert growth < (bytes_large - bytes_small) + 12 * len(small), (growth, len(small))


def test_decode_validates_every_id_before_writing(
    model: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    ids = Tokenizer.load(model).encode(CORPUS) * 3000  # many slices
    # json.dumps([*ids, bad, *ids[:5]]), the millions of ids written once for both files
    opened, tail = json.dumps(ids)[:-1], json.dumps(ids[:5])[1:]
    for bad, fragment in ((10**6, "unknown token id 1000000"), (240, "do not decode")):
        source = tmp_path / "ids.json"
        source.write_text(f"{opened}, {bad}, {tail}", encoding="utf-8")
        assert main(["decode", "--model", str(model), "--input", str(source)]) == 1
        captured = capsysbinary.readouterr()
        assert captured.out == b""
        line = one_error_line(captured.err, fragment)
        assert f"position {len(ids)}" in line


def test_a_model_over_the_load_limit_names_the_flag_that_raises_it(model: Path) -> None:
    size = model.stat().st_size
    refused = bpetite("encode", "--model", str(model), "--text", "fox", "--max-model-bytes", "100")
    assert refused.returncode == 1
    assert refused.stdout == b""
    message = refused.stderr.decode().strip().splitlines()[-1]
    assert f"the artifact is {size:,} bytes, over the limit of 100 bytes" in message
    assert message.endswith("pass a larger --max-model-bytes if the file is trusted")
    allowed = bpetite(
        "encode", "--model", str(model), "--text", "fox", "--max-model-bytes", str(size)
    )
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout) == Tokenizer.load(model).encode("fox")


def test_what_train_writes_encode_loads_even_for_tokens_of_megabytes(tmp_path: Path) -> None:
    """One repeated character trains into tokens of megabytes; its v1 file would pass the
    load limit, so train writes the compact form and encode reads it with the defaults."""
    text = "a" * (12 << 20)
    corpus = tmp_path / "a.txt"
    corpus.write_text(text, encoding="ascii")
    artifact = tmp_path / "a.json"
    trained = bpetite(
        "train", "--input", str(corpus), "--vocab-size", "300", "--output", str(artifact)
    )
    assert trained.returncode == 0, trained.stderr
    assert artifact.stat().st_size < 4096
    assert json.loads(artifact.read_bytes())["schema_version"] == 2
    encoded = bpetite("encode", "--model", str(artifact), "--input", str(corpus))
    assert encoded.returncode == 0, encoded.stderr
    ids = json.loads(encoded.stdout)
    tokenizer = Tokenizer.load(artifact)
    assert tokenizer.decode(ids) == text
    # the reference's merge rule on the model's own merges gives the same ids
    longest = tokenizer.token_bytes(max(ids, key=lambda i: len(tokenizer.token_bytes(i))))
    assert len(longest) > 1 << 20
    sample = b"a" * 5000
    assert reference.encode_chunk(sample, tokenizer.merges) == tokenizer.encode_chunk(sample)
