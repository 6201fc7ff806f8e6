"""``bpetite dataset``: encode a corpus into nanoGPT's ``train.bin`` (and ``val.bin``)."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite import InvalidUtf8Error, ParameterError, write_dataset
from bpetite._internal import END_OF_TEXT_TOKEN, WIDER_DTYPE, dask_client
from bpetite.cli._errors import CliError
from bpetite.cli._files import MODEL_HELP, builtin_model, check_output_path, load_model
from bpetite.cli._inputs import invalid_utf8
from bpetite.cli._output import exists_message, write_json
from bpetite.cli._parser import add_command, positive_int
from bpetite.cli._progress import PhaseProgress, counting_progress

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "dataset",
        summary="encode UTF-8 files into a flat array of token ids (nanoGPT's train.bin)",
        description=(
            "Encode every file (directories recursively, sorted; '-' for stdin) into one "
            "flat little-endian array of token ids, each document followed by a separator, "
            "as numpy.memmap(path, dtype=..., mode='r') reads it. Beside it, OUTPUT.json "
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
        ],
    )
    parser.add_argument("--model", required=True, metavar="PATH|NAME", help=MODEL_HELP)
    parser.add_argument(
        "--input",
        nargs="+",
        required=True,
        metavar="PATH",
        help="UTF-8 files or directories (every regular file under them, sorted); '-' for "
        "stdin. Each file is one document",
    )
    parser.add_argument(
        "--output", required=True, metavar="PATH", help="the array to write, e.g. train.bin"
    )
    parser.add_argument(
        "--dtype",
        choices=("auto", "uint16", "uint32"),
        default="auto",
        help="id type: auto is uint16 when every id of the model fits, else uint32; an id "
        "that does not fit a forced dtype is an error",
    )
    separator = parser.add_mutually_exclusive_group()
    separator.add_argument(
        "--separator",
        default=END_OF_TEXT_TOKEN,
        metavar="TOKEN",
        help=f"the token written after each document (default: {END_OF_TEXT_TOKEN})",
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
        "evenly and deterministically (document i when floor((i+1)F) > floor(iF))",
    )
    parser.add_argument(
        "--val-output",
        metavar="PATH",
        help="the validation array (default: val.bin beside --output)",
    )
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
    tokenizer = load_model(args.model)  # one clear line for a missing or corrupt model
    # A file is handed over by path (the manifest names it); a built-in as the tokenizer.
    model = tokenizer if builtin_model(args.model) else args.model
    output = Path(args.output)
    outputs = [output]
    if args.val_fraction:
        outputs.append(Path(args.val_output) if args.val_output else output.with_name("val.bin"))
    elif args.val_output:
        raise CliError("--val-output needs --val-fraction")
    for path in outputs:
        check_output_path(str(path), force=args.force)
        check_output_path(f"{path}.json", force=args.force)
    for path in args.input:
        if path != "-" and not Path(path).exists():
            raise CliError(f"--input '{path}' does not exist")

    started = time.perf_counter()
    with ExitStack() as stack:
        client = None
        if args.dask is not None:
            try:
                client = stack.enter_context(dask_client(args.dask, workers=args.workers))
            except ImportError as error:
                raise CliError(str(error)) from None
        phase = stack.enter_context(PhaseProgress("encode", "bytes", stream=sys.stderr))
        try:
            result = write_dataset(
                args.input,
                output,
                model,
                dtype=None if args.dtype == "auto" else args.dtype,
                separator=None if args.no_separator else args.separator,
                val_fraction=args.val_fraction,
                val_output=outputs[1] if len(outputs) > 1 else None,
                workers=args.workers,
                overwrite=args.force,
                progress=counting_progress(phase),
                dask=client,
            )
        except InvalidUtf8Error as error:
            raise invalid_utf8(error) from None
        except ParameterError as error:  # an id too large for --dtype uint16: name the flag
            raise CliError(str(error).replace(WIDER_DTYPE, "use --dtype uint32")) from None
        except FileExistsError as error:
            raise CliError(exists_message("--output", str(error.filename or args.output))) from None
    summary: dict[str, object] = {
        "dtype": result.train.dtype,
        "input_bytes": result.input_bytes,
        "train": {
            "path": result.train.path,
            "tokens": result.train.tokens,
            "documents": result.train.documents,
        },
    }
    if result.val is not None:
        summary["val"] = {
            "path": result.val.path,
            "tokens": result.val.tokens,
            "documents": result.val.documents,
        }
    summary["elapsed_ms"] = round((time.perf_counter() - started) * 1000)
    write_json(summary)
    return 0


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid fraction: '{text}'") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1, got {text}")
    return value
