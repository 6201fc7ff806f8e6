"""``bpetite chunk``: a text cut into pieces of at most N tokens, with their offsets.

The result is one JSON array, one object per piece: ``start`` and ``end`` (its span in
the text, in characters), ``tokens`` (what it encodes to alone) and ``text``. The pieces
are :meth:`Tokenizer.chunk_with_offsets`': each ends where a token of the whole text
ends and a character ends; with ``--overlap K`` neighbours share up to K tokens.
"""

from __future__ import annotations

import argparse
import json
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
from bpetite.cli._parser import add_command, add_usage_check, non_negative_int, positive_int
from bpetite.errors import DisallowedSpecialError, ParameterError

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "chunk",
        summary="cut a text into pieces of at most N tokens, with their offsets",
        description=(
            "Cut the text into pieces of at most --max-tokens tokens each, greedily from "
            "the start, and print one JSON array of {start, end, tokens, text}: each "
            "piece's span in the text in characters, its token count, its text. A piece "
            "ends where one of the text's tokens ends, never inside a character. With "
            "--overlap K each piece starts up to K tokens before the previous one ends; "
            "without, the pieces join back to the text."
        ),
        examples=[
            "bpetite chunk --model cl100k_base --input doc.txt --max-tokens 512",
            "bpetite chunk --model cl100k_base --input doc.txt --max-tokens 512 --overlap 64",
        ],
    )
    add_model_argument(parser)
    add_text_arguments(parser, "cut")
    parser.add_argument(
        "--max-tokens", type=positive_int, required=True, metavar="N", help="each piece's budget"
    )
    parser.add_argument(
        "--overlap",
        type=non_negative_int,
        default=0,
        metavar="K",
        help="tokens a piece may share with the one before (less than N; default 0)",
    )
    add_result_output_arguments(parser, "the pieces")
    add_usage_check(parser, _check_overlap)
    parser.set_defaults(handler=run)


def _check_overlap(args: argparse.Namespace) -> str | None:
    if args.overlap < args.max_tokens:
        return None
    return f"--overlap ({args.overlap}) must be less than --max-tokens ({args.max_tokens})"


def run(args: argparse.Namespace) -> int:
    check_result_output(args)
    tokenizer = model_from_args(args)
    text = text_of(args)
    policy = policy_of(args)
    try:
        pieces, spans = tokenizer.chunk_with_offsets(
            text, args.max_tokens, overlap=args.overlap, **policy
        )
    except DisallowedSpecialError:
        raise CliError(refused_special(tokenizer, text)) from None
    except ParameterError as error:  # no piece fits: the library names its keyword, not ours
        budget = f"within --max-tokens {args.max_tokens}"
        message = str(error).replace(f"of at most max_tokens={args.max_tokens} tokens", budget)
        raise CliError(message.replace("raise max_tokens", "raise --max-tokens")) from None
    rows = [
        {
            "start": start,
            "end": end,
            "tokens": tokenizer.count_tokens(piece, **policy),
            "text": piece,
        }
        for piece, (start, end) in zip(pieces, spans, strict=True)
    ]
    with result_output(args.output, force=args.force) as result:
        result.write((json.dumps(rows, ensure_ascii=True) + "\n").encode("ascii"))
    if args.output is not None:
        note(f"bpetite: wrote {len(rows)} pieces to '{shown(args.output)}'")
    return 0
