"""The bpetite command line: a thin shell over the library.

Results go to stdout and nothing else does; progress, tables and errors go to stderr.
Exit codes: 0 success, 1 a failure the user can act on (missing file, invalid UTF-8,
corrupt artifact, a counting worker killed, Ctrl-C, ...), 2 a usage error (argparse's
convention), 143 stopped by SIGTERM. A user's mistake never prints a traceback.

Each subcommand lives in its own module ``bpetite.cli._<name>`` exposing
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(args) -> int``. ``rich`` is imported only inside the command modules, lazily, so
``import bpetite`` never pulls it in.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from types import FrameType

import bpetite

#: Subcommand modules, in the order ``--help`` lists them.
_COMMANDS: tuple[str, ...] = (
    "train",
    "encode",
    "decode",
    "compare_tiktoken",
    "demo",
    "show",
    "inspect",
    "export",
    "import",
    "count",
    "dataset",
    "eval",
)

Handler = Callable[[argparse.Namespace], int]

#: The exit code after SIGTERM: 128 + 15, what a shell reports for a process the signal
#: ended, so a supervisor can tell "stopped" from "failed" (1) after the cleanup ran.
EXIT_TERMINATED = 128 + signal.SIGTERM


class CliError(Exception):
    """A failure the user can act on: printed as one line on stderr, exit code 1."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpetite",
        description="Train, run and inspect deterministic byte-level BPE tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"bpetite {bpetite.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(f"bpetite.cli._{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one bpetite command and return its exit code (tests call this in-process)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (code 2)
        return exit_.code if isinstance(exit_.code, int) else 1
    handler: Handler = args.handler
    try:
        with _sigterm_raises():
            return handler(args)
    except CliError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return _fail("interrupted; nothing was written")
    except _Terminated:
        _fail("terminated by SIGTERM; nothing was written")
        return EXIT_TERMINATED
    except BrokenPipeError:
        # The reader went away (`bpetite encode ... | head`): not worth a message.
        return 1
    except OSError as error:
        return _fail(_describe_os_error(error))
    except KeyError as error:  # str() of a KeyError adds quotes around the message
        return _fail(error.args[0] if error.args else "KeyError")
    except (ValueError, TypeError) as error:  # UnicodeError included: str() has the details
        return _fail(str(error) or type(error).__name__)
    except bpetite.WorkerError as error:  # a counting worker was killed (OOM, signal)
        return _fail(error)


def run() -> None:
    """The console-script entry point."""
    sys.exit(main())


class _Terminated(BaseException):
    """SIGTERM as an exception, so it unwinds like Ctrl-C: temp files go, workers stop."""


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While a command runs, SIGTERM raises :class:`_Terminated` instead of ending at once.

    Only the first one: a second SIGTERM while the cleanup runs is ignored rather than
    cutting it short. The previous handler comes back afterwards (tests call ``main``
    in-process). Nothing changes off the main thread, where signals cannot be handled,
    or when whoever started us chose to ignore SIGTERM.
    """

    def terminate(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Terminated

    previous = signal.getsignal(signal.SIGTERM)
    installed = False
    if previous is not signal.SIG_IGN:
        try:
            signal.signal(signal.SIGTERM, terminate)
            installed = True
        except ValueError:  # not the main thread
            pass
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _fail(message: object) -> int:
    print(f"bpetite: error: {message}", file=sys.stderr)
    return 1


def _describe_os_error(error: OSError) -> str:
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename else reason
