"""Building the command line: subcommand parsers, and the argument types they share.

Integers accept ASCII digits only: Python's ``int()`` also reads ``١٠٤`` (Arabic-Indic
digits) and ``1_04``, which no user means as a number on a command line.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

from bpetite._internal import BASE_VOCAB_SIZE, shown
from bpetite.cli._errors import CliError
from bpetite.cli._output import ERROR_LINE_CHARS

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

#: Help descriptions are wrapped to this width (argparse's own default is the terminal's).
_HELP_WIDTH: Final = 79
#: An optional sign, then ASCII digits; at most this many, far past any id or size.
_MAX_DIGITS: Final = 30
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
#: Where :class:`_Once` keeps the options given while one command line is parsed.
_GIVEN: Final = "_options_given"

#: A check of a command's parsed options: the usage error they make together, or None.
UsageCheck = Callable[[argparse.Namespace], "str | None"]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors stay one bounded line, however long the value,
    and that runs its :func:`add_usage_check` checks on the options it parsed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage_checks: list[UsageCheck] = []

    def error(self, message: str) -> NoReturn:
        super().error(shown(" ".join(message.splitlines()), ERROR_LINE_CHARS))

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        vars(parsed).pop(_GIVEN, None)  # _Once's bookkeeping is no option
        for check in self.usage_checks:
            problem = check(parsed)
            if problem is not None:
                self.error(problem)
        return parsed, extras


def add_usage_check(parser: argparse.ArgumentParser, check: UsageCheck) -> None:
    """Report what `check` returns for `parser`'s options as a usage error (exit 2, with
    the usage line), before the command runs: for options each valid but not together."""
    if not isinstance(parser, Parser):
        raise TypeError("usage checks need a bpetite.cli._parser.Parser")
    parser.usage_checks.append(check)


class _Once(argparse.Action):
    """Store an option's value, refusing a second one: ``--input a.txt --input b.txt``
    is a mistake to point out, not a choice of the last."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given: set[str] = vars(namespace).setdefault(_GIVEN, set())
        if self.dest in given:
            parser.error(f"{option_string or self.metavar or self.dest} given twice")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


def refuse_repeats(parser: argparse.ArgumentParser) -> None:
    """Make every option `parser` stores from now on (argparse's default action) refuse a
    second value, in its groups too (they share the parser's registry)."""
    parser.register("action", None, _Once)
    parser.register("action", "store", _Once)


def add_command(
    subparsers: Subparsers,
    name: str,
    *,
    summary: str,
    description: str,
    examples: Sequence[str],
    usage: str | None = None,
) -> argparse.ArgumentParser:
    """Add a subcommand parser whose --help ends with worked examples.

    `usage` replaces the usage line argparse makes, for options it cannot show apart.
    """
    # Raw formatting keeps each example on one line, so the description is wrapped here.
    epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=textwrap.fill(description, width=_HELP_WIDTH),
        epilog=epilog,
        usage=usage,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    refuse_repeats(parser)  # --input a --input b: which did the user mean?
    return parser


def integer(text: str) -> int:
    """An argparse type: a whole number written in ASCII digits, with an optional sign."""
    if len(text) > _MAX_DIGITS + 1 or not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"invalid int value: '{shown(text)}'")
    return int(text)


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    value = integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def vocab_size(text: str) -> int:
    """An argparse type for --vocab-size: an integer; its range is checked by the command.

    The range is a runtime error (exit 1, like the library's), checked before any input
    is read; see :func:`check_vocab_size`.
    """
    return integer(text)


def check_max_token_bytes(value: int | None) -> int | None:
    """Return `value` (None: no limit) if training can keep to it; otherwise a CliError."""
    if value is not None and value < 2:
        raise CliError(
            f"--max-token-bytes must be at least 2 (every merged token has two bytes), got {value}"
        )
    return value


def check_vocab_size(size: int) -> int:
    """Return `size` if training can reach it; otherwise a CliError, before any work."""
    if size < BASE_VOCAB_SIZE:
        raise CliError(
            f"--vocab-size must be at least {BASE_VOCAB_SIZE} (one token per byte), got {size}"
        )
    return size
