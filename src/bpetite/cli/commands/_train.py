"""``bpetite train``: learn merges from UTF-8 files (or counts files) and save the artifact."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Final

from bpetite import SplitPattern, Tokenizer
from bpetite._internal import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN, shown
from bpetite.cli._cluster import cluster, count_on_cluster
from bpetite.cli._errors import CliError
from bpetite.cli._files import check_output_path, refuse_overwriting_inputs, save_model
from bpetite.cli._inputs import check_argument_text
from bpetite.cli._output import write_json
from bpetite.cli._parser import (
    add_command,
    check_max_token_bytes,
    check_vocab_size,
    positive_int,
    vocab_size,
)
from bpetite.cli._progress import PhaseProgress, training_progress
from bpetite.cli._reading import (
    add_budget_arguments,
    add_dask_argument,
    add_input_argument,
    reading_of,
)
from bpetite.cli._sources import (
    Counted,
    Sources,
    add_pattern_arguments,
    add_workers_argument,
    count_sources,
    gather_inputs,
    load_count_files,
    split_pattern,
)

if TYPE_CHECKING:
    from bpetite._internal import CountsOnDask
    from bpetite.cli._parser import Subparsers

#: The placeholder that --output needs when several --vocab-size are given.
SIZE_FIELD: Final = "{vocab_size}"


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "train",
        summary="learn a tokenizer from UTF-8 files, Parquet shards, directories or counts files",
        description=(
            "Learn byte-level BPE merges and save the tokenizer artifact. --input takes "
            "files and directories (every regular file under them), each file one "
            "document, streamed and counted by --workers processes; --counts takes counts "
            "files written by 'bpetite count' and gives exactly the same artifact as "
            "training on the files they count. The merge loop runs in the same --workers "
            "processes when the distinct chunks are many enough to gain from it (at least "
            "1 MiB of them per process), with the same merges; with --dask, the files are "
            "counted on the cluster and, from 16 MiB of distinct chunks, the words stay "
            "there, a share on each worker, with the same merges again. Files are used "
            "byte for byte: no newline translation, no normalisation. Several --vocab-size values "
            "train once, at the largest, and write every size (a smaller vocabulary is a "
            "prefix of the merges); --output must then hold {vocab_size}. Progress goes "
            "to stderr (bytes counted, then merges); a JSON summary to stdout."
        ),
        examples=[
            "bpetite train --input data/tinyshakespeare.txt --vocab-size 512 "
            "--output tokenizer.json",
            "bpetite train --input corpus/ extra.txt --workers 4 --vocab-size 4096 "
            "--output tok.json",
            "cat corpus.txt | bpetite train --input - --vocab-size 1024 --output tok.json --force",
            "bpetite train --counts c1.json c2.json --vocab-size 4096 --output tok.json",
            "bpetite train --input shard_*.parquet --max-chars 2e9 --doc-cap 10000 "
            "--pattern cl100k --vocab-size 65536 --output tok.json   # nanochat's",
            "bpetite train --input corpus.txt --pattern cl100k --special-token '<|user_start|>' "
            "--special-token '<|user_end|>' --vocab-size 4096 --vocab-size 32000 "
            "--output 'tok-{vocab_size}.json'",
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
        action="append",
        type=vocab_size,
        metavar="N",
        help=f"mergeable vocabulary size, at least {BASE_VOCAB_SIZE}, reached unless the "
        "pairs run out first (the special tokens come on top); repeat it for several sizes "
        "from one run",
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="PATH",
        help=f"artifact to write; {SIZE_FIELD} in it becomes the size",
    )
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    add_pattern_arguments(parser)
    parser.add_argument(
        "--special-token",
        action="append",
        metavar="TEXT",
        help="a special token, repeatable; they take the ids after the merges in order "
        "(default: the single <|endoftext|>)",
    )
    parser.add_argument(
        "--max-token-bytes",
        type=positive_int,
        metavar="N",
        help="never make a token longer than N bytes (at least 2; bpeasy's max_token_length)",
    )
    parser.add_argument(
        "--min-frequency",
        type=positive_int,
        metavar="N",
        help="stop when the most frequent pair occurs fewer than N times "
        "(Hugging Face's min_frequency)",
    )
    add_budget_arguments(parser)
    add_workers_argument(parser)
    add_dask_argument(parser, merging=True)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Every check that can fail fast runs before the corpus is even read.
    sizes = sorted({check_vocab_size(size) for size in args.vocab_size})
    outputs = _outputs(args.output, sizes)
    specials = _special_tokens(args.special_token)
    pattern = split_pattern(args.pattern, args.pattern_regex, specials)
    reading = reading_of(args)
    if args.counts is not None and reading.budgeted:
        raise CliError("--max-chars and --doc-cap apply to --input, not to --counts")
    if args.counts is not None and reading.doc_delimiter is not None:
        raise CliError("--doc-delimiter applies to --input, not to --counts")
    check_max_token_bytes(args.max_token_bytes)
    for path in outputs.values():
        check_output_path(path, force=args.force)

    if args.dask is not None and reading.budgeted:
        raise CliError("--max-chars and --doc-cap cannot be used with --dask")
    sources = None if args.counts is not None else gather_inputs(args.input)
    for path in outputs.values():
        refuse_overwriting_inputs(path, args.counts if sources is None else sources.paths)
    with_streams = sources is not None and sources.streams
    if args.dask is not None and with_streams and reading.doc_delimiter is not None:
        raise CliError("--doc-delimiter needs files, not streams, with --dask")

    started = time.perf_counter()
    with cluster(args.dask, args.workers) as client:
        remote: CountsOnDask | None = None
        if sources is None:
            counted = load_count_files(args.counts, pattern)
            if client is not None:  # the loaded counts are dealt to the cluster's shares
                remote = count_on_cluster((), client, pattern, reading)
        elif client is not None:
            # Streams are read here (only this process can), the files on the cluster.
            streams = Sources((), sources.streams, tuple(sources.streams))
            counted = count_sources(streams, args.workers, pattern=pattern, reading=reading)
            remote = count_on_cluster(sources.files, client, pattern, reading)
            counted = Counted(counted.counts, None, counted.corpus_bytes + remote.corpus_bytes)
        else:
            counted = count_sources(
                sources, args.workers, pattern=pattern, stream=sys.stderr, reading=reading
            )
        counted_at = time.perf_counter()
        options = {"max_token_bytes": args.max_token_bytes, "min_frequency": args.min_frequency}
        largest = _train(counted, sizes[-1], pattern, specials, options, args.workers, remote)
        trained_at = time.perf_counter()
    # Each save is atomic, so a Ctrl-C anywhere up to here leaves no file behind.
    written = []
    for size in sizes:
        tokenizer = _prefix(largest, size)
        save_model(tokenizer, outputs[size], force=args.force)
        written.append((size, outputs[size], tokenizer))

    summary: dict[str, object] = {
        # Unknown when training from counts files, which record chunks, not bytes.
        "corpus_bytes": None if args.counts is not None else counted.corpus_bytes,
    }
    if len(written) == 1:
        summary["requested_vocab_size"] = sizes[0]
        summary["actual_mergeable_vocab_size"] = largest.mergeable_vocab_size
    else:
        summary["outputs"] = [
            {
                "output": path,
                "requested_vocab_size": size,
                "actual_mergeable_vocab_size": tokenizer.mergeable_vocab_size,
            }
            for size, path, tokenizer in written
        ]
    summary.update(
        {
            "special_token_count": len(largest.special_tokens),
            "count_ms": _ms(counted_at - started),
            "merge_ms": _ms(trained_at - counted_at),
            "elapsed_ms": _ms(trained_at - started),
        }
    )
    write_json(summary)
    return 0


def _outputs(template: str, sizes: list[int]) -> dict[int, str]:
    """The path each size is written to; several sizes need {vocab_size} to differ."""
    if len(sizes) > 1 and SIZE_FIELD not in template:
        raise CliError(
            f"several --vocab-size values need {SIZE_FIELD} in --output, e.g. "
            f"'tok-{SIZE_FIELD}.json'; got '{shown(template)}'"
        )
    return {size: template.replace(SIZE_FIELD, str(size)) for size in sizes}


def _special_tokens(given: list[str] | None) -> tuple[str, ...]:
    if given is None:
        return (END_OF_TEXT_TOKEN,)
    return tuple(check_argument_text(text, "--special-token") for text in given)


def _train(
    counted: Counted,
    size: int,
    pattern: SplitPattern,
    specials: tuple[str, ...],
    options: dict[str, int | None],
    workers: int | None,
    remote: CountsOnDask | None = None,
) -> Tokenizer:
    """Learn merges from the counts: in up to `workers` processes (one per CPU by
    default) when the distinct chunks are many enough to gain from it, the same
    merges whatever the count (``train_counted``); with `remote`, the counts held on a
    Dask cluster are added and the words are on its workers."""
    from bpetite._internal import train_counted

    with PhaseProgress("train", "merges", stream=sys.stderr) as phase:
        return train_counted(
            counted.counts,
            size,
            pattern=pattern,
            special_tokens=specials,
            workers=workers,
            progress=training_progress(phase),
            max_token_bytes=options["max_token_bytes"],
            min_frequency=options["min_frequency"],
            remote=remote,
        )


def _prefix(largest: Tokenizer, size: int) -> Tokenizer:
    """The tokenizer a separate run at `size` learns: merges are learned greedily, so
    its merges are the first ``size - 256`` of the largest run's (also under the
    training options, which only ever stop a run or skip a pair, whatever the size)."""
    if size - BASE_VOCAB_SIZE >= len(largest.merges):
        return largest
    return Tokenizer(
        largest.merges[: size - BASE_VOCAB_SIZE],
        pattern=largest.split_pattern,
        special_tokens=tuple(largest.special_tokens),
        training=largest.training,
    )


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
