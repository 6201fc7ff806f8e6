"""``bpetite decode``: token ids back to the exact text, nothing added.

Millions of ids are decoded in slices, each checked as UTF-8 as it goes into a spool
(stdout) or a temp file (``--output``), so memory holds the ids (8 bytes each) and one
slice's text, never the whole text. Nothing is delivered before every id and the whole
text are checked: a bad id, a broken character, a failure or a signal while decoding
leaves stdout empty and no file.
"""

from __future__ import annotations

import argparse
import codecs
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Final

from bpetite import Tokenizer
from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import (
    add_model_argument,
    add_result_output_arguments,
    check_result_output,
    model_from_args,
    result_output,
)
from bpetite.cli._inputs import first_unknown_id, parse_id_list, read_input_bytes
from bpetite.cli._output import note
from bpetite.cli._parser import add_command, integer

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers

#: Ids decoded and written at a time.
SLICE_IDS: Final = 1 << 16


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
            "bpetite decode --model tokenizer.json --input ids.json --output text.txt",
        ],
    )
    add_model_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ids", nargs="*", type=integer, metavar="ID", help="token ids to decode")
    source.add_argument(
        "--input",
        metavar="PATH",
        help="a file holding a JSON array of ids (what encode prints); '-' for stdin",
    )
    add_result_output_arguments(parser, "the text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_result_output(args)
    tokenizer = model_from_args(args)
    ids: Sequence[int]
    if args.ids is not None:
        ids = args.ids
    else:
        ids = parse_id_list(read_input_bytes(args.input), args.input)
    unknown = first_unknown_id(tokenizer, ids)
    if unknown is not None:
        raise CliError(unknown)
    with result_output(args.output, force=args.force) as result:
        size = decode_checked(tokenizer, ids, result)
    if args.output is not None:
        note(f"bpetite: wrote {size} bytes of text to '{shown(args.output)}'")
    return 0


def decode_checked(tokenizer: Tokenizer, ids: Sequence[int], target: IO[bytes]) -> int:
    """Write the bytes of `ids` to `target`, failing unless together they are valid UTF-8.

    Returns how many bytes. Every id must be a token of `tokenizer`.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0  # bytes of the decoding fed to the decoder before this slice
    for start in range(0, len(ids), SLICE_IDS):
        data = tokenizer.decode_bytes(ids[start : start + SLICE_IDS])
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(data)
        except UnicodeDecodeError as error:
            _fail_at(tokenizer, ids, offset - pending + error.start, error.reason)
        target.write(data)
        offset += len(data)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        pending = len(error.object)
        _fail_at(tokenizer, ids, offset - pending + error.start, error.reason)
    return offset


def _fail_at(tokenizer: Tokenizer, ids: Sequence[int], offset: int, reason: str) -> None:
    position, token_id = _token_at_byte(tokenizer, ids, offset)
    raise CliError(
        f"the ids do not decode to valid UTF-8: {reason} at byte {offset}, "
        f"in token {token_id} at position {position}"
    )


def _token_at_byte(tokenizer: Tokenizer, ids: Sequence[int], offset: int) -> tuple[int, int]:
    """The (position, id) of the token whose bytes hold byte `offset` of the decoding."""
    vocab = tokenizer.vocab
    end = 0
    for position, token_id in enumerate(ids):
        end += len(vocab[token_id])
        if offset < end:
            return position, token_id
    return len(ids) - 1, ids[-1]  # the error is "unexpected end": the last token
