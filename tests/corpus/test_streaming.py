"""Streaming pre-tokenization and encoding give exactly what the whole text gives.

The reference is always the simplest computation: the preset's regex ``findall`` on
the whole text, ``bytes.decode`` on the whole data, ``Tokenizer.encode`` on the whole
text. Every test of chunks and ids runs for every preset.
"""

import io
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpetite import PRESETS, Tokenizer
from bpetite.core._patterns import SplitPattern, custom_pattern
from bpetite.corpus import _streaming as streaming
from bpetite.corpus._streaming import (
    check_block_size,
    check_file_utf8,
    check_specials,
    decode_blocks,
    encode_pieces,
    iter_chunks,
    read_blocks,
    stream_file_text,
)
from bpetite.errors import DisallowedSpecialError, InvalidUtf8Error, PatternError
from tests.strategies import any_text

#: Every preset's pattern compiled straight from its source: the whole-text reference.
REGEXES = {name: regex.compile(source) for name, source in PRESETS.items()}
NAMES = list(PRESETS)

#: Special tokens that overlap: "<|end" is a prefix of two others, "x<|" overlaps
#: them all, and "<|endoftext|>" is the spec's.
SPECIALS = ("<|endoftext|>", "<|end", "<|end|>", "x<|", "<|im_start|>user")

# What the patterns treat specially: contractions in both cases and their prefixes
# (o200k reads three characters past a word for "'re"), runs of every kind of
# whitespace (\x85 and \u3000 are \s, \x1c is not) and CR/LF mixes (cl100k's
# \s*[\r\n] and \s++$, o200k's \s*[\r\n]+), digit runs (cl100k and o200k take three),
# punctuation before "/" and newlines (o200k's [\r\n/]*), newlines between printable
# characters (the encoder cuts at the last X\nY), letters of several scripts
# and cases (o200k splits "HTMLParser" by case: Lu, Lt, Lm, Lo and marks differ),
# and the special tokens and their pieces.
_PIECES = st.sampled_from(
    [
        "a", "b", "l", "s", "v", "e", "r", "x", "X", "L", "R", "S", "ǅ", "ᵃ", "\u0301",
        "é", "ß", "中", "ا", "Ω", "😀", "👍🏽",
        "'", "'s", "'l", "'ll", "'LL", "'ve", "'re", "'Re", "'t", "'d", "'m",
        " ", "  ", "   ", "\t", "\x0b", "\x85", "\u3000", "\x1c",
        "\n", "\r", "\r\n", "\n\n", " \n", "\n ", "\r\n ", " \r\n  ",
        "1", "23", "456", "7890",
        "!", "?!", ".", "/", "!/", "./", "\n/", "//", "x\ny", "!\n!", ".\n/", "'\nl",
        "<|endoftext|>", "<|end", "<|end|>", "x<|", "<|im_start|>user", "<|", "|>", "endof",
    ]
)  # fmt: skip
tricky = st.lists(_PIECES, max_size=24).map("".join)
texts = st.one_of(tricky, any_text)


def chunks_of(pieces: Iterable[str], pattern: str | SplitPattern = "gpt2") -> list[str]:
    return [chunk for batch in iter_chunks(pieces, pattern) for chunk in batch]


def split_every(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_bytes(data: bytes, block_size: int, pattern: str = "gpt2") -> list[str]:
    pieces = decode_blocks(read_blocks(io.BytesIO(data), block_size), "mem")
    return chunks_of(list(pieces), pattern)


def test_the_references_are_independent_of_the_code() -> None:
    spec_pattern = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    assert PRESETS["gpt2"] == spec_pattern


# --------------------------------------------------------------------------- chunks


@pytest.mark.parametrize("name", NAMES)
@given(text=tricky)
def test_every_block_size_gives_the_chunks_of_the_whole_text(name: str, text: str) -> None:
    """Block sizes 1 .. len+1 over the UTF-8 bytes: boundaries inside characters too."""
    data = text.encode("utf-8")
    expected = REGEXES[name].findall(text)
    for block_size in range(1, len(data) + 2):
        assert stream_bytes(data, block_size, name) == expected, block_size


@pytest.mark.parametrize("name", NAMES)
@given(text=any_text, sizes=st.lists(st.integers(1, 64), min_size=1, max_size=8))
def test_random_block_sizes_on_longer_texts(name: str, text: str, sizes: list[int]) -> None:
    data = (text * 4).encode("utf-8")
    for block_size in sizes:
        assert stream_bytes(data, block_size, name) == REGEXES[name].findall(text * 4)


@pytest.mark.parametrize("name", NAMES)
@given(text=texts, cuts=st.lists(st.integers(0, 200)))
def test_any_cut_of_the_text_into_pieces(name: str, text: str, cuts: list[int]) -> None:
    """Not only equal blocks: arbitrary cut points, empty pieces included."""
    points = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert chunks_of(pieces, name) == REGEXES[name].findall(text)


@pytest.mark.parametrize(
    ("name", "pieces", "expected"),
    [
        # The contraction branch reads two characters past the apostrophe: holding back
        # only the last chunk would emit "'" before the second "l" arrives.
        ("gpt2", ["it'l", "l"], ["it", "'ll"]),
        ("gpt2", ["we'v", "e"], ["we", "'ve"]),
        # \s+(?!\S) gives back the last space when a letter follows.
        ("gpt2", ["a  ", "b"], ["a", " ", " b"]),
        ("gpt2", [" \n", "l"], [" ", "\n", "l"]),
        ("gpt2", ["x\r", "\ny"], ["x", "\r", "\n", "y"]),  # the newline is given back too
        ("gpt2", ["1", "2", "3"], ["123"]),
        ("gpt2", ["!", "?", " ", "!"], ["!?", " !"]),
        # cl100k: in "it'l" the apostrophe joins the letters, so one chunk is held.
        ("cl100k", ["it'l", "l"], ["it", "'ll"]),
        # \s++$ takes the spaces at a block's end whole; more text splits them.
        ("cl100k", ["a  ", "b"], ["a", " ", " b"]),
        ("cl100k", ["a \n ", " b"], ["a", " \n", " ", " b"]),
        # \s*[\r\n] reads the whole run for its last newline.
        ("cl100k", ["\n  ", "\n", "x"], ["\n  \n", "x"]),
        ("cl100k", ["x\r", "\ny"], ["x", "\r\n", "y"]),
        ("cl100k", ["12", "34"], ["123", "4"]),
        ("cl100k", ["!", "\r", "\n", "x"], ["!\r\n", "x"]),
        # o200k: a word reads "'re" past its end; "we'r" is "we", "'r" until "e" comes.
        ("o200k", ["we'r", "e"], ["we're"]),
        ("o200k", ["WE'L", "L go"], ["WE'LL", " go"]),
        # \s*[\r\n]+ backtracks a run at the end to its last newline: "\n", "  ".
        ("o200k", ["\n  ", "\n", "x"], ["\n  \n", "x"]),
        ("o200k", ["a!\n", "/b"], ["a", "!\n/", "b"]),
        ("o200k", ["12", "34"], ["123", "4"]),
        ("o200k", ["Hello", "World"], ["Hello", "World"]),
        ("o200k", ["HTML", "Parser"], ["HTMLParser"]),
    ],
)
def test_hand_picked_block_boundaries(name: str, pieces: list[str], expected: list[str]) -> None:
    """Cases where holding back too few chunks, or none, gives the wrong chunks."""
    assert REGEXES[name].findall("".join(pieces)) == expected
    assert chunks_of(pieces, name) == expected
    assert chunks_of(["".join(pieces)], name) == expected
    assert chunks_of(list("".join(pieces)), name) == expected


@pytest.mark.parametrize(
    ("name", "pieces"),
    [
        ("gpt2", ["it'l", "l"]),
        ("o200k", ["we'r", "e"]),
        ("o200k", ["x\n  ", "\n"]),
    ],
)
def test_holding_back_one_chunk_fewer_would_be_wrong(
    monkeypatch: pytest.MonkeyPatch, name: str, pieces: list[str]
) -> None:
    """The counts are tight: one chunk fewer splits a contraction or a newline run."""
    fewer = dict(streaming.HELD_BACK_CHUNKS)
    fewer[name] -= 1
    monkeypatch.setattr(streaming, "HELD_BACK_CHUNKS", fewer)
    assert chunks_of(pieces, name) != REGEXES[name].findall("".join(pieces))


def test_a_long_run_is_not_rescanned_once_per_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 300,000-letter chunk in 1,000-character pieces: linear work, not quadratic."""
    monkeypatch.setattr(streaming, "RESCAN_SLACK", 4096)
    scanned = 0

    class Counting:
        def findall(self, text: str) -> list[str]:
            nonlocal scanned
            scanned += len(text)
            return cast(list[str], REGEXES["gpt2"].findall(text))

    counting = SplitPattern("gpt2", PRESETS["gpt2"], cast(regex.Pattern[str], Counting()))
    text = "x" * 300_000 + " y  z"
    assert chunks_of(split_every(text, 1000), counting) == REGEXES["gpt2"].findall(text)
    assert scanned < 4 * len(text)


@pytest.mark.parametrize("name", NAMES)
@given(text=tricky)
def test_prefix_up_to_a_non_whitespace_chunk_tokenizes_the_same(name: str, text: str) -> None:
    """What encode_pieces relies on, for every preset; cutting after whitespace is not safe."""
    chunks = REGEXES[name].findall(text)
    for end in range(1, len(chunks) + 1):
        if not regex.match(r"\s", chunks[end - 1][-1]):
            assert REGEXES[name].findall("".join(chunks[:end])) == chunks[:end]


@pytest.mark.parametrize(
    ("name", "text", "chunks"),
    [
        ("gpt2", " \nl", [" ", "\n", "l"]),  # \s+(?!\S) gave "\n" back because of "l"
        ("cl100k", "\n  a", ["\n", " ", " a"]),  # \s*[\r\n] read the run to "a"
    ],
)
def test_prefix_after_whitespace_can_tokenize_differently(
    name: str, text: str, chunks: list[str]
) -> None:
    assert REGEXES[name].findall(text) == chunks
    assert REGEXES[name].findall("".join(chunks[:2])) == ["".join(chunks[:2])]


# --------------------------------------------------------------------------- custom patterns

#: A pattern with an unbounded lookahead: whether "ab" is one chunk depends on a "!"
#: anywhere later, so no number of held-back chunks is safe for it.
LOOKAHEAD = r"[a-z]+(?=[^!]*!)|[\s\S]"


def test_a_custom_pattern_can_look_past_any_number_of_chunks() -> None:
    pattern = regex.compile(LOOKAHEAD)
    text = "ab " + "c " * 10 + "!"
    assert pattern.findall(text)[0] == "ab"
    assert pattern.findall(text[:-1])[:2] == ["a", "b"]  # without the "!", 20+ chunks later


@given(text=st.text("ab !\n", max_size=30), cuts=st.lists(st.integers(0, 30)))
def test_a_custom_pattern_streams_exactly_by_splitting_whole(text: str, cuts: list[int]) -> None:
    pattern = custom_pattern(LOOKAHEAD)
    points = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert chunks_of(pieces, pattern) == regex.findall(LOOKAHEAD, text)
    assert chunks_of(split_every(text, 1), LOOKAHEAD) == regex.findall(LOOKAHEAD, text)


@pytest.mark.parametrize("pieces", [["ab  ", "!"], ["ab", " ", "c", " ", "!"], list("ab cd !")])
def test_a_custom_pattern_waits_for_the_end_of_the_text(pieces: list[str]) -> None:
    """Three chunks held back would emit "a", "b" before the "!" that makes "ab" one."""
    expected = regex.findall(LOOKAHEAD, "".join(pieces))
    assert expected[0] == "ab"
    assert chunks_of(pieces, LOOKAHEAD) == expected
    tokenizer = Tokenizer.train("ab ab! ab", 260, pattern=LOOKAHEAD)
    assert streamed(tokenizer, pieces) == tokenizer.encode("".join(pieces))


def test_a_custom_pattern_that_drops_text_fails_in_streaming_too() -> None:
    with pytest.raises(PatternError, match="unmatched"):
        chunks_of(["ab", " c"], r"[a-z]+")
    with pytest.raises(PatternError, match="unmatched"):
        chunks_of(["ab", " c!"], r"[a-z]+|\s")  # the last character
    with pytest.raises(PatternError, match="empty string"):
        chunks_of(["ab"], r"a|(?=b)|b")


def test_a_custom_pattern_hands_out_its_chunks_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "CHUNK_BATCH", 2)
    text = "ab cd ef!"
    batches = list(iter_chunks(split_every(text, 2), LOOKAHEAD))
    assert [chunk for batch in batches for chunk in batch] == regex.findall(LOOKAHEAD, text)
    assert max(map(len, batches)) == 2


# --------------------------------------------------------------------------- decoding


@given(st.binary(max_size=24))
def test_decoding_in_blocks_matches_bytes_decode(data: bytes) -> None:
    """Same text, or an error at exactly the offset ``bytes.decode`` reports."""
    try:
        expected: str | int = data.decode("utf-8")
    except UnicodeDecodeError as error:
        expected = error.start
    for block_size in range(1, len(data) + 2):
        try:
            got: str | int = "".join(decode_blocks(read_blocks(io.BytesIO(data), block_size), "m"))
        except InvalidUtf8Error as error:
            got = error.offset
        assert got == expected, block_size


@given(tricky, st.binary(min_size=1, max_size=4), st.integers(0, 40))
def test_invalid_bytes_spliced_into_text(text: str, junk: bytes, at: int) -> None:
    raw = text.encode("utf-8")
    data = raw[:at] + junk + raw[at:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        for block_size in (1, 2, 3, 5, 7, 64):
            with pytest.raises(InvalidUtf8Error) as caught:
                for _ in decode_blocks(read_blocks(io.BytesIO(data), block_size), "m"):
                    pass
            assert caught.value.offset == error.start
            assert caught.value.byte == data[error.start]


@pytest.mark.parametrize(
    ("data", "block_size", "offset", "reason"),
    [
        (b"hello \xff world", 1024, 6, "invalid start byte"),  # in the middle
        (b"abc\xff", 3, 3, "invalid start byte"),  # first byte of a block
        (b"ab\xc3(", 3, 2, "invalid continuation byte"),  # a lead byte ends a block
        ("ok \u20ac".encode()[:-1], 4, 3, "unexpected end of data"),  # truncated at EOF
        ("ok \u20ac".encode()[:-1], 1, 3, "unexpected end of data"),
        (b"\xed\xa0\x80", 1, 0, "invalid continuation byte"),  # an encoded surrogate
        (b"ab\xc0\xaf", 2, 2, "invalid start byte"),  # an overlong encoding
    ],
)
def test_invalid_utf8_offsets(data: bytes, block_size: int, offset: int, reason: str) -> None:
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8")
    assert whole.value.start == offset
    with pytest.raises(InvalidUtf8Error) as caught:
        list(decode_blocks(read_blocks(io.BytesIO(data), block_size), "corpus.txt"))
    assert str(caught.value) == (
        f"corpus.txt: invalid UTF-8 at byte offset {offset} (byte 0x{data[offset]:02x}: {reason})"
    )
    assert isinstance(caught.value, ValueError)


def test_file_ranges_report_offsets_in_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"line one\nline two \xff\nline three\n")
    assert "".join(stream_file_text(str(path), block_size=3, start=0, end=9)) == "line one\n"
    with pytest.raises(InvalidUtf8Error) as caught:
        list(stream_file_text(str(path), block_size=3, start=9, end=20))
    assert caught.value.offset == 18
    assert caught.value.source == str(path)
    with pytest.raises(InvalidUtf8Error, match="byte offset 18"):
        check_file_utf8(str(path), 2)


def test_progress_sees_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes("héllo wörld\n".encode() * 10)
    seen: list[int] = []
    text = "".join(stream_file_text(str(path), block_size=7, on_bytes=seen.append))
    assert text == path.read_bytes().decode("utf-8")
    assert sum(seen) == path.stat().st_size
    assert max(seen) == 7


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "8"])
def test_block_size_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="block_size"):
        check_block_size(bad)


# --------------------------------------------------------------------------- encoding

CORPUS = (
    "it's the end of the line, isn't it? WE'LL see 12 34 567!! é中😀 HTMLParser ǅx ᵃb "
    "<|endoftext|> text   spaces\r\n\ttabs endoftext <|end trailing \nspace \n path/to/x.\n/y "
    "x<|end|> <|im_start|>user\n"
) * 20


@pytest.fixture(scope="module", params=NAMES)
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    return Tokenizer.train(CORPUS, 330, pattern=request.param, special_tokens=SPECIALS)


def streamed(tokenizer: Tokenizer, pieces: Iterable[str], **policy: Any) -> list[int]:
    batches = encode_pieces(tokenizer, pieces, **policy)
    return [i for batch in batches for i in batch]


@given(text=texts)
def test_streamed_encode_equals_encode_for_every_piece_size(
    tokenizer: Tokenizer, text: str
) -> None:
    expected = tokenizer.encode(text)
    for size in range(1, len(text) + 2):
        assert streamed(tokenizer, split_every(text, size)) == expected, size


@given(text=tricky, cuts=st.lists(st.integers(0, 120)))
def test_streamed_encode_for_any_cut(tokenizer: Tokenizer, text: str, cuts: list[int]) -> None:
    points = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert streamed(tokenizer, pieces) == tokenizer.encode(text)


@pytest.mark.parametrize(
    "pieces",
    [
        ["a <|endof", "text|> b"],  # a special split across blocks
        ["<", "|", "endoftext", "|", ">"],
        ["x<|endoftext|", ">", "<|endoftext|><|endoftext", "|>y"],
        ["<|endoftext|> <|endoftex", "t"],  # a partial special that never completes
        # "<|end" is complete, but "<|end|>" and "<|endoftext|>" would win if they came.
        ["a<|end", "|>b"],
        ["a<|end", "oftext|>b"],
        ["a<|end", "of"],
        ["a<|end", " b"],
        # "x<|" starts left of "<|end|>", so it wins; a lone "x" does not.
        ["ax", "<|end|>"],
        ["a", "x", "<", "|", "end|>"],
        ["<|im_start|>use", "r\n", "<|im_start|>use", "!"],
        ["  ", "\n", "l", "'", "ll"],
        # Cutting after the whitespace chunk "\n" would encode "a \n" as " \n" (gpt2).
        ["a \nl b", " c"],
        ["we'r", "e ", "HTML", "Parser", "\n  ", "\n", "!\n", "/x"],
    ],
)
def test_streamed_encode_hand_picked_boundaries(tokenizer: Tokenizer, pieces: list[str]) -> None:
    text = "".join(pieces)
    assert streamed(tokenizer, pieces) == tokenizer.encode(text)
    assert streamed(tokenizer, list(text)) == tokenizer.encode(text)


def test_the_specials_overlap_as_the_cases_need(tokenizer: Tokenizer) -> None:
    """Leftmost, then longest: the cases above really exercise both rules."""
    ids = tokenizer.special_tokens
    assert tokenizer.encode("a<|end|>")[-1] == ids["<|end|>"]
    assert tokenizer.encode("a<|end b")[1] == ids["<|end"]
    assert tokenizer.encode("ax<|end|>")[-2:] != [ids["<|end|>"]]
    assert ids["x<|"] in tokenizer.encode("ax<|end|>")


_POLICIES = st.sampled_from(
    [
        {},
        {"allowed_special": set(), "disallowed_special": ()},
        {"allowed_special": set(), "disallowed_special": "all"},
        {"allowed_special": {"<|end"}, "disallowed_special": "all"},
        {"allowed_special": {"<|end|>", "x<|"}, "disallowed_special": ()},
        {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"<|end"}},
    ]
)


def outcome(run: Callable[[], object]) -> object:
    """What `run` returns, or the message of the DisallowedSpecialError it raises instead."""
    try:
        return run()
    except DisallowedSpecialError as error:
        return str(error)


@given(text=tricky, policy=_POLICIES)
def test_streamed_encode_follows_the_special_policy(
    tokenizer: Tokenizer, text: str, policy: dict[str, Any]
) -> None:
    """Same ids, or the same error at the same position, for every piece size."""
    expected = outcome(partial(tokenizer.encode, text, **policy))
    for size in (1, 2, 3, 5, 13, len(text) + 1):
        got = outcome(partial(streamed, tokenizer, split_every(text, size), **policy))
        assert got == expected, size


@given(text=tricky)
def test_check_specials_raises_exactly_where_encode_would(tokenizer: Tokenizer, text: str) -> None:
    safe: dict[str, Any] = {"allowed_special": set(), "disallowed_special": "all"}
    expected = outcome(partial(tokenizer.encode, text, **safe))
    for size in range(1, len(text) + 2):
        pieces = split_every(text, size)
        got = outcome(partial(list, check_specials(tokenizer, pieces, **safe)))
        if isinstance(expected, str):
            assert got == expected, size
        else:
            assert got == pieces, size


def test_check_specials_yields_the_pieces_unchanged(tokenizer: Tokenizer) -> None:
    pieces = ["a<|e", "nd", "|>b"]
    assert list(check_specials(tokenizer, pieces)) == pieces
    with pytest.raises(DisallowedSpecialError, match=r"'<\|end\|>' at position 1"):
        list(check_specials(tokenizer, pieces, allowed_special=set(), disallowed_special="all"))


def test_a_bad_policy_fails_before_reading(tokenizer: Tokenizer) -> None:
    def never() -> Iterable[str]:
        raise AssertionError("read")
        yield ""

    with pytest.raises(TypeError, match="allowed_special must be 'all' or a collection"):
        encode_pieces(tokenizer, never(), allowed_special="none")


def test_streamed_encode_of_a_file_in_blocks(
    tokenizer: Tokenizer, tmp_path: Path, shakespeare_text: str
) -> None:
    text = shakespeare_text[:20_000] + "<|endoftext|>" + shakespeare_text[20_000:40_000]
    path = tmp_path / "s.txt"
    path.write_bytes(text.encode("utf-8"))
    for block_size in (1, 13, 4096):
        pieces = stream_file_text(str(path), block_size=block_size)
        assert streamed(tokenizer, pieces) == tokenizer.encode(text), block_size


@given(text=st.text("ab !\n<|endoftext|>", max_size=30))
def test_streamed_encode_with_a_custom_pattern_encodes_whole(text: str) -> None:
    tokenizer = Tokenizer.train("ab ab! ab", 260, pattern=LOOKAHEAD)
    for size in (1, 2, 7):
        assert streamed(tokenizer, split_every(text, size)) == tokenizer.encode(text)


@pytest.mark.parametrize("name", NAMES)
@given(text=tricky)
def test_streamed_encode_without_special_tokens(name: str, text: str) -> None:
    """No special tokens at all: every character is ordinary, "<|endoftext|>" included."""
    tokenizer = plain_tokenizers(name)
    for size in (1, 3, len(text) + 1):
        assert streamed(tokenizer, split_every(text, size)) == tokenizer.encode(text), size


_plain: dict[str, Tokenizer] = {}


def plain_tokenizers(name: str) -> Tokenizer:
    if name not in _plain:
        _plain[name] = Tokenizer.train(CORPUS, 300, pattern=name, special_tokens=())
    return _plain[name]
