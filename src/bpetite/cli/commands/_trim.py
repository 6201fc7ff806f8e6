"""``bpetite trim``: keep a model's first merges, every remaining id unchanged.

Merges are learned greedily, in order, so a model trimmed to ``N`` is the model a
training run to ``N`` gives. A JSON summary goes to stdout.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bpetite._internal import BASE_VOCAB_SIZE
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, model_from_args, save_model
from bpetite.cli._output import write_json
from bpetite.cli._parser import add_command, vocab_size

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "trim",
        summary="keep a model's first merges, every remaining id kept",
        description=(
            "Write a model with only the first --vocab-size mergeable tokens (the 256 "
            "bytes and the first merges). Every id it keeps is unchanged; the special "
            "tokens keep theirs too, unless --renumber-specials moves them right after "
            "the remaining merges, where training places them. A model trained to 4096 "
            "and trimmed to 1024 with --renumber-specials is the model training to 1024 "
            "gives. Prints a JSON summary."
        ),
        examples=[
            "bpetite trim --model tok-32k.json --vocab-size 8192 --output tok-8k.json",
            "bpetite trim --model tok.json --vocab-size 1024 --renumber-specials "
            "--output tok-1k.json",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--vocab-size",
        required=True,
        type=vocab_size,
        metavar="N",
        help=f"the mergeable vocabulary size to keep, {BASE_VOCAB_SIZE} to the model's",
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="artifact to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.add_argument(
        "--renumber-specials",
        action="store_true",
        help="move the special tokens to the ids right after the remaining merges (in the "
        "order of their ids) instead of keeping their ids",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_output_path(args.output, force=args.force, inputs=[args.model])
    model = model_from_args(args)
    size = model.mergeable_vocab_size
    if not BASE_VOCAB_SIZE <= args.vocab_size <= size:
        raise CliError(
            f"--vocab-size must be from {BASE_VOCAB_SIZE} to the model's mergeable vocabulary "
            f"size {size}, got {args.vocab_size} ('bpetite extend' adds merges)"
        )
    trimmed = model.truncated(args.vocab_size, renumber_specials=args.renumber_specials)
    save_model(trimmed, args.output, force=args.force)
    write_json(
        {
            "output": args.output,
            "mergeable_vocab_size_before": size,
            "mergeable_vocab_size": trimmed.mergeable_vocab_size,
            "special_tokens": dict(trimmed.special_tokens),
        }
    )
    return 0
