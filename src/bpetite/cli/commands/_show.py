"""``bpetite show``: see where the token boundaries fall, in the terminal or as an HTML page."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from bpetite._internal import shown
from bpetite.cli._files import add_model_argument, check_output_path, model_from_args, write_file
from bpetite.cli._formats import describe_input
from bpetite.cli._inputs import check_argument_text, read_input_text
from bpetite.cli._output import is_terminal, note, write_result
from bpetite.cli._parser import add_command
from bpetite.cli._render import render_for_terminal, text_pieces
from bpetite.visualize import TokenPiece, render_html, render_plain, summarize

if TYPE_CHECKING:
    from bpetite.cli._parser import Subparsers


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "show",
        summary="show the token boundaries of a text",
        description=(
            "Encode a text and show every token: on a terminal with alternating background "
            "colours, elsewhere as plain text with tokens separated by '|' ('|' and '\\' "
            "inside a token are escaped with '\\'). Spaces show as '·', tabs as '→', "
            "newlines as '↵', carriage returns as '␍', other control characters as their "
            "Unicode control pictures (escape as '␛', so it is shown, never run), other "
            "invisible characters (zero-width, bidi, exotic spaces, C1 controls) as "
            "⟨U+XXXX⟩, as are noncharacters such as U+FFFF, and a token that is only part "
            "of a UTF-8 character as its bytes in hex, ⟨f0 9f⟩. The rendering goes to "
            "stdout; the token count and bytes per token to stderr. With --html, a "
            "self-contained page is written instead (nothing on stdout)."
        ),
        examples=[
            'bpetite show --model tokenizer.json --text "Hello world 👋"',
            "bpetite show --model tokenizer.json --input notes.txt --ids",
            "bpetite show --model tokenizer.json --input notes.txt --html tokens.html",
        ],
    )
    add_model_argument(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", metavar="TEXT", help="the text to show")
    source.add_argument(
        "--input", metavar="PATH", help="a UTF-8 file to show byte for byte; '-' for stdin"
    )
    parser.add_argument("--ids", action="store_true", help="print each token's id after it")
    parser.add_argument(
        "--html", metavar="PATH", help="write a self-contained HTML page to PATH instead"
    )
    parser.add_argument("--force", action="store_true", help="replace the --html file if it exists")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours on stdout: 'auto' (default) uses them on a terminal unless NO_COLOR "
        "is set; 'never' gives the plain '|' form",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.html is not None:
        inputs = [args.model] + ([args.input] if args.input is not None else [])
        check_output_path(args.html, force=args.force, option="--html", inputs=inputs)
    tokenizer = model_from_args(args)
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
        source = "text from --text"
    else:
        text = read_input_text(args.input)
        source = describe_input(args.input)
    pieces = text_pieces(tokenizer, text)
    summary = summarize(pieces)

    if args.html is not None:
        page = render_html(pieces, source=f"{source}, model '{args.model}'", show_ids=args.ids)
        write_file(args.html, page.encode("utf-8"), force=args.force, option="--html")
        note(f"{summary.describe()}; wrote '{shown(args.html)}'")
        return 0

    if _use_colour(args.color, sys.stdout):
        _print_ansi(pieces, show_ids=args.ids, stream=sys.stdout)
    else:
        write_result(render_plain(pieces, show_ids=args.ids).encode("utf-8"))
    note(summary.describe())
    return 0


def _use_colour(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    # Without colour the backgrounds vanish and so would the boundaries: fall back to '|'.
    return is_terminal(stream) and not os.environ.get("NO_COLOR")


def _print_ansi(pieces: Sequence[TokenPiece], *, show_ids: bool, stream: TextIO) -> None:
    """Ask rich what the terminal supports (COLORTERM, TERM), then write the rendering."""
    from rich.console import Console

    detected = Console(file=stream, force_terminal=True).color_system
    rendered = render_for_terminal(pieces, detected, show_ids=show_ids)
    write_result(rendered.encode("utf-8"))
