"""The display pieces, the plain and HTML renderers, and the vocabulary statistics.

Expected labels are computed here from the raw bytes with a deliberately small rule
(decode or hex, four whitespace markers), never by the code under test.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Tokenizer, reference
from bpetite.visualize import (
    PALETTE,
    TokenPiece,
    corpus_stats,
    make_piece,
    render_html,
    render_plain,
    summarize,
    token_pieces,
    visible,
    vocabulary_stats,
)
from bpetite.visualize._html import marker_for, visible_name, visible_parts
from tests.rendering import expected_label, parse_page, parse_plain

# A corpus that makes merged tokens out of pipes, backslashes, brackets and the
# inner bytes of emoji, so the renderers meet every awkward case.
_CORPUS = (
    "Hello world! Hello there. " * 20
    + "😀😀 🎉🎉 😀🎉 你好 你好 |pipe| \\back\\ [x] <b>&amp;</b> \"q\" 'a' " * 10
    + "\t\tindent\n\n\nlines\n" * 10
)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(_CORPUS, 300)


def _specials(tokenizer: Tokenizer) -> set[int]:
    return set(tokenizer.special_tokens.values())


def _pieces_of(tokenizer: Tokenizer, text: str) -> list[TokenPiece]:
    return token_pieces(tokenizer.encode(text), tokenizer.vocab, _specials(tokenizer))


# --------------------------------------------------------------------------- pieces


def test_an_emoji_split_in_two_tokens_shows_each_half_as_hex() -> None:
    """😀 is f0 9f 98 80; with two merges learned on it the encoder cuts it f0 | 9f 98 80.

    Hand-derived: all three pairs occur 5 times, the tie goes to the smallest pair
    (0x98, 0x80); then (0x9f, 256) wins over (0xf0, 0x9f) the same way.
    """
    tokenizer = Tokenizer.train("😀" * 5, 258)
    assert tokenizer.merges == ((0x98, 0x80), (0x9F, 256))
    ids = tokenizer.encode("😀")
    assert ids == [0xF0, 257]
    pieces = token_pieces(ids, tokenizer.vocab)
    assert [piece.kind for piece in pieces] == ["partial", "partial"]
    assert [piece.label for piece in pieces] == ["⟨f0⟩", "⟨9f 98 80⟩"]
    # Together the bytes are a valid character; the display must still not pretend so.
    assert b"".join(piece.data for piece in pieces).decode("utf-8") == "😀"


def test_partial_means_not_whole_characters_on_its_own() -> None:
    assert make_piece(300, b"\xf0\x9f").label == "⟨f0 9f⟩"
    assert make_piece(300, b"\xf0\x9f").kind == "partial"
    # Whole characters followed by a cut one: still partial, all bytes shown.
    assert make_piece(301, b" \xc3").label == "⟨20 c3⟩"
    # A continuation byte first is partial even if the rest would decode.
    assert make_piece(302, b"\x80a").kind == "partial"
    assert make_piece(303, "é".encode()).label == "é"
    assert make_piece(303, "é".encode()).kind == "text"


def test_whitespace_markers_and_line_breaks() -> None:
    piece = make_piece(10, b" a\tb\r\n\n")
    assert piece.label == "·a→b␍↵↵"
    assert piece.line_breaks == 2
    assert piece.parts == (("·", True), ("a", False), ("→", True), ("b", False), ("␍↵↵", True))


def test_a_literal_middle_dot_is_text_not_a_marker() -> None:
    """Renderers style markers apart; that only works if the flag is right."""
    assert visible_parts("· ") == (("·", False), ("·", True))


@pytest.mark.parametrize(
    ("char", "marker"),
    [
        ("\x1b", "␛"),  # ESC: must never reach a terminal raw
        ("\x00", "␀"),
        ("\x7f", "␡"),
        ("\x9b", "⟨U+009B⟩"),  # the one-byte CSI of C1 controls
        ("\u00a0", "⟨U+00A0⟩"),  # no-break space
        ("\u200d", "⟨U+200D⟩"),  # zero-width joiner
        ("\u202e", "⟨U+202E⟩"),  # right-to-left override
        ("\u2028", "⟨U+2028⟩"),  # line separator
        ("\uffff", "⟨U+FFFF⟩"),  # noncharacters: a parse error in an HTML page
        ("\ufdd0", "⟨U+FDD0⟩"),
        ("\U0010fffe", "⟨U+10FFFE⟩"),
        ("a", None),
        ("·", None),
        ("你", None),
    ],
)
def test_invisible_characters_get_markers(char: str, marker: str | None) -> None:
    assert marker_for(char) == marker


def test_a_name_keeps_its_spaces_and_shows_its_bytes_and_controls() -> None:
    """A file name as a page or the terminal shows it: a byte that is not UTF-8 (a lone
    surrogate in Python) as error messages show it, a control character by its marker."""
    assert visible_name("my in\udcff\x1b[31m.txt") == "my in\\udcff␛[31m.txt"


def test_visible_leaves_no_control_character() -> None:
    every_control = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    assert not any(char.isspace() or ord(char) < 0x20 for char in visible(every_control))


def test_special_token_is_marked_special(tokenizer: Tokenizer) -> None:
    pieces = token_pieces(
        tokenizer.encode("a<|endoftext|>b"), tokenizer.vocab, _specials(tokenizer)
    )
    assert [piece.kind for piece in pieces] == ["text", "special", "text"]
    assert pieces[1].label == "<|endoftext|>"


def test_unknown_id_names_the_id_and_position(tokenizer: Tokenizer) -> None:
    with pytest.raises(KeyError, match="unknown token id 999 at position 1"):
        token_pieces([104, 999], tokenizer.vocab)


def test_summary_counts(tokenizer: Tokenizer) -> None:
    text = "Hello 😀\n"
    summary = summarize(token_pieces(tokenizer.encode(text), tokenizer.vocab))
    assert summary.tokens == len(tokenizer.encode(text))
    assert summary.bytes == len(text.encode("utf-8")) == 11
    assert summary.characters == len(text) == 8
    assert (
        summary.describe()
        == f"{summary.tokens} tokens, 11 bytes, {11 / summary.tokens:.2f} bytes per token"
    )
    assert summarize([]).describe() == "0 tokens, 0 bytes, n/a bytes per token"


# --------------------------------------------------------------------------- plain


def test_plain_rendering_by_hand() -> None:
    """ "ab\\n\\nab" with merges ab, ·ab: the newline breaks come after the separator."""
    tokenizer = Tokenizer.train("ab ab ab", 258)
    ids = tokenizer.encode("ab\n\n ab")
    assert ids == [256, 10, 10, 257]
    pieces = token_pieces(ids, tokenizer.vocab)
    assert render_plain(pieces) == "ab|↵|\n↵|\n·ab\n"
    assert render_plain(pieces, show_ids=True) == "ab[256]|↵[10]|\n↵[10]|\n·ab[257]\n"
    assert render_plain([]) == "\n"


def test_plain_escapes_separator_and_backslash() -> None:
    pieces = [make_piece(1, b"a|b"), make_piece(2, b"\\"), make_piece(3, b"<|endoftext|>")]
    assert render_plain(pieces) == "a\\|b|\\\\|<\\|endoftext\\|>\n"


_ALPHABET = st.sampled_from(
    [*"Hello world!|\\[]<>&\"' ", "\t", "\n", "😀", "🎉", "你", "好", "é", "<|endoftext|>"]
)
_TEXTS = st.lists(_ALPHABET, max_size=40).map("".join)


@given(text=_TEXTS)
def test_plain_output_splits_back_into_the_tokens(tokenizer: Tokenizer, text: str) -> None:
    ids = tokenizer.encode(text)
    output = render_plain(token_pieces(ids, tokenizer.vocab, _specials(tokenizer)))
    assert parse_plain(output) == [expected_label(tokenizer.vocab[i]) for i in ids]
    assert output.endswith("\n")


@given(text=_TEXTS)
def test_plain_ids_follow_each_token(tokenizer: Tokenizer, text: str) -> None:
    ids = tokenizer.encode(text)
    output = render_plain(token_pieces(ids, tokenizer.vocab, _specials(tokenizer)), show_ids=True)
    parsed = [re.fullmatch(r"(.*)\[(\d+)\]", label, re.DOTALL) for label in parse_plain(output)]
    assert all(parsed)
    assert [int(match.group(2)) for match in parsed if match] == ids
    assert [match.group(1) for match in parsed if match] == [
        expected_label(tokenizer.vocab[i]) for i in ids
    ]


# --------------------------------------------------------------------------- HTML


@given(text=_TEXTS)
def test_html_tokens_are_the_ids_and_bytes_in_order(tokenizer: Tokenizer, text: str) -> None:
    ids = tokenizer.encode(text)
    page = parse_page(render_html(token_pieces(ids, tokenizer.vocab, _specials(tokenizer))))
    assert [int(token["data-token-id"]) for token in page.tokens] == ids
    data = b"".join(bytes.fromhex(token["data-bytes"]) for token in page.tokens)
    assert data == text.encode("utf-8")
    assert [token["text"] for token in page.tokens] == [
        expected_label(tokenizer.vocab[i]) for i in ids
    ]
    assert page.by_id["token-count"] == str(len(ids))
    assert page.start_tags["script"] == 0


def test_html_escapes_markup_in_tokens(tokenizer: Tokenizer) -> None:
    text = '<script>alert("x")</script> <b>&amp;</b> <img src=x onerror=alert(1)>'
    html_page = render_html(_pieces_of(tokenizer, text), source="<i>model</i>")
    page = parse_page(html_page)
    assert page.start_tags["script"] == 0
    assert page.start_tags["b"] == 0
    assert page.start_tags["img"] == 0
    assert page.start_tags["i"] == 0
    assert "".join(token["text"] for token in page.tokens) == visible(text)
    assert "&lt;i&gt;model&lt;/i&gt;" in html_page


def test_html_escapes_tokens_that_would_be_markup() -> None:
    """Real tokens are pieces of pre-tokenizer chunks, so a whole ``<script>`` token needs
    a hand-made piece; ``<!--`` is a plausible merged punctuation run, and unescaped it
    would swallow the rest of the page into a comment."""
    raw = [b"<script>", b"alert(1)", b"</script>", b"<!--", b"&amp;", b"\"'>", b"-->"]
    pieces = [make_piece(300 + index, data) for index, data in enumerate(raw)]
    page = parse_page(render_html(pieces))
    assert page.start_tags["script"] == 0
    assert [token["text"] for token in page.tokens] == [data.decode() for data in raw]
    assert [token["data-token-id"] for token in page.tokens] == [str(300 + i) for i in range(7)]


def test_html_is_self_contained(tokenizer: Tokenizer) -> None:
    html_page = render_html(_pieces_of(tokenizer, "Hello world 😀"))
    page = parse_page(html_page)
    assert not [name for name, _ in page.attributes if name in {"src", "href", "srcset", "action"}]
    for needle in ("http:", "https:", "url(", "@import", "//"):
        assert needle not in html_page.replace("<!DOCTYPE html>", "")
    assert "default-src 'none'" in html_page


def test_html_header_numbers(tokenizer: Tokenizer) -> None:
    text = "Hello world 😀 你好\n"
    ids = tokenizer.encode(text)
    page = parse_page(render_html(_pieces_of(tokenizer, text)))
    n_bytes = len(text.encode("utf-8"))
    assert page.by_id["token-count"] == str(len(ids))
    assert page.by_id["byte-count"] == str(n_bytes)
    assert page.by_id["char-count"] == str(len(text))
    assert page.by_id["bytes-per-token"] == f"{n_bytes / len(ids):.2f}"
    empty = parse_page(render_html([]))
    assert empty.by_id["token-count"] == "0"
    assert empty.by_id["bytes-per-token"] == "n/a"
    assert empty.tokens == []


def test_html_neighbours_get_different_colours(tokenizer: Tokenizer) -> None:
    """Text tokens cycle through the palette; partial and special tokens alternate two
    shades, so even a run of them (the unseen 🦓 is cut into pieces) shows its boundaries."""
    text = "Hello world! Hello there. 🦓 x<|endoftext|><|endoftext|>y"
    ids = tokenizer.encode(text)
    partial = [i for i in ids if expected_label(tokenizer.vocab[i])[0] == "⟨"]
    assert len(partial) >= 2
    page = parse_page(render_html(_pieces_of(tokenizer, text)))
    classes = [token["class"] for token in page.tokens]
    assert all(names.startswith("t ") for names in classes)
    assert sum("partial" in names for names in classes) == len(partial)
    assert sum("special" in names for names in classes) == 2
    allowed = {f"t c{i}" for i in range(len(PALETTE))}
    allowed |= {"t partial p0", "t partial p1", "t special s0", "t special s1"}
    assert set(classes) <= allowed
    assert all(a != b for a, b in pairwise(classes))
    style = render_html([])
    for colour in PALETTE:
        assert colour in style


def test_html_hover_title_has_id_and_bytes(tokenizer: Tokenizer) -> None:
    page = parse_page(render_html(_pieces_of(tokenizer, "😀")))
    for token in page.tokens:
        assert f"id {token['data-token-id']}" in token["title"]
        assert bytes.fromhex(token["data-bytes"]).hex(" ") in token["title"]


def test_html_ids_switch_is_a_body_class(tokenizer: Tokenizer) -> None:
    assert '<body class="ids">' in render_html(_pieces_of(tokenizer, "a"), show_ids=True)
    assert "<body>" in render_html(_pieces_of(tokenizer, "a"))


def test_html_every_token_is_a_bidi_isolate(tokenizer: Tokenizer) -> None:
    """Without isolation a browser lays a run of Arabic or Hebrew tokens out right to left,
    so token order on screen would contradict the ids (the browser test measures it)."""
    page_text = render_html(_pieces_of(tokenizer, "Hello مرحبا שלום 😀"))
    page = parse_page(page_text)
    assert page.tokens
    assert all(token["dir"] == "auto" for token in page.tokens)
    assert re.search(r"\.t \{[^}]*unicode-bidi: isolate;", page_text)


def test_html_legend_names_every_marker_a_label_can_hold() -> None:
    """One label per kind of marker: the four whitespace markers, the control pictures,
    delete, and ⟨U+XXXX⟩; "␍" was missing, though a CRLF text shows one per line."""
    page = render_html([])
    legend = re.sub(r"<[^>]+>", "", page[page.index('<p class="legend">') :].split("</p>")[0])
    for char in (" ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\u200b"):
        marker = marker_for(char)
        assert marker is not None
        assert marker in legend, (char, marker, legend)
    for name in ("space", "tab", "newline", "carriage return", "control", "delete"):
        assert name in legend


# --------------------------------------------------------------------------- statistics


def test_first_merges_of_a_tiny_corpus() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    stats = vocabulary_stats(tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens)
    assert stats["mergeable_vocab_size"] == 258
    assert stats["merges"] == 2
    assert stats["special_tokens"] == {"<|endoftext|>": 258}
    assert stats["first_merges"][0] == {
        "rank": 0,
        "pair": [97, 98],
        "token": {"id": 256, "length": 2, "text": "ab", "hex": "61 62"},
    }
    assert stats["first_merges"][1]["token"]["text"] == " ab"
    assert stats["last_merges"] == stats["first_merges"]
    assert stats["token_length_histogram"] == [
        {"length": 1, "tokens": 256},
        {"length": 2, "tokens": 1},
        {"length": 3, "tokens": 1},
    ]
    assert [token["id"] for token in stats["longest_tokens"][:3]] == [257, 256, 0]


def test_vocabulary_stats_against_a_direct_count(tokenizer: Tokenizer) -> None:
    vocab = tokenizer.vocab
    stats = vocabulary_stats(vocab, tokenizer.merges, tokenizer.special_tokens, top=5)
    mergeable = [data for token_id, data in vocab.items() if token_id not in _specials(tokenizer)]
    assert len(mergeable) == 300 == stats["mergeable_vocab_size"]
    histogram = Counter(len(data) for data in mergeable)
    assert {row["length"]: row["tokens"] for row in stats["token_length_histogram"]} == histogram
    longest = stats["longest_tokens"]
    assert len(longest) == 5
    assert longest[0]["length"] == max(histogram)
    assert [token["length"] for token in longest] == sorted(
        (len(data) for data in mergeable), reverse=True
    )[:5]
    for token in longest:
        assert bytes.fromhex(token["hex"]) == vocab[token["id"]]
    last = stats["last_merges"]
    n_merges = len(tokenizer.merges)
    assert [merge["rank"] for merge in last] == list(range(n_merges - 5, n_merges))
    for merge in last:
        left, right = merge["pair"]
        assert vocab[left] + vocab[right] == bytes.fromhex(merge["token"]["hex"])
        assert merge["token"]["id"] == 256 + merge["rank"]


def test_partial_tokens_have_null_text() -> None:
    tokenizer = Tokenizer.train("😀" * 5, 258)
    stats = vocabulary_stats(tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens)
    assert stats["first_merges"][0]["token"] == {
        "id": 256,
        "length": 2,
        "text": None,
        "hex": "98 80",
    }


def test_top_zero_and_negative() -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    stats = vocabulary_stats(tokenizer.vocab, tokenizer.merges, {"<|endoftext|>": 258}, top=0)
    assert stats["longest_tokens"] == stats["first_merges"] == stats["last_merges"] == []
    with pytest.raises(ValueError, match="top must be at least 0, got -1"):
        vocabulary_stats(tokenizer.vocab, tokenizer.merges, {"<|endoftext|>": 258}, top=-1)


def test_corpus_stats_against_the_naive_encoder(tokenizer: Tokenizer) -> None:
    corpus = _CORPUS[:2000] + "<|endoftext|>" + "Zebra ünïcode 🦓"
    ids = reference.encode(reference.Model(tokenizer.merges), corpus)
    counts = Counter(ids)
    stats = corpus_stats(ids, tokenizer.vocab, tokenizer.special_tokens, top=3)
    n_bytes = len(corpus.encode("utf-8"))
    assert stats["bytes"] == n_bytes
    assert stats["tokens"] == len(ids)
    assert stats["tokens_per_byte"] == pytest.approx(len(ids) / n_bytes)
    assert stats["bytes_per_token"] == pytest.approx(n_bytes / len(ids))
    used = set(ids) - _specials(tokenizer)
    assert stats["distinct_tokens_used"] == len(used)
    assert stats["vocabulary_used_share"] == pytest.approx(len(used) / 300)
    assert stats["special_tokens_seen"] == 1
    frequent = stats["most_frequent_tokens"]
    assert [token["count"] for token in frequent] == sorted(counts.values(), reverse=True)[:3]
    for token in frequent:
        assert token["count"] == counts[token["id"]]
        assert token["share"] == pytest.approx(token["count"] / len(ids))


def test_corpus_stats_of_nothing(tokenizer: Tokenizer) -> None:
    stats = corpus_stats([], tokenizer.vocab, tokenizer.special_tokens)
    assert stats["tokens"] == stats["bytes"] == stats["distinct_tokens_used"] == 0
    assert stats["tokens_per_byte"] is None
    assert stats["bytes_per_token"] is None
    assert stats["most_frequent_tokens"] == []
