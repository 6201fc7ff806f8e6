"""What a Ctrl-C or a SIGTERM leaves behind, at each moment, and what the message says.

Ctrl-C exits 130 and SIGTERM 143 (128 + the signal's number, as a shell reports a
process the signal ended), after the same cleanup, with one line on stderr. While the
command starts (its modules and the model still loading): that line and nothing else.
Before the first byte of a result: stdout empty, no output file, "nothing was
written". While the result is written: stdout holds a prefix of it, and the message
gives its exact length and says it is incomplete. After the last byte: the whole
result, and a message that says so. The process tests use real signals on inputs of
tens of megabytes and wait for what a process shows in /proc, never for a fixed time;
the moments a process cannot be caught at (after its last byte) are reached in-process,
with a real signal sent from inside the command.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import termios
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from bpetite import Tokenizer
from bpetite.cli import EXIT_INTERRUPTED, EXIT_TERMINATED, _main, main
from bpetite.cli._delivered import start_command
from bpetite.cli._files import save_model
from bpetite.cli.commands import _decode, _encode, _train
from tests.processes import catches_sigterm, clean_env, cpu_seconds, wait_for

needs_proc = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="platform limit: needs /proc (Linux)"
)

#: (signal, exit code, how the message starts)
SIGNALS = [
    pytest.param(signal.SIGINT, EXIT_INTERRUPTED, "interrupted", id="SIGINT"),
    pytest.param(signal.SIGTERM, EXIT_TERMINATED, "terminated by SIGTERM", id="SIGTERM"),
]
#: CPU seconds a command runs after reading its input before the test signals it: far
#: into encoding or decoding the input below, which takes over a second.
WORKING_SECONDS = 0.3
#: Seconds after a command's handlers exist at which a start is interrupted: while the
#: CLI's modules, the parser and the command's module load, and while the model loads.
STARTING_MOMENTS = (0, 0.005, 0.02, 0.05, 0.1, 0.2)


# --------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str) -> dict[str, Path]:
    """A 20 MB text, a model, the text's ids as encode prints them, and the text again.

    The text is TinyShakespeare 18 times, and no chunk spans two copies (two copies
    encode as their ids twice), so its ids are the ids of one copy 18 times.
    """
    directory = tmp_path_factory.mktemp("big")
    copies = 18
    tokenizer = Tokenizer.train(shakespeare_text, 512)
    paths = {
        "model": directory / "model.json",
        "text": directory / "big.txt",
        "ids": directory / "ids.json",
    }
    tokenizer.save(paths["model"])
    paths["text"].write_bytes(shakespeare_text.encode("utf-8") * copies)
    ids = tokenizer.encode(shakespeare_text)
    assert tokenizer.encode(shakespeare_text * 2) == ids * 2
    listed = json.dumps(ids, separators=(",", ":"))[1:-1]
    paths["ids"].write_bytes(("[" + ",".join([listed] * copies) + "]\n").encode("ascii"))
    return paths


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory, big: dict[str, Path]) -> dict[str, Path]:
    """The big input's model with a text of 1 MB: results far larger than a pipe holds,
    made in a fraction of the big one's time."""
    directory = tmp_path_factory.mktemp("medium")
    text = big["text"].read_bytes()[: 1 << 20].decode("utf-8", errors="ignore")
    ids = Tokenizer.load(big["model"]).encode(text)
    paths = {"model": big["model"], "text": directory / "medium.txt", "ids": directory / "ids.json"}
    paths["text"].write_bytes(text.encode("utf-8"))
    paths["ids"].write_bytes((json.dumps(ids, separators=(",", ":")) + "\n").encode("ascii"))
    return paths


def argv(command: str, big: dict[str, Path], source: str | None = None) -> list[str]:
    """`command` on the big input: encode reads the text, decode the ids."""
    if source is None:
        source = str(big["text" if command == "encode" else "ids"])
    return [
        sys.executable,
        "-m",
        "bpetite",
        command,
        "--model",
        str(big["model"]),
        "--input",
        source,
    ]


def expected(command: str, big: dict[str, Path]) -> bytes:
    """The whole result: what the other file of the pair holds."""
    return big["ids" if command == "encode" else "text"].read_bytes()


def last_line(stderr: bytes) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    return text.splitlines()[-1]


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes to kill if a test fails before they end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


def start(
    started: list[subprocess.Popen[bytes]], args: list[str], *, stdout: int | IO[Any], stdin: int
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        args, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=clean_env()
    )
    started.append(process)
    return process


def feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    """Write `data` to the process's stdin and close it; return once the process read it all.

    The writer is a thread (the pipe holds 64 KB); the pipe is empty once FIONREAD on
    our end says so.
    """
    assert process.stdin is not None
    stdin = process.stdin

    def write() -> None:
        stdin.write(data)
        stdin.flush()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(timeout=60)
    unread = array.array("i", [0])

    def drained() -> bool:
        fcntl.ioctl(stdin.fileno(), termios.FIONREAD, unread)
        return unread[0] == 0

    wait_for(drained, "the command reads its input", process=process)
    stdin.close()
    process.stdin = None  # closed: communicate() must not flush it


# --------------------------------------------------------------------------- while starting


@needs_proc
@pytest.mark.parametrize("moment", STARTING_MOMENTS)
@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
def test_a_signal_while_the_command_starts_prints_one_line(
    big: dict[str, Path],
    reaped: list[subprocess.Popen[bytes]],
    signum: int,
    code: int,
    how: str,
    moment: float,
) -> None:
    """From the moment ``bpetite`` handles signals (it does so before importing its
    parser, its commands or the model), a signal gives one line, the exit code, and an
    empty stdout: never a traceback from an import cut short.

    The command loads ``o200k_base`` and then encodes 20 MB, seconds of work, so every
    moment lands before its result. /proc shows when SIGTERM gets its handler; the
    interpreter's own start and ``import bpetite`` come before it.
    """
    command = [sys.executable, "-m", "bpetite", "encode", "--model", "o200k_base"]
    command += ["--input", str(big["text"])]
    process = start(reaped, command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    wait_for(lambda: catches_sigterm(process.pid), "the handlers", process=process)
    time.sleep(moment)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout) == (code, b""), stderr
    assert stderr.decode() == f"bpetite: error: {how}; nothing was written\n"


def test_the_handlers_exist_before_the_cli_loads_its_commands() -> None:
    """The moments above start when SIGTERM gets its handler; this is what makes them
    the start: the entry imports the standard library and its signal module only, and
    handles both signals before it imports the parser, the commands or the model."""
    code = (
        "import signal, sys\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'bpetite.cli._main':\n"
        "            handled = signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)\n"
        "            sys.stderr.write(f'handled: {handled}\\n')\n"
        "        return None\n"
        "import bpetite\n"
        "before = set(sys.modules)\n"
        "import bpetite.cli\n"
        "sys.stderr.write(' '.join(sorted(set(sys.modules) - before)) + '\\n')\n"
        "sys.meta_path.insert(0, Spy())\n"
        "sys.argv = ['bpetite', 'encode', '--model', 'gpt2', '--text', 'hello']\n"
        "bpetite.cli.run()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert (result.returncode, result.stdout) == (0, "[31373]\n"), result.stderr
    loaded, handled = result.stderr.splitlines()
    ours = {name for name in loaded.split() if name.startswith("bpetite")}
    assert ours == {"bpetite.cli"}  # _signals loads once run() has begun
    assert handled == "handled: True"


#: A child that sends itself SIGINT as the module named by its first argument starts to
#: load (the first time the import system looks for it), then runs ``bpetite encode``.
#: Only ``os`` and ``sys`` are loaded first, both with the interpreter.
INTERRUPTED_AT_IMPORT = """
import os, sys
module = sys.argv[1]
class Interrupt:
    sent = False
    def find_spec(self, name, path=None, target=None):
        if name == module and not Interrupt.sent:
            Interrupt.sent = True
            os.kill(os.getpid(), 2)
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv[1:] = ["encode", "--model", "gpt2", "--text", "hello"]
from bpetite.cli import run
run()
"""


@pytest.mark.parametrize(
    "module",
    [
        # before the handlers exist: what _signals imports, and _signals itself
        "contextlib",
        "signal",
        "typing",
        "bpetite.cli._signals",
        # after: the parser, the command, the model
        "bpetite.cli._main",
        "argparse",
        "bpetite.core._tokenizer",
    ],
)
def test_ctrl_c_while_any_module_of_the_start_loads_is_one_line(module: str) -> None:
    """Ctrl-C at each step of a command's start, the first import of run() included, is
    the one line and exit 130: never a traceback from an import cut short. The signal is
    sent by the child itself as the import begins, so the moment is exact."""
    result = _python(INTERRUPTED_AT_IMPORT, module)
    assert (result.returncode, result.stdout) == (EXIT_INTERRUPTED, ""), result.stderr
    assert result.stderr == "bpetite: error: interrupted; nothing was written\n"


#: A child whose ``__main__`` holds an object that sends its process SIGINT and waits
#: for it when the interpreter's shutdown clears the module, after the command is done.
INTERRUPTED_IN_SHUTDOWN = """
import os, sys, time
class LateSignal:
    def __del__(self):
        os.kill(os.getpid(), 2)
        time.sleep(0.2)
late = LateSignal()
sys.argv[1:] = ["encode", "--model", "gpt2", "--text", "hello"]
from bpetite.cli import run
run()
"""


def test_ctrl_c_while_the_interpreter_shuts_down_keeps_the_exit_code() -> None:
    """Once a command is done, a Ctrl-C changes nothing, during the shutdown too: the
    shutdown puts the default action back in place of Python handlers, so a Ctrl-C there
    ended the process by SIGINT (-2), its output complete but its exit code lost."""
    result = _python(INTERRUPTED_IN_SHUTDOWN)
    assert (result.returncode, result.stdout, result.stderr) == (0, "[31373]\n", "")


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` run to its end, its output as text."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=clean_env(),
    )


def test_an_interrupt_that_left_code_run_from_a_string_exits_130(tmp_path: Path) -> None:
    """A signal can land in code that ``exec()`` runs from a string (the methods a
    dataclass or a namedtuple makes while a module loads). CPython 3.11 then marks the
    process to end by SIGINT once ``python -m`` returns, whoever caught the
    KeyboardInterrupt: ``python -m bpetite`` printed its line and died by SIGINT (-2)
    instead of exiting 130, until bpetite cleared the mark."""
    (tmp_path / "interrupted_in_exec.py").write_text(
        "import os, signal, sys\n"
        "from bpetite.cli import _main, run\n"
        "def start_command():\n"
        "    exec('os.kill(os.getpid(), signal.SIGINT)')\n"
        "_main.start_command = start_command\n"
        "sys.argv = ['bpetite', 'encode', '--model', 'gpt2', '--text', 'hello']\n"
        "run()\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "interrupted_in_exec"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=clean_env(),
    )
    assert (result.returncode, result.stdout) == (EXIT_INTERRUPTED, ""), result.stderr
    assert result.stderr == "bpetite: error: interrupted; nothing was written\n"


def signal_in_a_weakref_callback(signum: int) -> None:
    """Python swallows what a weakref callback raises (it prints "Exception ignored" and
    goes on), and one drops each import's module lock: a signal landing there while the
    command loaded was lost, and the command ran to the end."""

    class Held:
        pass

    held = Held()
    ref = weakref.ref(held, lambda _: os.kill(os.getpid(), signum))
    del held  # the callback runs now, and the signal's exception is raised in it
    assert ref() is None


def signal_in_set_name(signum: int) -> None:
    """CPython 3.11 raises a RuntimeError from what ``__set_name__`` raises, where a
    signal lands while an imported module builds a class (``ipaddress``'s, under
    SIGTERM at a command's start)."""

    class Signalling:
        def __set_name__(self, owner: type, name: str) -> None:
            os.kill(os.getpid(), signum)  # the handler raises here

    class Built:
        attribute = Signalling()


@pytest.mark.parametrize("land", [signal_in_a_weakref_callback, signal_in_set_name])
@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
def test_a_signal_python_swallowed_or_wrapped_is_still_the_signal(
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
    land: Callable[[int], None],
    signum: int,
    code: int,
    how: str,
) -> None:
    """Where Python swallows a signal's exception, it is kept and raised before the
    command starts its work; where it wraps it in another, the signal is found behind
    it. Either way the command ends in the signal's one line."""

    def start_with_a_signal() -> None:
        start_command()
        land(signum)

    monkeypatch.setattr(_main, "start_command", start_with_a_signal)
    result = main(["encode", "--model", "gpt2", "--text", "hello"])
    captured = capfdbinary.readouterr()
    assert (result, captured.out) == (code, b"")
    assert captured.err.decode() == f"bpetite: error: {how}; nothing was written\n"


# --------------------------------------------------------------------------- before the first byte


@needs_proc
@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_signal_while_the_result_is_made_leaves_stdout_empty(
    big: dict[str, Path],
    reaped: list[subprocess.Popen[bytes]],
    command: str,
    signum: int,
    code: int,
    how: str,
) -> None:
    """The whole input read, the command working on it: no byte of the result is out yet.

    Writing ids as they were made, as encode once did, put megabytes on stdout by now
    under a message saying "nothing was written".
    """
    source = big["text" if command == "encode" else "ids"].read_bytes()
    process = start(reaped, argv(command, big, "-"), stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    feed(process, source)
    assert process.stdout is not None
    stdout_pipe = process.stdout
    read_at = cpu_seconds(process.pid)

    def working_or_writing() -> bool:
        if select.select([stdout_pipe], [], [], 0)[0]:
            return True
        return cpu_seconds(process.pid) >= read_at + WORKING_SECONDS

    wait_for(working_or_writing, "some work", process=process)
    assert not select.select([stdout_pipe], [], [], 0)[0], "the result is on stdout already"
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert stdout == b""
    assert last_line(stderr) == f"bpetite: error: {how}; nothing was written"


@needs_proc
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_signal_before_the_output_file_is_published_leaves_none(
    big: dict[str, Path], reaped: list[subprocess.Popen[bytes]], tmp_path: Path, command: str
) -> None:
    """``--output``: no file, no temp file beside it, and the message says nothing was written."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    process = start(
        reaped,
        [*argv(command, big), "--output", str(out_dir / "result")],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    wait_for(lambda: catches_sigterm(process.pid), "the command starts", process=process)
    started_at = cpu_seconds(process.pid)
    wait_for(
        lambda: cpu_seconds(process.pid) >= started_at + WORKING_SECONDS,
        "some work",
        process=process,
    )
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == EXIT_TERMINATED, stderr
    assert stdout == b""
    assert last_line(stderr) == "bpetite: error: terminated by SIGTERM; nothing was written"
    assert list(out_dir.iterdir()) == []


# --------------------------------------------------------------------------- while writing


@needs_proc
@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_signal_while_writing_to_a_pipe_says_how_many_bytes(
    medium: dict[str, Path],
    reaped: list[subprocess.Popen[bytes]],
    command: str,
    signum: int,
    code: int,
    how: str,
) -> None:
    """Nobody reads the pipe, so the command waits with part of its result in it."""
    process = start(reaped, argv(command, medium), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    assert select.select([process.stdout], [], [], 120)[0], "no byte of the result in 120 s"
    assert process.poll() is None, "the command finished before the signal"
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    whole = expected(command, medium)
    assert len(whole) >= 1 << 20  # many times what a pipe holds
    assert process.returncode == code, stderr
    assert 0 < len(stdout) < len(whole)
    assert whole.startswith(stdout)
    assert last_line(stderr) == (
        f"bpetite: error: {how}; {len(stdout)} bytes were written to standard output: "
        f"the output is incomplete"
    )


@needs_proc
@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
def test_a_signal_while_writing_to_a_file_says_what_the_file_holds(
    big: dict[str, Path],
    reaped: list[subprocess.Popen[bytes]],
    tmp_path: Path,
    signum: int,
    code: int,
    how: str,
) -> None:
    """``bpetite encode ... > ids.json``, stopped once ids.json has grown.

    The file takes the result as fast as the disk does, so the signal can land while it
    is written or after the last byte; either way the message must match the file.
    """
    target = tmp_path / "ids.json"
    with target.open("wb") as stdout:
        process = start(reaped, argv("encode", big), stdout=stdout, stdin=subprocess.DEVNULL)
        wait_for(lambda: target.stat().st_size > 0, "the first byte", process=process)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    held = target.read_bytes()
    whole = expected("encode", big)
    assert whole.startswith(held)
    if process.returncode == 0:  # it had finished before the signal arrived
        assert held == whole
        return
    assert process.returncode == code, stderr
    if len(held) < len(whole):
        assert last_line(stderr) == (
            f"bpetite: error: {how}; {len(held)} bytes were written to standard output: "
            f"the output is incomplete"
        )
    else:
        assert last_line(stderr) == (
            f"bpetite: error: {how}; the whole result ({len(whole)} bytes) was written to "
            f"standard output"
        )


# --------------------------------------------------------------------------- after the last byte


def signal_when_done(monkeypatch: pytest.MonkeyPatch, module: Any, signum: int) -> list[int]:
    """Make `module`'s command send itself `signum` once it has delivered its result."""
    real_run = module.run
    codes: list[int] = []

    def run_then_signal(args: Any) -> int:
        codes.append(real_run(args))
        os.kill(os.getpid(), signum)
        return codes[-1]

    monkeypatch.setattr(module, "run", run_then_signal)
    return codes


@pytest.mark.parametrize(("signum", "code", "how"), SIGNALS)
def test_a_signal_after_the_last_byte_says_the_result_is_whole(
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
    big: dict[str, Path],
    signum: int,
    code: int,
    how: str,
) -> None:
    codes = signal_when_done(monkeypatch, _encode, signum)
    result = main(["encode", "--model", str(big["model"]), "--text", "To be, or not to be"])
    captured = capfdbinary.readouterr()
    assert codes == [0]
    assert result == code
    assert json.loads(captured.out) == Tokenizer.load(big["model"]).encode("To be, or not to be")
    assert captured.err.decode() == (
        f"bpetite: error: {how}; the whole result ({len(captured.out)} bytes) was written to "
        f"standard output\n"
    )


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_signal_after_the_output_file_is_published_names_it(
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
    tmp_path: Path,
    big: dict[str, Path],
    command: str,
) -> None:
    module = _encode if command == "encode" else _decode
    codes = signal_when_done(monkeypatch, module, signal.SIGTERM)
    output = tmp_path / "result"
    model = ["--model", str(big["model"])]
    source = ["--text", "To be"] if command == "encode" else ["--ids", "84", "111"]
    result = main([command, *model, *source, "--output", str(output)])
    captured = capfdbinary.readouterr()
    assert (codes, result) == ([0], EXIT_TERMINATED)
    ids = Tokenizer.load(big["model"]).encode("To be")
    assert output.read_bytes() == (
        json.dumps(ids, separators=(",", ":")).encode() + b"\n" if command == "encode" else b"To"
    )
    assert captured.out == b""
    assert captured.err.decode().splitlines()[-1] == (
        f"bpetite: error: terminated by SIGTERM; --output '{output}' was written in full"
    )


# --------------------------------------------------------------------------- failures part-way


class TakesTenBytes:
    """A binary stdout that takes ten bytes, then no more (a non-blocking pipe filled up)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: Any) -> int:
        taken = bytes(data[: 10 - len(self.data)])
        self.data += taken
        return len(taken)

    def flush(self) -> None:
        pass


class StdoutOver:
    """A text stdout whose binary layer is `buffer`, with no file descriptor."""

    def __init__(self, buffer: TakesTenBytes) -> None:
        self.buffer = buffer

    def flush(self) -> None:
        pass


def test_a_failure_after_part_of_the_result_says_how_much_was_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], big: dict[str, Path]
) -> None:
    buffer = TakesTenBytes()
    monkeypatch.setattr(sys, "stdout", StdoutOver(buffer))
    code = main(["encode", "--model", str(big["model"]), "--text", "To be, or not to be"])
    assert code == 1
    ids = Tokenizer.load(big["model"]).encode("To be, or not to be")
    assert bytes(buffer.data) == json.dumps(ids, separators=(",", ":")).encode()[:10]
    assert capsys.readouterr().err == (
        "bpetite: error: standard output accepted no more bytes; "
        "10 bytes were written to standard output: the output is incomplete\n"
    )


def test_a_signal_between_two_outputs_names_the_one_written(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    shakespeare_path: Path,
) -> None:
    """``train`` with two sizes, Ctrl-C once the first artifact is saved."""

    def save_then_interrupt(*args: Any, **kwargs: Any) -> None:
        save_model(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(_train, "save_model", save_then_interrupt)
    pattern = str(tmp_path / "tok-{vocab_size}.json")
    code = main(
        ["train", "--input", str(shakespeare_path), "--vocab-size", "300", "--vocab-size",
         "260", "--output", pattern]
    )  # fmt: skip
    assert code == EXIT_INTERRUPTED
    written = [path.name for path in tmp_path.iterdir()]
    assert len(written) == 1
    (name,) = written
    other = "tok-300.json" if name == "tok-260.json" else "tok-260.json"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"bpetite: error: interrupted; --output '{tmp_path / name}' was written in full; "
        f"--output '{tmp_path / other}' was not written"
    )
