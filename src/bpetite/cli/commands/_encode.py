"""``bpetite encode``: text to a JSON array of token ids, their count, or ids with offsets.

``--count`` prints the number of ids; ``--offsets`` prints one JSON array of
``[id, start, end]`` triples, ``start`` and ``end`` the token's span in the text in
characters (Unicode code points), as :meth:`Tokenizer.encode_with_offsets` defines it.
``--within-limit N`` prints ``true`` or ``false``: whether the text has at most N ids,
found by encoding it only until it has more (:meth:`Tokenizer.is_within_limit`).

All the ids are computed before the first byte is written (into a spool for stdout, a
temp file for ``--output``), so a failure or a signal while encoding leaves stdout
empty and no file: the message "nothing was written" is then true.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from typing import IO, TYPE_CHECKING, Any, Final, Literal

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
from bpetite.cli._formats import invalid_utf8
from bpetite.cli._id_writers import write_count, write_id_batches, write_offsets
from bpetite.cli._inputs import check_argument_text, read_input_text, spool_checked
from bpetite.cli._output import note
from bpetite.cli._parser import add_command, non_negative_int
from bpetite.corpus import (
    DEFAULT_BLOCK_SIZE,
    check_specials,
    decode_blocks,
    encode_pieces,
    read_blocks,
)
from bpetite.errors import DisallowedSpecialError, InvalidUtf8Error

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers

#: Bytes read at a time from --input; the output is the same for any size.
BLOCK_SIZE: Final = DEFAULT_BLOCK_SIZE
#: ``--special`` choices: how the text of a special token is read.
SPECIAL_POLICIES: Final = ("allow", "ordinary", "raise")


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "encode",
        summary="turn text into token ids",
        description=(
            "Encode text with a trained tokenizer and print the ids as one compact JSON "
            "array. By default (--special allow) the exact text of a special token, such "
            "as '<|endoftext|>', becomes its id, which lets text from an untrusted user "
            "inject one; --special ordinary reads it as plain text, and --special raise "
            "refuses a text that holds one (tiktoken's safe mode)."
        ),
        examples=[
            'bpetite encode --model tokenizer.json --text "Hello world"',
            "bpetite encode --model tokenizer.json --input notes.txt > ids.json",
            "bpetite encode --model tokenizer.json --input notes.txt --output ids.json",
            "bpetite encode --model tokenizer.json --input user.txt --special raise",
            "bpetite encode --model cl100k_base --input prompt.txt --count",
            'bpetite encode --model tokenizer.json --text "héllo" --offsets',
            "bpetite encode --model cl100k_base --input prompt.txt --within-limit 8000",
        ],
    )
    add_model_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", metavar="TEXT", help="the text to encode")
    source.add_argument(
        "--input", metavar="PATH", help="a UTF-8 file to encode byte for byte; '-' for stdin"
    )
    parser.add_argument(
        "--special",
        choices=SPECIAL_POLICIES,
        default="allow",
        help="special-token text: 'allow' (default) encodes it as the special token, "
        "'ordinary' as plain text, 'raise' fails",
    )
    form = parser.add_mutually_exclusive_group()
    form.add_argument(
        "--count",
        action="store_true",
        help="print the number of ids instead of the ids (exactly len of the array)",
    )
    form.add_argument(
        "--within-limit",
        type=non_negative_int,
        metavar="N",
        help="print true or false: whether the text encodes to at most N ids, encoding "
        "no more of it than it must",
    )
    form.add_argument(
        "--offsets",
        action="store_true",
        help="print [id, start, end] for each token: its span in the text, in characters "
        "(a character cut between tokens is in the span of each)",
    )
    add_result_output_arguments(parser, "the ids")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_result_output(args)
    tokenizer = model_from_args(args)
    if args.within_limit is not None:
        return _within_limit(tokenizer, args)
    write = _writer(tokenizer, args)
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
        with result_output(args.output, force=args.force) as result:
            if args.count:
                count = write_count([count_text(tokenizer, text, args.special)], result)
            else:
                count = write([encode_text(tokenizer, text, args.special)], result)
    else:
        # The input is read once, checked as it is read, into a private copy: a bad byte
        # (or, with --special raise, a special token) fails before any output, and
        # nothing can change under the encoder.
        with spool_checked(args.input) as spool:
            if args.special == "raise":
                _check_no_special(tokenizer, spool, args.input)
            allowed: AbstractSet[str] | Literal["all"] = "all" if args.special == "allow" else set()
            with result_output(args.output, force=args.force) as result:
                batches = _encode_stream(tokenizer, spool, args.input, allowed)
                count = write(batches, result)
    if args.output is not None:
        what = f"{count} ids"
        if args.count:
            what = f"the count of ids ({count})"
        elif args.offsets:
            what = f"{count} ids with their offsets"
        note(f"bpetite: wrote {what} to '{shown(args.output)}'")
    return 0


def _within_limit(tokenizer: Tokenizer, args: argparse.Namespace) -> int:
    """``--within-limit N``: Tokenizer.is_within_limit, which stops at the first chunk past N."""
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
    else:
        text = read_input_text(args.input)
    policy: dict[str, Any] = {}
    if args.special != "allow":
        policy = {"allowed_special": set(), "disallowed_special": "all"}
        if args.special == "ordinary":
            policy["disallowed_special"] = ()
    try:
        within = tokenizer.is_within_limit(text, args.within_limit, **policy)
    except DisallowedSpecialError:
        raise CliError(_disallowed(tokenizer, text)) from None
    with result_output(args.output, force=args.force) as result:
        result.write(b"true\n" if within else b"false\n")
    if args.output is not None:
        verdict = "within" if within else "over"
        note(
            f"bpetite: wrote {str(within).lower()} (the text is {verdict} {args.within_limit} "
            f"ids) to '{shown(args.output)}'"
        )
    return 0


def _writer(
    tokenizer: Tokenizer, args: argparse.Namespace
) -> Callable[[Iterable[list[int]], IO[bytes]], int]:
    """How the ids are written: as an array (default), a count, or with offsets."""
    if args.count:
        return lambda batches, target: write_count(map(len, batches), target)
    if args.offsets:
        return lambda batches, target: write_offsets(tokenizer, batches, target)
    return write_id_batches


def count_text(tokenizer: Tokenizer, text: str, special: str) -> int:
    """``len(encode_text(...))``, counted without the list of ids."""
    if special == "ordinary":
        return tokenizer.count_tokens(text, allowed_special=set(), disallowed_special=())
    if special == "raise":
        try:
            return tokenizer.count_tokens(text, allowed_special=set(), disallowed_special="all")
        except DisallowedSpecialError:
            raise CliError(_disallowed(tokenizer, text)) from None
    return tokenizer.count_tokens(text)


def encode_text(tokenizer: Tokenizer, text: str, special: str) -> list[int]:
    """Encode `text` under the ``--special`` policy `special`."""
    if special == "ordinary":
        return tokenizer.encode_ordinary(text)
    if special == "raise":
        try:
            return tokenizer.encode(text, allowed_special=set(), disallowed_special="all")
        except DisallowedSpecialError:
            raise CliError(_disallowed(tokenizer, text)) from None
    return tokenizer.encode(text)


def _disallowed(tokenizer: Tokenizer, text: str) -> str:
    """Name the first special token in `text` (leftmost, then longest) and the options."""
    found = min(
        ((text.find(special), -len(special), special) for special in tokenizer.special_tokens),
        key=lambda hit: (hit[0] < 0, hit[0], hit[1]),
    )
    where = (
        f"the special token {found[2]!r} at character {found[0]}"
        if found[0] >= 0
        else ("a special token")
    )
    return (
        f"the text contains {where}, refused by --special raise; --special allow encodes it "
        f"as its id, --special ordinary as plain text"
    )


def _check_no_special(tokenizer: Tokenizer, spool: IO[bytes], source: str) -> None:
    """Fail if the spooled text holds a special token; leave the spool at its start."""
    try:
        for _ in check_specials(
            tokenizer, _text_of(spool, source), allowed_special=set(), disallowed_special="all"
        ):
            pass
    except DisallowedSpecialError:
        spool.seek(0)
        raise CliError(_disallowed(tokenizer, spool.read().decode("utf-8"))) from None
    spool.seek(0)


def _encode_stream(
    tokenizer: Tokenizer,
    stream: IO[bytes],
    source: str,
    allowed: AbstractSet[str] | Literal["all"],
) -> Iterator[list[int]]:
    """The ids of the text in `stream`, a block at a time: exactly ``encode``'s."""
    return encode_pieces(
        tokenizer, _text_of(stream, source), allowed_special=allowed, disallowed_special=()
    )


def _text_of(stream: IO[bytes], source: str) -> Iterator[str]:
    try:
        yield from decode_blocks(read_blocks(stream, BLOCK_SIZE), source)
    except InvalidUtf8Error as error:  # pragma: no cover - the spool was checked
        raise invalid_utf8(error) from None
