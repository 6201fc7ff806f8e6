"""What ``truncate``, ``chunk`` and ``encode --within-limit`` share: the text to read, the
special-token policy of ``--special``, and the one line that names a refused special."""

from __future__ import annotations

import argparse
from typing import Any, Final

from bpetite import Tokenizer
from bpetite.cli._inputs import check_argument_text, read_input_text

#: ``--special`` choices, as ``bpetite encode`` has them.
SPECIAL_POLICIES: Final = ("allow", "ordinary", "raise")


def add_text_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--text`` or ``--input``, and ``--special``."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", metavar="TEXT", help=f"the text to {verb}")
    source.add_argument(
        "--input", metavar="PATH", help=f"a UTF-8 file to {verb} byte for byte; '-' for stdin"
    )
    parser.add_argument(
        "--special",
        choices=SPECIAL_POLICIES,
        default="allow",
        help="special-token text: 'allow' (default) reads it as the special token (one "
        "token, never cut), 'ordinary' as plain text, 'raise' fails",
    )


def text_of(args: argparse.Namespace) -> str:
    """The text ``--text`` or ``--input`` names, checked as UTF-8."""
    if args.text is not None:
        return check_argument_text(args.text, "--text")
    return read_input_text(args.input)


def policy_of(args: argparse.Namespace) -> dict[str, Any]:
    """``--special`` as the keywords of ``Tokenizer.encode``."""
    if args.special == "ordinary":
        return {"allowed_special": set(), "disallowed_special": ()}
    if args.special == "raise":
        return {"allowed_special": set(), "disallowed_special": "all"}
    return {"allowed_special": "all", "disallowed_special": "all"}


def refused_special(tokenizer: Tokenizer, text: str) -> str:
    """The line for a text that ``--special raise`` refuses, naming its first special."""
    position, token = min(
        (text.find(special), special) for special in tokenizer.special_tokens if special in text
    )
    return (
        f"the text contains the special token {token!r} at character {position}, refused by "
        "--special raise; --special allow reads it as its id, --special ordinary as plain text"
    )
