"""``bpetite encode``: text to a JSON array of token ids."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from bpetite._streaming import (
    DEFAULT_BLOCK_SIZE,
    InvalidUtf8Error,
    decode_blocks,
    encode_pieces,
    read_blocks,
)
from bpetite.cli import CliError
from bpetite.cli._common import (
    STDIN,
    add_command,
    check_argument_text,
    load_model,
    write_json,
    write_stdout_bytes,
)
from bpetite.cli._count import invalid_utf8

if TYPE_CHECKING:
    from bpetite import Tokenizer
    from bpetite.cli._common import Subparsers

#: Bytes read at a time from --input; the output is the same for any size.
BLOCK_SIZE = DEFAULT_BLOCK_SIZE


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
        write_json(tokenizer.encode(text), compact=True)
        return 0
    if args.input == STDIN:
        # Standard input can be read only once: it is streamed as it comes, so invalid
        # UTF-8 after the first block leaves a cut-off array on stdout (and exit 1).
        write_id_batches(_encode_stream(tokenizer, sys.stdin.buffer, STDIN))
        return 0
    path = args.input
    try:
        with Path(path).open("rb") as stream:
            # A first pass checks the whole file (C speed), so a bad byte fails before
            # any output; the second pass encodes, holding only a block at a time.
            for _ in decode_blocks(read_blocks(stream, BLOCK_SIZE), path):
                pass
            stream.seek(0)
            write_id_batches(_encode_stream(tokenizer, stream, path))
    except FileNotFoundError:
        raise CliError(f"--input file '{path}' does not exist") from None
    except IsADirectoryError:
        raise CliError(f"--input '{path}' is a directory, not a file") from None
    except PermissionError:
        raise CliError(f"--input file '{path}' cannot be read: permission denied") from None
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    return 0


def _encode_stream(tokenizer: Tokenizer, stream: BinaryIO, source: str) -> Iterator[list[int]]:
    try:
        yield from encode_pieces(tokenizer, decode_blocks(read_blocks(stream, BLOCK_SIZE), source))
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None


def write_id_batches(batches: Iterable[list[int]]) -> None:
    """Write batches of ids as one compact JSON array, exactly as ``write_json`` would."""
    write_stdout_bytes(b"[")
    separator = b""
    for batch in batches:
        if batch:
            write_stdout_bytes(separator + ",".join(map(str, batch)).encode("ascii"))
            separator = b","
    write_stdout_bytes(b"]\n")
