"""``bpetite decode``: token ids back to the exact text, nothing added."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bpetite import Tokenizer
from bpetite.cli import CliError
from bpetite.cli._common import (
    add_command,
    describe_input,
    load_model,
    parse_id_list,
    read_input_text,
    write_stdout_bytes,
)

if TYPE_CHECKING:
    from bpetite.cli._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "decode",
        summary="turn token ids back into text",
        description=(
            "Decode token ids with a trained tokenizer and write the text to stdout "
            "exactly: no trailing newline, nothing else."
        ),
        examples=[
            "bpetite decode --model tokenizer.json --ids 72 101 108 108 111",
            "bpetite encode --model tokenizer.json --text hi | "
            "bpetite decode --model tokenizer.json --input -",
        ],
    )
    parser.add_argument("--model", required=True, metavar="PATH", help="tokenizer artifact")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ids", nargs="*", type=int, metavar="ID", help="token ids to decode")
    source.add_argument(
        "--input",
        metavar="PATH",
        help="a file holding a JSON array of ids (what encode prints); '-' for stdin",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    tokenizer = load_model(args.model)
    if args.ids is not None:
        ids: list[int] = args.ids
    else:
        ids = parse_id_list(read_input_text(args.input), describe_input(args.input))
    write_stdout_bytes(_decode(tokenizer, ids).encode("utf-8"))
    return 0


def _decode(tokenizer: Tokenizer, ids: Sequence[int]) -> str:
    try:
        return tokenizer.decode(ids)
    except KeyError as error:
        raise CliError(error.args[0]) from None
    except UnicodeDecodeError as error:
        position, token_id = _token_at_byte(tokenizer, ids, error.start)
        raise CliError(
            f"the ids do not decode to valid UTF-8: {error.reason} at byte {error.start}, "
            f"in token {token_id} at position {position}"
        ) from None


def _token_at_byte(tokenizer: Tokenizer, ids: Sequence[int], offset: int) -> tuple[int, int]:
    """The (position, id) of the token whose bytes hold byte `offset` of the decoding."""
    end = 0
    for position, token_id in enumerate(ids):
        end += len(tokenizer.vocab[token_id])
        if offset < end:
            return position, token_id
    return len(ids) - 1, ids[-1]  # the error is "unexpected end": the last token
