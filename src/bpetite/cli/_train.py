"""``bpetite train``: learn merges from a UTF-8 file and save the artifact."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from bpetite import Tokenizer
from bpetite._constants import BASE_VOCAB_SIZE
from bpetite._trainer import check_vocab_size
from bpetite.cli._common import (
    PhaseProgress,
    add_command,
    check_output_path,
    decode_utf8,
    describe_input,
    read_input_bytes,
    save_model,
    training_progress,
    write_json,
)

if TYPE_CHECKING:
    from bpetite.cli._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "train",
        summary="learn a tokenizer from a UTF-8 text file",
        description=(
            "Learn byte-level BPE merges from a UTF-8 text file and save the tokenizer "
            "artifact. The file is used byte for byte: no newline translation, no "
            "normalisation. Progress goes to stderr; a JSON summary to stdout."
        ),
        examples=[
            "bpetite train --input data/tinyshakespeare.txt --vocab-size 512 "
            "--output tokenizer.json",
            "cat corpus.txt | bpetite train --input - --vocab-size 1024 --output tok.json --force",
        ],
    )
    parser.add_argument(
        "--input", required=True, metavar="PATH", help="UTF-8 text to learn from; '-' for stdin"
    )
    parser.add_argument(
        "--vocab-size",
        required=True,
        type=int,
        metavar="N",
        help=f"mergeable vocabulary size, at least {BASE_VOCAB_SIZE} (the special token "
        "comes on top)",
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="artifact to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Every check that can fail fast runs before the corpus is even read.
    check_vocab_size(args.vocab_size)
    check_output_path(args.output, force=args.force)
    data = read_input_bytes(args.input)
    corpus = decode_utf8(data, describe_input(args.input))

    with PhaseProgress("train", "merges", stream=sys.stderr) as phase:
        started = time.perf_counter()
        tokenizer = Tokenizer._train(corpus, args.vocab_size, training_progress(phase))
        elapsed = time.perf_counter() - started
    # The save is atomic, so a Ctrl-C anywhere up to here leaves no file behind.
    save_model(tokenizer, args.output, force=args.force)

    write_json(
        {
            "corpus_bytes": len(data),
            "requested_vocab_size": args.vocab_size,
            "actual_mergeable_vocab_size": BASE_VOCAB_SIZE + len(tokenizer._merges),
            "special_token_count": len(tokenizer._special_tokens),
            "elapsed_ms": round(elapsed * 1000),
        }
    )
    return 0
