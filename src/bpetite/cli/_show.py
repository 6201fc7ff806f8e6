"""``bpetite show``: see where the token boundaries fall, in the terminal or as an HTML page."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TextIO

from bpetite import Tokenizer
from bpetite._atomic import write_atomically
from bpetite._visualize import (
    PALETTE,
    PARTIAL_BACKGROUNDS,
    SPECIAL_BACKGROUNDS,
    TokenPiece,
    render_html,
    render_plain,
    summarize,
    token_pieces,
)
from bpetite.cli import CliError
from bpetite.cli._common import (
    add_command,
    check_argument_text,
    check_output_path,
    describe_input,
    is_terminal,
    load_model,
    read_input_text,
    write_stdout_bytes,
)

if TYPE_CHECKING:
    from rich.color import ColorSystem

    from bpetite.cli._common import Subparsers


@dataclass(frozen=True, slots=True)
class TerminalTheme:
    """Colours for the terminal rendering; text tokens cycle through `palette`."""

    palette: tuple[str, ...]
    text: str
    marker: str
    token_id: str
    partial: tuple[str, str]
    special: tuple[str, str]


#: Dark text on the HTML page's pastel backgrounds: readable on light and dark themes.
#: Rich maps them to the nearest of 256 colours where truecolor is missing, and the
#: four stay distinct there.
RICH_THEME: Final = TerminalTheme(
    palette=PALETTE,
    text="#1f2328",
    marker="#6e7781",
    token_id="#0550ae",
    partial=(
        f"bold #a40e26 on {PARTIAL_BACKGROUNDS[0]}",
        f"bold #a40e26 on {PARTIAL_BACKGROUNDS[1]}",
    ),
    special=(
        f"bold #ffffff on {SPECIAL_BACKGROUNDS[0]}",
        f"bold #ffffff on {SPECIAL_BACKGROUNDS[1]}",
    ),
)

#: For 16-colour terminals, where every pastel above collapses into bright white and
#: the boundaries would vanish.
BASIC_THEME: Final = TerminalTheme(
    palette=("bright_cyan", "bright_yellow", "bright_green", "bright_magenta"),
    text="black",
    marker="bright_black",
    token_id="blue",
    partial=("bold bright_white on red", "bold black on bright_red"),
    special=("bold bright_white on blue", "bold bright_white on bright_blue"),
)


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "show",
        summary="show the token boundaries of a text",
        description=(
            "Encode a text and show every token: on a terminal with alternating background "
            "colours, elsewhere as plain text with tokens separated by '|' ('|' and '\\' "
            "inside a token are escaped with '\\'). Spaces show as '·', tabs as '→', "
            "newlines as '↵', other invisible characters as ⟨U+XXXX⟩, and a token that is "
            "only part of a UTF-8 character as its bytes in hex, ⟨f0 9f⟩. The rendering "
            "goes to stdout; the token count and bytes per token to stderr. With --html, "
            "a self-contained page is written instead (nothing on stdout)."
        ),
        examples=[
            'bpetite show --model tokenizer.json --text "Hello world 👋"',
            "bpetite show --model tokenizer.json --input notes.txt --ids",
            "bpetite show --model tokenizer.json --input notes.txt --html tokens.html",
        ],
    )
    parser.add_argument("--model", required=True, metavar="PATH", help="tokenizer artifact")
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
        check_output_path(args.html, force=args.force, option="--html")
    tokenizer = load_model(args.model)
    if args.text is not None:
        text = check_argument_text(args.text, "--text")
        source = "text from --text"
    else:
        text = read_input_text(args.input)
        source = describe_input(args.input)
    pieces = pieces_of(tokenizer, text)
    summary = summarize(pieces)

    if args.html is not None:
        page = render_html(pieces, source=f"{source}, model '{args.model}'", show_ids=args.ids)
        try:
            write_atomically(args.html, page.encode("utf-8"), overwrite=args.force)
        except FileExistsError:
            raise CliError(
                f"--html '{args.html}' already exists; pass --force to replace it"
            ) from None
        print(f"{summary.describe()}; wrote '{args.html}'", file=sys.stderr)
        return 0

    if _use_colour(args.color, sys.stdout):
        _print_ansi(pieces, show_ids=args.ids, stream=sys.stdout)
    else:
        write_stdout_bytes(render_plain(pieces, show_ids=args.ids).encode("utf-8"))
    print(summary.describe(), file=sys.stderr)
    return 0


def pieces_of(tokenizer: Tokenizer, text: str) -> list[TokenPiece]:
    """The display pieces of `text` as `tokenizer` encodes it."""
    special_ids = set(tokenizer.special_tokens.values())
    return token_pieces(tokenizer.encode(text), tokenizer.vocab, special_ids)


def _use_colour(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    # Without colour the backgrounds vanish and so would the boundaries: fall back to '|'.
    return is_terminal(stream) and not os.environ.get("NO_COLOR")


def render_ansi(
    pieces: Sequence[TokenPiece],
    *,
    show_ids: bool = False,
    theme: TerminalTheme = RICH_THEME,
    color_system: ColorSystem | None = None,
) -> str:
    """The pieces with one background per token, as ANSI text ending in a newline.

    Rich turns each style into escape codes for `color_system` (truecolor when None),
    downgrading colours the terminal lacks. The styles are built once and rendered
    segment by segment: going through a rich ``Text`` and ``Console.print`` instead
    took about 7 s for 200 KB of text against 0.3 s this way, all of it in layout work
    that the terminal does itself.
    """
    from rich.color import ColorSystem
    from rich.style import Style

    system = ColorSystem.TRUECOLOR if color_system is None else color_system
    # (base, marker, id label) per text shade, then per partial and special shade.
    text_styles = [
        (
            Style(color=theme.text, bgcolor=background),
            Style(color=theme.marker, bgcolor=background),
            Style(color=theme.token_id, bgcolor=background, italic=True),
        )
        for background in theme.palette
    ]
    other_styles = {
        kind: [(style, style, style + Style(bold=False, italic=True)) for style in styles]
        for kind, styles in (
            ("partial", [Style.parse(shade) for shade in theme.partial]),
            ("special", [Style.parse(shade) for shade in theme.special]),
        )
    }
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if piece.kind == "text":
            base, marker, label = text_styles[index % len(text_styles)]
        else:
            base, marker, label = other_styles[piece.kind][index % 2]
        for part, is_marker in piece.parts:
            out.append((marker if is_marker else base).render(part, color_system=system))
        if show_ids:
            out.append(label.render(f"[{piece.token_id}]", color_system=system))
        # Line breaks carry no background, so a coloured block never runs to the margin.
        out.append("\n" * piece.line_breaks)
    rendered = "".join(out)
    return rendered if rendered.endswith("\n") else rendered + "\n"


def _print_ansi(pieces: Sequence[TokenPiece], *, show_ids: bool, stream: TextIO) -> None:
    """Ask rich what the terminal supports (COLORTERM, TERM), then write the rendering."""
    from rich.color import ColorSystem
    from rich.console import Console

    detected = Console(file=stream, force_terminal=True).color_system
    systems = {"256": ColorSystem.EIGHT_BIT, "truecolor": ColorSystem.TRUECOLOR}
    # Anything below 256 colours collapses the pastels into one white: use the basic theme.
    system = systems.get(detected or "", ColorSystem.STANDARD)
    theme = RICH_THEME if detected in systems else BASIC_THEME
    rendered = render_ansi(pieces, show_ids=show_ids, theme=theme, color_system=system)
    write_stdout_bytes(rendered.encode("utf-8"))
