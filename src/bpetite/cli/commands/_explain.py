"""``bpetite explain``: every decision BPE makes, for one text or one small training run."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bpetite import PRESETS
from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._files import add_model_argument, check_output_path, load_model, write_file
from bpetite.cli._formats import describe_input
from bpetite.cli._inputs import check_argument_text, read_input_text
from bpetite.cli._output import is_terminal, note, write_result
from bpetite.cli._parser import (
    add_command,
    check_max_token_bytes,
    check_vocab_size,
    positive_int,
    vocab_size,
)
from bpetite.cli._render import render_for_terminal
from bpetite.reference import EncodeStep, TrainStep, render_trace, show
from bpetite.visualize import (
    MAX_TRAIN_BYTES,
    MAX_TRAIN_VOCAB,
    Explanation,
    TokenPiece,
    explain_encode,
    explain_train,
    make_piece,
)

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "explain",
        summary="show every step BPE takes on a text, or every merge of a small training run",
        description=(
            "With --model: encode a text and print, for each chunk, its split into bytes, "
            "then every merge applied in rank order (the pair, its rank, the tokens after "
            "it), ending with the ids encode gives. With --train: learn merges from a "
            f"small corpus (at most {MAX_TRAIN_BYTES:,} bytes, --vocab-size at most "
            f"{MAX_TRAIN_VOCAB:,}) and print each merge: the pair and its count, the "
            "runners-up or the tie-break that decided, the new token, and the corpus's "
            "token count after it. Coloured on a terminal, plain elsewhere; a one-line "
            "summary goes to stderr. --html writes a self-contained page instead, to "
            "step through the merges with the keyboard (no script, no network)."
        ),
        examples=[
            'bpetite explain --model tokenizer.json --text "Hello world 👋"',
            'bpetite explain --model cl100k_base --text "naïve café" --html encode.html',
            "bpetite explain --train --input notes.txt --vocab-size 300",
            "bpetite explain --train --input notes.txt --vocab-size 512 --html train.html",
        ],
    )
    parser.add_argument(
        "--train",
        action="store_true",
        help="explain a training run on --input (needs --vocab-size) instead of an encode",
    )
    add_model_argument(
        parser,
        required=False,
        help="the model to explain an encode with (a path or a built-in name)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", metavar="TEXT", help="the text to explain")
    source.add_argument(
        "--input", metavar="PATH", help="a UTF-8 file (the text, or the corpus); '-' for stdin"
    )
    parser.add_argument(
        "--vocab-size",
        type=vocab_size,
        metavar="N",
        help=f"with --train: the vocabulary to learn, 256 to {MAX_TRAIN_VOCAB:,}",
    )
    parser.add_argument(
        "--pattern",
        choices=tuple(PRESETS),
        help="with --train: the split pattern preset (default gpt2)",
    )
    parser.add_argument(
        "--max-token-bytes",
        type=positive_int,
        metavar="N",
        help="with --train: never make a token longer than N bytes (at least 2)",
    )
    parser.add_argument(
        "--min-frequency",
        type=positive_int,
        metavar="N",
        help="with --train: stop when the best pair occurs fewer than N times",
    )
    parser.add_argument(
        "--html", metavar="PATH", help="write the page to step through to PATH instead"
    )
    parser.add_argument("--force", action="store_true", help="replace the --html file if it exists")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours on stdout: 'auto' (default) uses them on a terminal unless NO_COLOR is set",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    _check_combination(args)
    if args.html is not None:
        inputs = [path for path in (args.model, args.input) if path is not None]
        check_output_path(args.html, force=args.force, option="--html", inputs=inputs)
    explanation = _train(args) if args.train else _encode(args)

    if args.html is not None:
        write_file(
            args.html, explanation.to_html().encode("utf-8"), force=args.force, option="--html"
        )
        note(f"{explanation.summary()}; wrote '{shown(args.html)}'")
        return 0
    if _use_colour(args.color, sys.stdout):
        from rich.console import Console

        detected = Console(file=sys.stdout, force_terminal=True).color_system
        lines = list(_coloured_lines(explanation, detected))
    else:
        lines = [render_trace(explanation.steps)] if explanation.steps else []
    if explanation.kind == "encode":
        lines.append(f"ids: {list(explanation.ids)}")
    write_result(("\n".join(lines) + "\n").encode("utf-8") if lines else b"")
    note(explanation.summary())
    return 0


def _check_combination(args: argparse.Namespace) -> None:
    """The options each mode takes; a mix is a usage error named by its flag."""
    if args.train:
        if args.model is not None:
            raise CliError("--train learns its own merges: drop --model")
        if args.vocab_size is None:
            raise CliError("--train needs --vocab-size N, the vocabulary to learn")
        check_vocab_size(args.vocab_size)  # at least 256, as for 'bpetite train'
        if args.vocab_size > MAX_TRAIN_VOCAB:
            raise CliError(
                f"--vocab-size must be at most {MAX_TRAIN_VOCAB:,} to explain a training run, "
                f"got {args.vocab_size:,}: train larger vocabularies with 'bpetite train'"
            )
        check_max_token_bytes(args.max_token_bytes)
        if args.input is None:
            raise CliError("--train reads its corpus from --input FILE ('-' for stdin)")
        return
    if args.model is None:
        raise CliError("give --model PATH to explain an encode, or --train to explain training")
    for flag, value, used in (
        ("--vocab-size", args.vocab_size, "merges"),
        ("--pattern", args.pattern, "split pattern"),
        ("--max-token-bytes", args.max_token_bytes, "merges"),
        ("--min-frequency", args.min_frequency, "merges"),
    ):
        if value is not None:
            raise CliError(f"{flag} is for --train; an encode uses the model's {used}")


def _encode(args: argparse.Namespace) -> Explanation:
    tokenizer = load_model(
        args.model, trust_custom_pattern=args.trust_custom_pattern, max_bytes=args.max_model_bytes
    )
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
        source = "text from --text"
    else:
        text = read_input_text(args.input)
        source = describe_input(args.input)
    return explain_encode(tokenizer, text, title=f"{source}, model '{shown(args.model)}'")


def _train(args: argparse.Namespace) -> Explanation:
    if args.input != "-":
        path = Path(args.input)
        if path.is_file() and path.stat().st_size > MAX_TRAIN_BYTES:
            raise CliError(
                f"--input '{shown(args.input)}' has {path.stat().st_size:,} bytes; --train "
                f"explains corpora of at most {MAX_TRAIN_BYTES:,} bytes: give a sample, or "
                "train with 'bpetite train'"
            )
    text = read_input_text(args.input)
    return explain_train(
        text,
        args.vocab_size,
        pattern=args.pattern or "gpt2",
        max_token_bytes=args.max_token_bytes,
        min_frequency=args.min_frequency,
        title=f"{describe_input(args.input)}, vocab size {args.vocab_size}",
    )


def _use_colour(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    return is_terminal(stream) and not os.environ.get("NO_COLOR")


def _coloured_lines(explanation: Explanation, detected: str | None) -> Iterator[str]:
    """The plain lines, with each step's tokens drawn in colour as ``show`` draws them."""
    vocab: dict[int, bytes] = {}
    for step in explanation.steps:
        if isinstance(step, TrainStep):
            line = render_trace([step])
            head, _, rest = line.partition(f" -> {step.new_id} ")
            token = _draw(detected, [make_piece(step.new_id, step.token)])
            shown_token = show(step.token)
            yield f"{head} -> {step.new_id} {token}{rest.removeprefix(shown_token)}"
            continue
        assert isinstance(step, EncodeStep)
        vocab.update(zip(step.tokens, step.pieces, strict=True))
        pieces = [
            make_piece(token, data, special=step.special)
            for token, data in zip(step.tokens, step.pieces, strict=True)
        ]
        if step.special:
            yield f"special {show(step.chunk)} -> {step.tokens[0]}  {_draw(detected, pieces)}"
        elif step.rank is None:
            yield f"chunk {show(step.chunk)}: {_draw(detected, pieces)}"
        else:
            assert step.new_id is not None and step.pair is not None
            token = show(vocab[step.new_id])
            yield (
                f"  merge {step.rank}: {step.pair} -> {step.new_id} {token} gives "
                f"{_draw(detected, pieces)}"
            )


def _draw(detected: str | None, pieces: list[TokenPiece]) -> str:
    return render_for_terminal(pieces, detected).rstrip("\n")
