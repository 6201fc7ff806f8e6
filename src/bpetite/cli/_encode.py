"""``bpetite encode``: text to a JSON array of token ids."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bpetite.cli._common import (
    add_command,
    check_argument_text,
    load_model,
    read_input_text,
    write_json,
)

if TYPE_CHECKING:
    from bpetite.cli._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "encode",
        summary="turn text into token ids",
        description=(
            "Encode text with a trained tokenizer and print the ids as one compact JSON "
            "array. Exact '<|endoftext|>' literals become the special token's id."
        ),
        examples=[
            'bpetite encode --model tokenizer.json --text "Hello world"',
            "bpetite encode --model tokenizer.json --input notes.txt > ids.json",
        ],
    )
    parser.add_argument("--model", required=True, metavar="PATH", help="tokenizer artifact")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", metavar="TEXT", help="the text to encode")
    source.add_argument(
        "--input", metavar="PATH", help="a UTF-8 file to encode byte for byte; '-' for stdin"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    tokenizer = load_model(args.model)
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
    else:
        text = read_input_text(args.input)
    write_json(tokenizer.encode(text), compact=True)
    return 0
