"""``bpetite encode``: text to a JSON array of token ids."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bpetite._errors import InvalidUtf8Error
from bpetite._streaming import (
    DEFAULT_BLOCK_SIZE,
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
#: Standard input is held in memory up to this size, then spooled to a temp file.
SPOOL_BYTES = 64 << 20


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
        # Standard input can be read only once, so it is spooled first (in memory up to
        # SPOOL_BYTES, then in a temp file): a bad byte must fail before any output.
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool)
            spool.seek(0)
            _check_then_encode(tokenizer, spool, STDIN)
        return 0
    path = args.input
    try:
        with Path(path).open("rb") as stream:
            _check_then_encode(tokenizer, stream, path)
    except FileNotFoundError:
        raise CliError(f"--input file '{path}' does not exist") from None
    except IsADirectoryError:
        raise CliError(f"--input '{path}' is a directory, not a file") from None
    except PermissionError:
        raise CliError(f"--input file '{path}' cannot be read: permission denied") from None
    return 0


def _check_then_encode(tokenizer: Tokenizer, stream: IO[bytes], source: str) -> None:
    """A first pass checks the whole input (C speed), so a bad byte fails before any
    output; the second pass encodes, holding only a block at a time."""
    try:
        for _ in decode_blocks(read_blocks(stream, BLOCK_SIZE), source):
            pass
    except InvalidUtf8Error as error:
        raise invalid_utf8(error) from None
    stream.seek(0)
    write_id_batches(_encode_stream(tokenizer, stream, source))


def _encode_stream(tokenizer: Tokenizer, stream: IO[bytes], source: str) -> Iterator[list[int]]:
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
