"""The CLI as a user runs it: a real process, real pipes, a real terminal, a real Ctrl-C.

The in-process tests in test_commands.py cover the logic; these check what only a process
shows: the console script, exit codes through the OS, stdout holding nothing but the
result, signals, what gets drawn on a pseudo-terminal, and which modules get imported.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpetite import Tokenizer, reference
from tests import datafiles
from tests.datafiles import build_tiktoken_cache
from tests.processes import clean_env

CONSOLE_SCRIPT = Path(sys.executable).parent / "bpetite"
TEXT = "Hello, world! naïve café 🤔\r\n<|endoftext|>tail"

needs_posix = pytest.mark.skipif(
    os.name != "posix", reason="platform limit: pseudo-terminals and signals"
)


def bpetite(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bpetite", *args],
        input=stdin,
        capture_output=True,
        env=env if env is not None else clean_env(),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def assert_clean_failure(result: subprocess.CompletedProcess[bytes], *fragments: str) -> str:
    assert result.returncode == 1, result
    assert result.stdout == b""
    err = result.stderr.decode()
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith("bpetite: error: ")
    for fragment in fragments:
        assert fragment in last
    return last


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "model.json"
    Tokenizer.train(TEXT * 20, 300).save(str(path))
    return path


# --------------------------------------------------------------------------- entry points


@pytest.mark.parametrize(
    "launcher",
    [[str(CONSOLE_SCRIPT)], [sys.executable, "-m", "bpetite"]],
    ids=["console-script", "python-m"],
)
def test_entry_points(launcher: list[str]) -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [*launcher, "--version"], capture_output=True, timeout=60, check=False, env=clean_env()
    )
    assert (result.returncode, result.stdout) == (0, f"bpetite {version('bpetite')}\n".encode())


def test_encode_pipes_into_decode(model: Path) -> None:
    """`bpetite encode ... | bpetite decode --input -` gives back the exact bytes."""
    encode = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "encode", "--model", str(model), "--input", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(),
    )
    decode = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "decode", "--model", str(model), "--input", "-"],
        stdin=encode.stdout,
        stdout=subprocess.PIPE,
        env=clean_env(),
    )
    assert encode.stdout is not None
    encode.stdout.close()  # decode owns the read end now
    assert encode.stdin is not None
    encode.stdin.write(TEXT.encode("utf-8"))
    encode.stdin.close()
    decoded, _ = decode.communicate(timeout=60)
    assert encode.wait(timeout=60) == 0
    assert decode.returncode == 0
    assert decoded == TEXT.encode("utf-8")


def test_train_stdout_is_only_the_json_summary(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes((TEXT * 30).encode("utf-8"))
    output = tmp_path / "out.json"
    result = bpetite(
        "train", "--input", str(corpus), "--vocab-size", "400", "--output", str(output)
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)  # the whole of stdout parses
    assert summary["actual_mergeable_vocab_size"] == 256 + len(reference.train(TEXT * 30, 400))
    err = result.stderr.decode()
    assert "train: started, 0/144 merges\n" in err
    assert "\x1b[" not in err  # a pipe gets plain lines, no cursor codes
    assert json.loads(output.read_bytes())["merges"] == [
        list(pair) for pair in reference.train(TEXT * 30, 400)
    ]


# Each case: a setup making the files it needs, then argv; {tmp} and {model} are filled.
FAILURES: dict[str, tuple[list[str], int, str]] = {
    "missing-input": (["train", "--input", "{tmp}/none.txt", "--vocab-size", "300",
                       "--output", "{tmp}/o.json"], 1, "does not exist"),
    "input-is-directory": (["encode", "--model", "{model}", "--input", "{tmp}"], 1,
                           "is a directory"),
    "invalid-utf8": (["train", "--input", "{tmp}/latin1.txt", "--vocab-size", "300",
                      "--output", "{tmp}/o.json"], 1, "byte 0xe9 at byte offset 3"),
    "existing-output": (["train", "--input", "{tmp}/ok.txt", "--vocab-size", "300",
                         "--output", "{tmp}/ok.txt"], 1, "already exists; pass --force"),
    "vocab-below-256": (["train", "--input", "{tmp}/ok.txt", "--vocab-size", "255",
                         "--output", "{tmp}/o.json"], 1, "at least 256"),
    "vocab-not-a-number": (["train", "--input", "{tmp}/ok.txt", "--vocab-size", "lots",
                            "--output", "{tmp}/o.json"], 2, "invalid int value: 'lots'"),
    "missing-model": (["encode", "--model", "{tmp}/none.json", "--text", "x"], 1,
                      "does not exist"),
    "model-is-directory": (["encode", "--model", "{tmp}", "--text", "x"], 1, "is a directory"),
    "corrupt-model": (["encode", "--model", "{tmp}/ok.txt", "--text", "x"], 1,
                      "is not a valid bpetite artifact"),
    "unknown-id": (["decode", "--model", "{model}", "--ids", "104", "5000"], 1,
                   "unknown token id 5000 at position 1"),
    "ids-not-utf8": (["decode", "--model", "{model}", "--ids", "240"], 1,
                     "do not decode to valid UTF-8"),
    "ids-file-not-an-array": (["decode", "--model", "{model}", "--input", "{tmp}/ok.txt"], 1,
                              "is not valid JSON"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_every_expected_failure_through_a_process(tmp_path: Path, model: Path, case: str) -> None:
    """Real exit code, nothing on stdout, one line on stderr, no traceback, no artifact."""
    (tmp_path / "ok.txt").write_text("plain text", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    template, code, fragment = FAILURES[case]
    argv = [arg.format(tmp=tmp_path, model=model) for arg in template]
    before = sorted(path.name for path in tmp_path.iterdir())
    result = bpetite(*argv)
    assert result.returncode == code, result
    assert result.stdout == b""
    err = result.stderr.decode()
    assert "Traceback" not in err
    assert fragment in err.splitlines()[-1]
    if code == 1:  # one error line, last; progress lines may precede it
        assert err.count("bpetite: error:") == 1
        assert err.splitlines()[-1].startswith("bpetite: error: ")
    else:
        assert err.startswith("usage: bpetite")
    assert sorted(path.name for path in tmp_path.iterdir()) == before  # nothing written


def test_text_argument_with_raw_non_utf8_bytes(model: Path) -> None:
    """The OS hands over bytes; one that is not UTF-8 must be named, not crash encode."""
    result = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"bpetite", b"encode", b"--model",
         os.fsencode(model), b"--text", b"caf\xe9"],
        capture_output=True, timeout=60, check=False, env=clean_env(),
    )  # fmt: skip
    assert_clean_failure(result, "--text is not valid UTF-8", "byte 0xe9 at character 3")


@pytest.fixture
def unreadable_file(tmp_path: Path) -> Iterator[Path]:
    """A file this process may not read: mode 0, or for root a write-only sysfs entry.

    Root ignores file modes, but the kernel refuses to open a write-only sysfs
    attribute for reading even for root, with a real EACCES; opening one to read has
    no effect on the system.
    """
    if os.name != "posix":
        pytest.skip("platform limit: POSIX permissions")
    if os.geteuid() != 0:
        locked = tmp_path / "locked.txt"
        locked.write_text("text", encoding="utf-8")
        locked.chmod(0)
        yield locked
        locked.chmod(0o644)
        return
    for root in ("/sys/class", "/sys/kernel", "/sys/devices"):
        for path in sorted(Path(root).glob("*/*")):
            try:
                if path.is_file() and path.stat().st_mode & 0o777 == 0o200:
                    yield path
                    return
            except OSError:
                continue
    pytest.skip(
        "platform limit: as root, and no write-only sysfs file to stand in for a locked file"
    )


@pytest.mark.parametrize("command", ["train", "encode", "model"])
def test_permission_denied(
    unreadable_file: Path, tmp_path: Path, model: Path, command: str
) -> None:
    with pytest.raises(PermissionError):
        unreadable_file.read_bytes()  # really unreadable, for this process too
    argv = {
        "train": ["train", "--input", str(unreadable_file), "--vocab-size", "300",
                  "--output", str(tmp_path / "o.json")],
        "encode": ["encode", "--model", str(model), "--input", str(unreadable_file)],
        "model": ["decode", "--model", str(unreadable_file), "--ids", "1"],
    }[command]  # fmt: skip
    result = bpetite(*argv)
    last = assert_clean_failure(result, str(unreadable_file))
    assert "permission denied" in last.lower()
    assert not (tmp_path / "o.json").exists()


# --------------------------------------------------------------------------- Ctrl-C


@needs_posix
def test_sigint_during_training_leaves_nothing(tmp_path: Path) -> None:
    """A real SIGINT mid-training: exit 130, one error line, no artifact, no temp file.

    Random words give hundreds of thousands of distinct chunks, so training runs for
    seconds after it reports "started"; the signal lands inside the trainer.
    """
    rng = random.Random(20240407)
    letters = "abcdefghijklmnopqrstuvwxyzéüß"
    words = (" " + "".join(rng.choices(letters, k=rng.randint(2, 12))) for _ in range(150_000))
    corpus = tmp_path / "big.txt"
    corpus.write_text("".join(words), encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", "train", "--input", str(corpus), "--vocab-size",
         "20000", "--output", str(out_dir / "big.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
    )  # fmt: skip
    assert process.stderr is not None
    seen = b""
    while not seen.endswith(b"\n") or b"train: started" not in seen:
        line = process.stderr.readline()
        assert line, f"no 'train: started' line; stderr was {seen!r}"
        seen += line
    # "started" is printed once the corpus is counted: the merge loop runs from here on.
    assert process.poll() is None, "training finished before the signal"
    process.send_signal(signal.SIGINT)
    stdout, rest = process.communicate(timeout=60)
    err = (seen + rest).decode()
    assert process.returncode == 130, err
    assert stdout == b""
    assert "Traceback" not in err
    assert err.splitlines()[-1] == "bpetite: error: interrupted; nothing was written"
    assert list(out_dir.iterdir()) == []


# --------------------------------------------------------------------------- terminal


def run_in_terminal(
    args: list[str], *, env: dict[str, str], cwd: Path | None = None, columns: int = 120
) -> tuple[int, bytes, bytes]:
    """Run bpetite with stderr on a pseudo-terminal and stdout on a pipe.

    Returns (exit code, stdout, everything drawn on the terminal).
    """
    import fcntl
    import struct
    import termios

    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, env=env, cwd=cwd,
    )  # fmt: skip
    os.close(follower)
    drawn: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal (Linux)
                break
            if not chunk:  # EOF (macOS)
                break
            drawn.append(chunk)
        assert process.stdout is not None
        stdout = process.stdout.read()
        code = process.wait(timeout=60)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
    return code, stdout, b"".join(drawn)


def terminal_env(**extra: str) -> dict[str, str]:
    return clean_env(TERM="xterm-256color", **extra)


@needs_posix
def test_train_draws_a_progress_bar_on_a_terminal(tmp_path: Path, shakespeare_path: Path) -> None:
    output = tmp_path / "bar.json"
    code, stdout, drawn = run_in_terminal(
        ["train", "--input", str(shakespeare_path), "--vocab-size", "2256", "--output",
         str(output)],
        env=terminal_env(),
    )  # fmt: skip
    screen = drawn.decode("utf-8", errors="replace")
    assert code == 0, screen
    assert json.loads(stdout)["actual_mergeable_vocab_size"] == 2256  # stdout stays pure
    assert "━" in screen  # the bar itself
    assert "2000/2000" in screen  # merges done/target
    assert "merges/s" in screen  # the rate column
    assert "\x1b[" in screen  # drawn with escape codes, unlike the plain lines
    assert "train: 100/2000" not in screen  # no plain lines on a terminal
    assert "train: done, 2000/2000 merges" in screen
    assert output.exists()


@needs_posix
def test_demo_colours_each_token_on_a_terminal(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes((TEXT * 30).encode("utf-8"))
    code, stdout, drawn = run_in_terminal(
        ["demo", "--input", str(corpus), "--vocab-size", "300", "--output",
         str(tmp_path / "d.json"), "--text", "Hello world é"],
        env=terminal_env(),
    )  # fmt: skip
    screen = drawn.decode("utf-8", errors="replace")
    assert code == 0, screen
    report = json.loads(stdout)
    assert report["roundtrip"] is True
    assert report["ids"] == reference.encode(
        reference.Model(reference.train(TEXT * 30, 300)), "Hello world é"
    )
    backgrounds = re.findall(r"\x1b\[[0-9;]*48;5;(\d+)[0-9;]*m", screen)
    assert len(set(backgrounds)) >= 2  # neighbouring tokens get different backgrounds
    assert "·" in screen  # a space inside a token is made visible
    assert "⟨" in screen or "é" in screen  # "é" whole or split into hex pieces
    assert "bpetite demo" in screen


@needs_posix
def test_demo_without_colour_separates_tokens_with_bars(tmp_path: Path) -> None:
    """NO_COLOR on a terminal: no backgrounds, so boundaries are drawn as '|'."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes((TEXT * 30).encode("utf-8"))
    code, _, drawn = run_in_terminal(
        ["demo", "--input", str(corpus), "--vocab-size", "256", "--output",
         str(tmp_path / "d.json"), "--text", "a b"],
        env=terminal_env(NO_COLOR="1"),
    )  # fmt: skip
    screen = drawn.decode("utf-8", errors="replace")
    assert code == 0, screen
    assert "tokens: a|·|b" in screen
    assert not re.search(r"\x1b\[[0-9;]*48;", screen)


@needs_posix
def test_compare_tiktoken_draws_a_table_on_a_terminal(tmp_path: Path, model: Path) -> None:
    pytest.importorskip("tiktoken")
    cache = build_tiktoken_cache(tmp_path / "cache")
    code, stdout, drawn = run_in_terminal(
        ["compare-tiktoken", "--model", str(model), "--text", "Hello world"],
        env=terminal_env(TIKTOKEN_CACHE_DIR=str(cache)),
    )
    screen = drawn.decode("utf-8", errors="replace")
    assert code == 0, screen
    assert json.loads(stdout)["tiktoken"]["ids"] == [15496, 995]
    assert "15496" in screen
    assert "gpt2 token" in screen
    assert "·world" in screen  # GPT-2's " world" with the space made visible


# --------------------------------------------------------------------------- imports


def test_import_bpetite_does_not_import_rich() -> None:
    code = "import sys, bpetite; assert 'rich' not in sys.modules, 'rich was imported'"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr


def test_the_cli_imports_rich_only_to_draw_on_a_terminal(model: Path) -> None:
    """Building the parser and running a command into a pipe never loads rich."""
    code = (
        "import sys\n"
        "from bpetite.cli import build_parser, main\n"
        "build_parser()\n"
        f"assert main(['encode', '--model', {str(model)!r}, '--text', 'hi']) == 0\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] == 'rich')\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False,
        env=clean_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == Tokenizer.load(str(model)).encode("hi")


# --------------------------------------------------------------------------- tiktoken


def test_compare_tiktoken_without_tiktoken_installed(model: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['tiktoken'] = None  # what a missing package looks like to import\n"
        "from bpetite.cli import main\n"
        f"sys.exit(main(['compare-tiktoken', '--model', {str(model)!r}, '--text', 'hi']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False,
        env=clean_env(),
    )  # fmt: skip
    assert_clean_failure(result, "uv sync --extra tiktoken", "pip install 'bpetite[tiktoken]'")


def test_compare_tiktoken_offline_without_a_cache_fails_fast(tmp_path: Path, model: Path) -> None:
    """No cache and no network: a clear error in seconds, not a hang on the network.

    The encoding is the test plugin's (tests/datafiles.py), one bpetite does not ship,
    found by tiktoken on PYTHONPATH. The proxy variables point at a closed local port,
    so even a regression that let tiktoken try to download could not reach the internet
    from this test.
    """
    pytest.importorskip("tiktoken")
    empty = tmp_path / "empty"
    empty.mkdir()
    plugins = datafiles.write_tiktoken_plugin(tmp_path / "plugins")
    path = os.pathsep.join(filter(None, [str(plugins), os.environ.get("PYTHONPATH")]))
    env = clean_env(
        PYTHONPATH=path,
        TIKTOKEN_CACHE_DIR=str(empty),
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        http_proxy="http://127.0.0.1:9",
    )
    started = time.monotonic()
    result = bpetite(
        "compare-tiktoken",
        "--model",
        str(model),
        "--text",
        "hi",
        "--encoding",
        datafiles.PLUGIN_ENCODING,
        env=env,
    )
    elapsed = time.monotonic() - started
    assert_clean_failure(result, "no valid cached copy", datafiles.PLUGIN_URL, "TIKTOKEN_CACHE_DIR")
    assert elapsed < 20
    # the encodings bpetite ships need no cache: tiktoken reads bpetite's copy
    shipped = bpetite("compare-tiktoken", "--model", str(model), "--text", "hi", env=env)
    assert shipped.returncode == 0, shipped.stderr
    assert json.loads(shipped.stdout)["tiktoken"]["ids"] == [5303]  # GPT-2's "hi"
    assert list(empty.iterdir()) == []


# --------------------------------------------------------------------------- demo


def test_demo_on_a_fresh_machine_needs_no_corpus(tmp_path: Path) -> None:
    """No argument, no file anywhere: it trains on the built-in corpus and leaves nothing."""
    work = tmp_path / "fresh"
    work.mkdir()
    temp = tmp_path / "temp"
    temp.mkdir()
    result = bpetite("demo", cwd=work, env=clean_env(TMPDIR=str(temp)))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["corpus"] == "TinyShakespeare (built in)"
    assert report["corpus_bytes"] == 1115394
    assert report["artifact"] is None
    assert report["roundtrip"] is True
    assert b"pass --output PATH to keep it" in result.stderr
    assert list(temp.iterdir()) == []
    assert list(work.iterdir()) == []
