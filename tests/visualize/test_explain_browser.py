"""The ``explain --html`` pages in real headless Chromium, stepped through with the keyboard.

Chromium is driven over its DevTools protocol (tests/visualize/browser.py): the test
presses Tab and the arrow keys as a person would, then reads which elements the browser
*draws* as tokens (an opaque background: the CSS decides, not the test) and compares
them with the reference's tokens after that many merges.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from bpetite import Tokenizer, reference
from bpetite.cli import main
from bpetite.visualize import explain_train
from tests.visualize.browser import DevTools, png_colours, require_browser

# Arabic, Hebrew, emoji and accents for merges; the text adds a zebra and letters the
# corpus never had, whose bytes stay apart, and a special token.
_CORPUS = (
    "Hello world, hello there! naïve café 😀😀 🎉 مرحبا بالعالم، مرحبا. שלום עולם, שלום. " * 30
)
_TEXT = "Hello مرحبا بالعالم ثقيل שלום 😀🦓 naïve<|endoftext|> <b>world</b> &amp;\nthere"

#: Which elements the browser draws as tokens, in order: for each byte (or special),
#: the one element on its path up to the chunk with an opaque background.
_DRAWN = """(() => {
  const drawn = el => el.tagName === "T-S" ||
    !/rgba\\([^)]*, 0\\)$/.test(getComputedStyle(el).backgroundColor);
  const ids = [];
  let last = null, doubled = 0;
  for (const leaf of document.querySelectorAll("t-l, t-s")) {
    const on = [];
    for (let el = leaf; el.tagName !== "T-C"; el = el.parentElement) if (drawn(el)) on.push(el);
    if (on.length !== 1) doubled++;
    if (on[0] !== last) { ids.push(on.length ? Number(on[0].dataset.id) : -1); last = on[0]; }
  }
  return {ids, doubled};
})()"""

_CHECKED = "document.querySelector('input:checked').id.split('-')[1]"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    """One browser for the module; each test opens its page in a tab of its own."""
    with DevTools.start(require_browser(), tmp_path_factory.mktemp("profile")) as tools:
        yield tools


@pytest.fixture(scope="module")
def encode_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Path]:
    """A model and the page `bpetite explain --html` writes for `_TEXT` with it."""
    directory = tmp_path_factory.mktemp("explain")
    tokenizer = Tokenizer.train(_CORPUS, 340)
    model = directory / "tok.json"
    tokenizer.save(model)
    text = directory / "text.txt"
    text.write_bytes(_TEXT.encode("utf-8"))
    page = directory / "explain.html"
    argv = ["explain", "--model", str(model), "--input", str(text), "--html", str(page)]
    assert main(argv) == 0
    return tokenizer, page


def _reference_tokens(tokenizer: Tokenizer, merges: int, text: str) -> list[int]:
    model = reference.Model(
        tokenizer.merges[:merges], tokenizer.pattern, tokenizer.special_tokens, tokenizer.byte_order
    )
    return reference.encode(model, text)


def _drawn(tools: DevTools) -> list[int]:
    result = tools.evaluate(_DRAWN)
    assert result["doubled"] == 0  # every byte is in exactly one drawn token
    ids: list[int] = result["ids"]
    return ids


def test_the_keyboard_steps_through_an_encode(
    chromium: DevTools, encode_page: tuple[Tokenizer, Path]
) -> None:
    tokenizer, page = encode_page
    ranks = [row.rank for row in tokenizer.explain(_TEXT).rows]
    assert len(ranks) >= 10
    with chromium.page(page.as_uri()) as tools:
        assert _drawn(tools) == _reference_tokens(tokenizer, 0, _TEXT)
        tools.press("Tab")  # the first thing to focus is the checked step
        assert tools.evaluate("document.activeElement.id") == tools.evaluate(
            "document.querySelector('input:checked').id"
        )
        for key, step in [("ArrowDown", 1), ("ArrowDown", 2), ("ArrowDown", 3), ("ArrowUp", 2),
                          ("ArrowRight", 3), ("ArrowRight", 4), ("ArrowLeft", 3)]:  # fmt: skip
            tools.press(key)
            assert tools.evaluate(_CHECKED) == str(step)
            assert _drawn(tools) == _reference_tokens(tokenizer, ranks[step - 1] + 1, _TEXT), key
        # the last step: a click on its number, and the tokens are encode's ids
        tools.evaluate("document.querySelector('tr:last-child label').click()")
        assert tools.evaluate(_CHECKED) == str(len(ranks))
        assert _drawn(tools) == tokenizer.encode(_TEXT)
        # escaped text stayed text: the browser built no element from it
        assert tools.evaluate("document.querySelectorAll('script, t-c b').length") == 0


def test_characters_split_across_tokens_show_their_bytes_until_whole(
    chromium: DevTools, encode_page: tuple[Tokenizer, Path]
) -> None:
    """😀 is merged whole by the end; 🦓 (never in the corpus) stays four hex bytes."""
    _, page = encode_page
    shown = """[...document.querySelectorAll(".w")].filter(
        w => parseFloat(getComputedStyle(w).fontSize) > 0).map(w => w.textContent).join("")"""
    hex_shown = """[...document.querySelectorAll(".x")].filter(
        x => parseFloat(getComputedStyle(x).fontSize) > 0).map(x => x.textContent).join(" ")"""
    with chromium.page(page.as_uri()) as tools:
        assert tools.evaluate(shown) == ""  # before any merge every character is bytes
        assert "f0 9f 98 80" in tools.evaluate(hex_shown)
        tools.evaluate("document.querySelector('tr:last-child label').click()")
        whole = tools.evaluate(shown)
        assert "😀" in whole and "ï" in whole and "🦓" not in whole
        hex_bytes = tools.evaluate(hex_shown)
        assert "f0 9f a6 93" in hex_bytes and "f0 9f 98 80" not in hex_bytes


def test_right_to_left_chunks_read_in_their_direction_and_follow_in_order(
    chromium: DevTools, encode_page: tuple[Tokenizer, Path]
) -> None:
    """Each chunk is a bidi isolate: an Arabic or Hebrew chunk is laid out right to left
    inside, and the chunks still follow each other left to right on their line.

    The pieces the browser breaks a chunk into (one box per run of one direction: hex
    bytes, letters) touch, each after the one before in the chunk's own direction.
    Without isolation a right-to-left chunk of hex bytes reads left to right, and a
    chunk of a space and Arabic splits around its neighbours. Isolation is the computed
    ``unicode-bidi``, whichever rule gives it: the page's CSS, or the browser's own for
    an element with a ``dir``."""
    _, page = encode_page
    boxes = """[...document.querySelectorAll("t-c")].map(c => {
        const box = c.getBoundingClientRect();
        return [box.left, box.right, box.top, getComputedStyle(c).direction, c.textContent];
    })"""
    pieces = """[...document.querySelectorAll("t-c")].map(c => [getComputedStyle(c).unicodeBidi,
        [...c.getClientRects()].map(box => [box.left, box.right, box.top])])"""
    with chromium.page(page.as_uri(), width=1600) as tools:
        tools.evaluate("document.querySelector('tr:last-child label').click()")
        chunks = tools.evaluate(boxes)
        chunk_pieces = tools.evaluate(pieces)
    right_to_left = [text for *_, direction, text in chunks if direction == "rtl"]
    assert len(right_to_left) == 4  # مرحبا بالعالم ثقيل שלום
    assert all(re.search("[\u0590-\u06ff]", text) for text in right_to_left)
    assert chunks[0][3:] == ["ltr", "Hello"]
    assert {bidi for bidi, _ in chunk_pieces} == {"isolate"}
    for (*_, direction, text), (_, chunk_boxes) in zip(chunks, chunk_pieces, strict=True):
        for (left, right, top), (next_left, next_right, next_top) in pairwise(chunk_boxes):
            if next_top == top:  # the same line
                gap = left - next_right if direction == "rtl" else next_left - right
                assert abs(gap) <= 0.5, (text, chunk_boxes)
    for (_, right, top, *_), (next_left, _, next_top, *_) in pairwise(chunks):
        if next_top == top:  # the same line
            assert next_left >= right - 0.5


def test_the_keyboard_steps_through_a_training_run(chromium: DevTools, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_CORPUS, encoding="utf-8")
    page = tmp_path / "train.html"
    argv = ["explain", "--train", "--input", str(corpus), "--vocab-size", "300",
            "--html", str(page)]  # fmt: skip
    assert main(argv) == 0
    merges = Tokenizer.train(_CORPUS, 300).merges
    sample = explain_train(_CORPUS, 300).text  # the corpus's first chunks
    assert _CORPUS.startswith(sample) and len(sample) > 1000
    highlight = "getComputedStyle(document.querySelector('input:checked').closest('tr'))"
    with chromium.page(page.as_uri()) as tools:
        text = tools.evaluate("document.querySelector('.tokens').textContent")
        assert text.startswith("Hello·world,·hello·there!·na")
        assert _drawn(tools) == list(sample.encode("utf-8"))  # bytes before any merge
        tools.press("Tab")
        for step in range(1, 6):
            tools.press("ArrowDown")
            assert tools.evaluate(_CHECKED) == str(step)
            model = reference.Model(list(merges[:step]), special_tokens={})
            assert _drawn(tools) == reference.encode(model, sample)
            assert tools.evaluate(f"{highlight}.backgroundColor") == "rgb(255, 235, 153)"


def test_the_screenshot_paints_tokens_steps_and_the_chart(
    chromium: DevTools, encode_page: tuple[Tokenizer, Path]
) -> None:
    _, page = encode_page
    with chromium.page(page.as_uri()) as tools:
        tools.press("Tab")
        for _ in range(6):
            tools.press("ArrowDown")
        png = tools.screenshot()
    wanted = {
        (230, 230, 230),  # a single byte's grey
        (0x6F, 0x42, 0xC1),  # the special token
        (255, 235, 153),  # the checked step's row
        (0x09, 0x69, 0xDA),  # the chart's line
    }
    width, height, colours = png_colours(png, wanted)
    assert (width, height) == (1200, 800)
    assert wanted <= colours
