"""The bpetite command line: a thin shell over the library.

Results go to stdout and nothing else does; progress, tables and errors go to stderr.
Exit codes: 0 success, 1 a failure the user can act on (missing file, invalid UTF-8,
corrupt artifact, a counting worker killed, ...), 2 a usage error (argparse's
convention), 130 stopped by Ctrl-C (SIGINT) and 143 by SIGTERM, after the cleanup. A
user's mistake never prints a traceback; an unexpected exception is a bug and does.

``bpetite`` (:func:`run`) and ``python -m bpetite`` start here. This module imports
nothing at its top but ``sys``, which the interpreter has already loaded, so that
:func:`run` is reached at once; its first step imports ``_signals`` (the standard
library's ``signal`` and little else) and handles Ctrl-C and SIGTERM. The parser, the
command's module and the library's tables load after, so a signal while they load ends
like a signal mid-command, in one line and exit 130 or 143, never a traceback. A Ctrl-C
before the handlers exist (while ``_signals`` itself loads) gets the same line and exit
130 (:func:`_interrupted_while_starting`). What runs before :func:`run` is called, the
interpreter's own start and the two package files ``bpetite`` and ``bpetite.cli``, is
outside any command's reach. Running a command imports that command's module only
(``_main``), and ``rich`` only when something is drawn.
"""

from __future__ import annotations

import sys

# Nothing else is imported here: see the module's docstring. (A local TYPE_CHECKING, so
# that not even typing loads; type checkers read any name TYPE_CHECKING as theirs.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn

    from bpetite.cli._errors import CliError
    from bpetite.cli._main import build_parser
    from bpetite.cli._signals import EXIT_INTERRUPTED, EXIT_TERMINATED

#: Where the names this package gives live, loaded when first asked for.
_HOMES = {
    "CliError": "bpetite.cli._errors",
    "EXIT_INTERRUPTED": "bpetite.cli._signals",
    "EXIT_TERMINATED": "bpetite.cli._signals",
    "build_parser": "bpetite.cli._main",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one bpetite command and return its exit code (tests call this in-process).

    The signal handlers in place before come back afterwards.
    """
    from bpetite.cli._signals import signals_raise

    with signals_raise():
        return _run(argv)


def run() -> NoReturn:
    """The console-script entry point: signals stay handled until the process ends."""
    code = _run(None, install=True)
    _ignore_signals_until_exit()
    sys.exit(code)


def _run(argv: Sequence[str] | None, *, install: bool = False) -> int:
    """The command, and the one line a signal leaves wherever it lands: while the
    handlers are put in place, while the command's modules load, while it runs, or after
    it returned."""
    try:
        from bpetite.cli import _signals

        if install:
            _signals.handle_signals()
    except KeyboardInterrupt:
        return _interrupted_while_starting()
    try:
        from bpetite.cli._main import run_command

        code = run_command(argv)
        _signals.raise_lost_signal()
        _signals.ignore_signals()
        return code
    except BaseException as error:
        # The signal's own exception, or one Python wrapped it in on its way out
        # (CPython 3.11 raises RuntimeError from an exception in __set_name__, where a
        # signal can land while an imported module builds its classes).
        signalled = _signals.signal_within(error)
        if signalled is None:
            raise
        if isinstance(signalled, _signals.Terminated):
            return _stopped("terminated by SIGTERM", _signals.EXIT_TERMINATED)
        _signals.forget_interrupt()
        return _stopped("interrupted", _signals.EXIT_INTERRUPTED)


def _ignore_signals_until_exit() -> None:
    """Leave Ctrl-C and SIGTERM ignored by the system while the interpreter shuts down.

    The outcome is decided and said, and bpetite's handlers ignore both by now; but the
    shutdown puts the default action back in place of every Python handler, and a
    signal after that ended the process by the signal (-2 for Ctrl-C), its work done
    and its exit code lost. An ignored signal stays ignored.
    """
    c_signal = sys.modules.get("_signal")  # see _interrupted_while_starting
    if c_signal is not None:
        for signum in (c_signal.SIGINT, c_signal.SIGTERM):
            c_signal.signal(signum, c_signal.SIG_IGN)


def _interrupted_while_starting() -> int:
    """Ctrl-C before the handlers existed: the one line, from what the interpreter has.

    ``_signal`` (the C half of ``signal``, which the interpreter loads to handle Ctrl-C
    at all) ignores a second Ctrl-C first; ``signal`` itself may be the import that was
    cut short. Nothing was read or written yet.
    """
    import os

    c_signal = sys.modules.get("_signal")
    if c_signal is not None:
        c_signal.signal(c_signal.SIGINT, c_signal.SIG_IGN)
    os.write(2, b"bpetite: error: interrupted; nothing was written\n")
    return 128 + 2  # EXIT_INTERRUPTED, whose module may be the one cut short


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
    """The package's other names (:data:`_HOMES`), from their modules when first asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module 'bpetite.cli' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "CliError", "build_parser", "main", "run"]
