"""``bpetite specials``: add, move or drop a model's special tokens, every other id kept.

``--add TEXT=ID`` puts a special at an id (adding it, or moving an existing one);
``--add TEXT`` gives a new one the next free id; ``--drop TEXT`` removes one. The id is
what follows the last '=' when that is an integer (a negative one, or one in other
digits than 0-9, is refused, not read as text). An id that is a mergeable token's or
another special's is refused. A JSON summary goes to stdout.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Final

from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, model_from_args, save_model
from bpetite.cli._inputs import check_argument_text
from bpetite.cli._output import write_json
from bpetite.cli._parser import add_command

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers

#: What after an --add value's last '=' is read as an id; a sign, or a digit other than
#: 0-9 (``١٢``, which int() reads as 12), is then refused.
_INTEGER: Final = re.compile(r"[+-]?\d+")


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "specials",
        summary="add, move or drop a model's special tokens, every other id kept",
        description=(
            "Write a model with its special tokens edited; merges and every other id stay. "
            "--drop removes a special token; --add TEXT=ID puts one at an id (adding it, "
            "or moving an existing one), and --add TEXT gives a new one the next free id, "
            "one past the largest in use, in the order given. Drops apply first, then ids "
            "given, then texts without one. An id a mergeable token holds, or another "
            "special token, is refused. Whatever follows the last '=' is the "
            "id if it is an integer: a text that itself ends in '=' and an integer (x=1) "
            "is given with its id after it (--add 'x=1=500') and cannot take the next "
            "free id. Prints a JSON summary."
        ),
        examples=[
            "bpetite specials --model cl100k_base --add '<|im_start|>=100264' "
            "--add '<|im_end|>=100265' --output chat.json",
            "bpetite specials --model tok.json --add '<|pad|>' --add '<|sep|>' --output tok2.json",
            "bpetite specials --model tok.json --drop '<|endoftext|>' --add '<|eot|>' "
            "--output tok2.json",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--add",
        action="append",
        default=[],
        metavar="TEXT[=ID]",
        help="a special token, at ID (0 or more, after the last '=') or at the next free "
        "id; repeatable",
    )
    parser.add_argument(
        "--drop", action="append", default=[], metavar="TEXT", help="a special token to remove"
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="artifact to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not args.add and not args.drop:
        raise CliError("nothing to change: give --add TEXT[=ID] or --drop TEXT")
    placed: dict[str, int] = {}
    appended: list[str] = []
    for given in args.add:
        text, token_id = _parse_add(check_argument_text(given, "--add"))
        if text in placed or text in appended:
            raise CliError(f"--add names the special token '{text}' twice")
        if token_id is None:
            appended.append(text)
        else:
            placed[text] = token_id
    drops = [check_argument_text(text, "--drop") for text in args.drop]
    for text in drops:
        if drops.count(text) > 1:
            raise CliError(f"--drop names the special token '{shown(text)}' twice")
    check_output_path(args.output, force=args.force, inputs=[args.model])
    model = model_from_args(args)
    edited = model.with_special_tokens(placed, drop=drops)
    if appended:
        edited = edited.with_special_tokens(appended)
    save_model(edited, args.output, force=args.force)
    write_json(
        {
            "output": args.output,
            "special_tokens": dict(edited.special_tokens),
            "n_vocab": edited.n_vocab,
        }
    )
    return 0


def _parse_add(given: str) -> tuple[str, int | None]:
    """``TEXT=ID`` -> (TEXT, ID) when what follows the last '=' is an integer; anything
    else is a text, no id. ``<|pad|>=-1`` is an id refused, not a text ending in ``=-1``."""
    if not given:
        raise CliError("--add needs a special token's text, got ''")
    text, equals, number = given.rpartition("=")
    if not equals or not _INTEGER.fullmatch(number):
        return given, None
    if not text:
        raise CliError(
            f"--add '{shown(given)}' has no text before the '=': give TEXT=ID (a text that "
            f"is itself '{shown(given)}' takes its id after it: --add '{shown(given)}=ID')"
        )
    if not (number.isascii() and number.isdigit()):  # a sign, or other digits than 0-9
        raise CliError(
            f"--add '{shown(given)}': the id after the last '=' must be 0 or more, in digits "
            f"0-9 alone, got {number}; a text that itself ends in '={number}' takes its id after "
            f"it: --add '{shown(given)}=ID'"
        )
    return text, int(number)
