"""Tokens drawn in colour on a terminal, as ``bpetite show`` and ``bpetite demo`` draw them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from bpetite import Tokenizer
from bpetite.visualize import (
    PALETTE,
    PARTIAL_BACKGROUNDS,
    SPECIAL_BACKGROUNDS,
    TokenPiece,
    make_piece,
    token_pieces,
)

if TYPE_CHECKING:
    from rich.color import ColorSystem


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
    segment by segment, not through a rich ``Text`` and ``Console.print``, whose layout
    work (wrapping, measuring) the terminal does itself.

    Measurements: docs/design-notes.md#terminal-rendering
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


def pieces_of(tokenizer: Tokenizer, ids: Sequence[int]) -> list[TokenPiece]:
    """The display pieces of `ids`; every special token of `tokenizer` is marked as one."""
    special_ids = set(tokenizer.special_tokens.values())
    return token_pieces(ids, tokenizer.vocab, special_ids)


def text_pieces(tokenizer: Tokenizer, text: str) -> list[TokenPiece]:
    """The display pieces of `text`'s tokens, as :func:`pieces_of`, each special token
    shown as the text it is written as there: an alias's own, where two texts share an
    id (which decodes as the first), so that the pieces' bytes join to the text's."""
    ids, spans = tokenizer.encode_with_offsets(text)
    pieces = pieces_of(tokenizer, ids)
    special_ids, vocab = set(tokenizer.special_tokens.values()), tokenizer.vocab
    for index, (token_id, (start, end)) in enumerate(zip(ids, spans, strict=True)):
        if token_id in special_ids and text[start:end].encode("utf-8") != vocab[token_id]:
            pieces[index] = make_piece(token_id, text[start:end].encode("utf-8"), special=True)
    return pieces


def render_for_terminal(
    pieces: Sequence[TokenPiece], detected: str | None, *, show_ids: bool = False
) -> str:
    """The pieces in colour for a terminal whose rich colour system is `detected`.

    Below 256 colours the pastel backgrounds collapse into one white: the basic theme
    is used there.
    """
    from rich.color import ColorSystem

    systems = {"256": ColorSystem.EIGHT_BIT, "truecolor": ColorSystem.TRUECOLOR}
    theme = RICH_THEME if detected in systems else BASIC_THEME
    return render_ansi(
        pieces,
        show_ids=show_ids,
        theme=theme,
        color_system=systems.get(detected or "", ColorSystem.STANDARD),
    )
