"""Every command in README.md runs and prints what the README says, so it cannot drift.

The convention, for whoever edits the README:

* Commands live in ```console blocks, one per line, after ``$ ``. The lines after a
  command, up to the next ``$ `` or the end of the block, are its expected stdout; no
  lines means "must succeed", output unchecked.
* Expected output that parses as JSON is compared as JSON, ignoring the values of
  :data:`VOLATILE_KEYS` (timings); anything else must equal stdout exactly (a trailing
  newline aside: decode prints none, JSON one). An expected output whose last line
  starts with ``bpetite: error:`` means the command must exit 1 with an empty stdout
  and that line at the end of stderr.
* All commands run in document order, through bash, in one fresh temporary working
  directory: ``uv run bpetite`` becomes this interpreter's ``-m bpetite`` and
  ``uv run python`` this interpreter; ``scripts/`` is linked in. Any other command
  fails the test, unless it is a line of ``.ci/run`` (``uv sync --locked``, ``uv run
  pytest``, ...), which CI runs instead.
* The data: what a fresh clone has. ``scripts/`` and ``tests/`` are linked into the
  working directory (GPT-2's original files are in ``tests/data/``); the built-in
  vocabularies ship in the package; ``data/tinyshakespeare.txt`` is what the README's
  download command fetches, from a local server holding the committed copy.
* The environment: ``BPETITE_CORPUS_URL`` points the download script at that server;
  ``TIKTOKEN_CACHE_DIR`` is an empty directory, so tiktoken has nothing cached; the
  proxy variables point at a closed port, so nothing can reach the internet; ``TMPDIR``
  is private and must be empty at the end. (tiktoken itself caches the local file that
  ``load_tiktoken_bpe`` reads in the export example, so its cache is not checked.)
* ```pycon blocks run as doctests in the same directory, in document order with the
  console blocks (so they can use files that earlier commands made).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PLATFORM_LIMIT, REPO_ROOT
from tests.docs_runner import (
    Command,
    check_output,
    console_commands,
    doc_blocks,
    run_console,
    run_doctest,
)

README = REPO_ROOT / "README.md"
CI_SCRIPT = REPO_ROOT / ".ci" / "run"


#: `timeout`'s options and duration before a command CI runs under a time bound.
TIME_BOUND = re.compile(r"^timeout(?: --?[\w-]+(?:=\S+)?(?: \d+)?)* \d+[smhd]? ")


def ci_commands() -> set[str]:
    """The commands of `.ci/run`, a line each, without a `timeout ... ` bound before one."""
    lines = CI_SCRIPT.read_text(encoding="utf-8").splitlines()
    return {TIME_BOUND.sub("", line.strip(), count=1) for line in lines}


@pytest.fixture
def corpus_server(shakespeare_bytes: bytes, tmp_path: Path) -> Iterator[str]:
    """A local HTTP server holding TinyShakespeare: the download script's stand-in."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "input.txt").write_bytes(shakespeare_bytes)

    class QuietHandler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """No request log in the test output."""

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(served)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/input.txt"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def test_readme_parsing_finds_commands_and_outputs() -> None:
    """The parser itself, on a made-up README, so a parsing bug cannot hide drift."""
    text = "intro\n```console\n$ one\nout 1\nout 2\n$ two\n```\n```pycon\n>>> 1\n1\n```\n"
    blocks = doc_blocks(text)
    assert [(block.language, block.line) for block in blocks] == [("console", 3), ("pycon", 9)]
    assert console_commands(blocks[0]) == [
        Command("one", "out 1\nout 2", 3),
        Command("two", "", 6),
    ]


def test_volatile_keys_are_the_only_ones_ignored() -> None:
    command = Command("x", '{"elapsed_ms": 1, "tokens": 5}', 1)
    same = subprocess.CompletedProcess([], 0, '{"elapsed_ms": 999, "tokens": 5}\n', "")
    check_output(command, same)
    different = subprocess.CompletedProcess([], 0, '{"elapsed_ms": 1, "tokens": 6}\n', "")
    with pytest.raises(AssertionError):
        check_output(command, different)
    missing = subprocess.CompletedProcess([], 0, '{"tokens": 5}\n', "")
    with pytest.raises(AssertionError):
        check_output(command, missing)


def test_every_readme_command_runs_as_shown(
    tmp_path: Path,
    corpus_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if shutil.which("bash") is None:
        pytest.skip(PLATFORM_LIMIT + "the README's commands are shell commands; bash is needed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "scripts").symlink_to(REPO_ROOT / "scripts", target_is_directory=True)
    (work / "tests").symlink_to(REPO_ROOT / "tests", target_is_directory=True)
    temp = tmp_path / "temp"
    temp.mkdir()
    tiktoken_cache = tmp_path / "tiktoken-cache"
    tiktoken_cache.mkdir()
    closed = "http://127.0.0.1:9"
    env = {
        key: value for key, value in os.environ.items() if key not in {"NO_COLOR", "FORCE_COLOR"}
    }
    env.update(
        README_TEST_PYTHON=sys.executable,
        BPETITE_CORPUS_URL=corpus_server,
        TIKTOKEN_CACHE_DIR=str(tiktoken_cache),
        TMPDIR=str(temp),
        HTTPS_PROXY=closed,
        HTTP_PROXY=closed,
        https_proxy=closed,
        http_proxy=closed,
        NO_PROXY="127.0.0.1",
        no_proxy="127.0.0.1",
    )

    ci = ci_commands()
    ran: list[str] = []
    delegated: list[str] = []
    doctests = 0
    monkeypatch.chdir(work)
    for block in doc_blocks(README.read_text(encoding="utf-8")):
        if block.language == "console":
            for command in console_commands(block):
                if command.command in ci:
                    assert not command.expected, f"README.md:{command.line}: output of a CI step"
                    delegated.append(command.command)
                    continue
                result = run_console(command, work, env)
                check_output(command, result)
                ran.append(command.command)
        elif block.language == "pycon":
            doctests += run_doctest(block, README)

    # The README documents every command, and the two "fresh machine" commands.
    subcommands = {word for command in ran for word in command.split() if not word.startswith("-")}
    for name in ("train", "encode", "decode", "compare-tiktoken", "demo"):
        assert name in subcommands, f"the README shows no `bpetite {name}` command"
    assert "uv run bpetite demo" in ran
    assert "uv run pytest" in delegated
    assert any("download_corpus.py" in command for command in ran)
    assert doctests >= 1
    assert list(temp.iterdir()) == [], "a documented command left files in the temp dir"
