"""The ``show --html`` page in a real headless browser: the DOM it builds, and a screenshot.

Skipped with a reason when no Chromium is installed (``apt-get install chromium`` on
Debian, or point ``BPETITE_CHROMIUM`` at a binary); under ``CI=true`` a missing
browser is a failure, so CI cannot silently stop checking the page.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli import main
from bpetite.visualize._eval import BAR_COLOURS
from bpetite.visualize._render import PALETTE, PARTIAL_BACKGROUNDS, marker_for, render_html
from tests.rendering import expected_label, parse_page

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Merges "<!--", "-->" and "</" into single tokens, which unescaped would be markup,
# and the first bytes of emoji into tokens that are only part of a character.
_CORPUS = "<!-- a --> </b> </i> 😀😀 😃😃 😄 🎉 Hello world, hello there.\n\n\t" * 40
_TEXT = (
    "Hello\t<!-- not a comment --> </b><script>alert(1)</script> 😀🦓 你好\n\n"
    '\tworld & &amp; "quoted" <|endoftext|>'
)


def _find_browser() -> str | None:
    override = os.environ.get("BPETITE_CHROMIUM")
    if override:
        return override
    return next((path for name in _BROWSERS if (path := shutil.which(name))), None)


@pytest.fixture(scope="module")
def browser() -> str:
    path = _find_browser()
    if path is None:
        message = "no Chromium found: install it (apt-get install chromium) or set BPETITE_CHROMIUM"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    return path


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


def _run_browser(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # CI containers run as root, where the sandbox refuses to start
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        "--force-color-profile=srgb",  # so screenshot pixels are the CSS colours exactly
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    # Chromium makes a Unix socket under TMPDIR, and a socket's path holds at most 107
    # bytes: under a long TMPDIR (.ci/run uses one) it would not start. /tmp is short.
    short = Path("/tmp") if Path("/tmp").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bpetite-", dir=short) as sockets:
        env = {**os.environ, "TMPDIR": sockets}
        result = subprocess.run(command, capture_output=True, timeout=120, check=False, env=env)
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")[-2000:]
    return result


def test_the_preconditions_of_this_page(page: tuple[Tokenizer, Path]) -> None:
    """The text must really contain the awkward tokens the browser test is about."""
    tokenizer, _ = page
    tokens = [tokenizer.vocab[i] for i in tokenizer.encode(_TEXT)]
    assert b"<!--" in tokens
    assert any(len(token) > 1 and expected_label(token).startswith("⟨") for token in tokens)
    assert b"<|endoftext|>" in tokens


def test_browser_dom_has_the_tokens_in_order(
    browser: str, page: tuple[Tokenizer, Path], tmp_path: Path
) -> None:
    tokenizer, page_path = page
    result = _run_browser(browser, tmp_path / "profile", "--dump-dom", page_path.as_uri())
    dom = parse_page(result.stdout.decode("utf-8"))
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
    browser: str, page: tuple[Tokenizer, Path], tmp_path: Path
) -> None:
    _, page_path = page
    screenshot = tmp_path / "page.png"
    _run_browser(
        browser,
        tmp_path / "profile",
        f"--screenshot={screenshot}",
        "--window-size=1200,800",
        page_path.as_uri(),
    )
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000
    width, height, colours = _png_colours(data, wanted=_rgb_set(PALETTE + PARTIAL_BACKGROUNDS))
    assert (width, height) == (1200, 800)
    # The token backgrounds really were painted: the inline CSS applied.
    assert _rgb_set(PALETTE) <= colours
    assert _rgb_set(PARTIAL_BACKGROUNDS[:1]) <= colours


# Arabic and Hebrew words for merges; the text adds letters the corpus never had (ث ق ي
# ג), whose two UTF-8 bytes stay two partial tokens between whole right-to-left tokens.
_RTL_CORPUS = "مرحبا بالعالم، مرحبا. שלום עולם, שלום. Hello world. " * 30
_RTL_TEXT = "Hello مرحبا بالعالم ثقيل שלום עולם גג world\r\nend"
#: Measures where the browser put each token, into data attributes --dump-dom shows.
_MEASURE = """<script>
for (const token of document.querySelectorAll(".t[data-token-id]")) {
  const box = token.getClientRects()[0];
  token.dataset.left = box.left;
  token.dataset.right = box.right;
  token.dataset.top = box.top;
  token.dataset.bottom = box.bottom;
}
</script>
"""


def test_browser_keeps_right_to_left_tokens_in_order(browser: str, tmp_path: Path) -> None:
    """Each token must sit right of the one before it on its line, whatever its script.

    Without bidi isolation the browser lays a run of Arabic or Hebrew tokens out from
    right to left, so the first token of a word is drawn last. The page is measured by a
    copy of it with a script added (and the policy that forbids scripts taken out).
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
    result = _run_browser(
        browser, tmp_path / "profile", "--window-size=1600,900", "--dump-dom", measured.as_uri()
    )
    tokens = parse_page(result.stdout.decode("utf-8")).tokens
    assert [int(token["data-token-id"]) for token in tokens] == tokenizer.encode(_RTL_TEXT)
    rtl = [
        token for token in tokens if re.search("[\u0590-\u06ff]", token["text"])
    ]  # whole Hebrew or Arabic characters
    partial = [token for token in tokens if token["text"].startswith("⟨")]
    assert len(rtl) >= 4 and len(partial) >= 2  # the page holds what this test is about
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


def test_browser_legend_names_every_marker(browser: str, tmp_path: Path) -> None:
    page_path = tmp_path / "empty.html"
    page_path.write_text(render_html([]), encoding="utf-8")
    result = _run_browser(browser, tmp_path / "profile", "--dump-dom", page_path.as_uri())
    dom = result.stdout.decode("utf-8")
    legend = re.sub(r"<[^>]+>", "", dom[dom.index('<p class="legend">') :].split("</p>")[0])
    for char in (" ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\u200b"):
        marker = marker_for(char)
        assert marker is not None and marker in legend, (char, legend)
    assert "␍ carriage return" in legend


def _rgb_set(colours: tuple[str, ...]) -> set[tuple[int, int, int]]:
    return {(int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)) for c in colours}


def _png_colours(
    data: bytes, wanted: set[tuple[int, int, int]]
) -> tuple[int, int, set[tuple[int, int, int]]]:
    """A tiny PNG reader: (width, height, colours seen), for 8-bit RGB or RGBA images.

    It stops as soon as every `wanted` colour has been seen, because unfiltering
    rows in pure Python is slow and the tokens sit near the top of the page.
    """
    position = 8
    idat = bytearray()
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour_type in {2, 6}, body
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    previous = bytearray(stride)
    seen: set[tuple[int, int, int]] = set()
    for row in range(height):
        start = row * (stride + 1)
        line = _unfilter(
            raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, channels
        )
        seen.update(zip(line[0::channels], line[1::channels], line[2::channels], strict=True))
        if wanted <= seen:
            break
        previous = line
    return width, height, seen


def _unfilter(kind: int, line: bytearray, previous: bytearray, channels: int) -> bytearray:
    if kind == 0:
        return line
    if kind == 2:  # Up
        return bytearray((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
    for x in range(len(line)):
        left = line[x - channels] if x >= channels else 0
        up = previous[x]
        if kind == 1:  # Sub
            line[x] = (line[x] + left) & 0xFF
        elif kind == 3:  # Average
            line[x] = (line[x] + (left + up) // 2) & 0xFF
        else:  # Paeth
            corner = previous[x - channels] if x >= channels else 0
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[x] = (line[x] + predictor) & 0xFF
    return line


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
    browser: str, eval_page: tuple[list[int], Path], tmp_path: Path
) -> None:
    counts, page_path = eval_page
    result = _run_browser(browser, tmp_path / "profile", "--dump-dom", page_path.as_uri())
    dom = _EvalDom()
    dom.feed(result.stdout.decode("utf-8"))
    # The names were escaped: the browser built no <b>, and no <script> exists at all.
    assert dom.tags["b"] == 0 and dom.tags["i"] == 0 and dom.tags["script"] == 0
    assert dom.tags["svg"] == 3  # two texts and the overall chart
    assert len(dom.bars) == 6
    size = len(_TEXT.encode("utf-8"))
    assert [bar["data-value"] for bar in dom.bars[:2]] == [
        str(round(size / count, 4)) for count in counts
    ]
    assert dom.bars[1]["data-model"] == f"{_HOSTILE_NAME}.json"
    assert _HOSTILE_NAME in result.stdout.decode("utf-8").replace("&lt;", "<").replace(
        "&gt;", ">"
    ).replace("&amp;", "&")


def test_browser_eval_screenshot_shows_the_bars(
    browser: str, eval_page: tuple[list[int], Path], tmp_path: Path
) -> None:
    _, page_path = eval_page
    screenshot = tmp_path / "eval.png"
    _run_browser(
        browser,
        tmp_path / "profile",
        f"--screenshot={screenshot}",
        "--window-size=1000,700",
        page_path.as_uri(),
    )
    wanted = _rgb_set(BAR_COLOURS[:2])
    width, height, colours = _png_colours(screenshot.read_bytes(), wanted=wanted)
    assert (width, height) == (1000, 700)
    assert wanted <= colours  # the SVG bars were painted in each model's colour
