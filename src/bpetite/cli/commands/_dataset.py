"""``bpetite dataset``: encode a corpus into nanoGPT's ``train.bin`` (and ``val.bin``), or
into llm.c's and modded-nanogpt's shards."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bpetite import write_dataset
from bpetite._internal import END_OF_TEXT_TOKEN, SHARD_HINT, WIDER_DTYPE, shown
from bpetite.cli._cluster import cluster
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, library_model, model_from_args
from bpetite.cli._formats import invalid_utf8, refuse_named_binaries
from bpetite.cli._inputs import peek_stdin
from bpetite.cli._output import exists_message, write_json, writing_output
from bpetite.cli._parser import add_command, positive_int
from bpetite.cli._progress import PhaseProgress, counting_progress
from bpetite.cli._reading import add_budget_arguments, reading_of
from bpetite.corpus import DatasetSplit
from bpetite.errors import InvalidUtf8Error, ParameterError

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "dataset",
        summary="encode UTF-8 files or Parquet shards into token arrays (nanoGPT's "
        "train.bin, llm.c's shards)",
        description=(
            "Encode every document (each UTF-8 file, directories recursively, sorted; '-' "
            "for stdin; each row of a Parquet file's --text-column) into one flat "
            "little-endian array of token ids, each document followed by a separator "
            "(or preceded by --bos), as numpy.memmap(path, dtype=..., mode='r') reads it; "
            "or, with --format llmc, llm.c's and modded-nanogpt's layout (a 256 x int32 "
            "header: 20240520, 1, the token count; then uint16 ids); --shard-tokens cuts "
            "each split into files of exactly N tokens. Beside every array, ARRAY.json "
            "records the dtype, the token and document counts, each document's offset, "
            "the model's sha256 and the options. Text that looks like a special token is "
            "encoded as text. Runs in parallel and streams the files; the output is the "
            "same for any --workers. Nothing is left behind on a failure or Ctrl-C."
        ),
        examples=[
            "bpetite dataset --model tok.json --input corpus/ --output train.bin",
            "bpetite dataset --model tok.json --input corpus/ --output data/train.bin "
            "--val-fraction 0.1",
            "cat book.txt | bpetite dataset --model tok.json --input - --output book.bin",
            "bpetite dataset --model tok.json --input TinyStories-train.txt "
            "--doc-delimiter '<|endoftext|>' --val-fraction 0.01 --output train.bin",
            "bpetite dataset --model tok.json --input shard_*.parquet --bos '<|bos|>' "
            "--format llmc --shard-tokens 100000000 --val-shards 1 "
            "--output 'fineweb_train_{shard}.bin' --val-output 'fineweb_val_{shard}.bin'",
        ],
    )
    add_model_argument(parser)
    parser.add_argument(
        "--input",
        nargs="+",
        required=True,
        metavar="PATH",
        help="UTF-8 files, Parquet files or directories (every regular file under them, "
        "sorted); '-' for stdin. Each text file is one document (or many, with "
        "--doc-delimiter), each row of a Parquet file's --text-column another (Parquet is "
        "known by its content and needs the bpetite[parquet] extra)",
    )
    parser.add_argument(
        "--output",
        required=True,
        metavar="PATH",
        help="the array to write, e.g. train.bin; with --shard-tokens a name holding {shard} "
        "(its number, six digits), e.g. 'train_{shard}.bin'",
    )
    parser.add_argument(
        "--format",
        choices=("bin", "llmc"),
        default="bin",
        help="bin: a flat array of ids (nanoGPT's); llmc: llm.c's and modded-nanogpt's .bin "
        "shards, a 256 x int32 header (magic 20240520, version 1, token count) then uint16 "
        "ids",
    )
    parser.add_argument(
        "--shard-tokens",
        type=positive_int,
        metavar="N",
        help="cut each split into shards of exactly N tokens (the last one shorter; a "
        "document may span two), named by --output and --val-output with {shard}",
    )
    parser.add_argument(
        "--dtype",
        choices=("auto", "uint16", "uint32"),
        default="auto",
        help="id type: auto is uint16 when every id of the model fits, else uint32; an id "
        "that does not fit a forced dtype is an error",
    )
    parser.add_argument(
        "--bos",
        metavar="TOKEN",
        help="a token written before each document, as nanochat does (e.g. '<|bos|>'); "
        "with it, no separator is written unless --separator is given",
    )
    separator = parser.add_mutually_exclusive_group()
    separator.add_argument(
        "--separator",
        default=None,
        metavar="TOKEN",
        help=f"the token written after each document (default: {END_OF_TEXT_TOKEN}, or "
        "none with --bos)",
    )
    separator.add_argument(
        "--no-separator", action="store_true", help="write documents back to back"
    )
    parser.add_argument(
        "--val-fraction",
        type=_fraction,
        default=0.0,
        metavar="F",
        help="also write a validation array from this share of the documents, spread "
        "evenly and deterministically (document i when floor((i+1)F) > floor(iF)); rows of "
        "a single Parquet file are documents too, and so are the documents "
        "--doc-delimiter cuts a single text file into",
    )
    parser.add_argument(
        "--val-shards",
        type=positive_int,
        metavar="K",
        help="with --shard-tokens: the first K shards are the validation split (llm.c's "
        "first shard is), instead of --val-fraction",
    )
    parser.add_argument(
        "--val-output",
        metavar="PATH",
        help="the validation array (default: val.bin beside --output; with --shard-tokens "
        "val_{shard}.bin)",
    )
    add_budget_arguments(parser)
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="processes that encode in parallel (default: one per CPU); the output is the same",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster (a scheduler's address, or 'local' for a cluster of "
        "processes here), one task per file; inputs and the output's directory must be "
        "shared paths. Needs the bpetite[dask] extra",
    )
    parser.add_argument("--force", action="store_true", help="replace existing outputs")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Every check that can fail fast runs before the corpus is read.
    tokenizer = model_from_args(args)  # one clear line for a missing or corrupt model
    model = library_model(args.model, tokenizer)  # by path, so the manifest names it
    output = Path(args.output)
    outputs = [output]
    if args.val_fraction or args.val_shards:
        default_val = "val_{shard}.bin" if args.shard_tokens else "val.bin"
        outputs.append(Path(args.val_output) if args.val_output else output.with_name(default_val))
    elif args.val_output:
        raise CliError("--val-output needs --val-fraction (or --val-shards)")
    if args.val_shards and not args.shard_tokens:
        raise CliError("--val-shards needs --shard-tokens")
    if args.val_shards and args.val_fraction:
        raise CliError("give --val-fraction (by document) or --val-shards (by shard), not both")
    if args.shard_tokens:
        for path in outputs:
            if "{shard}" not in path.name:
                raise CliError(
                    f"with --shard-tokens, each output name must hold {{shard}} (the shard's "
                    f"number goes there), e.g. 'train_{{shard}}.bin'; got '{shown(str(path))}'"
                )
    for path in args.input:
        if path != "-" and not Path(path).exists():
            raise CliError(f"--input '{shown(path)}' does not exist")
    if not args.shard_tokens:  # shards are named once counted: the library checks those
        inputs = [("--input", path) for path in args.input] + [("--model", args.model)]
        given = [args.output, args.val_output or str(outputs[-1])][: len(outputs)]
        for path, option in zip(given, ("--output", "--val-output"), strict=False):
            for name, label in ((path, option), (f"{path}.json", f"the manifest of {option}")):
                check_output_path(name, force=args.force, option=label, inputs=inputs)
    reading = reading_of(args)
    separator = args.separator
    if separator is None and args.bos is None:
        separator = END_OF_TEXT_TOKEN
    if args.no_separator:
        separator = None
    # What standard input starts with, to name it if it is no text (it is read only once).
    stdin = peek_stdin() if "-" in args.input else None
    refuse_named_binaries(args.input, stdin)  # a token file or UTF-16 can decode as UTF-8

    started = time.perf_counter()
    with ExitStack() as stack:
        client = stack.enter_context(cluster(args.dask, args.workers))
        phase = stack.enter_context(PhaseProgress("encode", "bytes", stream=sys.stderr))
        stack.enter_context(writing_output("--output", args.output))  # a full disk
        try:
            result = write_dataset(
                args.input,
                output,
                model,
                dtype=None if args.dtype == "auto" else args.dtype,
                separator=separator,
                bos=args.bos,
                val_fraction=args.val_fraction,
                val_output=outputs[1] if len(outputs) > 1 else None,
                file_format=args.format,
                shard_tokens=args.shard_tokens,
                val_shards=args.val_shards or 0,
                text_column=reading.text_column,
                doc_delimiter=reading.doc_delimiter,
                max_chars=reading.max_chars,
                doc_cap=reading.doc_cap,
                workers=args.workers,
                overwrite=args.force,
                progress=counting_progress(phase),
                dask=client,
            )
        except InvalidUtf8Error as error:
            raise invalid_utf8(error, stdin if error.source == "-" else None, tables=True) from None
        except ImportError as error:  # pyarrow, for a Parquet input
            raise CliError(str(error)) from None
        except ParameterError as error:  # name the flag that fixes it
            message = str(error).replace(WIDER_DTYPE, "use --dtype uint32")
            for keyword, flag in _FLAGS.items():
                message = message.replace(keyword, flag)
            if message.startswith("'-' "):
                message = "standard input " + message.removeprefix("'-' ")
            raise CliError(message) from None
        except FileExistsError as error:
            if args.shard_tokens:  # the library names the shard, or the files like shards
                raise CliError(str(error).replace("overwrite=True", "--force")) from None
            raise CliError(exists_message("--output", str(error.filename or args.output))) from None
    summary: dict[str, object] = {
        "dtype": result.train.dtype,
        "format": args.format,
        "input_bytes": result.input_bytes,
        "train": _split_summary(result.train, sharded=bool(args.shard_tokens)),
    }
    if result.val is not None:
        summary["val"] = _split_summary(result.val, sharded=bool(args.shard_tokens))
    summary["elapsed_ms"] = round((time.perf_counter() - started) * 1000)
    write_json(summary)
    return 0


#: The library's keywords in its messages, and the flags that set them here.
_FLAGS: Final = {
    "text_column (--text-column)": "--text-column",
    SHARD_HINT: "pass --shard-tokens to cut it into shards",
    "val_fraction": "--val-fraction",
    "val_shards": "--val-shards",
    "shard_tokens": "--shard-tokens",
    "overwrite=True": "--force",
    "file_format": "--format",
    "a doc_delimiter": "--doc-delimiter",
    "doc_delimiter": "--doc-delimiter",
}


def _split_summary(split: DatasetSplit, *, sharded: bool) -> dict[str, object]:
    summary: dict[str, object] = {"path": split.path}
    if sharded:
        summary["shards"] = list(split.paths)
    summary["tokens"] = split.tokens
    summary["documents"] = split.documents
    return summary


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid fraction: '{text}'") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1, got {text}")
    return value
