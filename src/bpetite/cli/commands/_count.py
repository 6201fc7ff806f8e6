"""``bpetite count``: count the chunks of many files into a shareable counts file."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import check_output_path, refuse_overwriting_inputs
from bpetite.cli._output import exists_message, write_json
from bpetite.cli._parser import add_command
from bpetite.cli._reading import (
    add_budget_arguments,
    add_dask_argument,
    add_input_argument,
    reading_of,
)
from bpetite.cli._sources import (
    add_pattern_arguments,
    add_workers_argument,
    count_sources,
    gather_inputs,
    split_pattern,
)
from bpetite.corpus import save_counts

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "count",
        summary="count the chunks of UTF-8 files or Parquet shards into a counts file",
        description=(
            "Pre-tokenize UTF-8 files and write how often each distinct chunk occurs, as a "
            "versioned JSON counts file. Each file is one document; a directory means "
            "every regular file under it. Counting runs in parallel and streams the "
            "files, so they may be far larger than memory. 'bpetite train --counts' "
            "merges any number of counts files and trains exactly as on the files "
            "themselves, so counting can run on many machines and training on one."
        ),
        examples=[
            "bpetite count --input corpus/ --output counts.json",
            "bpetite count --input shard_*.parquet --text-column text --max-chars 2e9 "
            "--doc-cap 10000 --output counts.json",
            "bpetite count --input part1/ --output c1.json   # on one machine",
            "bpetite count --input part2/ --output c2.json   # on another",
            "bpetite train --counts c1.json c2.json --vocab-size 4096 --output tok.json",
        ],
    )
    add_input_argument(parser, required=True)
    add_pattern_arguments(parser)
    add_budget_arguments(parser)
    add_workers_argument(parser)
    add_dask_argument(parser)
    parser.add_argument("--output", required=True, metavar="PATH", help="counts file to write")
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pattern = split_pattern(args.pattern, args.pattern_regex)
    check_output_path(args.output, force=args.force)
    sources = gather_inputs(args.input)
    refuse_overwriting_inputs(args.output, [("--input", path) for path in sources.paths])
    started = time.perf_counter()
    counted = count_sources(
        sources, args.workers, pattern=pattern, dask=args.dask, reading=reading_of(args)
    )
    counted_at = time.perf_counter()
    try:
        save_counts(args.output, counted.counts, overwrite=args.force, pattern=pattern)
    except FileExistsError:
        raise CliError(exists_message("--output", args.output)) from None
    except OSError as error:
        raise CliError(
            f"cannot write --output '{shown(args.output)}': {error.strerror or error}"
        ) from None
    write_json(
        {
            "documents": counted.documents,
            "corpus_bytes": counted.corpus_bytes,
            "distinct_chunks": len(counted.counts),
            "total_chunks": sum(counted.counts.values()),
            "count_ms": round((counted_at - started) * 1000),
            "elapsed_ms": round((time.perf_counter() - started) * 1000),
        }
    )
    return 0
