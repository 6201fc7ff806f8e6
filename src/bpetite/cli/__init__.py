"""The bpetite command line: a thin shell over the library.

Results go to stdout and nothing else does; progress, tables and errors go to stderr.
Exit codes: 0 success, 1 a failure the user can act on (missing file, invalid UTF-8,
corrupt artifact, a counting worker killed, Ctrl-C, ...), 2 a usage error (argparse's
convention), 143 stopped by SIGTERM. A user's mistake never prints a traceback; an
unexpected exception is a bug and does.

Each subcommand lives in its own module ``bpetite.cli.commands._<name>`` exposing
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(args) -> int``. Command modules use bpetite's public API and the shared helpers
(``_output``, ``_inputs``, ``_files``, ``_parser``, ``_progress``, ``_sources``,
``_render``), never each other; ``_signals`` and ``_delivered`` serve ``main`` and the
writers. ``rich`` is imported only when something is drawn, so ``import bpetite`` never
pulls it in.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence

import bpetite
from bpetite import BpetiteError
from bpetite._internal import shown
from bpetite.cli._delivered import delivered, start_command
from bpetite.cli._errors import CliError
from bpetite.cli._output import error_line, write_stderr
from bpetite.cli._signals import Terminated, signals_raise

#: Subcommand modules, in the order ``--help`` lists them.
_COMMANDS: tuple[str, ...] = (
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

#: The exit code after SIGTERM: 128 + 15, what a shell reports for a process the signal
#: ended, so a supervisor can tell "stopped" from "failed" (1) after the cleanup ran.
EXIT_TERMINATED = 128 + signal.SIGTERM


def build_parser() -> argparse.ArgumentParser:
    from bpetite.cli._parser import Parser

    parser = Parser(
        prog="bpetite",
        description="Train, run and inspect deterministic byte-level BPE tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"bpetite {bpetite.__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for name in _COMMANDS:
        importlib.import_module(f"bpetite.cli.commands._{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one bpetite command and return its exit code (tests call this in-process).

    Caught and printed as one line (exit 1): CliError, any BpetiteError, an OSError
    about a named file, a UnicodeDecodeError of an input, Ctrl-C. Nothing else. The line
    says what had been written when it happened: nothing, part of the result on stdout
    (how many bytes), the whole of it, or which output files.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (code 2)
        return exit_.code if isinstance(exit_.code, int) else 1
    handler: Handler = args.handler
    start_command()
    try:
        with signals_raise():
            return handler(args)
    except CliError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return _stopped("interrupted")
    except Terminated:
        _stopped("terminated by SIGTERM")
        return EXIT_TERMINATED
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


def run() -> None:
    """The console-script entry point."""
    sys.exit(main())


def _fail(message: str) -> int:
    """Print the failure's one line, with what had been written before it, if anything."""
    write_stderr(error_line("; ".join([message, *delivered()])) + "\n")
    return 1


def _stopped(how: str) -> int:
    """Print what a signal left behind: nothing, or what had been written before it."""
    write_stderr(error_line("; ".join([how, *(delivered() or ["nothing was written"])])) + "\n")
    return 1


def _describe_os_error(error: OSError) -> str:
    reason = error.strerror or str(error)
    return f"{shown(str(error.filename))}: {reason}"


__all__ = ["CliError", "build_parser", "main", "run"]
