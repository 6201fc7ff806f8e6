"""The bpetite command line: a thin shell over the library.

Results go to stdout and nothing else does; progress, tables and errors go to stderr.
Exit codes: 0 success, 1 a failure the user can act on (missing file, invalid UTF-8,
corrupt artifact, a counting worker killed, ...), 2 a usage error (argparse's
convention), 130 stopped by Ctrl-C (SIGINT) and 143 by SIGTERM, after the cleanup. A
user's mistake never prints a traceback; an unexpected exception is a bug and does.

``bpetite`` (:func:`run`) and ``python -m bpetite`` start here. This module imports
only the standard library and ``_signals``, and handles Ctrl-C and SIGTERM before
anything else is loaded: the parser, the command's module and the library's tables
load after, so a signal while they load ends like a signal mid-command, in one line
and exit 130 or 143, never a traceback. (What runs before, the interpreter's own start
and ``import bpetite``, is outside any command's reach.) Running a command imports that
command's module only (``_main``), and ``rich`` only when something is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from bpetite.cli._errors import CliError
from bpetite.cli._signals import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Terminated,
    forget_interrupt,
    handle_signals,
    ignore_signals,
    raise_lost_signal,
    signals_raise,
)

if TYPE_CHECKING:
    from bpetite.cli._main import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one bpetite command and return its exit code (tests call this in-process).

    The signal handlers in place before come back afterwards.
    """
    with signals_raise():
        return _run(argv)


def run() -> NoReturn:
    """The console-script entry point: signals stay handled until the process ends."""
    sys.exit(_run(None, install=True))


def _run(argv: Sequence[str] | None, *, install: bool = False) -> int:
    """The command, and the one line a signal leaves wherever it lands once the handlers
    exist: while the command's modules load, while it runs, or after it returned."""
    try:
        if install:
            handle_signals()
        from bpetite.cli._main import run_command

        code = run_command(argv)
        raise_lost_signal()
        ignore_signals()
        return code
    except KeyboardInterrupt:
        forget_interrupt()
        return _stopped("interrupted", EXIT_INTERRUPTED)
    except Terminated:
        return _stopped("terminated by SIGTERM", EXIT_TERMINATED)


def _stopped(how: str, code: int) -> int:
    """Print what a signal left behind: nothing, or what had been written before it.

    Later signals are ignored by now (``_signals``), so importing the writers here (a
    signal may have come before anything else was loaded) cannot be cut short.
    """
    from bpetite.cli._delivered import delivered
    from bpetite.cli._output import error_line, write_stderr

    write_stderr(error_line("; ".join([how, *(delivered() or ["nothing was written"])])) + "\n")
    return code


def __getattr__(name: str) -> object:
    """``build_parser``, from ``_main`` when first asked for."""
    if name != "build_parser":
        raise AttributeError(f"module 'bpetite.cli' has no attribute {name!r}")
    from bpetite.cli._main import build_parser

    return build_parser


__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "CliError", "build_parser", "main", "run"]
