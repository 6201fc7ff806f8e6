"""The page an explanation is stepped through: HTML and CSS, no script, no network.

Pure (no I/O). The stepper is a radio group, one radio per step in the merge table, so
the browser gives keyboard stepping for free (the arrow keys move the checked radio) and
the content-security policy stays ``show --html``'s: inline styles, nothing else.

How one page shows every step without a copy of the text per step: merges only ever
join neighbouring tokens, so the text is drawn once as a tree of merges, each token an
element holding the two it was made from. A CSS rule per step sets ``--k`` (the steps
applied) when its radio is checked; each element knows the step that made it (``--a``)
and the step that merged it into its parent (``--b``), and is drawn as a token exactly
while ``a <= k < b``: ``clamp()`` turns those comparisons into 0 or 1, which becomes the
alpha of its background and the width of its left edge. A character whose bytes are
still in different tokens shows its bytes in hex until the step that joins them
(``--j``). The chart's cursor moves the same way (``--x``, ``--y``).
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.visualize._html import html_page, marker_for, token_label, visible_name

#: The chart's plot area in SVG units, and its margins for the axes' labels.
_WIDTH: Final = 420
_HEIGHT: Final = 200
_LEFT: Final = 46
_BOTTOM: Final = 34
_TOP: Final = 10
_RIGHT: Final = 12

#: At most this many points draw the chart's line; longer runs keep every n-th step.
_CHART_POINTS: Final = 500


Kind = Literal["encode", "train"]


@dataclass(frozen=True, slots=True)
class MergeRow:
    """One merge as the explanation's table shows it, in the order merges apply.

    Step ``k`` (from 1) applies the merge of rank `rank`, joining `pair` (whose tokens
    are `parts`) into `token`, of id `new_id` (``256 + rank`` unless special tokens hold
    ids among the merged tokens'). In a training run, `count` is the pair's frequency in
    the corpus when it won and `note` says how it beat the others (the tie-break, or the
    runners-up); in an encode, `count` is how many times it applied to the text.
    `tokens_after` counts the corpus's (or the text's) tokens after the step.
    """

    step: int
    rank: int
    pair: tuple[int, int]
    new_id: int
    parts: tuple[bytes, bytes]
    token: bytes
    count: int
    tokens_after: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class PageNode:
    """One token of the drawn text: made at step `formed` (0: a byte or a special token)
    from `children`, or a leaf (one byte, or a whole special token)."""

    token_id: int
    data: bytes
    formed: int
    children: tuple[PageNode, PageNode] | None = None
    special: bool = False


#: The page's own styles; everything else is scoped to the fragment's ``.bpe``.
_PAGE_CSS: Final = """
:root { color-scheme: light; }
body { margin: 1.5rem; background: #fff; }
"""

_CSS: Final = """
.bpe { font: 15px/1.5 system-ui, sans-serif; color: #1f2328; background: #fff; --k: 0; }
.bpe h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
.bpe .source, .bpe .help, .bpe .bound { color: #57606a; margin: 0 0 .5rem;
  overflow-wrap: anywhere; }
.bpe .status { margin: 0 0 .5rem; font-variant-numeric: tabular-nums; }
.bpe .status b::after { content: counter(n); }
.bpe .status .k::after { counter-reset: n var(--k); }
.bpe .status .v::after { counter-reset: n var(--v); }
.bpe .grid { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.bpe .text { flex: 1 1 28rem; min-width: 18rem; }
.bpe .side { flex: 1 1 30rem; min-width: 18rem; }
.bpe .tokens { font: 15px/2 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap;
  overflow-wrap: anywhere; border: 1px solid #d0d7de; border-radius: 6px; padding: .75rem; }
/* Each chunk is a bidi isolate laid out in its own direction: chunks follow in logical
   order, a right-to-left word reads right to left, and hex never joins the words. */
t-c { unicode-bidi: isolate; }
t-n, t-l, t-s { --on: calc(clamp(0, var(--k) - var(--a) + 1, 1) * clamp(0, var(--b) - var(--k), 1));
  --new: calc(clamp(0, var(--k) - var(--a) + 1, 1) - clamp(0, var(--k) - var(--a), 1));
  background: hsl(var(--h) 90% 84% / var(--on)); border-radius: 3px;
  box-shadow: inset calc(var(--on) * 2px) 0 #fff;
  outline: calc(var(--new) * 2px) solid #0a3069; outline-offset: -1px; }
t-l { --a: 0; outline: none; background: hsl(0 0% 90% / var(--on)); }
t-s { --a: 0; outline: none; background: #6f42c1; color: #fff; font-weight: bold; }
.bpe .ws { color: #6e7781; }
t-s .ws { color: inherit; }
.bpe .w { font-size: calc(clamp(0, var(--k) - var(--j) + 1, 1) * 1em); }
.bpe .x { --split: clamp(0, var(--j) - var(--k), 1); font-size: calc(var(--split) * .8em);
  padding-inline: calc(var(--split) * 2px); color: #a40e26; unicode-bidi: isolate; }
.bpe figure { margin: 0 0 .75rem; }
.bpe figcaption { color: #57606a; font-size: .85rem; }
.bpe svg { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
.bpe svg .axis { stroke: #57606a; fill: none; }
.bpe svg .line { stroke: #0969da; stroke-width: 2; fill: none; }
.bpe svg text { fill: #1f2328; }
.bpe svg .cursor { transform: translate(calc((var(--v) - 256) * var(--f) * 1px), 0); }
.bpe svg .cursor line { stroke: #bf3989; stroke-width: 1.5; }
.bpe svg .dot { transform: translate(calc((var(--v) - 256) * var(--f) * 1px), calc(var(--y) * 1px));
  fill: #bf3989; }
.bpe .table { max-height: 32rem; overflow: auto; border: 1px solid #d0d7de; border-radius: 6px; }
.bpe table { border-collapse: collapse; width: 100%; font-size: .85rem; }
.bpe th { position: sticky; top: 0; background: #f6f8fa; text-align: left; }
.bpe th, .bpe td { padding: .15rem .4rem; border-bottom: 1px solid #eaeef2; vertical-align: top; }
.bpe td:nth-child(4), .bpe td:nth-child(5) { text-align: right;
  font-variant-numeric: tabular-nums; }
.bpe td bdi { font: .85rem ui-monospace, "DejaVu Sans Mono", monospace; }
.bpe tbody tr:has(input:checked) { background: hsl(48 100% 80%); }
.bpe label { display: block; cursor: pointer; white-space: nowrap; }
.bpe input:focus-visible { outline: 3px solid #0969da; outline-offset: 1px; }
"""


def render_page(
    *,
    kind: Kind,
    title: str,
    rows: Sequence[MergeRow],
    chunks: Sequence[Sequence[PageNode]],
    total_bytes: int,
    start_tokens: int,
    shown_bytes: int,
) -> str:
    """The whole page: :func:`render_fragment`'s ``<div>`` in the shared page head (its
    CSP included), the fragment's styles moved into the head."""
    what = "encoding" if kind == "encode" else "training"
    heading = f"bpetite: {what}, step by step"
    page, css, body = _fragment(
        kind=kind,
        title=title,
        rows=rows,
        chunks=chunks,
        total_bytes=total_bytes,
        start_tokens=start_tokens,
        shown_bytes=shown_bytes,
    )
    return (
        html_page(heading, _PAGE_CSS + css)
        + f'<div class="bpe" id="{page}">\n{body}</div>\n</body>\n</html>\n'
    )


def render_fragment(
    *,
    kind: Kind,
    title: str,
    rows: Sequence[MergeRow],
    chunks: Sequence[Sequence[PageNode]],
    total_bytes: int,
    start_tokens: int,
    shown_bytes: int,
) -> str:
    """One ``<div>`` holding its own styles: what a notebook shows.

    Its ids start with a prefix drawn from its content, so several explanations in one
    notebook never check each other's radios.
    """
    page, css, body = _fragment(
        kind=kind,
        title=title,
        rows=rows,
        chunks=chunks,
        total_bytes=total_bytes,
        start_tokens=start_tokens,
        shown_bytes=shown_bytes,
    )
    return f'<div class="bpe" id="{page}">\n<style>{css}</style>\n{body}</div>'


def _fragment(
    *,
    kind: Kind,
    title: str,
    rows: Sequence[MergeRow],
    chunks: Sequence[Sequence[PageNode]],
    total_bytes: int,
    start_tokens: int,
    shown_bytes: int,
) -> tuple[str, str, str]:
    """The fragment's id, its styles, and what its ``<div>`` holds besides them.

    `title` (a file's or a model's name in it) is shown as
    :func:`~bpetite.visualize._html.visible_name` shows a name.
    """
    title = visible_name(title)
    steps = len(rows)
    never = steps + 1  # a step that never comes: a root is never merged into a parent
    digest = hashlib.blake2b(digest_size=4)
    digest.update(f"{kind}{title}{total_bytes}".encode())
    for row in rows:
        digest.update(row.token + row.rank.to_bytes(4, "big"))
    for chunk in chunks:
        for node in chunk:
            digest.update(node.data)
    page = "b" + digest.hexdigest()
    points = _chart_points(rows, start_tokens, total_bytes)
    x_of, y_of = _scales(points)
    rules = [
        f"#{page} {{ --k: 0; --v: 256; --f: {x_of.factor:.6f}; --y: {y_of(points[0][1]):.1f}; }}",
        f"#{page} t-c {{ --b: {never}; }}",  # the roots are never merged into a parent
    ]
    for step, v, ratio in _step_values(rows, start_tokens, total_bytes):
        rules.append(
            f"#{page}:has(#{page}-{step}:checked){{--k:{step};--v:{v};--y:{y_of(ratio):.1f}}}"
        )
    what = "the text" if kind == "encode" else "a sample of the corpus"
    verb = "encoding" if kind == "encode" else "training"
    source = f'<p class="source">{html.escape(title)}</p>\n' if title else ""
    bound = ""
    if shown_bytes < total_bytes:
        corpus = "text" if kind == "encode" else "corpus"
        bound = (
            f'<p class="bound">The text shows the first {shown_bytes:,} bytes of the {corpus}\'s '
            f"{total_bytes:,}; the table and the chart cover all of it.</p>\n"
        )
    after = rows[-1].tokens_after if rows else start_tokens
    css = f"{_CSS}{chr(10).join(rules)}\n"
    body = (
        f"<header>\n<h1>BPE {verb}, step by step</h1>\n{source}"
        f'<p class="status">Step <b class="k"></b> of {steps} · vocabulary size <b class="v"></b>'
        f" · {total_bytes:,} bytes: {start_tokens:,} tokens before any merge, {after:,} after "
        f"the last</p>\n"
        '<p class="help">Click a step, or Tab to the table and press ↓ or ↑ (→ ←) to apply '
        f"the merges one by one. Below, {what} as its tokens after the chosen step: grey "
        "for single bytes, a colour per token id, an outline on the tokens the step made, "
        "⟨hex⟩ for bytes of a character not yet whole; · is a space, ↵ a newline.</p>\n"
        f"{bound}</header>\n"
        f'<div class="grid">\n<section class="text" aria-label="{what}">\n'
        f'<div class="tokens">{"".join(_chunk_html(chunk, never) for chunk in chunks)}</div>\n'
        f'</section>\n<section class="side">\n{_chart(points, x_of, y_of, kind)}\n'
        f"{_table(page, kind, rows, start_tokens)}\n</section>\n</div>\n"
    )
    return page, css, body


# --------------------------------------------------------------------------- the text


def _hue(token_id: int) -> int:
    """A hue per id, spread by the golden angle so near ids look unlike."""
    return round(token_id * 137.508) % 360


def _chunk_html(chunk: Sequence[PageNode], never: int) -> str:
    data = b"".join(node.data for node in chunk)
    if len(chunk) == 1 and chunk[0].special:
        node = chunk[0]
        label = "".join(_visible_char(char) for char in node.data.decode("utf-8"))
        return (
            f'<t-c dir="auto"><t-s data-id="{node.token_id}" '
            f'title="special token, id {node.token_id}">{label}</t-s></t-c>'
        )
    # where each byte's character starts and how long it is, and the step that joins it
    joined = _boundary_steps(chunk, never)
    chars: list[tuple[int, str, int, int]] = []  # (start, char, length, step it is whole)
    start = 0
    for char in data.decode("utf-8"):
        size = len(char.encode("utf-8"))
        whole = max((joined[p] for p in range(start + 1, start + size)), default=0)
        chars.extend([(start, char, size, whole)] * size)
        start += size
    out: list[str] = ['<t-c dir="auto">']
    offset = 0
    for node in chunk:
        _node_html(node, None, offset, chars, out)
        offset += len(node.data)
    out.append("</t-c>")
    return "".join(out)


def _boundary_steps(chunk: Sequence[PageNode], never: int) -> dict[int, int]:
    """For each byte offset inside the chunk, the step that removes the boundary there."""
    steps: dict[int, int] = {}
    stack: list[tuple[PageNode, int]] = []
    offset = 0
    for node in chunk:
        if offset:
            steps[offset] = never  # between two final tokens: never merged
        stack.append((node, offset))
        offset += len(node.data)
    while stack:
        node, start = stack.pop()
        if node.children is not None:
            left, right = node.children
            steps[start + len(left.data)] = node.formed
            stack += [(left, start), (right, start + len(left.data))]
    return steps


def _node_html(
    node: PageNode,
    parent: int | None,
    offset: int,
    chars: Sequence[tuple[int, str, int, int]],
    out: list[str],
) -> None:
    end = "" if parent is None else f"--b:{parent};"  # a root inherits the chunk's "never"
    if node.children is None:
        start, char, size, whole = chars[offset]
        if size == 1:
            body = _visible_char(char)
            style = f' style="{end}"' if end else ""
        else:
            hex_byte = f'<span class="x" dir="ltr">{node.data.hex()}</span>'
            body = (
                f'<span class="w">{_visible_char(char)}</span>{hex_byte}'
                if start == offset
                else hex_byte
            )
            style = f' style="{end}--j:{whole}"'
        out.append(f'<t-l{style} data-id="{node.token_id}">{body}</t-l>')
        return
    label = html.escape(token_label(node.data))
    out.append(
        f'<t-n style="--a:{node.formed};{end}--h:{_hue(node.token_id)}" '
        f'data-id="{node.token_id}" title="id {node.token_id}: {label}">'
    )
    left, right = node.children
    _node_html(left, node.formed, offset, chars, out)
    _node_html(right, node.formed, offset + len(left.data), chars, out)
    out.append("</t-n>")


def _visible_char(char: str) -> str:
    marker = marker_for(char)
    if marker is None:
        return html.escape(char)
    line_break = "\n" if char == "\n" else ""
    return f'<span class="ws">{html.escape(marker)}</span>{line_break}'


# --------------------------------------------------------------------------- the table


def _table(page: str, kind: Kind, rows: Sequence[MergeRow], start_tokens: int) -> str:
    """One row per step, its radio first; end tags a row does not need are left out."""
    count = "count" if kind == "train" else "times"
    why = "<th>why it won" if kind == "train" else ""
    lines = [
        '<div class="table" role="group" aria-label="steps">\n<table>\n<thead><tr><th>step'
        f"<th>merge<th>new token<th>{count}<th>tokens after{why}</thead>\n<tbody>",
        f'<tr><td><label><input type="radio" name="{page}" id="{page}-0" checked> 0</label>'
        f"<td>the bytes, before any merge<td><td><td>{start_tokens:,}{'<td>' if why else ''}",
    ]
    for row in rows:
        left, right = (html.escape(token_label(part)) for part in row.parts)
        note = f"<td>{html.escape(row.note)}" if why else ""
        lines.append(
            f'<tr><td><label><input type="radio" name="{page}" id="{page}-{row.step}"> '
            f"{row.step}</label><td><bdi>{left}</bdi> + <bdi>{right}</bdi>"
            f"<td><bdi>{html.escape(token_label(row.token))}</bdi> <small>id {row.new_id}</small>"
            f"<td>{row.count:,}<td>{row.tokens_after:,}{note}"
        )
    lines.append("</tbody>\n</table>\n</div>")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the chart


def _step_values(
    rows: Sequence[MergeRow], start_tokens: int, total_bytes: int
) -> list[tuple[int, int, float]]:
    """(step, vocabulary size after it, tokens per byte after it), step 0 first.

    The vocabulary size counts the bytes and the merges up to the step's, special tokens
    apart: ``256 + rank + 1``.
    """
    per_byte = 1 / total_bytes if total_bytes else 0.0
    values = [(0, BASE_VOCAB_SIZE, start_tokens * per_byte)]
    values += [
        (row.step, BASE_VOCAB_SIZE + row.rank + 1, row.tokens_after * per_byte) for row in rows
    ]
    return values


def _chart_points(
    rows: Sequence[MergeRow], start_tokens: int, total_bytes: int
) -> list[tuple[int, float]]:
    values = [(v, ratio) for _, v, ratio in _step_values(rows, start_tokens, total_bytes)]
    if len(values) > _CHART_POINTS:
        every = -(-len(values) // _CHART_POINTS)
        values = values[::every] + ([values[-1]] if (len(values) - 1) % every else [])
    return values


def _scales(points: Sequence[tuple[int, float]]) -> tuple[_Scale, _Scale]:
    low, high = points[0][0], max(points[-1][0], points[0][0] + 1)
    top = max(ratio for _, ratio in points) or 1.0
    width = _WIDTH - _LEFT - _RIGHT
    height = _HEIGHT - _TOP - _BOTTOM
    return (
        _Scale(_LEFT, width / (high - low), low),
        _Scale(_TOP + height, -height / top, 0.0),
    )


@dataclass(frozen=True, slots=True)
class _Scale:
    origin: float
    factor: float
    low: float

    def __call__(self, value: float) -> float:
        return self.origin + (value - self.low) * self.factor


def _chart(points: Sequence[tuple[int, float]], x_of: _Scale, y_of: _Scale, kind: Kind) -> str:
    line = " ".join(f"{x_of(v):.1f},{y_of(ratio):.1f}" for v, ratio in points)
    bottom = _HEIGHT - _BOTTOM
    top_ratio = max(ratio for _, ratio in points)
    first, last = points[0][0], max(points[-1][0], points[0][0] + 1)
    what = "the text" if kind == "encode" else "the corpus"
    caption = f"Tokens per byte of {what} against the vocabulary size, after each step"
    return (
        f'<figure>\n<svg viewBox="0 0 {_WIDTH} {_HEIGHT}" width="{_WIDTH}" height="{_HEIGHT}" '
        f'role="img" aria-label="{caption}">\n'
        f'<path class="axis" d="M{_LEFT},{_TOP} V{bottom} H{_WIDTH - _RIGHT}"/>\n'
        f'<polyline class="line" points="{line}"/>\n'
        f'<g class="cursor"><line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{bottom}"/></g>\n'
        f'<circle class="dot" cx="{_LEFT}" cy="0" r="4"/>\n'
        f'<text x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end">{top_ratio:.2f}</text>\n'
        f'<text x="{_LEFT - 4}" y="{bottom}" text-anchor="end">0</text>\n'
        f'<text x="{_LEFT}" y="{bottom + 14}" text-anchor="middle">{first}</text>\n'
        f'<text x="{_WIDTH - _RIGHT}" y="{bottom + 14}" text-anchor="end">{last}</text>\n'
        f'<text x="{(_LEFT + _WIDTH) / 2}" y="{_HEIGHT - 4}" text-anchor="middle">'
        "vocabulary size</text>\n"
        f'<text x="12" y="{(_TOP + bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {(_TOP + bottom) / 2})">tokens per byte</text>\n'
        f"</svg>\n<figcaption>{caption}.</figcaption>\n</figure>"
    )
