"""``bpetite extend``: continue training a model on more text, every existing id kept.

The corpus is split as the model splits it (its pattern, then its merges), and new
merges are learned from there as ``train`` learns them; the artifact keeps every old
merge and id. Progress goes to stderr (bytes counted, then merges); a JSON summary to
stdout.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from bpetite import Tokenizer
from bpetite.cli._errors import CliError
from bpetite.cli._files import (
    add_model_argument,
    check_output_path,
    model_from_args,
    refuse_overwriting_inputs,
    save_model,
)
from bpetite.cli._output import write_json
from bpetite.cli._parser import add_command, check_max_token_bytes, positive_int, vocab_size
from bpetite.cli._progress import PhaseProgress, training_progress
from bpetite.cli._reading import add_budget_arguments, add_input_argument, reading_of
from bpetite.cli._sources import (
    add_workers_argument,
    count_sources,
    gather_inputs,
    load_count_files,
)

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "extend",
        summary="add merges to a model from more text, every existing id kept",
        description=(
            "Continue training a model (a bpetite artifact or a built-in vocabulary such "
            "as cl100k_base): the text is split as the model splits it, and new merges "
            "are learned from there exactly as 'bpetite train' learns them (most frequent "
            "pair, ties to the smallest). Every old merge and id stays, the special "
            "tokens' too: the new merges take the next ids no special token holds, so a "
            "model trained on the old ids still reads them. --renumber-specials instead "
            "moves the special tokens after the new merges, as training places them: "
            "training to 300 and extending to 500 then gives what training to 500 gives. "
            "--max-token-bytes and --min-frequency default to the model's own. Progress "
            "goes to stderr; a JSON summary to stdout."
        ),
        examples=[
            "bpetite extend --model tokenizer.json --input legal/ --vocab-size 8192 "
            "--output legal.json",
            "bpetite extend --model cl100k_base --input notes.txt --vocab-size 100257 "
            "--output cl100k-notes.json",
            "bpetite extend --model tok.json --counts c.json --vocab-size 4096 "
            "--renumber-specials --output tok-4096.json",
        ],
    )
    add_model_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    add_input_argument(source, required=False)
    source.add_argument(
        "--counts",
        nargs="+",
        metavar="FILE",
        help="counts files from 'bpetite count' cut with the model's pattern, summed; "
        "instead of --input",
    )
    parser.add_argument(
        "--vocab-size",
        required=True,
        type=vocab_size,
        metavar="N",
        help="the mergeable vocabulary size to reach (at least the model's; fewer if the "
        "text runs out of pairs)",
    )
    parser.add_argument("--output", required=True, metavar="PATH", help="artifact to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.add_argument(
        "--renumber-specials",
        action="store_true",
        help="move the special tokens to the ids right after the new merges (in the order "
        "of their ids), as training places them; without it every special keeps its id and "
        "the new merges take the ids no special token holds",
    )
    parser.add_argument(
        "--max-token-bytes",
        type=positive_int,
        metavar="N",
        help="never make a new token longer than N bytes (at least 2; default: the model's)",
    )
    parser.add_argument(
        "--min-frequency",
        type=positive_int,
        metavar="N",
        help="stop when the most frequent pair occurs fewer than N times (default: the model's)",
    )
    add_budget_arguments(parser)
    add_workers_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Every check that can fail fast runs before the corpus is read.
    target = args.vocab_size  # checked against the model's size once it is loaded
    check_max_token_bytes(args.max_token_bytes)
    reading = reading_of(args)
    if args.counts is not None and (reading.budgeted or reading.doc_delimiter is not None):
        raise CliError(
            "--max-chars, --doc-cap and --doc-delimiter apply to --input, not to --counts"
        )
    check_output_path(args.output, force=args.force, inputs=[("--model", args.model)])
    model = model_from_args(args)
    _check_room(model, target)

    started = time.perf_counter()
    if args.counts is not None:
        refuse_overwriting_inputs(args.output, [("--counts", path) for path in args.counts])
        counted = load_count_files(args.counts, model.split_pattern, of_model=True)
    else:
        sources = gather_inputs(args.input)
        refuse_overwriting_inputs(args.output, [("--input", path) for path in sources.paths])
        counted = count_sources(
            sources, args.workers, pattern=model.split_pattern, stream=sys.stderr, reading=reading
        )
    counted_at = time.perf_counter()
    with PhaseProgress("extend", "merges", stream=sys.stderr) as phase:
        extended = model.extended(
            counted.counts,
            target,
            renumber_specials=args.renumber_specials,
            progress=training_progress(phase),
            max_token_bytes=args.max_token_bytes,
            min_frequency=args.min_frequency,
        )
    trained_at = time.perf_counter()
    save_model(extended, args.output, force=args.force)
    write_json(
        {
            "output": args.output,
            "corpus_bytes": None if args.counts is not None else counted.corpus_bytes,
            "mergeable_vocab_size_before": model.mergeable_vocab_size,
            "requested_vocab_size": target,
            "actual_mergeable_vocab_size": extended.mergeable_vocab_size,
            "new_merges": len(extended.merges) - len(model.merges),
            "special_tokens": dict(extended.special_tokens),
            "count_ms": round((counted_at - started) * 1000),
            "merge_ms": round((trained_at - counted_at) * 1000),
        }
    )
    return 0


def _check_room(model: Tokenizer, target: int) -> None:
    """Refuse, in the command's own words, what ``Tokenizer.extended`` would refuse."""
    size = model.mergeable_vocab_size
    if target < size:
        raise CliError(
            f"--vocab-size {target} is below the model's mergeable vocabulary size {size}: "
            f"extending keeps every merge ('bpetite trim' drops merges)"
        )
