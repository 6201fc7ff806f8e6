"""``bpetite export``: write a model as a Hugging Face tokenizer.json or a .tiktoken file.

stdout gets the few lines of Python that load the written file, with its path as given
(for tiktoken they also carry the regex and the special token, which the file cannot
hold); stderr gets a one-line note. A vocabulary the format cannot represent exactly
is refused.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, model_from_args
from bpetite.cli._output import exists_message, note, write_result
from bpetite.cli._parser import add_command

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "export",
        summary="write a model for Hugging Face tokenizers or tiktoken",
        description=(
            "Export a bpetite model as a Hugging Face tokenizer.json (--format hf) or a "
            "tiktoken .tiktoken file (--format tiktoken). Either encodes every text to "
            "exactly bpetite's ids. stdout gets Python code that loads the file; for "
            "tiktoken it also holds the regex and the special token. Refuses a vocabulary "
            "the format cannot represent (for example two tokens with the same bytes)."
        ),
        examples=[
            "bpetite export --model tokenizer.json --format hf --output hf-tokenizer.json",
            "bpetite export --model tokenizer.json --format tiktoken --output tok.tiktoken "
            "> load_tok.py",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--format", required=True, choices=("hf", "tiktoken"), help="the format to write"
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="the file to write")
    parser.add_argument("--force", action="store_true", help="replace an existing output file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so `bpetite --help` and the other commands do not load it.
    from bpetite.interop import InteropError, write_hf, write_tiktoken

    check_output_path(args.output, force=args.force, inputs=[args.model])
    tokenizer = model_from_args(args)
    try:
        if args.format == "hf":
            write_hf(tokenizer, args.output, overwrite=args.force)
            code = (
                "from tokenizers import Tokenizer\n\n"
                f"tokenizer = Tokenizer.from_file({args.output!r})\n"
            )
            what = "Hugging Face tokenizer.json"
        else:
            export = write_tiktoken(tokenizer, args.output, overwrite=args.force)
            code = export.python_code(args.output)
            what = ".tiktoken file"
    except InteropError as error:
        raise CliError(f"cannot export '{shown(args.model)}' as {args.format}: {error}") from None
    except FileExistsError:
        raise CliError(exists_message("--output", args.output)) from None
    write_result(code.encode("utf-8"))
    note(f"bpetite: wrote the {what} '{shown(args.output)}'")
    return 0
