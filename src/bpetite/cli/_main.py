"""Running one command: its parser, its module, and the one line a failure prints.

Each subcommand lives in its own module ``bpetite.cli.commands._<name>`` exposing
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(args) -> int``. Command modules use bpetite's public API and the shared helpers
(``_output``, ``_inputs``, ``_files``, ``_parser``, ``_progress``, ``_sources``,
``_render``), never each other. A run imports the module of the command it runs and no
other; the whole table (``bpetite --help``, a misspelt command) imports them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from bpetite import BpetiteError
from bpetite._internal import shown
from bpetite.cli._delivered import delivered, start_command
from bpetite.cli._errors import CliError
from bpetite.cli._output import error_line, write_stderr
from bpetite.cli._parser import Parser
from bpetite.cli._signals import ignore_signals, raise_lost_signal

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = (
    "train",
    "encode",
    "decode",
    "truncate",
    "chunk",
    "chat",
    "compare_tiktoken",
    "demo",
    "show",
    "explain",
    "inspect",
    "export",
    "import",
    "extend",
    "trim",
    "specials",
    "count",
    "dataset",
    "eval",
)

Handler = Callable[[argparse.Namespace], int]


class _Version(argparse.Action):
    """``--version``: looked up only when asked for (reading package metadata is slow)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        import bpetite

        # Where argparse's --help goes: stdout, or stderr when stdout is closed; a reader
        # that went away (`bpetite --version | head -c 0`) gets nothing, and no traceback.
        write_stderr(f"bpetite {bpetite.__version__}\n", sys.stdout or sys.stderr)
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone (a name as typed, ``compare-tiktoken``).

    Registering a command imports its module, so a run registers only the one it runs.
    """
    parser = Parser(
        prog="bpetite",
        description="Train, run and inspect deterministic byte-level BPE tokenizers.",
    )
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for name in COMMANDS if command is None else (command.replace("-", "_"),):
        importlib.import_module(f"bpetite.cli.commands._{name}").register(subparsers)
    return parser


def run_command(argv: Sequence[str] | None) -> int:
    """Parse `argv` (default ``sys.argv[1:]``), run the command, return its exit code.

    Caught and printed as one line (exit 1): CliError, any BpetiteError, an OSError
    about a named file, a UnicodeDecodeError of an input. Nothing else: signals are the
    caller's (``bpetite.cli.main``). The line says what had been written when it
    happened: nothing, part of the result on stdout (how many bytes), the whole of it,
    or which output files.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    named = arguments[0] if arguments else None
    known = named is not None and named.replace("-", "_") in COMMANDS and "_" not in named
    parser = build_parser(named if known else None)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:  # --help, --version, or a usage error (code 2)
        return exit_.code if isinstance(exit_.code, int) else 1
    handler: Handler = args.handler
    start_command()
    raise_lost_signal()  # a Ctrl-C swallowed while the command's modules loaded
    try:
        return handler(args)
    except CliError as error:
        return _fail(str(error))
    except BrokenPipeError:
        # The reader went away (`bpetite encode ... | head`): not worth a message.
        return 1
    except BpetiteError as error:  # str() is the bare message
        return _fail(str(error))
    except UnicodeDecodeError as error:
        return _fail(f"an input is not valid UTF-8: {error}")
    except OSError as error:
        if error.filename is None:
            raise  # not about a file the user named: a bug, with its traceback
        return _fail(_describe_os_error(error))


def _fail(message: str) -> int:
    """Print the failure's one line, with what had been written before it, if anything."""
    ignore_signals()  # the outcome is decided: a signal now must not add a second line
    write_stderr(error_line("; ".join([message, *delivered()])) + "\n")
    return 1


def _describe_os_error(error: OSError) -> str:
    reason = error.strerror or str(error)
    return f"{shown(str(error.filename))}: {reason}"
