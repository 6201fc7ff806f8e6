"""Streaming pre-tokenization and encoding give exactly what the whole text gives.

The reference is always the simplest computation: the pattern's ``findall`` on the
whole text, ``bytes.decode`` on the whole data, ``Tokenizer.encode`` on the whole text.
"""

import io
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpetite import InvalidUtf8Error, Tokenizer
from bpetite import _streaming as streaming
from bpetite._streaming import (
    check_block_size,
    check_file_utf8,
    decode_blocks,
    encode_pieces,
    iter_chunks,
    read_blocks,
    stream_file_text,
)
from tests.reference import SPEC_PATTERN
from tests.strategies import any_text

SPEC = regex.compile(SPEC_PATTERN)

# Everything the pattern treats specially: contractions and their prefixes, runs of
# every kind of whitespace (\x85 and \u3000 are \s, \x1c is not), multi-byte and
# astral characters, digits, punctuation runs, and the special token's pieces.
_PIECES = st.sampled_from(
    [
        "a", "b", "l", "s", "v", "e", "r", "X", "'", "'s", "'l", "'ll", "'ve", "'re", "'t",
        " ", "  ", "   ", "\n", "\r\n", "\t", "\x0b", "\x85", "\u3000", "\x1c",
        "1", "23", "!", "?!", ".", "é", "中", "😀", "👍🏽", "<|endoftext|>", "<|", "|>", "endof",
    ]
)  # fmt: skip
tricky = st.lists(_PIECES, max_size=24).map("".join)
texts = st.one_of(tricky, any_text)


def chunks_of(pieces: list[str]) -> list[str]:
    return [chunk for batch in iter_chunks(pieces) for chunk in batch]


def split_every(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_bytes(data: bytes, block_size: int) -> list[str]:
    pieces = decode_blocks(read_blocks(io.BytesIO(data), block_size), "mem")
    return chunks_of(list(pieces))


# --------------------------------------------------------------------------- chunks


@given(tricky)
def test_every_block_size_gives_the_chunks_of_the_whole_text(text: str) -> None:
    """Block sizes 1 .. len+1 over the UTF-8 bytes: boundaries inside characters too."""
    data = text.encode("utf-8")
    expected = SPEC.findall(text)
    for block_size in range(1, len(data) + 2):
        assert stream_bytes(data, block_size) == expected, block_size


@given(any_text, st.lists(st.integers(1, 64), min_size=1, max_size=8))
def test_random_block_sizes_on_longer_texts(text: str, sizes: list[int]) -> None:
    data = (text * 4).encode("utf-8")
    for block_size in sizes:
        assert stream_bytes(data, block_size) == SPEC.findall(text * 4)


@given(texts, st.lists(st.integers(0, 200)))
def test_any_cut_of_the_text_into_pieces(text: str, cuts: list[int]) -> None:
    """Not only equal blocks: arbitrary cut points, empty pieces included."""
    points = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert chunks_of(pieces) == SPEC.findall(text)


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        # The contraction branch reads two characters past the apostrophe: holding back
        # only the last chunk would emit "'" before the second "l" arrives.
        (["it'l", "l"], ["it", "'ll"]),
        (["we'v", "e"], ["we", "'ve"]),
        # \s+(?!\S) gives back the last space when a letter follows.
        (["a  ", "b"], ["a", " ", " b"]),
        ([" \n", "l"], [" ", "\n", "l"]),
        (["x\r", "\ny"], ["x", "\r", "\n", "y"]),  # the newline is given back too
        (["1", "2", "3"], ["123"]),
        (["!", "?", " ", "!"], ["!?", " !"]),
    ],
)
def test_hand_picked_block_boundaries(pieces: list[str], expected: list[str]) -> None:
    """Cases where holding back fewer than two chunks, or none, gives the wrong chunks."""
    assert SPEC.findall("".join(pieces)) == expected
    assert chunks_of(pieces) == expected
    assert chunks_of(["".join(pieces)]) == expected


def test_holding_back_one_chunk_would_be_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule is tight: with one chunk held back, "it'l" + "l" splits the contraction."""
    monkeypatch.setattr(streaming, "HELD_BACK_CHUNKS", 1)
    assert chunks_of(["it'l", "l"]) != SPEC.findall("it'll")


def test_a_long_run_is_not_rescanned_once_per_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 300,000-letter chunk in 1,000-character pieces: linear work, not quadratic."""
    monkeypatch.setattr(streaming, "RESCAN_SLACK", 4096)
    scanned = 0

    class Counting:
        def findall(self, text: str) -> list[str]:
            nonlocal scanned
            scanned += len(text)
            return SPEC.findall(text)

    monkeypatch.setattr(streaming, "PRETOKENIZER", Counting())
    text = "x" * 300_000 + " y  z"
    assert chunks_of(split_every(text, 1000)) == SPEC.findall(text)
    assert scanned < 4 * len(text)


@given(tricky)
def test_prefix_up_to_a_non_whitespace_chunk_tokenizes_the_same(text: str) -> None:
    """What encode_pieces relies on; cutting after a whitespace chunk is not safe."""
    chunks = SPEC.findall(text)
    for end in range(1, len(chunks) + 1):
        if not regex.match(r"\s", chunks[end - 1][-1]):
            assert SPEC.findall("".join(chunks[:end])) == chunks[:end]


def test_prefix_after_whitespace_can_tokenize_differently() -> None:
    chunks = SPEC.findall(" \nl")
    assert chunks == [" ", "\n", "l"]
    assert SPEC.findall("".join(chunks[:2])) == [" \n"]


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


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    corpus = (
        "it's the end of the line, isn't it? we'll see 12 34 567!! é中😀 "
        "<|endoftext|> text   spaces\r\n\ttabs endoftext <|end trailing \nspace \n"
    ) * 20
    return Tokenizer.train(corpus, 330)


@given(texts)
def test_streamed_encode_equals_encode_for_every_piece_size(
    tokenizer: Tokenizer, text: str
) -> None:
    expected = tokenizer.encode(text)
    for size in range(1, len(text) + 2):
        got = [i for batch in encode_pieces(tokenizer, split_every(text, size)) for i in batch]
        assert got == expected, size


@pytest.mark.parametrize(
    "pieces",
    [
        ["a <|endof", "text|> b"],  # the literal split across blocks
        ["<", "|", "endoftext", "|", ">"],
        ["x<|endoftext|", ">", "<|endoftext|><|endoftext", "|>y"],
        ["<|endoftext|> <|endoftex", "t"],  # a partial literal that never completes
        ["  ", "\n", "l", "'", "ll"],
        # Cutting after the whitespace chunk "\n" would encode "a \n" as " \n".
        ["a \nl b", " c"],
    ],
)
def test_streamed_encode_hand_picked_boundaries(tokenizer: Tokenizer, pieces: list[str]) -> None:
    text = "".join(pieces)
    got = [i for batch in encode_pieces(tokenizer, pieces) for i in batch]
    assert got == tokenizer.encode(text)
    assert tokenizer.encode(" \n") != tokenizer.encode(" ") + tokenizer.encode("\n")


def test_streamed_encode_of_a_file_in_blocks(
    tokenizer: Tokenizer, tmp_path: Path, shakespeare_text: str
) -> None:
    text = shakespeare_text[:20_000] + "<|endoftext|>" + shakespeare_text[20_000:40_000]
    path = tmp_path / "s.txt"
    path.write_bytes(text.encode("utf-8"))
    for block_size in (1, 13, 4096):
        pieces = stream_file_text(str(path), block_size=block_size)
        got = [i for batch in encode_pieces(tokenizer, pieces) for i in batch]
        assert got == tokenizer.encode(text), block_size
