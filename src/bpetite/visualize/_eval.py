"""Compare tokenizers' compression on texts: bytes per token, tokens per word, token ratios.

nanochat's ``tok_eval`` in library form: every model encodes every text with
``encode_ordinary`` (text that looks like a special token is text), and the report
keeps the raw counts, so every figure can be recomputed from it. A *word* is a run of
non-whitespace characters (``len(text.split())``), which makes tokens per word
meaningful for space-separated languages only. Pure and UI-free: the CLI draws the
table, and :meth:`CompressionReport.to_html` returns a page as a string.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from bpetite.core._errors import ParameterError
from bpetite.core._tokenizer import Tokenizer
from bpetite.visualize._html import html_page, visible_name

#: Figures in the JSON and the page are rounded to this many decimals.
DECIMALS: Final = 4
#: The columns of :meth:`CompressionReport.table`.
TABLE_COLUMNS: Final = ("text", "model", "tokens", "bytes/token", "tokens/word", "ratio")
#: The decimals each figure column of a table shows, whatever the value.
FIGURE_DECIMALS: Final = {"bytes/token": 2, "tokens/word": 2, "ratio": 3}

#: One bar colour per model, cycled (colour-blind-safe Okabe-Ito hues).
BAR_COLOURS: Final = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00")


@dataclass(frozen=True, slots=True)
class TextResult:
    """One text's size and each model's token count for it, in the models' order."""

    name: str
    bytes: int
    words: int
    tokens: tuple[int, ...]

    def figures(self, models: Sequence[str]) -> list[dict[str, Any]]:
        """Per model: tokens, bytes per token, tokens per word, ratio to the first model.

        A figure whose denominator is zero (an empty text) is None.
        """
        first = self.tokens[0]
        return [
            {
                "model": model,
                "tokens": tokens,
                "bytes_per_token": _ratio(self.bytes, tokens),
                "tokens_per_word": _ratio(tokens, self.words),
                "ratio": _ratio(tokens, first),
            }
            for model, tokens in zip(models, self.tokens, strict=True)
        ]


@dataclass(frozen=True, slots=True)
class CompressionReport:
    """Every model's token count on every text, and the totals over all texts."""

    models: tuple[str, ...]
    texts: tuple[TextResult, ...]

    @property
    def overall(self) -> TextResult:
        """All texts together: the sums of bytes, words and each model's tokens."""
        return TextResult(
            "overall",
            sum(text.bytes for text in self.texts),
            sum(text.words for text in self.texts),
            tuple(sum(column) for column in zip(*(t.tokens for t in self.texts), strict=True))
            if self.texts
            else tuple(0 for _ in self.models),
        )

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data: counts exact, figures rounded to DECIMALS."""

        def entry(text: TextResult) -> dict[str, Any]:
            return {
                "name": text.name,
                "bytes": text.bytes,
                "words": text.words,
                "results": text.figures(self.models),
            }

        return {
            "models": list(self.models),
            "texts": [entry(text) for text in self.texts],
            "overall": entry(self.overall),
        }

    def table(self) -> list[tuple[str, ...]]:
        """The report as a table to print: TABLE_COLUMNS, then a row per text and model.

        Counts have thousands separators and each figure column a fixed number of
        decimals (FIGURE_DECIMALS), so a column lines up and reads alike on every row.
        Names are shown as :func:`~bpetite.visualize._html.visible_name` shows them: no
        control character of a file name reaches a terminal.
        """
        rows: list[tuple[str, ...]] = [TABLE_COLUMNS]
        for text in [*self.texts, self.overall]:
            rows += [
                (visible_name(text.name), visible_name(model), *cells)
                for model, *cells in _formatted(text, self.models)
            ]
        return rows

    def to_html(self) -> str:
        """One self-contained page: a bar chart (inline SVG) and a table per text.

        Same rules as ``show --html``: inline CSS, no script, no external resource, a
        Content-Security-Policy that forbids every fetch, and every name escaped, its
        invisible characters shown (:func:`~bpetite.visualize._html.visible_name`).
        """
        sections = "\n".join(
            _html_section(index, text, self.models)
            for index, text in enumerate([*self.texts, self.overall])
        )
        legend = " ".join(
            f'<span class="key"><span class="swatch" style="background:{_colour(i)}"></span>'
            f"{_escaped(model)}</span>"
            for i, model in enumerate(self.models)
        )
        title = f"bpetite: compression of {len(self.models)} models on {len(self.texts)} texts"
        return (
            html_page(title, _CSS)
            + f"""<h1>Compression: bytes per token (higher is better)</h1>
<p class="legend">{legend}</p>
{sections}
</body>
</html>
"""
        )


def evaluate_compression(
    models: Sequence[tuple[str, Tokenizer]], texts: Sequence[tuple[str, str]]
) -> CompressionReport:
    """Encode every ``(name, text)`` with every ``(name, tokenizer)``; count, do not keep, ids.

    >>> tokenizer = Tokenizer.train("ab ab", vocab_size=258)
    >>> report = evaluate_compression([("t", tokenizer)], [("x", "ab ab")])
    >>> report.to_json()["overall"]["results"][0]["bytes_per_token"]
    2.5
    """
    if not models:
        raise ParameterError("evaluate_compression() needs at least one model")
    results = []
    for name, text in texts:
        if not isinstance(text, str):
            raise TypeError(f"text {name!r} must be a str, got {type(text).__name__}")
        counts = tuple(len(tokenizer.encode_ordinary(text)) for _, tokenizer in models)
        results.append(TextResult(name, len(text.encode("utf-8")), len(text.split()), counts))
    return CompressionReport(tuple(name for name, _ in models), tuple(results))


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, DECIMALS) if denominator else None


def _colour(index: int) -> str:
    return BAR_COLOURS[index % len(BAR_COLOURS)]


# --------------------------------------------------------------------------- HTML

_BAR_WIDTH: Final = 520  # pixels for the largest value in a chart
_BAR_HEIGHT: Final = 22
_LABEL_WIDTH: Final = 220  # pixels for the model names left of the bars, at least

_CSS: Final = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.25rem; margin: 0 0 .5rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .25rem; overflow-wrap: anywhere; }
.legend .key { margin-right: 1rem; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .3em;
  vertical-align: -.05em; border-radius: 2px; }
.size { color: #57606a; margin: 0 0 .5rem; }
svg text { font: 13px system-ui, sans-serif; fill: #1f2328; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .2rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
"""


def _formatted(text: TextResult, models: Sequence[str]) -> list[tuple[str, ...]]:
    """Per model: name, tokens and the figures, as a table shows them.

    The figures are computed from the counts here, not from the rounded ones of
    ``figures``, so a shown value is never rounded twice.
    """
    rows: list[tuple[str, ...]] = []
    first = text.tokens[0]
    for model, tokens in zip(models, text.tokens, strict=True):
        figures = (
            _fixed(text.bytes, tokens, FIGURE_DECIMALS["bytes/token"]),
            _fixed(tokens, text.words, FIGURE_DECIMALS["tokens/word"]),
            _fixed(tokens, first, FIGURE_DECIMALS["ratio"]),
        )
        rows.append((model, f"{tokens:,}", *figures))
    return rows


def _fixed(numerator: int, denominator: int, decimals: int) -> str:
    """``numerator / denominator`` with `decimals` decimals; "-" when it has no value."""
    return f"{numerator / denominator:,.{decimals}f}" if denominator else "-"


def _html_section(index: int, text: TextResult, models: Sequence[str]) -> str:
    figures = text.figures(models)
    shown = _formatted(text, models)
    values = [figure["bytes_per_token"] or 0.0 for figure in figures]
    scale = _BAR_WIDTH / max(max(values), 1e-9)
    height = _BAR_HEIGHT * len(models) + 8
    # Names are shown whole: the label column widens for the longest one.
    labels = max(_LABEL_WIDTH, max(_label_pixels(visible_name(model)) for model in models) + 16)
    bars = []
    for row, (model, value, cells) in enumerate(zip(models, values, shown, strict=True)):
        y = 4 + row * _BAR_HEIGHT
        width = round(value * scale, 1)
        bars.append(
            f'<text x="{labels - 8}" y="{y + 15}" text-anchor="end">'
            f"{_escaped(model)}</text>"
            f'<rect class="bar" x="{labels}" y="{y + 2}" width="{width}" '
            f'height="{_BAR_HEIGHT - 6}" fill="{_colour(row)}" '
            f'data-model="{_escaped(model)}" data-value="{value}"></rect>'
            f'<text x="{labels + width + 6}" y="{y + 15}">{cells[2]}</text>'
        )
    head = "".join(f"<th>{html.escape(column)}</th>" for column in TABLE_COLUMNS[1:])
    rows = "".join(
        "<tr>" + "".join(f"<td>{_escaped(cell)}</td>" for cell in cells) + "</tr>"
        for cells in shown
    )
    label = f"bytes per token on {text.name}"
    return f"""<section class="text" id="text-{index}">
<h2>{_escaped(text.name)}</h2>
<p class="size">{text.bytes:,} bytes, {text.words:,} words</p>
<svg role="img" aria-label="{_escaped(label)}" width="{labels + _BAR_WIDTH + 80}" \
height="{height}">{"".join(bars)}</svg>
<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>
</section>"""


def _escaped(name: str) -> str:
    """`name` for a page: escaped, its invisible characters shown."""
    return html.escape(visible_name(name))


def _label_pixels(name: str) -> int:
    """About the most pixels `name` takes in the chart's 13px font: 8 a character, 14 for
    a wide one (CJK, most emoji)."""
    return sum(14 if unicodedata.east_asian_width(char) in "WF" else 8 for char in name)
