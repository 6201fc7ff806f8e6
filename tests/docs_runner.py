"""Run the commands and examples of a markdown document as tests, so docs cannot drift.

Used for README.md and the docs/ pages; the conventions are described at the top of
tests/project/test_readme.py.
"""

from __future__ import annotations

import doctest
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: JSON keys whose values change from run to run (timings).
VOLATILE_KEYS = frozenset({"elapsed_ms", "count_ms", "merge_ms"})
#: Where an error line is recognised in expected output.
ERROR_PREFIX = "bpetite: error:"

# `uv` inside the test: only the forms the README may use, mapped to this interpreter.
SHELL_PRELUDE = """\
set -o pipefail
uv() {
    if [ "$1" != run ]; then echo "README test cannot run: uv $*" >&2; return 97; fi
    shift
    case "$1" in
        bpetite) shift; "$README_TEST_PYTHON" -m bpetite "$@" ;;
        python) shift; "$README_TEST_PYTHON" "$@" ;;
        *) echo "README test cannot run: uv run $*" >&2; return 97 ;;
    esac
}
"""


@dataclass(frozen=True, slots=True)
class Block:
    language: str
    text: str
    line: int  # of the first line inside the fence, 1-based


@dataclass(frozen=True, slots=True)
class Command:
    command: str
    expected: str
    line: int


def doc_blocks(text: str) -> list[Block]:
    blocks = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        line = text.count("\n", 0, match.start()) + 2
        blocks.append(Block(match.group(1), match.group(2), line))
    return blocks


def console_commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    current: tuple[str, int] | None = None
    output: list[str] = []
    for offset, line in enumerate(block.text.splitlines()):
        if line.startswith("$ "):
            if current is not None:
                commands.append(Command(current[0], "\n".join(output), current[1]))
            current, output = (line[2:], block.line + offset), []
        elif current is None:
            raise AssertionError(f"line {block.line + offset}: output before any command")
        else:
            output.append(line)
    if current is not None:
        commands.append(Command(current[0], "\n".join(output), current[1]))
    return commands


def without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def check_output(command: Command, result: subprocess.CompletedProcess[str]) -> None:
    where = f"line {command.line}: `{command.command}`"
    expected = command.expected
    if expected.splitlines() and expected.splitlines()[-1].startswith(ERROR_PREFIX):
        assert result.returncode == 1, f"{where} should fail with exit 1:\n{result.stderr}"
        assert result.stdout == "", f"{where} printed on stdout while failing"
        assert result.stderr.splitlines()[-1] == expected.splitlines()[-1], where
        return
    assert result.returncode == 0, f"{where} exited {result.returncode}:\n{result.stderr}"
    if not expected:
        return
    try:
        expected_json = json.loads(expected)
    except ValueError:
        actual = result.stdout[:-1] if result.stdout.endswith("\n") else result.stdout
        assert actual == expected, f"{where} printed:\n{result.stdout}"
        return
    actual_json = json.loads(result.stdout)
    assert without_volatile(actual_json) == without_volatile(expected_json), (
        f"{where} printed:\n{result.stdout}"
    )
    assert _keys(actual_json) == _keys(expected_json), f"{where}: different keys"


def _keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items()}
    return None


def run_console(
    command: Command, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run one documented command through bash with the ``uv`` stand-in."""
    return subprocess.run(
        ["bash", "-c", SHELL_PRELUDE + command.command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )


def run_doctest(block: Block, path: Path) -> int:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.text, {}, path.name, str(path), block.line - 1)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    return len(test.examples)
