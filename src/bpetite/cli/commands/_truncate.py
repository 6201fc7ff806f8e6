"""``bpetite truncate``: the longest start of a text within a number of tokens.

The text written is :meth:`Tokenizer.truncate`'s, exactly, nothing added: it ends where
a token of the whole text's encoding ends, never inside a character, and it encodes to
at most ``--max-tokens`` tokens. The text is encoded only as far as the budget reaches.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bpetite._internal import shown
from bpetite.cli._budget_args import add_text_arguments, policy_of, refused_special, text_of
from bpetite.cli._errors import CliError
from bpetite.cli._files import (
    add_model_argument,
    add_result_output_arguments,
    check_result_output,
    model_from_args,
    result_output,
)
from bpetite.cli._output import note
from bpetite.cli._parser import add_command, non_negative_int
from bpetite.errors import DisallowedSpecialError

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "truncate",
        summary="keep the longest start of a text within N tokens",
        description=(
            "Write the longest start of the text that fits in --max-tokens tokens, "
            "exactly, nothing added. It ends where one of the text's tokens ends, never "
            "inside a character (a token may end inside one: an emoji can be several "
            "byte tokens), and it encodes to at most N tokens on its own. Only as much "
            "of the text is encoded as the budget reaches."
        ),
        examples=[
            "bpetite truncate --model cl100k_base --input doc.txt --max-tokens 8000 > short.txt",
            'bpetite truncate --model o200k_base --text "Hello world" --max-tokens 1',
        ],
    )
    add_model_argument(parser)
    add_text_arguments(parser, "truncate")
    parser.add_argument(
        "--max-tokens", type=non_negative_int, required=True, metavar="N", help="the budget"
    )
    add_result_output_arguments(parser, "the text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_result_output(args)
    tokenizer = model_from_args(args)
    text = text_of(args)
    try:
        kept = tokenizer.truncate(text, args.max_tokens, **policy_of(args))
    except DisallowedSpecialError:
        raise CliError(refused_special(tokenizer, text)) from None
    with result_output(args.output, force=args.force) as result:
        result.write(kept.encode("utf-8"))
    if args.output is not None:
        note(
            f"bpetite: wrote the first {len(kept)} of {len(text)} characters to "
            f"'{shown(args.output)}'"
        )
    return 0
