"""``bpetite demo``: train, save, reload, encode a sentence and show the tokens.

It needs no download and no argument: it trains on TinyShakespeare when it can find
it, and otherwise on Python source code from the standard library of the running
interpreter, which every Python installation has. The corpus is read where it lies;
nothing is copied into the project.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bpetite import Tokenizer
from bpetite._constants import END_OF_TEXT_TOKEN
from bpetite._pretokenizer import count_chunks
from bpetite._trainer import check_vocab_size
from bpetite._visualize import TokenPiece, render_plain, token_pieces
from bpetite.cli import CliError
from bpetite.cli._common import (
    PhaseProgress,
    add_command,
    check_argument_text,
    check_output_path,
    is_terminal,
    load_model,
    read_input_text,
    save_model,
    stderr_console,
    training_progress,
    write_json,
)

if TYPE_CHECKING:
    from rich.console import Console

    from bpetite.cli._common import Subparsers

#: Where the demo looks for TinyShakespeare when --input is not given, in order,
#: relative to the working directory (after $BPETITE_CORPUS).
CORPUS_CANDIDATES = ("data/tinyshakespeare.txt", "../shared/data/tinyshakespeare.txt")
#: The built-in corpus stops growing once it holds this many bytes.
STDLIB_CORPUS_BYTES = 1_000_000
DEFAULT_VOCAB_SIZE = 4096
DEFAULT_TEXT = f"To be, or not to be: that is the question. 🤔 Naïve café!{END_OF_TEXT_TOKEN}"


@dataclass(frozen=True, slots=True)
class Corpus:
    """Training text and where it came from; several texts never share a chunk."""

    source: str
    texts: tuple[str, ...]
    size_bytes: int


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "demo",
        summary="train, save, reload and encode a sample: bpetite in one command",
        description=(
            "Train a tokenizer, save it, load it back, encode a sample sentence and show "
            "its tokens, the compression (bytes per token) and the roundtrip check. The "
            "corpus is --input, else $BPETITE_CORPUS, else data/tinyshakespeare.txt or "
            "../shared/data/tinyshakespeare.txt, else Python's own standard-library "
            "sources (no download needed). A JSON summary goes to stdout."
        ),
        examples=[
            "bpetite demo",
            "bpetite demo --input data/tinyshakespeare.txt --vocab-size 4096 --output demo.json",
            'bpetite demo --text "How many tokens is this?"',
        ],
    )
    parser.add_argument("--input", metavar="PATH", help="UTF-8 corpus to train on; '-' for stdin")
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=DEFAULT_VOCAB_SIZE,
        metavar="N",
        help=f"mergeable vocabulary size (default: {DEFAULT_VOCAB_SIZE})",
    )
    parser.add_argument(
        "--output", metavar="PATH", help="where to save the artifact (default: a new temp dir)"
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
        check_output_path(args.output, force=args.force)
    terminal = is_terminal(sys.stderr)
    console = stderr_console() if terminal else None
    say = _Reporter(console)

    corpus = find_corpus(args.input)
    say.title("bpetite demo")
    say.line(f"corpus: {corpus.source}, {corpus.size_bytes} bytes")
    with PhaseProgress("train", "merges", terminal=terminal) as phase:
        trained = Tokenizer.train_from_counts(
            count_chunks(corpus.texts), args.vocab_size, progress=training_progress(phase)
        )

    artifact = args.output or str(Path(tempfile.mkdtemp(prefix="bpetite-demo-")) / "tokenizer.json")
    save_model(trained, artifact, force=args.force)
    tokenizer = load_model(artifact)
    say.line(f"saved {artifact} ({Path(artifact).stat().st_size} bytes) and loaded it back")

    ids = tokenizer.encode(text)
    if ids != trained.encode(text):
        raise CliError(f"the reloaded tokenizer encodes {text!r} differently from the trained one")
    roundtrip = tokenizer.decode(ids) == text
    if not roundtrip:
        raise CliError(f"roundtrip failed: decode(encode({text!r})) gave different text")
    text_bytes = len(text.encode("utf-8"))
    bytes_per_token = round(text_bytes / len(ids), 2) if ids else 0.0

    say.line(f"text: {text!r}")
    say.tokens(tokenizer, ids)
    say.line(
        f"{len(ids)} tokens for {text_bytes} bytes: {bytes_per_token:.2f} bytes per token "
        f"(one byte per token before training)"
    )
    say.line("roundtrip: decode(encode(text)) == text: ok")

    write_json(
        {
            "artifact": artifact,
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


def find_corpus(input_path: str | None) -> Corpus:
    """The first corpus that exists: --input, $BPETITE_CORPUS, the usual paths, the stdlib."""
    if input_path is not None:
        return _file_corpus(input_path, "--input")
    from_env = os.environ.get("BPETITE_CORPUS")
    if from_env:
        # A variable that names a missing file is a mistake worth reporting, not skipping.
        return _file_corpus(from_env, "BPETITE_CORPUS")
    for candidate in CORPUS_CANDIDATES:
        if Path(candidate).is_file():
            return _file_corpus(candidate, "--input")
    return stdlib_corpus()


def _file_corpus(path: str, option: str) -> Corpus:
    text = read_input_text(path, option)
    name = "standard input" if path == "-" else path
    return Corpus(source=name, texts=(text,), size_bytes=len(text.encode("utf-8")))


def stdlib_corpus(root: Path | None = None, limit_bytes: int = STDLIB_CORPUS_BYTES) -> Corpus:
    """Python source that ships with the interpreter: a corpus that is always there.

    The public top-level modules (``*.py`` not starting with ``_``) in name order,
    read as strict UTF-8 (a file that is not is skipped), until `limit_bytes` is
    reached. The same interpreter always gives the same corpus.
    """
    if root is None:
        root = Path(sysconfig.get_paths()["stdlib"])
    texts: list[str] = []
    size = 0
    for path in sorted(root.glob("*.py")):
        if size >= limit_bytes:
            break
        if path.name.startswith("_"):
            continue
        try:
            data = path.read_bytes()
            texts.append(data.decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        size += len(data)
    if not texts:
        raise CliError(
            f"no corpus found: pass --input PATH or set BPETITE_CORPUS (the standard "
            f"library sources under '{root}' are not available either)"
        )
    return Corpus(
        source=f"Python {sys.version_info.major}.{sys.version_info.minor} standard library "
        f"({len(texts)} modules from {root})",
        texts=tuple(texts),
        size_bytes=size,
    )


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
            print(f"demo: {text}", file=sys.stderr, flush=True)

    def tokens(self, tokenizer: Tokenizer, ids: Sequence[int]) -> None:
        special_ids = set(tokenizer.special_tokens.values())
        pieces = token_pieces(ids, tokenizer.vocab, special_ids)
        console = self._console
        if console is None or console.no_color or console.color_system is None:
            # Without colour the boundaries would vanish: '|' between tokens instead.
            shown = render_plain(pieces).rstrip("\n")
            self.line(f"tokens: {shown}")
            return
        console.file.write("tokens: " + _coloured(pieces, console.color_system))
        console.file.flush()


def _coloured(pieces: Sequence[TokenPiece], detected: str) -> str:
    """The pieces in colour exactly as ``bpetite show`` draws them, for this terminal."""
    from rich.color import ColorSystem

    from bpetite.cli._show import BASIC_THEME, RICH_THEME, render_ansi

    systems = {"256": ColorSystem.EIGHT_BIT, "truecolor": ColorSystem.TRUECOLOR}
    # Below 256 colours the pastel backgrounds collapse into one: use the basic theme.
    theme = RICH_THEME if detected in systems else BASIC_THEME
    return render_ansi(
        pieces, theme=theme, color_system=systems.get(detected, ColorSystem.STANDARD)
    )
