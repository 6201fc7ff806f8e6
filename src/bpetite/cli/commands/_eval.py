"""``bpetite eval``: compare tokenizers' compression on texts (nanochat's ``tok_eval``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite import Tokenizer, evaluate_compression
from bpetite._internal import MAX_ARTIFACT_BYTES
from bpetite.cli._errors import CliError
from bpetite.cli._files import MODEL_HELP, check_output_path, load_model, write_file
from bpetite.cli._formats import STDIN
from bpetite.cli._inputs import read_input_text
from bpetite.cli._output import is_terminal, note, stderr_console, write_json
from bpetite.cli._parser import add_command, positive_int
from bpetite.visualize import CompressionReport

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "eval",
        summary="compare tokenizers' compression on texts",
        description=(
            "Encode every --input text with every --model (special-token text is read as "
            "text) and report bytes per token, tokens per word (whitespace-separated "
            "words) and the token count relative to the first model, per text and "
            "overall: a table on stderr, JSON on stdout, and with --html a self-contained "
            "page with a bar chart per text. A model is a bpetite artifact, a "
            "tokenizer.json or .tiktoken file that 'bpetite import' accepts, or the name "
            "of a built-in vocabulary (cl100k_base, o200k_base...)."
        ),
        examples=[
            "bpetite eval --model mine.json --model cl100k_base --input sample.txt",
            "bpetite eval --model a.json --model b.json --input texts/ --html report.html",
        ],
    )
    parser.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="PATH|NAME",
        help="a model to compare; repeat for each (the first is the ratio's baseline). A "
        + MODEL_HELP,
    )
    parser.add_argument(
        "--trust-custom-pattern",
        action="store_true",
        help="load models whose split pattern is a custom regex (it runs on every text "
        "encoded): only for models from a source you trust",
    )
    parser.add_argument(
        "--max-model-bytes",
        type=positive_int,
        default=MAX_ARTIFACT_BYTES,
        metavar="N",
        help=f"load model files of up to N bytes (default {MAX_ARTIFACT_BYTES:,})",
    )
    parser.add_argument(
        "--input",
        nargs="+",
        required=True,
        metavar="PATH",
        help="UTF-8 texts (a directory means every regular file under it, sorted); '-' "
        "for stdin. Each is read whole",
    )
    parser.add_argument("--html", metavar="PATH", help="also write a self-contained HTML page")
    parser.add_argument("--force", action="store_true", help="replace the --html file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    inputs = _inputs(args.input)
    if args.html is not None:
        read = [*args.model, *(path for _, path in inputs)]
        check_output_path(args.html, force=args.force, option="--html", inputs=read)
    models = [(_model_name(path, args.model), _load(path, args)) for path in args.model]
    texts = [(name, read_input_text(path)) for name, path in inputs]
    report = evaluate_compression(models, texts)
    if args.html is not None:
        write_file(args.html, report.to_html().encode("utf-8"), force=args.force, option="--html")
    _print_table(report)
    write_json(report.to_json())
    return 0


def _model_name(path: str, paths: list[str]) -> str:
    """The file name, or the whole path when two models share a file name."""
    name = Path(path).name
    return name if sum(Path(other).name == name for other in paths) == 1 else path


def _load(path: str, args: argparse.Namespace) -> Tokenizer:
    """A bpetite artifact, or failing that a vocabulary file ``bpetite import`` reads."""
    trust, limit = args.trust_custom_pattern, args.max_model_bytes
    if not Path(path).is_file():
        return load_model(path)  # its message for a missing file or a directory
    try:
        return Tokenizer.load(path, trust_custom_pattern=trust, max_bytes=limit)
    except (KeyError, ValueError):  # not an artifact (the loader's errors are ValueErrors)
        pass
    from bpetite.interop import InteropError, import_vocabulary

    try:
        return import_vocabulary([path]).tokenizer
    except (InteropError, ValueError):  # not a vocabulary either: the artifact's own error
        return load_model(path, trust_custom_pattern=trust, max_bytes=limit)


def _inputs(paths: list[str]) -> list[tuple[str, str]]:
    """(name, path) per text: files as given, directories expanded to their files, sorted."""
    if sum(path == STDIN for path in paths) > 1:
        raise CliError("--input '-' (standard input) can be given only once")
    found: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if raw != STDIN and path.is_dir():
            files = sorted(
                (p for p in path.rglob("*") if p.is_file() and not p.is_symlink()),
                key=lambda p: p.parts,
            )
            if not files:
                raise CliError(f"--input '{raw}' is a directory with no files in it")
            found += [(str(file), str(file)) for file in files]
        else:
            found.append(("stdin" if raw == STDIN else raw, raw))
    return found


def _print_table(report: CompressionReport) -> None:
    """A rich table on a terminal, aligned plain text anywhere else (both on stderr)."""
    columns, *rows = report.table()
    if is_terminal(sys.stderr):
        from rich.table import Table
        from rich.text import Text

        table = Table(title="compression (bytes/token: higher is better)")
        for index, column in enumerate(columns):
            table.add_column(column, justify="left" if index < 2 else "right")
        for row in rows:
            table.add_row(*map(Text, row))  # a name is text, never rich markup
        stderr_console().print(table)
        return
    widths = [max(len(row[i]) for row in [columns, *rows]) for i in range(len(columns))]
    for row in [columns, *rows]:
        cells = [
            cell.ljust(width) if index < 2 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        note("  ".join(cells).rstrip())
