"""Tokens as every view draws them, and the self-contained HTML pages bpetite writes.

Pure and UI-free (no ``rich``, no I/O): a token becomes a :class:`TokenPiece` (its id,
bytes, and a visible label, hex for part of a character), and pieces become a page.
The plain rendering and the statistics (:mod:`bpetite.visualize._render`), the
explanation pages and the terminal renderer in ``bpetite.cli`` draw the same pieces;
a :class:`~bpetite.Tokenizer` in a notebook shows itself with :func:`render_snippet`.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from bpetite.core._decoder import unknown_id

#: How a token is drawn: ordinary text, the special token, or part of a character.
PieceKind = Literal["text", "special", "partial"]

#: A run of display text and whether it is a marker standing in for an invisible character.
Part = tuple[str, bool]

#: Visible stand-ins for the whitespace people most need to see, and what a page's legend
#: calls them. A newline is also followed by a real line break when rendered (see
#: :attr:`TokenPiece.line_breaks`).
_MARKED_WHITESPACE: Final = {
    " ": ("·", "space"),
    "\t": ("→", "tab"),
    "\n": ("↵", "newline"),
    "\r": ("␍", "carriage return"),
}
WHITESPACE_MARKERS: Final[Mapping[str, str]] = {
    char: marker for char, (marker, _) in _MARKED_WHITESPACE.items()
}

#: Categories shown as ``⟨U+XXXX⟩`` because they are invisible or move the cursor:
#: controls, format characters (zero-width, bidi overrides) and exotic spaces.
_INVISIBLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs"})

#: Background colours cycled over consecutive tokens, so neighbours always differ.
PALETTE: Final = ("#cfe8ff", "#ffe3b3", "#d3f5d0", "#f5d5f5")

#: Partial-character and special tokens keep their own hue but alternate between two
#: shades, so a run of them (an unseen emoji is often four partial bytes) still shows
#: every boundary.
PARTIAL_BACKGROUNDS: Final = ("#ffd8d3", "#ffb3a7")
SPECIAL_BACKGROUNDS: Final = ("#6f42c1", "#8a63d2")


def hex_bytes(data: bytes) -> str:
    """``b"\\xf0\\x9f" -> "f0 9f"``: the form every view uses for raw bytes."""
    return data.hex(" ")


def partial_label(data: bytes) -> str:
    """``b"\\xf0\\x9f" -> "⟨f0 9f⟩"``: how a token that is not whole characters is shown.

    The brackets are not ``<>`` so the label cannot be mistaken for ``<|endoftext|>``.
    """
    return f"⟨{hex_bytes(data)}⟩"


def token_label(data: bytes) -> str:
    """A token as every view names it: its visible text, or ``⟨hex⟩`` if it is part of a character.

    >>> token_label(b" the"), token_label(b"\\xf0\\x9f")
    ('·the', '⟨f0 9f⟩')
    """
    text = token_text(data)
    return partial_label(data) if text is None else visible(text)


def token_text(data: bytes) -> str | None:
    """The text of one token on its own, or None when its bytes are not whole characters.

    A token is judged alone: the two tokens ``b"\\xf0\\x9f"`` and ``b"\\x98\\x80"`` make
    a valid emoji together, yet each is part of a character and returns None. Because a
    valid sequence can never start with a continuation byte, a token that decodes alone
    is always aligned to character boundaries in any valid text.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def marker_for(char: str) -> str | None:
    """The visible stand-in for an invisible or cursor-moving character, else None.

    ``" " -> "·"``, ``"\\t" -> "→"``, ``"\\n" -> "↵"``, ``"\\x1b" -> "␛"``,
    ``"\\u00a0" -> "⟨U+00A0⟩"``, a noncharacter ``"\\uffff" -> "⟨U+FFFF⟩"``. Escapes must
    never reach a terminal raw: a token holding ``ESC [ 2 J`` would otherwise clear the
    user's screen.
    """
    if char in WHITESPACE_MARKERS:
        return WHITESPACE_MARKERS[char]
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␀ ␁ ... ␟
    if code == 0x7F:
        return "␡"
    if unicodedata.category(char) in _INVISIBLE_CATEGORIES or _is_noncharacter(code):
        return f"⟨U+{code:04X}⟩"
    return None


def _is_noncharacter(code: int) -> bool:
    """U+FDD0..U+FDEF and the last two code points of every plane (U+FFFE, U+FFFF...):
    never meant to be shown, and an error for an HTML parser."""
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def visible_name(name: str) -> str:
    """`name` (a file's, a model's) with nothing a page or a terminal would act on or hide.

    A lone surrogate, which is how Python holds a byte of a file name that is not UTF-8,
    becomes its escape as error messages show it (``"\\udcff"``); every other invisible
    character its marker (:func:`marker_for`), except that a space stays a space:
    ``"a b\\x1b[31m.txt" -> "a b␛[31m.txt"``.
    """
    out = []
    for char in name:
        if "\ud800" <= char <= "\udfff":
            out.append(f"\\u{ord(char):04x}")
        elif char == " ":
            out.append(char)
        else:
            out.append(marker_for(char) or char)
    return "".join(out)


def visible_parts(text: str) -> tuple[Part, ...]:
    """Split `text` into runs of plain text and runs of markers.

    ``"a b\\n" -> (("a", False), ("·", True), ("b", False), ("↵", True))``. Renderers
    style markers apart so a real ``·`` in the text can still be told from a space.
    """
    parts: list[Part] = []
    run: list[str] = []
    run_is_marker = False
    for char in text:
        marker = marker_for(char)
        is_marker = marker is not None
        if run and is_marker != run_is_marker:
            parts.append(("".join(run), run_is_marker))
            run = []
        run.append(char if marker is None else marker)
        run_is_marker = is_marker
    if run:
        parts.append(("".join(run), run_is_marker))
    return tuple(parts)


def visible(text: str) -> str:
    """`text` with invisible characters replaced by markers: ``"a b\\n" -> "a·b↵"``."""
    return "".join(part for part, _ in visible_parts(text))


@dataclass(frozen=True, slots=True)
class TokenPiece:
    """One token as every view draws it.

    `parts` is the token's label (never containing a real line break); `line_breaks`
    is how many real newlines the token holds, which renderers emit after it so the
    layout follows the text while each token stays on one line.
    """

    token_id: int
    data: bytes
    kind: PieceKind
    parts: tuple[Part, ...]
    line_breaks: int

    @property
    def label(self) -> str:
        """The token as shown: ``"·world"``, ``"<|endoftext|>"`` or ``"⟨f0 9f⟩"``."""
        return "".join(part for part, _ in self.parts)

    @property
    def hex(self) -> str:
        return hex_bytes(self.data)


def make_piece(token_id: int, data: bytes, *, special: bool = False) -> TokenPiece:
    """Decide how one token is shown: its visible text, or hex if it is part of a character."""
    text = token_text(data)
    if text is None:
        return TokenPiece(token_id, data, "partial", ((partial_label(data), False),), 0)
    kind: PieceKind = "special" if special else "text"
    return TokenPiece(token_id, data, kind, visible_parts(text), text.count("\n"))


def token_pieces(
    token_ids: Iterable[int], vocab: Mapping[int, bytes], special_ids: Collection[int] = ()
) -> list[TokenPiece]:
    """The display pieces of `token_ids`; an id missing from `vocab` raises KeyError.

    Pieces are immutable and a text reuses a few thousand ids at most, so each id is
    worked out once: a long text has many times more tokens than distinct ones.
    """
    known: dict[int, TokenPiece] = {}
    pieces = []
    for position, token_id in enumerate(token_ids):
        piece = known.get(token_id)
        if piece is None:
            if token_id not in vocab:
                raise KeyError(unknown_id(token_id, vocab, f" at position {position}"))
            special = token_id in special_ids
            piece = known[token_id] = make_piece(token_id, vocab[token_id], special=special)
        pieces.append(piece)
    return pieces


@dataclass(frozen=True, slots=True)
class Summary:
    """The numbers shown above a rendering."""

    tokens: int
    bytes: int
    characters: int

    @property
    def bytes_per_token(self) -> float | None:
        """None for no tokens: an empty text has no meaningful ratio."""
        return self.bytes / self.tokens if self.tokens else None

    @property
    def shown_ratio(self) -> str:
        """Bytes per token to two decimals, or ``"n/a"`` for no tokens."""
        ratio = self.bytes_per_token
        return "n/a" if ratio is None else f"{ratio:.2f}"

    def describe(self) -> str:
        """``"3 tokens, 11 bytes, 3.67 bytes per token"``."""
        return (
            f"{plural(self.tokens, 'token')}, {plural(self.bytes, 'byte')}, "
            f"{self.shown_ratio} bytes per token"
        )


def summarize(pieces: Sequence[TokenPiece]) -> Summary:
    data = b"".join(piece.data for piece in pieces)
    # The concatenation of an encoder's output is always valid; "replace" only guards
    # hand-picked ids, where a character count is still worth showing.
    characters = len(data.decode("utf-8", errors="replace"))
    return Summary(tokens=len(pieces), bytes=len(data), characters=characters)


def plural(count: int, noun: str) -> str:
    """``plural(1234, "byte") -> "1,234 bytes"``: how every view counts things."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


# --------------------------------------------------------------------------- HTML

_CSS: Final = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
.source { color: #57606a; margin: 0 0 .5rem; overflow-wrap: anywhere; }
.stats { margin: 0 0 .5rem; }
.stats strong { font-variant-numeric: tabular-nums; }
.legend { color: #57606a; font-size: .85rem; margin: 0 0 1rem; }
.legend span { padding: 0 .25em; border-radius: 3px; }
#tokens { font: 15px/1.9 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap;
  overflow-wrap: anywhere; border: 1px solid #d0d7de; border-radius: 6px; padding: 1rem; }
/* Each token is its own bidi isolate: right-to-left tokens (Arabic, Hebrew) keep their
   logical order left to right, and a token's text (or hex) never mixes with its
   neighbours'; inside, dir="auto" lays a token out in its own direction. */
.t { border-radius: 3px; color: #1f2328; unicode-bidi: isolate; }
.t:hover { outline: 2px solid #0969da; }
/* palette */
.t.special { color: #fff; font-weight: bold; }
.t.partial { color: #a40e26; outline: 1px dashed #a40e26; font-size: .85em; }
.ws { color: #8c959f; }
.special .ws { color: inherit; }
.ids .t::after { content: attr(data-token-id); font-size: .6em; color: #57606a;
  vertical-align: sub; margin-left: 1px; }
.ids .t.special::after { color: #e8dcff; }
"""


def render_html(pieces: Sequence[TokenPiece], *, source: str = "", show_ids: bool = False) -> str:
    """One self-contained HTML page: inline CSS, no script, no external resource.

    Every token is ``<span class="t ..." dir="auto" data-token-id="ID" data-bytes="HEX"
    title="...">LABEL</span>`` in order, a bidi isolate so right-to-left tokens keep
    their order; the hover title gives the id and bytes. A
    Content-Security-Policy forbids any fetch, so the page cannot reach the network
    even if a future edit slipped a URL in. `source` (e.g. the model path) is shown
    in the header, escaped like everything else, its invisible characters shown
    (:func:`visible_name`).
    """
    summary = summarize(pieces)
    palette = "\n".join(
        [f".t.c{i} {{ background: {colour}; }}" for i, colour in enumerate(PALETTE)]
        + [f".t.partial.p{i} {{ background: {c}; }}" for i, c in enumerate(PARTIAL_BACKGROUNDS)]
        + [f".t.special.s{i} {{ background: {c}; }}" for i, c in enumerate(SPECIAL_BACKGROUNDS)]
    )
    css = _CSS.replace("/* palette */", palette)
    tokens = "".join(_html_token(index, piece) for index, piece in enumerate(pieces))
    source_line = f'<p class="source">{html.escape(visible_name(source))}</p>\n' if source else ""
    title = f"bpetite: {plural(summary.tokens, 'token')}"
    return (
        html_page(title, css, ' class="ids"' if show_ids else "")
        + f"""<header>
<h1>bpetite tokens</h1>
{source_line}<p class="stats"><strong id="token-count">{summary.tokens}</strong> tokens ·
<strong id="byte-count">{summary.bytes}</strong> bytes ·
<strong id="char-count">{summary.characters}</strong> characters ·
<strong id="bytes-per-token">{summary.shown_ratio}</strong> bytes per token</p>
<p class="legend">Hover a token for its id and bytes.
{_legend()}
<span class="t partial p0">⟨f0 9f⟩</span> bytes of a partial character,
<span class="t special s0">special</span> special token.</p>
</header>
<main>
<div id="tokens">{tokens}</div>
</main>
</body>
</html>
"""
    )


def _legend() -> str:
    """Every marker a label can hold, with what it stands for."""
    markers = [
        f'<span class="ws">{marker}</span> {name}' for marker, name in _MARKED_WHITESPACE.values()
    ]
    markers.append('<span class="ws">␀</span>…<span class="ws">␟</span> other control characters')
    markers.append('<span class="ws">␡</span> delete')
    markers.append(
        '<span class="ws">⟨U+200B⟩</span> another invisible character, by its code point'
    )
    return ",\n".join(markers) + ","


def html_page(title: str, css: str, body_attributes: str = "") -> str:
    """The start of a self-contained page, up to and including ``<body>``.

    Every page bpetite writes shares it: the content-security policy allows inline
    styles and nothing else (no script, no network), which the browser test checks.
    """
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bpetite">
<title>{html.escape(title)}</title>
<style>{css}</style>
</head>
<body{body_attributes}>
"""


def _shade_class(kind: PieceKind, index: int) -> str:
    """``c0``..``c3`` for text, ``partial p0``/``p1`` or ``special s0``/``s1`` by position."""
    if kind == "text":
        return f"c{index % len(PALETTE)}"
    return f"{kind} {kind[0]}{index % 2}"


def _html_token(index: int, piece: TokenPiece) -> str:
    classes = f"t {_shade_class(piece.kind, index)}"
    kind_note = {"text": "", "special": " · special token", "partial": " · part of a character"}
    count = plural(len(piece.data), "byte")
    title = f"id {piece.token_id} · {count}: {piece.hex}{kind_note[piece.kind]}"
    body = "".join(
        f'<span class="ws">{html.escape(part)}</span>' if is_marker else html.escape(part)
        for part, is_marker in piece.parts
    )
    return (
        f'<span class="{classes}" dir="auto" data-token-id="{piece.token_id}" '
        f'data-bytes="{piece.data.hex()}" title="{html.escape(title)}">{body}</span>'
        + "\n"
        * piece.line_breaks
    )


#: The token styles of :func:`render_html`, scoped to one ``<div>`` so they can sit in
#: a notebook beside other output without restyling it.
_SNIPPET_CSS: Final = """
.bpetite-tokens { font: 14px/1.5 system-ui, sans-serif; color: #1f2328; background: #fff; }
.bpetite-tokens p { margin: 0 0 .4rem; color: #57606a; }
.bpetite-tokens .tokens { font: 14px/1.9 ui-monospace, "DejaVu Sans Mono", monospace;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.bpetite-tokens .t { border-radius: 3px; color: #1f2328; unicode-bidi: isolate; }
.bpetite-tokens .t.special { color: #fff; font-weight: bold; }
.bpetite-tokens .t.partial { color: #a40e26; outline: 1px dashed #a40e26; font-size: .85em; }
.bpetite-tokens .ws { color: #8c959f; }
.bpetite-tokens .special .ws { color: inherit; }
"""


def render_snippet(pieces: Sequence[TokenPiece], *, caption: str) -> str:
    """The tokens of :func:`render_html` as one ``<div>`` with its own scoped styles.

    What a notebook shows for a tokenizer: `caption` (escaped, as a name) above the tokens, each a
    ``<span class="t ...">`` exactly as on the page, with its id and bytes on hover.
    """
    palette = "\n".join(
        [f".bpetite-tokens .t.c{i} {{ background: {c}; }}" for i, c in enumerate(PALETTE)]
        + [
            f".bpetite-tokens .t.partial.p{i} {{ background: {c}; }}"
            for i, c in enumerate(PARTIAL_BACKGROUNDS)
        ]
        + [
            f".bpetite-tokens .t.special.s{i} {{ background: {c}; }}"
            for i, c in enumerate(SPECIAL_BACKGROUNDS)
        ]
    )
    tokens = "".join(_html_token(index, piece) for index, piece in enumerate(pieces))
    return (
        f'<div class="bpetite-tokens">\n<style>{_SNIPPET_CSS}{palette}\n</style>\n'
        f"<p>{html.escape(visible_name(caption))}</p>\n"
        f'<div class="tokens">{tokens}</div>\n</div>'
    )
