"""``bpetite decode``: token ids back to the exact text, nothing added.

Millions of ids are decoded in slices, each checked as UTF-8 as it goes into a spool
(stdout) or a temp file (``--output``), so memory holds the ids (8 bytes each) and one
slice's text, never the whole text. Nothing is delivered before every id and the whole
text are checked: a bad id, a broken character, a failure or a signal while decoding
leaves stdout empty and no file.

``--errors replace`` (or ``ignore``) decodes bytes that are not UTF-8 as tiktoken and
``bytes.decode`` do, instead of failing. ``--stream`` is for ids that arrive over time
(a model generating): it reads standard input a line at a time, each line one id or a
JSON array of ids, and writes each character as soon as its bytes are complete,
flushing after every line; what it wrote before a failure stays written, and the
failure line says how much.
"""

from __future__ import annotations

import argparse
import codecs
import json
import sys
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Final

from bpetite import StreamDecoder, Tokenizer
from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import (
    add_model_argument,
    add_result_output_arguments,
    check_result_output,
    model_from_args,
    result_output,
)
from bpetite.cli._formats import STDIN, not_utf8
from bpetite.cli._inputs import first_unknown_id, parse_id_list, read_input_bytes
from bpetite.cli._output import note, write_all
from bpetite.cli._parser import add_command, add_usage_check, integer
from bpetite.errors import UnknownTokenError

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers

#: Ids decoded and written at a time.
SLICE_IDS: Final = 1 << 16
#: argparse's own would offer --output with --stream, which writes as the ids arrive.
_USAGE: Final = """%(prog)s [-h] --model PATH|NAME [--trust-custom-pattern]
                      [--max-model-bytes N] (--ids [ID ...] | --input PATH)
                      [--errors {strict,replace,ignore}] [--output PATH]
                      [--force]
   or: %(prog)s [-h] --model PATH|NAME [--trust-custom-pattern]
                      [--max-model-bytes N] --stream
                      [--errors {strict,replace,ignore}]"""


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
            "bpetite decode --model tokenizer.json --errors replace --ids 72 195",
            "my-model-server | bpetite decode --model tokenizer.json --stream",
        ],
        usage=_USAGE,
    )
    add_model_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ids", nargs="*", type=integer, metavar="ID", help="token ids to decode")
    source.add_argument(
        "--input",
        metavar="PATH",
        help="a file holding a JSON array of ids (what encode prints); '-' for stdin",
    )
    source.add_argument(
        "--stream",
        action="store_true",
        help="read ids from stdin as they arrive, one id or a JSON array per line, and "
        "write each character as soon as it is whole, flushing after every line",
    )
    parser.add_argument(
        "--errors",
        choices=StreamDecoder.ERRORS,
        default="strict",
        help="bytes that are not UTF-8: 'strict' (default) fails, 'replace' writes U+FFFD "
        "for them (tiktoken's default), 'ignore' drops them",
    )
    add_result_output_arguments(
        parser, "the text", "; not with --stream, which writes each character as it arrives"
    )
    add_usage_check(parser, _check_stream)
    parser.set_defaults(handler=run)


def _check_stream(args: argparse.Namespace) -> str | None:
    if args.stream and args.output is not None:
        return "--stream writes to standard output as the ids arrive: drop --output"
    return None


def run(args: argparse.Namespace) -> int:
    if args.stream:
        if sys.stdin is None:
            raise CliError("standard input is closed; --stream reads the ids from it")
        return decode_stream(model_from_args(args), stdin_lines(sys.stdin), args.errors)
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
        if args.errors == "strict":
            size = decode_checked(tokenizer, ids, result)
        else:
            size = decode_lenient(tokenizer, ids, result, args.errors)
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


def decode_lenient(tokenizer: Tokenizer, ids: Sequence[int], target: IO[bytes], errors: str) -> int:
    """Write ``tokenizer.decode(ids, errors=errors)`` as UTF-8 to `target`, a slice at a
    time; return how many bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    size = 0
    for start in range(0, len(ids), SLICE_IDS):
        data = decoder.decode(tokenizer.decode_bytes(ids[start : start + SLICE_IDS]))
        size += target.write(data.encode("utf-8"))
    return size + target.write(decoder.decode(b"", final=True).encode("utf-8"))


def decode_stream(tokenizer: Tokenizer, lines: Iterator[str] | IO[str], errors: str) -> int:
    """Decode ids from `lines` as they come, writing text to stdout as soon as it is whole."""
    stream = tokenizer.stream_decoder(errors=errors)
    number = 0
    for number, line in enumerate(lines, start=1):
        text = []
        for token in _line_ids(line, number):
            try:
                text.append(stream.step(token))
            except UnknownTokenError as error:
                raise CliError(f"line {number}: {error}") from None
            except UnicodeDecodeError as error:
                raise CliError(
                    f"line {number}: token {token} does not continue valid UTF-8 "
                    f"({error.reason}); --errors replace writes U+FFFD instead"
                ) from None
        _write_now("".join(text))
    try:
        _write_now(stream.flush(), completes=True)
    except UnicodeDecodeError:
        raise CliError(
            f"the ids ended inside a character (after line {number}): only "
            f"{len(stream.pending)} byte(s) of it came; --errors replace writes U+FFFD instead"
        ) from None
    return 0


def stdin_lines(stdin: IO[str]) -> Iterator[str]:
    """The lines of `stdin` as they arrive, each strict UTF-8 whatever the locale says: a
    bad byte is named with its offset, as in any other input, not as a stand-in character."""
    buffer = getattr(stdin, "buffer", None)
    if buffer is None:  # a text stream someone swapped in: its characters are all there is
        yield from stdin
        return
    offset = 0  # bytes in the lines before this one
    for number, line in enumerate(buffer, start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as error:
            bad = not_utf8(STDIN, line[error.start], offset + error.start, error.reason)
            raise CliError(f"line {number}: {bad}") from None
        offset += len(line)


def _line_ids(line: str, number: int) -> list[int]:
    """The ids on one line of ``--stream`` input: one integer, or a JSON array of them."""
    text = line.strip()
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if type(value) is int:
        return [value]
    if isinstance(value, list) and all(type(item) is int for item in value):
        return value
    raise CliError(f"line {number} is not a token id or a JSON array of ids: {shown(text, 80)!r}")


def _write_now(text: str, *, completes: bool = False) -> None:
    """Write `text` to stdout at once, counted as part of the result."""
    stdout = sys.stdout
    if stdout is None:
        raise CliError("standard output is closed; the text was not written")
    buffer = getattr(stdout, "buffer", None)
    if buffer is None:  # a text stream someone swapped in
        stdout.write(text)
        stdout.flush()
        return
    stdout.flush()
    write_all(buffer, text.encode("utf-8"), completes=completes)
    buffer.flush()


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
