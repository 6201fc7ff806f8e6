"""``bpetite import``: turn GPT-2's or another byte-level BPE vocabulary into a bpetite model.

The format is detected from the files' contents. stdout gets a JSON summary; the
artifact speaks the source's ids (schema v1 when it can, v2 otherwise). OpenAI's
official ``.tiktoken`` files are recognised by their sha256 and get tiktoken's pattern
and special tokens; another ``.tiktoken`` file takes ``--pattern`` and
``--special-token TEXT=ID``. Refused with one line: unknown or mismatched files,
another regex, tokens bpetite's merges cannot reach.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import check_output_path, save_model
from bpetite.cli._output import note, write_json
from bpetite.cli._parser import add_command
from bpetite.cli._sources import add_pattern_arguments, split_pattern

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "import",
        summary="make a bpetite model from GPT-2's or Hugging Face's or tiktoken's files",
        description=(
            "Import a byte-level BPE vocabulary: OpenAI's encoder.json + vocab.bpe, "
            "Hugging Face's vocab.json + merges.txt, a tokenizer.json, or a .tiktoken "
            "file (the format is read from the contents). The model speaks the source's "
            "ids: GPT-2's and OpenAI's number the 256 bytes in their own order, which the "
            "artifact records. OpenAI's official .tiktoken files (r50k_base, p50k_base, "
            "cl100k_base, o200k_base; p50k_edit and o200k_harmony use p50k_base's and "
            "o200k_base's) are recognised by their sha256 and get tiktoken's split pattern "
            "and special tokens; give another .tiktoken file its --pattern and "
            "--special-token TEXT=ID (without them: GPT-2's pattern and <|endoftext|> after "
            "the last rank), and an official file given --special-token its --pattern too. "
            "A source that has no special token is imported with none. Prints a JSON "
            "summary. Refuses what bpetite cannot reproduce exactly."
        ),
        examples=[
            "bpetite import gpt2/encoder.json gpt2/vocab.bpe --output gpt2.json",
            "bpetite import cl100k_base.tiktoken --output cl100k.json",
            "bpetite import mine.tiktoken --pattern cl100k --special-token '<|endoftext|>=100257' "
            "--output mine.json",
        ],
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="the vocabulary's file(s), in any order"
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="the artifact to write")
    parser.add_argument("--force", action="store_true", help="replace an existing output file")
    add_pattern_arguments(parser)
    parser.add_argument(
        "--special-token",
        action="append",
        type=_special,
        metavar="TEXT=ID",
        help="a special token of a .tiktoken file and its id, repeatable (default: "
        "<|endoftext|> after the last rank; official files get tiktoken's)",
    )
    parser.set_defaults(handler=run)


def _special(text: str) -> tuple[str, int]:
    """``TEXT=ID`` -> (TEXT, ID); the id is the part after the last '='."""
    name, equals, number = text.rpartition("=")
    if not equals or not name or not (number.isascii() and number.isdigit()):
        raise argparse.ArgumentTypeError(
            f"expected TEXT=ID, such as '<|im_start|>=100264', got {text!r}"
        )
    return name, int(number)


def run(args: argparse.Namespace) -> int:
    # Imported here so `bpetite --help` and the other commands do not load it.
    from bpetite.interop import InteropError, import_vocabulary

    check_output_path(args.output, force=args.force, inputs=args.inputs)
    for path in args.inputs:  # a FIFO or a device is read as a stream, as --input reads one
        if Path(path).is_dir():
            raise CliError(f"input file '{shown(path)}' is a directory, not a file")
        if not Path(path).exists():
            raise CliError(f"input file '{shown(path)}' does not exist")
    pattern = None
    if args.pattern is not None or args.pattern_regex is not None:
        pattern = split_pattern(args.pattern, args.pattern_regex)
    specials = None
    if args.special_token is not None:
        specials = dict(args.special_token)
        if len(specials) != len(args.special_token):
            raise CliError("--special-token names the same text twice")
    try:
        result = import_vocabulary(args.inputs, pattern=pattern, special_tokens=specials)
    except InteropError as error:
        raise CliError(f"cannot import: {error}") from None
    except OSError as error:
        raise CliError(
            f"cannot read {shown(str(error.filename))}: {error.strerror or error}"
        ) from None
    save_model(result.tokenizer, args.output, force=args.force)
    tokenizer = result.tokenizer
    write_json(
        {
            "format": result.format,
            "vocabulary": result.name,
            "output": args.output,
            "merges": len(tokenizer.merges),
            "pattern": tokenizer.pattern_name,
            "special_tokens": dict(tokenizer.special_tokens),
            "id_layout": result.id_layout,
        }
    )
    notes = {
        "identical": "every id is the source's",
        "bytes permuted": "every id is the source's; its ids 0..255 name the bytes in the "
        "source's order",
        "renumbered": "ids differ from the source's; bpetite.interop.import_vocabulary "
        "gives the mapping (ImportResult.source_ids)",
    }
    into = shown(args.output)
    # A .tiktoken file records no special token: unless recognised or given some, the
    # model has bpetite's default, which is no id of the source's.
    defaulted = result.format == "tiktoken" and result.name is None and specials is None
    said = notes[result.id_layout]
    if defaulted:
        said = said.replace("every id is", "every id of the file's tokens is")
    note(f"bpetite: imported {result.format} into '{into}': {said}")
    if defaulted:
        for text, token_id in tokenizer.special_tokens.items():
            note(
                f"bpetite: {text} ({token_id}) is bpetite's default, not the file's: a "
                ".tiktoken file records no special token (give them with --special-token)"
            )
    return 0
