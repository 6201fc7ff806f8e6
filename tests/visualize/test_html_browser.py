"""The ``show --html`` page in a real headless browser: the DOM it builds, and a screenshot.

The browser comes from tests/visualize/browser.py: skipped with a reason when no
Chromium is installed, a failure under ``CI=true``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli import main
from bpetite.visualize import PALETTE, PARTIAL_BACKGROUNDS, render_html
from bpetite.visualize._eval import BAR_COLOURS
from bpetite.visualize._html import marker_for
from tests.rendering import expected_label, parse_page
from tests.visualize.browser import DevTools, png_colours, require_browser, rgb_set

# Merges "<!--", "-->" and "</" into single tokens, which unescaped would be markup,
# and the first bytes of emoji into tokens that are only part of a character.
_CORPUS = "<!-- a --> </b> </i> 😀😀 😃😃 😄 🎉 Hello world, hello there.\n\n\t" * 40
_TEXT = (
    "Hello\t<!-- not a comment --> </b><script>alert(1)</script> 😀🦓 你好\n\n"
    '\tworld & &amp; "quoted" <|endoftext|>'
)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    """One browser for the module; each test opens its page in a tab of its own."""
    with DevTools.start(require_browser(), tmp_path_factory.mktemp("profile")) as tools:
        yield tools


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Path]:
    """A model and the page `bpetite show --html` writes for `_TEXT` with it."""
    directory = tmp_path_factory.mktemp("page")
    model = directory / "tok.json"
    tokenizer = Tokenizer.train(_CORPUS, 330)
    tokenizer.save(str(model))
    text_path = directory / "text.txt"
    text_path.write_bytes(_TEXT.encode("utf-8"))
    page_path = directory / "tokens.html"
    args = ["show", "--model", str(model), "--input", str(text_path), "--html", str(page_path)]
    assert main(args) == 0
    return tokenizer, page_path


def test_the_preconditions_of_this_page(page: tuple[Tokenizer, Path]) -> None:
    """The text must really contain the awkward tokens the browser test is about."""
    tokenizer, _ = page
    tokens = [tokenizer.vocab[i] for i in tokenizer.encode(_TEXT)]
    assert b"<!--" in tokens
    assert any(len(token) > 1 and expected_label(token).startswith("⟨") for token in tokens)
    assert b"<|endoftext|>" in tokens


def test_browser_dom_has_the_tokens_in_order(
    chromium: DevTools, page: tuple[Tokenizer, Path]
) -> None:
    tokenizer, page_path = page
    with chromium.page(page_path.as_uri(), width=800, height=600) as tools:
        dom = parse_page(tools.dom())
    ids = tokenizer.encode(_TEXT)
    assert [int(token["data-token-id"]) for token in dom.tokens] == ids
    assert b"".join(bytes.fromhex(token["data-bytes"]) for token in dom.tokens) == _TEXT.encode()
    assert [token["text"] for token in dom.tokens] == [
        expected_label(tokenizer.vocab[i]) for i in ids
    ]
    # Had anything been left unescaped, the browser would have built these elements.
    assert dom.start_tags["script"] == 0
    assert dom.start_tags["b"] == 0
    assert dom.by_id["token-count"] == str(len(ids))
    assert dom.by_id["bytes-per-token"] == f"{len(_TEXT.encode()) / len(ids):.2f}"


def test_browser_screenshot_shows_coloured_tokens(
    chromium: DevTools, page: tuple[Tokenizer, Path]
) -> None:
    _, page_path = page
    with chromium.page(page_path.as_uri(), width=1200, height=800) as tools:
        data = tools.screenshot()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000
    width, height, colours = png_colours(data, wanted=rgb_set(PALETTE + PARTIAL_BACKGROUNDS))
    assert (width, height) == (1200, 800)
    # The token backgrounds really were painted: the inline CSS applied.
    assert rgb_set(PALETTE) <= colours
    assert rgb_set(PARTIAL_BACKGROUNDS[:1]) <= colours


# Arabic and Hebrew words for merges; the text adds letters the corpus never had (ث ق ي
# ג), whose two UTF-8 bytes stay two partial tokens between whole right-to-left tokens.
_RTL_CORPUS = "مرحبا بالعالم، مرحبا. שלום עולם, שלום. Hello world. " * 30
_RTL_TEXT = "Hello مرحبا بالعالم ثقيل שלום עולם גג world\r\nend"
#: Measures where the browser put each token, into data attributes the DOM shows.
_MEASURE = """<script>
for (const token of document.querySelectorAll(".t[data-token-id]")) {
  const box = token.getClientRects()[0];
  token.dataset.left = box.left;
  token.dataset.right = box.right;
  token.dataset.top = box.top;
  token.dataset.bottom = box.bottom;
  token.dataset.boxes = token.getClientRects().length;
  token.dataset.bidi = getComputedStyle(token).unicodeBidi;
  token.dataset.direction = getComputedStyle(token).direction;
}
</script>
"""


def test_browser_keeps_right_to_left_tokens_in_order(chromium: DevTools, tmp_path: Path) -> None:
    """Each token must sit right of the one before it on its line, whatever its script,
    in one box of its own, an Arabic or Hebrew token running right to left inside.

    Without bidi isolation the browser lays a run of Arabic or Hebrew tokens out from
    right to left, so the first token of a word is drawn last, and splits a token whose
    text mixes directions ("·مرحبا": a space, then Arabic) into boxes that its
    neighbours come between. Isolation is the computed ``unicode-bidi``, whichever rule
    gives it: the page's CSS, or the browser's own for an element with a ``dir``. The
    page is measured by a copy of it with a script added (and the policy that forbids
    scripts taken out).
    """
    tokenizer = Tokenizer.train(_RTL_CORPUS, 330)
    model = tmp_path / "rtl.json"
    tokenizer.save(model)
    text_path = tmp_path / "rtl.txt"
    text_path.write_bytes(_RTL_TEXT.encode("utf-8"))
    page_path = tmp_path / "rtl.html"
    argv = ["show", "--model", str(model), "--input", str(text_path), "--html", str(page_path)]
    assert main(argv) == 0
    page = page_path.read_text(encoding="utf-8")
    policy = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', page)
    assert policy is not None
    measured = tmp_path / "measured.html"
    measured.write_text(
        page.replace(policy.group(0), "").replace("</body>", _MEASURE + "</body>"),
        encoding="utf-8",
    )
    with chromium.page(measured.as_uri(), width=1600, height=900) as tools:
        tokens = parse_page(tools.dom()).tokens
    assert [int(token["data-token-id"]) for token in tokens] == tokenizer.encode(_RTL_TEXT)
    rtl = [
        token for token in tokens if re.search("[\u0590-\u06ff]", token["text"])
    ]  # whole Hebrew or Arabic characters
    partial = [token for token in tokens if token["text"].startswith("⟨")]
    assert len(rtl) >= 4 and len(partial) >= 2  # the page holds what this test is about
    assert {token["data-bidi"] for token in tokens} == {"isolate"}
    assert [token["text"] for token in tokens if token["data-boxes"] != "1"] == []
    assert [token["data-direction"] for token in tokens] == [
        "rtl" if token in rtl else "ltr" for token in tokens
    ]
    lines = 0
    for before, after in pairwise(tokens):
        if float(after["data-top"]) >= float(before["data-bottom"]):
            lines += 1  # below: after a line break (partial tokens are in a smaller font,
            continue  # so boxes on one line overlap rather than share a top)
        assert float(after["data-left"]) >= float(before["data-right"]) - 0.5, (
            before["text"],
            after["text"],
        )
    assert lines == 1  # the CRLF, and nothing wrapped


def test_browser_legend_names_every_marker(chromium: DevTools, tmp_path: Path) -> None:
    page_path = tmp_path / "empty.html"
    page_path.write_text(render_html([]), encoding="utf-8")
    with chromium.page(page_path.as_uri(), width=800, height=600) as tools:
        dom = tools.dom()
    legend = re.sub(r"<[^>]+>", "", dom[dom.index('<p class="legend">') :].split("</p>")[0])
    for char in (" ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\u200b"):
        marker = marker_for(char)
        assert marker is not None and marker in legend, (char, legend)
    assert "␍ carriage return" in legend


# --------------------------------------------------------------------------- eval --html

_HOSTILE_NAME = "<b>x&amp;y<i>"


@pytest.fixture(scope="module")
def eval_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[int], Path]:
    """The page `bpetite eval --html` writes for two models (one with a hostile file name)
    on two texts, and each model's token count on the first text."""
    directory = tmp_path_factory.mktemp("eval")
    small = directory / "small.json"
    Tokenizer([]).save(str(small))
    trained = directory / f"{_HOSTILE_NAME}.json"
    tokenizer = Tokenizer.train(_CORPUS, 330)
    tokenizer.save(str(trained))
    first = directory / "first.txt"
    first.write_bytes(_TEXT.encode("utf-8"))
    second = directory / f"{_HOSTILE_NAME}.txt"
    second.write_bytes(b"Hello world, hello there.")
    page_path = directory / "report.html"
    args = ["eval", "--model", str(small), "--model", str(trained), "--input", str(first),
            str(second), "--html", str(page_path)]  # fmt: skip
    assert main(args) == 0
    counts = [len(_TEXT.encode("utf-8")), len(tokenizer.encode_ordinary(_TEXT))]
    return counts, page_path


class _EvalDom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.bars: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        if tag == "rect":
            self.bars.append(dict(attrs))


def test_browser_eval_page_draws_one_bar_per_model_and_text(
    chromium: DevTools, eval_page: tuple[list[int], Path]
) -> None:
    counts, page_path = eval_page
    with chromium.page(page_path.as_uri(), width=800, height=600) as tools:
        html = tools.dom()
    dom = _EvalDom()
    dom.feed(html)
    # The names were escaped: the browser built no <b>, and no <script> exists at all.
    assert dom.tags["b"] == 0 and dom.tags["i"] == 0 and dom.tags["script"] == 0
    assert dom.tags["svg"] == 3  # two texts and the overall chart
    assert len(dom.bars) == 6
    size = len(_TEXT.encode("utf-8"))
    assert [bar["data-value"] for bar in dom.bars[:2]] == [
        str(round(size / count, 4)) for count in counts
    ]
    assert dom.bars[1]["data-model"] == f"{_HOSTILE_NAME}.json"
    assert _HOSTILE_NAME in html.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def test_browser_eval_screenshot_shows_the_bars(
    chromium: DevTools, eval_page: tuple[list[int], Path]
) -> None:
    _, page_path = eval_page
    with chromium.page(page_path.as_uri(), width=1000, height=700) as tools:
        data = tools.screenshot()
    wanted = rgb_set(BAR_COLOURS[:2])
    width, height, colours = png_colours(data, wanted=wanted)
    assert (width, height) == (1000, 700)
    assert wanted <= colours  # the SVG bars were painted in each model's colour
