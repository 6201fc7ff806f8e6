"""``bpetite import``: turn GPT-2's or another byte-level BPE vocabulary into a bpetite model.

The format is detected from the files' contents. stdout gets a JSON summary; the
artifact is a normal schema-v1 file. Refused with one line: unknown or mismatched
files, another regex, tokens bpetite's merges cannot reach.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite.cli._errors import CliError
from bpetite.cli._files import check_output_path, save_model
from bpetite.cli._output import note, shorten, write_json
from bpetite.cli._parser import add_command

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
            "file (the format is read from the contents). Merged tokens keep their ids "
            "when the source numbers them 256, 257, ... by merge rank; single bytes take "
            "bpetite's ids (id = byte value), so GPT-2's ids 0..255 are permuted. Prints a "
            "JSON summary. Refuses what bpetite cannot reproduce exactly."
        ),
        examples=[
            "bpetite import gpt2/encoder.json gpt2/vocab.bpe --output gpt2.json",
            "bpetite import gpt2/gpt2.tiktoken --output gpt2.json --force",
        ],
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="the vocabulary's file(s), in any order"
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="the artifact to write")
    parser.add_argument("--force", action="store_true", help="replace an existing output file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `bpetite --help` and the other commands do not load it.
    from bpetite.interop import InteropError, import_vocabulary

    check_output_path(args.output, force=args.force, inputs=args.inputs)
    for path in args.inputs:
        if not Path(path).is_file():
            problem = "is a directory, not a file" if Path(path).is_dir() else "does not exist"
            raise CliError(f"input file '{shorten(path)}' {problem}")
    try:
        result = import_vocabulary(args.inputs)
    except InteropError as error:
        raise CliError(f"cannot import: {error}") from None
    except OSError as error:
        raise CliError(
            f"cannot read {shorten(str(error.filename))}: {error.strerror or error}"
        ) from None
    save_model(result.tokenizer, args.output, force=args.force)
    tokenizer = result.tokenizer
    special_id = tokenizer.special_tokens.get("<|endoftext|>")
    write_json(
        {
            "format": result.format,
            "output": args.output,
            "merges": len(tokenizer.merges),
            "special_token_id": special_id,
            "id_layout": result.id_layout,
        }
    )
    notes = {
        "identical": "every id is the source's",
        "bytes permuted": "merged tokens and <|endoftext|> keep the source's ids; single "
        "bytes use bpetite's (id = byte value)",
        "renumbered": "ids differ from the source's; bpetite.interop.import_vocabulary "
        "gives the mapping (ImportResult.source_ids)",
    }
    into = shorten(args.output)
    note(f"bpetite: imported {result.format} into '{into}': {notes[result.id_layout]}")
    return 0
