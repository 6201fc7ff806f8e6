"""``bpetite train``: learn merges from UTF-8 files (or counts files) and save the artifact."""

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
    save_model,
    training_progress,
    write_json,
)
from bpetite.cli._count import (
    add_dask_argument,
    add_input_argument,
    add_workers_argument,
    count_inputs,
    load_count_files,
)

if TYPE_CHECKING:
    from bpetite.cli._common import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "train",
        summary="learn a tokenizer from UTF-8 files, directories or counts files",
        description=(
            "Learn byte-level BPE merges and save the tokenizer artifact. --input takes "
            "files and directories (every regular file under them), each file one "
            "document, streamed and counted by --workers processes; --counts takes counts "
            "files written by 'bpetite count' and gives exactly the same artifact as "
            "training on the files they count. Files are used byte for byte: no newline "
            "translation, no normalisation. Progress goes to stderr (bytes counted, then "
            "merges); a JSON summary to stdout."
        ),
        examples=[
            "bpetite train --input data/tinyshakespeare.txt --vocab-size 512 "
            "--output tokenizer.json",
            "bpetite train --input corpus/ extra.txt --workers 4 --vocab-size 4096 "
            "--output tok.json",
            "cat corpus.txt | bpetite train --input - --vocab-size 1024 --output tok.json --force",
            "bpetite train --counts c1.json c2.json --vocab-size 4096 --output tok.json",
        ],
    )
    source = parser.add_mutually_exclusive_group(required=True)
    add_input_argument(source, required=False)
    source.add_argument(
        "--counts",
        nargs="+",
        metavar="FILE",
        help="counts files from 'bpetite count', summed; instead of --input",
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
    add_workers_argument(parser)
    add_dask_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Every check that can fail fast runs before the corpus is even read.
    check_vocab_size(args.vocab_size)
    check_output_path(args.output, force=args.force)

    started = time.perf_counter()
    if args.counts is not None:
        counted = load_count_files(args.counts)
    else:
        counted = count_inputs(args.input, args.workers, stream=sys.stderr, dask=args.dask)
    counted_at = time.perf_counter()
    with PhaseProgress("train", "merges", stream=sys.stderr) as phase:
        tokenizer = Tokenizer.train_from_counts(
            counted.counts, args.vocab_size, progress=training_progress(phase)
        )
    trained_at = time.perf_counter()
    # The save is atomic, so a Ctrl-C anywhere up to here leaves no file behind.
    save_model(tokenizer, args.output, force=args.force)

    write_json(
        {
            # Unknown when training from counts files, which record chunks, not bytes.
            "corpus_bytes": None if args.counts is not None else counted.corpus_bytes,
            "requested_vocab_size": args.vocab_size,
            "actual_mergeable_vocab_size": tokenizer.mergeable_vocab_size,
            "special_token_count": len(tokenizer.special_tokens),
            "count_ms": _ms(counted_at - started),
            "merge_ms": _ms(trained_at - counted_at),
            "elapsed_ms": _ms(trained_at - started),
        }
    )
    return 0


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
