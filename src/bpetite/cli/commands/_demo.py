"""``bpetite demo``: train, save, reload, encode a sentence and show the tokens.

It needs no download and no argument: by default it trains on TinyShakespeare, which
ships inside the package (gzipped), so every machine trains on the same text and gets
the same artifact. ``--input`` trains on another file instead. Without ``--output`` the
artifact lives in a temporary directory only while it is saved and loaded back, and
that directory is removed however the command ends.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite import Tokenizer, count_chunks
from bpetite.cli._errors import CliError
from bpetite.cli._files import check_output_path, load_model, save_model
from bpetite.cli._inputs import check_argument_text, read_input_text
from bpetite.cli._output import is_terminal, note, stderr_console, write_json
from bpetite.cli._parser import add_command, check_vocab_size, vocab_size
from bpetite.cli._progress import PhaseProgress, training_progress
from bpetite.cli._render import pieces_of, render_for_terminal
from bpetite.visualize import render_plain

if TYPE_CHECKING:
    from rich.console import Console

    from bpetite.cli._parser import Subparsers

#: The default corpus: TinyShakespeare, gzipped, inside the package (``bpetite/_data/``).
PACKAGED_CORPUS = ("_data", "tinyshakespeare.txt.gz")
#: How the summary and the narration name the default corpus.
PACKAGED_CORPUS_NAME = "TinyShakespeare (built in)"
DEFAULT_VOCAB_SIZE = 4096
DEFAULT_TEXT = "To be, or not to be: that is the question. 🤔 Naïve café!<|endoftext|>"


@dataclass(frozen=True, slots=True)
class Corpus:
    """Training text and where it came from."""

    source: str
    text: str
    size_bytes: int


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "demo",
        summary="train, save, reload and encode a sample: bpetite in one command",
        description=(
            "Train a tokenizer, save it, load it back, encode a sample sentence and show "
            "its tokens, the compression (bytes per token) and the roundtrip check. The "
            "corpus is --input, else TinyShakespeare, which ships with bpetite (no "
            "download needed). Without --output the artifact is saved in a temporary "
            "directory and removed at the end. A JSON summary goes to stdout."
        ),
        examples=[
            "bpetite demo",
            "bpetite demo --input data/tinyshakespeare.txt --vocab-size 4096 --output demo.json",
            'bpetite demo --text "How many tokens is this?"',
        ],
    )
    parser.add_argument(
        "--input",
        metavar="PATH",
        help="UTF-8 corpus to train on; '-' for stdin (default: the built-in TinyShakespeare)",
    )
    parser.add_argument(
        "--vocab-size",
        type=vocab_size,
        default=DEFAULT_VOCAB_SIZE,
        metavar="N",
        help=f"mergeable vocabulary size (default: {DEFAULT_VOCAB_SIZE})",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="where to save the artifact (default: a temporary file, removed at the end)",
    )
    parser.add_argument("--force", action="store_true", help="replace --output if it exists")
    parser.add_argument(
        "--text", default=DEFAULT_TEXT, metavar="TEXT", help="the sentence to encode"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_vocab_size(args.vocab_size)
    text = check_argument_text(args.text, "--text")
    if args.output is not None:
        inputs = [args.input] if args.input is not None else []
        check_output_path(args.output, force=args.force, inputs=inputs)
    terminal = is_terminal(sys.stderr)
    console = stderr_console() if terminal else None
    say = _Reporter(console)

    corpus = find_corpus(args.input)
    say.title("bpetite demo")
    say.line(f"corpus: {corpus.source}, {corpus.size_bytes} bytes")
    with PhaseProgress("train", "merges", terminal=terminal) as phase:
        trained = Tokenizer.train_from_counts(
            count_chunks([corpus.text]), args.vocab_size, progress=training_progress(phase)
        )

    if args.output is None:
        # Removed on the way out, whatever happens: an error, Ctrl-C, or success.
        with tempfile.TemporaryDirectory(prefix="bpetite-demo-") as directory:
            tokenizer, size = _save_and_reload(trained, Path(directory) / "tokenizer.json")
        say.line(
            f"saved the artifact ({size} bytes) to a temporary directory, loaded it back "
            f"and removed it; pass --output PATH to keep it"
        )
    else:
        tokenizer, size = _save_and_reload(trained, Path(args.output), force=args.force)
        say.line(f"saved {args.output} ({size} bytes) and loaded it back")

    ids = tokenizer.encode(text)
    if ids != trained.encode(text):
        raise CliError(f"the reloaded tokenizer encodes {text!r} differently from the trained one")
    roundtrip = tokenizer.decode(ids) == text
    if not roundtrip:
        raise CliError(f"roundtrip failed: decode(encode({text!r})) gave different text")
    text_bytes = len(text.encode("utf-8"))
    # No tokens for no bytes is no ratio at all: null, as inspect reports it.
    bytes_per_token = round(text_bytes / len(ids), 2) if ids else None

    say.line(f"text: {text!r}")
    say.tokens(tokenizer, ids)
    ratio = (
        "an empty text has no bytes per token"
        if bytes_per_token is None
        else f"{bytes_per_token:.2f} bytes per token (one byte per token before training)"
    )
    say.line(f"{len(ids)} tokens for {text_bytes} bytes: {ratio}")
    say.line("roundtrip: decode(encode(text)) == text: ok")

    write_json(
        {
            "artifact": args.output,
            "corpus": corpus.source,
            "corpus_bytes": corpus.size_bytes,
            "requested_vocab_size": args.vocab_size,
            "actual_mergeable_vocab_size": tokenizer.mergeable_vocab_size,
            "text": text,
            "ids": ids,
            "tokens": len(ids),
            "bytes_per_token": bytes_per_token,
            "roundtrip": roundtrip,
        }
    )
    return 0


def _save_and_reload(
    trained: Tokenizer, path: Path, *, force: bool = False
) -> tuple[Tokenizer, int]:
    """Save `trained` to `path`, load it back; the loaded tokenizer and the file's size."""
    save_model(trained, str(path), force=force)
    return load_model(str(path)), path.stat().st_size


def find_corpus(input_path: str | None) -> Corpus:
    """--input when given, else the TinyShakespeare that ships with bpetite."""
    if input_path is None:
        return packaged_corpus()
    text = read_input_text(input_path, "--input")
    name = "standard input" if input_path == "-" else input_path
    return Corpus(source=name, text=text, size_bytes=len(text.encode("utf-8")))


def packaged_corpus() -> Corpus:
    """TinyShakespeare from the package's data: the same text on every machine.

    Read through ``importlib.resources``, so it works from a wheel, a zip or a source
    tree alike; never from the working directory or the network.
    """
    resource = resources.files("bpetite")
    for part in PACKAGED_CORPUS:
        resource = resource / part
    data = gzip.decompress(resource.read_bytes())
    return Corpus(source=PACKAGED_CORPUS_NAME, text=data.decode("utf-8"), size_bytes=len(data))


class _Reporter:
    """The demo's narration on stderr: rich on a terminal, plain ``demo:`` lines elsewhere."""

    def __init__(self, console: Console | None) -> None:
        self._console = console

    def title(self, text: str) -> None:
        if self._console is not None:
            self._console.rule(f"[bold]{text}")

    def line(self, text: str) -> None:
        if self._console is not None:
            self._console.print(text, markup=False)
        else:
            note(f"demo: {text}")

    def tokens(self, tokenizer: Tokenizer, ids: Sequence[int]) -> None:
        pieces = pieces_of(tokenizer, ids)
        console = self._console
        if console is None or console.no_color or console.color_system is None:
            # Without colour the boundaries would vanish: '|' between tokens instead.
            shown = render_plain(pieces).rstrip("\n")
            self.line(f"tokens: {shown}")
            return
        console.file.write("tokens: " + render_for_terminal(pieces, console.color_system))
        console.file.flush()
