"""The command line's shape: thin command modules, one error policy, a documented table.

Command modules use bpetite's public API and the CLI's shared helpers, never another
command module; ``main`` turns the failures a user can act on into one line and lets
any other exception through with its traceback, because that is a bug.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bpetite import ArtifactError
from bpetite.cli import build_parser, main
from bpetite.cli._main import COMMANDS as _COMMANDS
from bpetite.errors import DisallowedSpecialError, WorkerError
from tests.conftest import REPO_ROOT

CLI_DIR = REPO_ROOT / "src" / "bpetite" / "cli"
COMMANDS_DIR = CLI_DIR / "commands"
COMMAND_MODULES = tuple(f"_{name}" for name in _COMMANDS)


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports (``from x import y`` gives ``x`` and ``x.y``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_a_command_module_uses_the_public_api_and_helpers_only(module: str) -> None:
    imports = imported_modules(COMMANDS_DIR / f"{module}.py")
    private_core = {
        name
        for name in imports
        if re.match(r"bpetite\.(_|core|corpus\._|visualize\._)", name)
        and not name.startswith("bpetite._internal")
    }
    assert not private_core, f"{module} reaches around the public API: {private_core}"
    other_commands = {
        name
        for name in imports
        if name.startswith("bpetite.cli.commands._") and name.split(".")[3] in COMMAND_MODULES
    }
    assert not other_commands, f"{module} imports another command module: {other_commands}"


def test_no_cli_module_imports_the_private_core() -> None:
    for path in sorted(CLI_DIR.rglob("*.py")):
        private_core = {
            name
            for name in imported_modules(path)
            if re.match(r"bpetite\.(_|core|corpus\._|visualize\._)", name)
            and not name.startswith("bpetite._internal")
        }
        assert not private_core, f"{path.name}: {private_core}"


def test_the_force_refusal_is_worded_once() -> None:
    sources = "".join(path.read_text(encoding="utf-8") for path in CLI_DIR.rglob("*.py"))
    assert sources.count("pass --force to replace it") == 1


def test_no_helper_module_is_long() -> None:
    for path in CLI_DIR.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines < 300, f"{path.name} has {lines} lines: split it by concern"


# --------------------------------------------------------------------------- main()


def run_with_failing_handler(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> int:
    """Run ``bpetite inspect`` with its handler replaced by one that raises `error`."""
    from bpetite.cli.commands import _inspect

    def handler(_: object) -> int:
        raise error

    monkeypatch.setattr(_inspect, "run", handler)
    return main(["inspect", "--model", "x"])


@pytest.mark.parametrize(
    "error",
    [ValueError("oops"), KeyError("k"), TypeError("t"), AttributeError("a"), OSError(5, "EIO")],
    ids=["ValueError", "KeyError", "TypeError", "AttributeError", "OSError-without-file"],
)
def test_an_unexpected_exception_is_not_dressed_up(
    monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    with pytest.raises(type(error)):
        run_with_failing_handler(monkeypatch, error)


@pytest.mark.parametrize(
    ("error", "line", "code"),
    [
        (ArtifactError("the artifact is bad"), "bpetite: error: the artifact is bad", 1),
        (DisallowedSpecialError("special found"), "bpetite: error: special found", 1),
        (WorkerError("a worker died"), "bpetite: error: a worker died", 1),
        (
            FileNotFoundError(2, "No such file or directory", "corpus.txt"),
            "bpetite: error: corpus.txt: No such file or directory",
            1,
        ),
        (KeyboardInterrupt(), "bpetite: error: interrupted; nothing was written", 130),
        (
            UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
            "bpetite: error: an input is not valid UTF-8",
            1,
        ),
    ],
)
def test_expected_failures_are_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    line: str,
    code: int,
) -> None:
    assert run_with_failing_handler(monkeypatch, error) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(line)
    assert captured.err.count("\n") == 1


# --------------------------------------------------------------------------- README


def test_the_readme_table_lists_every_command() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| command | what it does |") :].split("\n\n", 1)[0]
    documented = re.findall(r"^\| `bpetite ([a-z-]+)` \|", table, flags=re.MULTILINE)
    # `bpetite --help` lists each command on a line of its own, indented by four spaces.
    listed = re.findall(r"^    ([a-z-]+)\s", build_parser().format_help(), flags=re.MULTILINE)
    assert listed == [name.replace("_", "-") for name in _COMMANDS]
    assert documented == listed
