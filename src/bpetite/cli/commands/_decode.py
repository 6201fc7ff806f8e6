"""``bpetite decode``: token ids back to the exact text, nothing added.

Millions of ids are decoded in slices and written as they go, so memory holds the
ids (8 bytes each) and one slice's text, never the whole text. Every id and the UTF-8
of the whole result are checked first, so a bad id or a broken character still
leaves stdout empty.
"""

from __future__ import annotations

import argparse
import codecs
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from bpetite import Tokenizer
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, load_model
from bpetite.cli._inputs import describe_input, first_unknown_id, parse_id_list, read_input_bytes
from bpetite.cli._output import write_stdout_bytes
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    tokenizer = load_model(args.model, trust_custom_pattern=args.trust_custom_pattern)
    ids: Sequence[int]
    if args.ids is not None:
        ids = args.ids
    else:
        ids = parse_id_list(read_input_bytes(args.input), describe_input(args.input))
    check_ids(tokenizer, ids)
    for start in range(0, len(ids), SLICE_IDS):
        write_stdout_bytes(tokenizer.decode_bytes(ids[start : start + SLICE_IDS]))
    return 0


def check_ids(tokenizer: Tokenizer, ids: Sequence[int]) -> None:
    """Fail unless every id is a token and their bytes together are valid UTF-8."""
    unknown = first_unknown_id(tokenizer, ids)
    if unknown is not None:
        raise CliError(unknown)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0  # bytes of the decoding fed to the decoder before this slice
    for start in range(0, len(ids), SLICE_IDS):
        data = tokenizer.decode_bytes(ids[start : start + SLICE_IDS])
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(data)
        except UnicodeDecodeError as error:
            _fail_at(tokenizer, ids, offset - pending + error.start, error.reason)
        offset += len(data)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        pending = len(error.object)
        _fail_at(tokenizer, ids, offset - pending + error.start, error.reason)


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
