"""decode(errors=...) and the stream decoder, against Python's own UTF-8 decoder.

The oracle is ``bytes.decode`` of the tokens' bytes (tiktoken's definition of
``decode(ids, errors)``), and for "as soon as it is whole" the text every possible
continuation agrees on: whatever bytes come next, that much is settled.
"""

import os
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import StreamDecoder, Tokenizer
from bpetite.errors import ParameterError, UnknownTokenError
from tests.strategies import ROUNDTRIP_CASES

EXAMPLES = int(os.environ.get("BPETITE_STREAM_EXAMPLES", "300"))
#: The usual policies, and two more of Python's error handlers, which decode takes as tiktoken does.
ERRORS = [*StreamDecoder.ERRORS, "backslashreplace", "surrogateescape"]
CORPUS = " ".join(ROUNDTRIP_CASES.values()) * 3 + " naïve café 東京 😀👍🏽 " * 20

#: Bytes that complete any pending prefix of a UTF-8 character (E0 needs A0.., ED 80..9F,
#: F0 90.., F4 80..8F) or break it: after each, the decodings of what came before differ
#: from the first byte not yet settled.
PROBES = (b"A", b"\x80\x80\x80", b"\x90\x80\x80", b"\xa0\x80\x80")


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    """Merged tokens that cut characters, every byte alone, and two specials."""
    return Tokenizer.train(CORPUS, 400, special_tokens=["<|endoftext|>", "<|é|>"])


@cache  # one strategy per tokenizer, not a new one built for every example
def id_lists(tokenizer: Tokenizer) -> st.SearchStrategy[list[int]]:
    every_id = st.integers(0, tokenizer.n_vocab - 1)
    # Mostly the ids of real text, cut anywhere, with arbitrary ids mixed in.
    real = st.text(max_size=30).map(tokenizer.encode_ordinary)
    mixed = st.tuples(real, st.lists(every_id, max_size=5), real).map(lambda p: p[0] + p[1] + p[2])
    return st.one_of(st.lists(every_id, max_size=40), real, mixed)


def settled(data: bytes) -> str:
    """The text every continuation of `data` starts with: the longest common prefix."""
    decodings = [(data + probe).decode("utf-8", errors="replace") for probe in PROBES]
    common = decodings[0]
    for other in decodings[1:]:
        length = 0
        while length < min(len(common), len(other)) and common[length] == other[length]:
            length += 1
        common = common[:length]
    return common


@pytest.mark.parametrize("errors", ERRORS)
@given(data=st.data())
@settings(max_examples=EXAMPLES)
def test_decode_is_bytes_decode_of_the_tokens_bytes(
    tokenizer: Tokenizer, errors: str, data: st.DataObject
) -> None:
    ids = data.draw(id_lists(tokenizer))
    raw = b"".join(tokenizer.vocab[token] for token in ids)
    try:
        expected = raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            tokenizer.decode(ids, errors=errors)
        return
    assert tokenizer.decode(ids, errors=errors) == expected
    assert tokenizer.decode_batch([ids, [], ids], errors=errors) == [expected, "", expected]


def test_sampled_ids_never_break_a_replace_loop(tokenizer: Tokenizer) -> None:
    """The issue's nanoGPT loop: the ids of one character cut in half."""
    cut = [0xC3]  # the first byte of "é"
    assert tokenizer.decode(cut, errors="replace") == "\ufffd"
    assert tokenizer.decode([0xC3, 0x41], errors="ignore") == "A"
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode(cut)


def test_decode_refuses_an_unknown_errors_policy(tokenizer: Tokenizer) -> None:
    with pytest.raises(ParameterError, match="such as 'strict', 'replace', 'ignore', got 'nope'"):
        tokenizer.decode([65], errors="nope")
    with pytest.raises(ParameterError, match="got None"):
        tokenizer.stream_decoder(errors=None)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="got 'nope'"):
        tokenizer.decode_batch([[65]], errors="nope")


@pytest.mark.parametrize("errors", ERRORS)
@given(data=st.data())
@settings(max_examples=EXAMPLES)
def test_stream_steps_join_to_decode_and_each_is_settled_text(
    tokenizer: Tokenizer, errors: str, data: st.DataObject
) -> None:
    ids = data.draw(id_lists(tokenizer))
    stream = tokenizer.stream_decoder(errors=errors)
    pieces: list[str] = []
    raw = b""
    try:
        for token in ids:
            pieces.append(stream.step(token))
            raw += tokenizer.vocab[token]
            if errors == "replace":
                # Exactly the settled text so far: nothing early, nothing late.
                assert "".join(pieces) == settled(raw)
            assert len(stream.pending) <= 3
        pieces.append(stream.flush())
    except UnicodeDecodeError:
        assert errors == "strict"
        with pytest.raises(UnicodeDecodeError):
            tokenizer.decode(ids)
        return
    assert "".join(pieces) == tokenizer.decode(ids, errors=errors)
    assert stream.pending == b""


@given(data=st.data())
@settings(max_examples=EXAMPLES)
def test_a_strict_step_that_fails_changes_nothing(
    tokenizer: Tokenizer, data: st.DataObject
) -> None:
    ids = data.draw(id_lists(tokenizer))
    stream = tokenizer.stream_decoder()
    accepted: list[int] = []
    out = ""
    for token in ids:
        before = stream.pending
        try:
            out += stream.step(token)
        except UnicodeDecodeError:
            assert stream.pending == before
            continue
        accepted.append(token)
    # What was accepted decodes, as a whole, to what the steps returned plus the rest.
    raw = b"".join(tokenizer.vocab[token] for token in accepted)
    assert raw.startswith(out.encode("utf-8"))
    assert raw[len(out.encode("utf-8")) :] == stream.pending


def test_specials_stream_whole_and_a_cut_character_waits(tokenizer: Tokenizer) -> None:
    text = "né<|é|>😀"
    ids = tokenizer.encode(text)
    stream = tokenizer.stream_decoder()
    steps = [stream.step(token) for token in ids]
    assert "".join(steps) + stream.flush() == text
    assert "<|é|>" in steps  # a special token comes out as one piece
    emoji = list("😀".encode())
    assert [stream.step(byte) for byte in emoji] == ["", "", "", "😀"]


def test_flush_ends_a_stream_and_the_decoder_is_reused(tokenizer: Tokenizer) -> None:
    stream = tokenizer.stream_decoder(errors="replace")
    assert stream.step(0xE2) == ""
    assert stream.pending == b"\xe2"
    assert stream.flush() == "\ufffd"
    assert stream.step(0x41) == "A"
    assert stream.flush() == ""
    strict = tokenizer.stream_decoder()
    strict.step(0xE2)
    with pytest.raises(UnicodeDecodeError, match="unexpected end of data"):
        strict.flush()
    assert strict.pending == b"\xe2"  # still there: the caller may feed the rest
    assert strict.step(0x82) + strict.step(0xAC) == "€"
    strict.step(0xE2)
    strict.reset()
    assert strict.pending == b"" and strict.flush() == ""


def test_unknown_ids_raise_and_change_nothing(tokenizer: Tokenizer) -> None:
    stream = tokenizer.stream_decoder()
    stream.step(0xC3)
    for bad in (tokenizer.n_vocab, -1, True, 1.0):
        with pytest.raises(UnknownTokenError):
            stream.step(bad)  # type: ignore[arg-type]
    assert stream.pending == b"\xc3"
    assert stream.step(0xA9) == "é"
    assert isinstance(stream, StreamDecoder)
    assert "pending=b''" in repr(stream) and stream.errors == "strict"


def test_encode_errors_replace_repairs_lone_surrogates_as_tiktoken(tokenizer: Tokenizer) -> None:
    """tiktoken's repair (checked against tiktoken itself in tests/interop/)."""
    with pytest.raises(UnicodeEncodeError, match="lone surrogate"):
        tokenizer.encode("a\ud83d")
    assert tokenizer.encode("a\ud83d", errors="replace") == tokenizer.encode("a\ufffd")
    assert tokenizer.encode("\ud83d\ude00", errors="replace") == tokenizer.encode("😀")
    assert tokenizer.encode_ordinary("\udc00x", errors="replace") == tokenizer.encode("\ufffdx")
    assert tokenizer.count_tokens("a\ud83d", errors="replace") == len(tokenizer.encode("a\ufffd"))
    with pytest.raises(ParameterError, match="'strict', 'replace'"):
        tokenizer.encode("a", errors="ignore")


@pytest.mark.parametrize("lead", [0xE0, 0xED, 0xF0, 0xF4])
def test_a_lead_and_a_second_byte_no_character_can_follow_are_settled_at_once(lead: int) -> None:
    """CPython's incremental decoder holds ED A0 (an encoded surrogate's start) for more
    bytes; the stream settles every such pair at once, as ``bytes.decode`` would."""
    tokenizer = Tokenizer([])
    for second in range(0x80, 0xC0):
        data = bytes([lead, second])
        whole = data.decode("utf-8", errors="replace")
        stream = tokenizer.stream_decoder(errors="replace")
        joined = stream.step(lead) + stream.step(second)
        if whole.startswith("\ufffd\ufffd"):  # no continuation makes a character of it
            assert joined == whole
            strict = tokenizer.stream_decoder()
            strict.step(lead)
            with pytest.raises(UnicodeDecodeError):
                strict.step(second)
            assert strict.pending == bytes([lead])  # the step that raised changed nothing
        else:
            assert joined == "" and stream.pending == data
